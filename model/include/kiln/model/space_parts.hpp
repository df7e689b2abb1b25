// The parts of a space that the generator and the tuner share (generator/README.md, "The space
// file"): the generator loads them from a space file and writes them into the manifest; the tuner
// reads them back from it. The generator's loaded space adds where each part is in its file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/model/expr.hpp"
#include "kiln/model/value.hpp"

namespace kiln::model {

class JsonNode;

// `harness`: the header variant sources include and the kernel's workload class.
struct Harness {
  std::string include;
  std::string workload;
  bool operator==(const Harness&) const = default;
};

struct Parameter {
  std::string name;
  std::vector<Value> values;  // all integers, or all identifiers
  std::size_t default_index = 0;

  // Identifier values: a kiln::Choice in Config.
  bool symbolic() const;
  // Some value needs more than 32 bits: `long long` in Config.
  bool wide() const;
  const Value& default_value() const { return values[default_index]; }
  bool operator==(const Parameter&) const = default;
};

// A name of `derived`, with its expression over parameters, earlier derived names and limits.
struct Derived {
  std::string name;
  Expr expr;
  bool operator==(const Derived&) const = default;
};

// One of `constraints` (or of `problem.domain_constraints`, whose `why` is always empty).
struct Constraint {
  Expr expr;
  std::string why;  // empty when the space gives none
  bool operator==(const Constraint&) const = default;
};

// The sizes an int dim may take: [min, max], sampled on a log or a linear scale.
struct IntRange {
  std::int64_t min = 1;
  std::int64_t max = 1;
  bool log = true;
  bool operator==(const IntRange&) const = default;
};

struct Dim {
  std::string name;
  bool symbolic = false;
  std::vector<std::string> domain;  // symbolic only
  std::optional<IntRange> range;    // int only: its problem domain, when the space declares one
  bool operator==(const Dim&) const = default;
};

// The dims as the names of expressions over them (work terms, domain constraints, bucket
// conditions, features): int dims as integers, symbolic ones with their values. Any range of Dim
// or of a type derived from it (the generator's keeps its JSON pointer).
template <class Dims>
NameTable names_of(const Dims& dims) {
  NameTable names;
  for (const Dim& dim : dims) {
    if (dim.symbolic) {
      names.add_symbol(dim.name, dim.domain);
    } else {
      names.add_integer(dim.name);
    }
  }
  return names;
}

// One of `problem.work`: bytes, fp32_flops, tensor_flops, sfu_ops or launches.
struct WorkTerm {
  std::string name;
  Expr expr;
  bool operator==(const WorkTerm&) const = default;
};

// One of `problem.features`: a named integer expression over a domain's dims (a symbolic dim only
// compared with its values, as in work terms) that the learned
// dispatch may split on besides the dims themselves (a decode kernel's packed query rows, G * Sq,
// decide which block height fits; no split on G or Sq alone says so).
struct Feature {
  std::string name;
  Expr expr;
  bool operator==(const Feature&) const = default;
};

struct Bucket {
  std::string name;
  Expr when;
  bool operator==(const Bucket&) const = default;
};

// Relative L2 tolerance per output dtype (fp32, fp16, bf16), every one present.
using Tolerance = std::map<std::string, double>;
// fp32 1e-5, fp16 2e-3, bf16 1e-2: what a space that gives none gets.
Tolerance default_tolerance();

// tuning.reach: the largest value of one int dim of the domain that a variant serves on its fast
// path (the width its register cache holds, a tile's extent), as an expression over the
// parameters, derived values and the target's limits. Past it the variant still runs, on a slower
// path (a row that streams); the learned dispatch does not stretch a leaf's variant past its reach
// where none of the leaf's coverage points lies, and gives the rest of the leaf to a variant that
// reaches further (README.md, "Problem domains").
struct Reach {
  std::string dim;
  Expr expr;
  bool operator==(const Reach&) const = default;
};

// What the learned dispatch fits (tuning.tree_fit). `served`: the most coverage points within the
// tolerance of their best (then the smaller worst regret). `regret`: the smallest sum of log
// regrets (the geometric mean of dispatched over best), which weighs how far a point misses rather
// than whether it does, and picks min_leaf_points "auto" by that mean too.
enum class TreeFit { served, regret };

// As space files and manifests spell it: "served", "regret".
const char* to_string(TreeFit fit);

// The fit a JSON string names; throws InputError at its place when it names none:
//   <file>: /tuning/tree_fit: expected "served" or "regret", got "median"
TreeFit tree_fit_of(const JsonNode& node);

struct Tuning {
  std::int64_t max_variants = 256;
  std::int64_t timeout_s = 120;
  // With a problem domain only: how many points the tuner times every variant on (coverage) and
  // how many it keeps apart to judge the dispatch (held_out), and how far from a point's best
  // variant the dispatched one may be (a ratio of times, at least 1).
  std::int64_t coverage = 0;
  std::int64_t held_out = 0;
  double regret_tolerance = 1.05;
  // The fewest coverage points a leaf of the learned dispatch may hold. 1 fits every point; more
  // make each leaf's variant hold over a stretch of the domain, which carries across performance
  // cliffs between points (a grid's last partial wave) better than a leaf fitted to one point.
  // 0 ("auto" in a space file): the tuner picks it by leave-one-out over the coverage points.
  std::int64_t min_leaf_points = 1;
  TreeFit tree_fit = TreeFit::served;
  // How many coverage points every variant is timed on, besides the finalists' full coverage:
  // those farthest from the listed problems and the probe points. A variant faster there than
  // every finalist beyond the tolerance becomes a finalist too. 0: none.
  std::int64_t screen = 0;
  // How many refinement points the tuner adds to the coverage after a first dispatch is learned:
  // drawn from the manifest's refinement candidates, each the candidate farthest from every
  // coverage point its leaf was fitted to (a leaf that stretches far past its points guesses
  // there), timed on the finalists; the dispatch is then learned again. 0: none.
  std::int64_t refine = 0;
  // Symbolic dims of the domain whose values the coverage and held-out points take in turn, rather
  // than each combination of values getting its own share: dims that change a kernel's speed
  // little (a decode kernel's layout, dtype and mask) would otherwise divide a few points among
  // many combinations and leave each with the corners of the box only. Empty: every symbolic dim
  // is crossed, as before.
  std::vector<std::string> alternate;
  // The search the tuner runs on this space unless its command line names one (a large space's
  // author says "forest" with a budget where measuring every variant would cost hours): a strategy
  // of kSearchStrategies, and its budget as written ("40": variants; "0.15": a fraction of the
  // feasible ones). Empty: exhaustive; the strategy's own default budget.
  std::string search;
  std::string budget;
  // The search's other options, as written (key, JSON number): e.g. forest's batch, so that a
  // space's author can say how its search is run where the strategy's defaults do not suit it.
  std::vector<std::pair<std::string, std::string>> search_options;
  std::vector<Reach> reach;  // at most one a dim, int dims of the domain only
  bool operator==(const Tuning&) const = default;
};

// The tuner's search strategies (its registry, autotune/tuner/search.hpp, holds these names: a
// test keeps the two lists equal), those a space's tuning.search may name.
inline constexpr const char* kSearchStrategies[] = {"exhaustive", "anneal", "random", "genetic", "forest"};

// The options of each strategy but its budget (tuning.budget), those tuning.search_options may
// set: the registry's schemas hold the same (a test keeps them equal).
struct SearchOptionNames {
  const char* strategy;
  std::vector<const char*> options;
};
const std::vector<SearchOptionNames>& search_option_names();
// The options of `strategy` (a name of kSearchStrategies) a space may set, comma-separated ("none").
std::string search_options_of(const std::string& strategy);
bool is_search_option(const std::string& strategy, const std::string& option);

// Whether `name` is one of kSearchStrategies; their names, comma-separated, for messages.
bool is_search_strategy(const std::string& name);
std::string search_strategy_names();
// Whether a tuning.budget is one: a count of variants (an integer >= 1) or a fraction in (0, 1).
bool is_search_budget(double value, bool integer);

// One feasible combination of parameter values.
struct Variant {
  std::string name;             // canonical: <kernel>__<P1><v1>_<P2><v2>...
  std::vector<Value> params;    // one per parameter, in the parameters' order
  std::filesystem::path source; // variants/<name>.cpp|.cu, relative to the manifest's directory
  std::map<std::string, std::int64_t> reach;  // tuning.reach evaluated for this variant (>= 1 each)
  bool operator==(const Variant&) const = default;
};

}  // namespace kiln::model
