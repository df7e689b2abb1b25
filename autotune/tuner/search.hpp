// Search strategies behind one small interface. The tuner asks for the next variant, measures
// it (or takes it from the worklog), and reports back; a strategy never runs anything itself,
// so the same strategy can be replayed offline against recorded results.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tuner {

struct Manifest;

// The feasible variants as points of the parameter grid (index of each parameter's value).
struct SearchSpace {
  std::vector<std::vector<int>> coordinates;  // per variant
  std::vector<int> value_counts;              // per parameter
  std::size_t default_variant = 0;

  std::optional<std::size_t> find(const std::vector<int>& coords) const;
  std::size_t size() const { return coordinates.size(); }
  static SearchSpace from(const Manifest& manifest);
};

// The result of measuring one variant: a score to minimise (the geometric mean of its median
// times over the tuning problems), or nothing when the variant failed.
struct Evaluation {
  std::size_t variant = 0;
  std::optional<double> score;
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
};

// Every feasible variant once, the space's default first.
std::unique_ptr<Searcher> make_exhaustive(const SearchSpace& space);

// Simulated annealing over the parameter grid from the default: neighbours differ in one
// parameter by one step; at most `budget` distinct variants are measured.
std::unique_ptr<Searcher> make_annealing(const SearchSpace& space, std::size_t budget, std::uint64_t seed);

// "exhaustive" or "anneal"; throws std::invalid_argument for anything else.
std::unique_ptr<Searcher> make_searcher(const std::string& strategy, const SearchSpace& space, std::size_t budget,
                                        std::uint64_t seed);

struct ReplayResult {
  std::vector<Evaluation> evaluations;  // in the order the searcher asked for them
  std::optional<std::size_t> best;
};

// Drives a searcher against recorded outcomes instead of measurements.
ReplayResult replay(Searcher& searcher, const std::function<std::optional<double>(std::size_t)>& recorded);

}  // namespace kiln::tuner
