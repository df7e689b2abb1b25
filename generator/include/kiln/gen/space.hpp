// A space file and a target device file, loaded and validated completely (generator/README.md).
// Loading throws GeneratorError with one message, `<file>: <json-pointer>: <what is wrong>`.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/gen/expr.hpp"
#include "kiln/gen/json_reader.hpp"

namespace kiln::gen {

// Limits on a space file (generator/README.md, "Limits"); each is checked where the file declares
// the entries, before anything is evaluated.
inline constexpr std::size_t kMaxParameters = 64;
inline constexpr std::size_t kMaxValues = 1024;        // per parameter
inline constexpr std::size_t kMaxDerived = 256;
inline constexpr std::size_t kMaxConstraints = 256;
inline constexpr std::size_t kMaxDims = 64;
inline constexpr std::size_t kMaxProblems = 4096;      // problems, and checks
inline constexpr std::size_t kMaxBuckets = 256;
// The longest canonical variant name: it is a file name (plus ".cpp" and the temporary file's
// "." and ".kiln-tmp"), a CMake target name, and a path part of every object file built from it;
// file systems allow 255 bytes.
inline constexpr std::size_t kMaxVariantNameBytes = 200;
// The most expression nodes the generator evaluates for one space, counted before evaluating:
// combinations times the nodes of derived values and constraints, and problems times the nodes of
// work terms and bucket conditions. It bounds the time of `kiln generate` to seconds.
inline constexpr std::uint64_t kMaxEvaluatedNodes = 50'000'000;
// Problem domains (generator/README.md, "Problem domains"): the most coverage or held-out points a
// space may ask for, the most domain constraints, and the largest end of an int dim's range (sizes
// are drawn in double precision, exact far beyond it).
inline constexpr std::int64_t kMaxDomainPoints = 1024;
inline constexpr std::size_t kMaxDomainConstraints = 64;
inline constexpr std::int64_t kMaxDomainValue = std::int64_t{1} << 48;

// Throws (at `pointer`) when `count` evaluations of `exprs_nodes` nodes each exceed
// kMaxEvaluatedNodes; `what` says what is counted ("combinations", "problems").
void check_evaluation_cost(const std::string& label, const std::string& pointer, std::uint64_t count,
                           std::uint64_t nodes, const std::string& what);

// What the generator reads of a device file (presets/devices/*.json); other keys are ignored.
struct Target {
  std::string label;    // the path as given
  std::string name;     // e.g. "h100"
  std::string backend;  // "cpu" or "cuda"
  std::vector<std::pair<std::string, std::int64_t>> limits;  // in the file's order
};

Target load_target(const std::filesystem::path& file);

struct Parameter {
  std::string name;
  std::vector<Value> values;  // all integers, or all identifiers
  std::size_t default_index = 0;
  bool symbolic = false;  // identifier values: a kiln::Choice in Config
  bool wide = false;      // some value needs more than 32 bits: `long long` in Config
};

struct Derived {
  std::string name;
  std::string pointer;  // where the expression is, for messages
  Expr expr;
};

struct Constraint {
  std::string pointer;       // the constraint: /constraints/<i>
  std::string expr_pointer;  // its expression: the same, or /constraints/<i>/expr
  Expr expr;
  std::string why;  // empty when the space gives none
};

// The sizes an int dim may take: [min, max], sampled on a log or a linear scale.
struct IntRange {
  std::int64_t min = 1;
  std::int64_t max = 1;
  bool log = true;
};

struct Dim {
  std::string name;
  bool symbolic = false;
  std::vector<std::string> domain;  // symbolic only
  std::optional<IntRange> range;    // int only: its problem domain, when the space declares one
  std::string pointer;              // /problem/dims/<name>
};

struct WorkTerm {
  std::string name;  // bytes, fp32_flops, tensor_flops, sfu_ops or launches
  std::string pointer;
  Expr expr;
};

// One entry of `problems` or `checks`: a value for every dim, in the dims' order.
struct ProblemInstance {
  std::string pointer;
  std::vector<Value> values;
};

struct Bucket {
  std::string name;
  std::string pointer;  // of `when`
  Expr when;
};

struct Tolerance {
  double fp32 = 1e-5;
  double fp16 = 2e-3;
  double bf16 = 1e-2;
};

struct Tuning {
  std::int64_t max_variants = 256;
  std::int64_t timeout_s = 120;
  // With a problem domain only: how many points the tuner times every variant on (coverage) and
  // how many it keeps apart to judge the dispatch (held_out), and how far from a point's best
  // variant the dispatched one may be (a ratio of times, at least 1).
  std::int64_t coverage = 0;
  std::int64_t held_out = 0;
  double regret_tolerance = 1.05;
};

struct Space {
  std::string label;            // the path as given; starts every message about this space
  std::filesystem::path file;   // as given
  std::string hash;             // FNV-1a 64 of the file's bytes, 16 hex digits
  std::string kernel;
  std::string backend;          // "cpu" or "cuda"
  std::string description;      // empty when absent
  std::string harness_include;
  std::string harness_workload;
  std::vector<Parameter> parameters;
  std::vector<Derived> derived;
  std::vector<Constraint> constraints;
  std::vector<Dim> dims;
  std::vector<WorkTerm> work;
  std::vector<ProblemInstance> problems;
  std::vector<ProblemInstance> checks;
  std::vector<Bucket> buckets;  // may be empty with a domain: the tuner learns the dispatch
  std::vector<std::size_t> problem_buckets;  // for each problem, the index of its bucket
  std::vector<Constraint> domain_constraints;  // over dims: which points the domain holds
  // Drawn from the domain by sample_domain (domain.hpp) when the space has one.
  std::vector<ProblemInstance> coverage;
  std::vector<ProblemInstance> held_out;
  Tolerance tolerance;
  Tuning tuning;
};

// Reads and validates `file` against `target`: everything in the README's space-file section
// except what needs enumeration (feasibility, variant counts, the default variant's constraints).
Space load_space(const std::filesystem::path& file, const Target& target);
// The same for a file already read (`file` is recorded as the space's path).
Space load_space(const JsonFile& json, const std::filesystem::path& file, const Target& target);

// Throws the error of an expression at `pointer`: `<file>: <pointer>: <error>[ for <context>]`.
[[noreturn]] void fail_expr(const Space& space, const std::string& pointer, const ExprError& error,
                            const std::string& context = "");

// The environment of a problem's dims, for work terms and bucket conditions.
Environment problem_environment(const Space& space, const ProblemInstance& problem);

// "rows=16384 cols=8192 dtype=bf16"
std::string problem_key(const Space& space, const ProblemInstance& problem);

// Names visible to `problem.work` and `buckets[].when`: the dims.
NameTable dim_names(const Space& space);

// True when the space declares a problem domain (a range on its int dims).
bool has_domain(const Space& space);

}  // namespace kiln::gen
