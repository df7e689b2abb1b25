// Simulated annealing over the parameter grid from the default: neighbours differ in one
// parameter by one step; at most `budget` distinct variants are measured.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "search.hpp"

namespace kiln::tuner {
namespace {

class AnnealingSearch final : public Searcher {
 public:
  AnnealingSearch(const SearchSpace& space, std::size_t budget, std::uint64_t seed)
      : space_(space), budget_(std::min(std::max<std::size_t>(budget, 1), space.size())), rng_(seed) {}

  std::string name() const override { return "anneal"; }
  std::size_t planned() const override { return budget_; }
  std::string hypothesis() const override {
    return "annealing search: a neighbour of the current point in the parameter grid may be faster";
  }

  std::optional<std::size_t> propose() override {
    if (known_.size() >= budget_) return std::nullopt;
    if (!current_) return space_.default_variant;
    // Walk: already-measured neighbours cost nothing, so keep stepping until an unmeasured
    // neighbour turns up; fall back to an unmeasured variant at random when the walk is stuck.
    for (int step = 0; step < 200; ++step) {
      std::size_t candidate = neighbour(*current_);
      auto seen = known_.find(candidate);
      if (seen == known_.end()) return candidate;
      consider(candidate, seen->second);
    }
    std::vector<std::size_t> unmeasured;
    for (std::size_t i = 0; i < space_.size(); ++i) {
      if (!known_.count(i)) unmeasured.push_back(i);
    }
    if (unmeasured.empty()) return std::nullopt;
    return unmeasured[std::uniform_int_distribution<std::size_t>(0, unmeasured.size() - 1)(rng_)];
  }

  void observe(const Evaluation& e) override {
    known_[e.variant] = e.score;
    if (!current_) {
      current_ = e.variant;
      current_score_ = e.score;
      return;
    }
    consider(e.variant, e.score);
  }

 private:
  // Temperature in units of log(score): early on a 30% worse move is accepted about a third of
  // the time; by the end of the budget only improvements are.
  double temperature() const {
    double progress = static_cast<double>(known_.size()) / static_cast<double>(budget_);
    return 0.3 * std::max(0.0, 1.0 - progress) + 1e-9;
  }

  void consider(std::size_t variant, const std::optional<double>& score) {
    if (!score) return;
    if (!current_score_ || *score < *current_score_) {
      current_ = variant;
      current_score_ = score;
      return;
    }
    double worse = std::log(*score) - std::log(*current_score_);
    if (std::uniform_real_distribution<double>(0, 1)(rng_) < std::exp(-worse / temperature())) {
      current_ = variant;
      current_score_ = score;
    }
  }

  std::size_t neighbour(std::size_t from) {
    const auto& base = space_.coordinates[from];
    for (int attempt = 0; attempt < 64; ++attempt) {
      std::vector<int> coords = base;
      std::size_t p = std::uniform_int_distribution<std::size_t>(0, coords.size() - 1)(rng_);
      if (space_.value_counts[p] < 2) continue;
      coords[p] += std::uniform_int_distribution<int>(0, 1)(rng_) == 0 ? -1 : 1;
      if (coords[p] < 0 || coords[p] >= space_.value_counts[p]) continue;
      // A point the constraints pruned is not a neighbour: try another direction.
      if (auto found = space_.find(coords)) return *found;
    }
    return from;
  }

  const SearchSpace& space_;
  std::size_t budget_;
  std::mt19937_64 rng_;
  std::map<std::size_t, std::optional<double>> known_;
  std::optional<std::size_t> current_;
  std::optional<double> current_score_;
};

}  // namespace

KILN_REGISTER_STRATEGY({"anneal", "simulated annealing over the parameter grid, starting from the default",
                        {{"budget", "distinct variants to measure: a count, or a fraction of the space (default 1/3)"}},
                        [](const SearchSpace& space, const StrategyOptions& o, std::uint64_t seed) -> std::unique_ptr<Searcher> {
                          return std::make_unique<AnnealingSearch>(space, o.budget(space.size()), seed);
                        }});

}  // namespace kiln::tuner
