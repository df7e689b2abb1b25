// Search strategies behind one small interface, and the registry that names them. The tuner asks
// for the next variant, measures it (or takes it from the worklog), and reports back; a strategy
// never runs anything itself, so the same strategy can be replayed offline against recorded
// results. A strategy is one source file in strategies/ that registers itself with
// KILN_REGISTER_STRATEGY: its name, what it does, its options, and a factory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::model {
struct Manifest;
}

namespace kiln::tuner {

using model::Manifest;

// The feasible variants as points of the parameter grid (index of each parameter's value).
struct SearchSpace {
  std::vector<std::vector<int>> coordinates;  // per variant
  std::vector<int> value_counts;              // per parameter
  // Per parameter: its values are identifiers (an algorithm, a walk mode), not an ordered knob. A
  // model-guided search measures each such value once before anything else: a budgeted search
  // that never measured an algorithm cannot learn where it wins.
  std::vector<bool> categorical;
  std::size_t default_variant = 0;
  // Coordinates -> variant, filled by from(): searches look points up thousands of times.
  std::map<std::vector<int>, std::size_t> positions;

  // The variant at `coords`, or nothing where the constraints pruned the point.
  std::optional<std::size_t> find(const std::vector<int>& coords) const;
  std::size_t size() const { return coordinates.size(); }
  static SearchSpace from(const Manifest& manifest);
};

// The result of measuring one variant: a score to minimise (the geometric mean of its median
// times over the tuning problems), or nothing when the variant failed. Where the space's problems
// fall in two or more buckets, `parts` holds the score of each such bucket (the geometric mean
// over its problems, in the manifest's bucket order): the record takes a winner per bucket, so a
// variant that wins one bucket is worth finding even when its overall score is poor.
struct Evaluation {
  std::size_t variant = 0;
  std::optional<double> score;
  std::vector<double> parts;
};

class Searcher {
 public:
  virtual ~Searcher() = default;
  virtual std::string name() const = 0;
  // The next variant to measure; nothing when the search is over.
  virtual std::optional<std::size_t> propose() = 0;
  virtual void observe(const Evaluation& evaluation) = 0;
  // How many measurements the search expects to make, for progress and ETA.
  virtual std::size_t planned() const = 0;
  // Why the variant just proposed is worth measuring: the hypothesis of its worklog attempt.
  virtual std::string hypothesis() const = 0;
  // The variants the search will propose next whatever it observes, in order (at most `limit`):
  // the tuner compiles them in one parallel batch with the one just proposed. A search whose next
  // step depends on what it observes commits to nothing (the default), and each of its proposals
  // is compiled alone, when proposed.
  virtual std::vector<std::size_t> upcoming(std::size_t /*limit*/) const { return {}; }
  // A variant the worklog's context already holds measured, handed over before the first
  // proposal. A model-guided search takes it as measured: it is never proposed, counts against
  // the budget, and the model is fitted to it, so that a space grown by new values, or a search
  // resumed with another seed, measures only what the model expects to gain from. The others
  // ignore it (the default) and reach what the worklog holds by proposing it again, at no cost.
  virtual void prior(const Evaluation& /*measured*/) {}
};

// A strategy's options as given (`--strategy-option key=value`), checked against its schema.
class StrategyOptions {
 public:
  StrategyOptions() = default;
  StrategyOptions(std::initializer_list<std::pair<const std::string, std::string>> values) : values_(values) {}
  // "key=value" strings; throws kiln::Error for one without '='.
  static StrategyOptions parse(const std::vector<std::string>& assignments);
  void set(const std::string& key, const std::string& value) { values_[key] = value; }
  const std::map<std::string, std::string>& values() const { return values_; }
  // A non-negative count, or a fraction of `whole` when the value is in (0, 1): "20", "0.15".
  std::optional<std::size_t> count(const std::string& key, std::size_t whole) const;
  // The option `budget` of a budgeted strategy: its count, or a third of the space by default.
  std::size_t budget(std::size_t whole) const;
  // A real number within [low, high]: "0.25".
  std::optional<double> number(const std::string& key, double low, double high) const;

 private:
  std::map<std::string, std::string> values_;
};

struct StrategyOption {
  std::string name;
  std::string description;
};

struct Strategy {
  std::string name;
  std::string description;
  std::vector<StrategyOption> options;
  std::function<std::unique_ptr<Searcher>(const SearchSpace&, const StrategyOptions&, std::uint64_t seed)> make;
};

// Every registered strategy, by name.
const std::map<std::string, Strategy>& strategies();
std::vector<std::string> strategy_names();
bool register_strategy(Strategy strategy);

// The named strategy over `space`, which must outlive it (the grid strategies keep a reference).
// Throws kiln::Error naming the known strategies for an unknown name, and the strategy's options
// for an unknown option or a bad value.
std::unique_ptr<Searcher> make_searcher(const std::string& strategy, const SearchSpace& space,
                                        const StrategyOptions& options, std::uint64_t seed);

#define KILN_STRATEGY_CONCAT2(a, b) a##b
#define KILN_STRATEGY_CONCAT(a, b) KILN_STRATEGY_CONCAT2(a, b)
// At namespace scope in a strategy's source file. The strategies library is linked whole, so the
// registration runs in every program that links the tuner.
#define KILN_REGISTER_STRATEGY(...) \
  static const bool KILN_STRATEGY_CONCAT(kiln_strategy_registered_, __LINE__) = \
      ::kiln::tuner::register_strategy(__VA_ARGS__)

struct ReplayResult {
  std::vector<Evaluation> evaluations;  // in the order the searcher asked for them
  std::optional<std::size_t> best;
};

// Drives a searcher against recorded outcomes instead of measurements.
ReplayResult replay(Searcher& searcher, const std::function<std::optional<double>(std::size_t)>& recorded);
// The same with whole recorded evaluations (bucket scores included).
ReplayResult replay_evaluations(Searcher& searcher, const std::function<Evaluation(std::size_t)>& recorded);

}  // namespace kiln::tuner
