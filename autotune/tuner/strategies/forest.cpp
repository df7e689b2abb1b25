// Model-guided search: after the space's default, one variant for each value of a categorical
// parameter (each algorithm) the default does not have, and a small random design, a random forest
// (regression_forest.hpp) fitted to the logarithm of every score measured so far predicts every
// variant not yet proposed, and the one with the largest expected improvement over the best so far
// is measured next. Failed variants enter the model as slow as the slowest success, so the search
// learns to keep away from them. The space is enumerated, so the acquisition is maximised exactly.
// What the worklog already holds of the context comes in first as priors (Searcher::prior): the
// model starts from it and the budget counts it, so that values added to a space are measured
// where the model expects them to pay (a new value of an ordered knob falls, in every tree, on the
// side of a measured neighbour: the twins of the best variants so far rank first).
#include <algorithm>
#include <cmath>
#include <string>

#include "grid.hpp"
#include "kiln/error.hpp"
#include "regression_forest.hpp"
#include "search.hpp"

namespace kiln::tuner {
namespace {

struct ForestOptions {
  std::size_t budget = 0;
  std::size_t initial = 0;  // random design, the default included
  std::size_t batch = 1;    // variants taken from one fit of the forest, at least
  ForestShape shape;
};

// Expected improvement below `best` of a normal prediction (minimising).
double expected_improvement(const Prediction& p, double best) {
  const double gap = best - p.mean;
  if (p.spread <= 0) return std::max(gap, 0.0);
  const double z = gap / p.spread;
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * 3.141592653589793);
  return gap * cdf + p.spread * pdf;
}

class ForestSearch final : public Searcher {
 public:
  ForestSearch(const SearchSpace& space, const ForestOptions& o, std::uint64_t seed)
      : space_(space), o_(o), proposals_(space), rng_(seed) {}

  std::string name() const override { return "forest"; }
  // The budget counts the priors: a search resumed over a worklog that holds its budget measures
  // nothing more.
  std::size_t planned() const override { return total() - std::min(total(), priors_); }
  std::string hypothesis() const override {
    if (proposals_.count() <= 1) return "forest search: the space's default, the baseline";
    if (covering_) return "forest search: a value of a categorical parameter (an algorithm) not measured yet";
    if (!guided_) return "forest search: the initial design, drawn at random";
    return "forest search: a random forest fitted to the variants measured so far expects the largest improvement here";
  }

  std::optional<std::size_t> propose() override {
    if (proposals_.count() >= total()) return std::nullopt;
    guided_ = false;
    if (auto v = design_step(proposals_, rng_, covering_, successes_ == 0)) return v;
    guided_ = true;
    if (measured_.size() >= next_fit_) rank();
    while (next_ranked_ < ranked_.size() && proposals_.taken(ranked_[next_ranked_])) ++next_ranked_;
    if (next_ranked_ == ranked_.size()) {
      rank();
      next_ranked_ = 0;
    }
    return proposals_.take(ranked_[next_ranked_++]);
  }

  // What is certain to come whatever is observed: the rest of the design, drawn now on copies of
  // its state (the same draws propose() will make), and the rest of the current fit's ranking
  // (the model is fitted again only once `next_fit_` measurements are in; the proposal just made
  // is not observed yet). A design that goes on while nothing has succeeded is not counted on.
  std::vector<std::size_t> upcoming(std::size_t limit) const override {
    std::vector<std::size_t> next;
    const std::size_t left = std::min(limit, total() - std::min(total(), proposals_.count()));
    grid::Proposals p = proposals_;
    std::mt19937_64 rng = rng_;
    bool covering = false;
    while (next.size() < left) {
      auto v = design_step(p, rng, covering, false);
      if (!v) break;
      next.push_back(*v);
    }
    if (!guided_ || !next.empty()) return next;
    const std::size_t unobserved = proposals_.count() - measured_.size();
    const std::size_t from_fit = next_fit_ > measured_.size() + unobserved ? next_fit_ - measured_.size() - unobserved : 0;
    for (std::size_t r = next_ranked_; r < ranked_.size() && next.size() < std::min(left, from_fit); ++r) {
      if (!proposals_.taken(ranked_[r])) next.push_back(ranked_[r]);
    }
    return next;
  }

  void prior(const Evaluation& e) override {
    if (proposals_.taken(e.variant)) return;
    proposals_.take(e.variant);
    ++priors_;
    observe(e);
  }

  void observe(const Evaluation& e) override {
    measured_.push_back(e);
    if (e.score) {
      ++successes_;
      worst_ = std::max(worst_, std::log(*e.score));
      best_ = std::min(best_, std::log(*e.score));
      // Bucket scores steer the search only while every success has them, all of one length.
      if (successes_ == 1) {
        part_best_.assign(e.parts.size(), 1e300);
        part_worst_.assign(e.parts.size(), -1e300);
      }
      if (e.parts.size() != part_best_.size()) {
        part_best_.clear();
        part_worst_.clear();
      }
      for (std::size_t k = 0; k < part_best_.size(); ++k) {
        part_best_[k] = std::min(part_best_[k], std::log(e.parts[k]));
        part_worst_[k] = std::max(part_worst_[k], std::log(e.parts[k]));
      }
    }
  }

 private:
  std::size_t total() const { return std::min(o_.budget, space_.size()); }

  // The design's next proposal: the space's default, then a variant for each value of a
  // categorical parameter not proposed yet, then random draws up to `initial` (and on while
  // `nothing_succeeded`); nothing once the model guides.
  std::optional<std::size_t> design_step(grid::Proposals& p, std::mt19937_64& rng, bool& covering,
                                         bool nothing_succeeded) const {
    if (!p.taken(space_.default_variant)) return p.take(space_.default_variant);
    if (auto v = p.uncovered_free(rng)) {
      covering = true;
      return p.take(*v);
    }
    covering = false;
    if (p.count() < o_.initial || nothing_succeeded) return p.take(p.random_free(rng));
    return std::nullopt;
  }

  // Fits the forest and orders the variants not yet proposed by expected improvement, largest
  // first (then by predicted score, then by index). Refitting after every measurement costs
  // quadratic time in the budget; refitting after every twentieth of what was measured changes
  // the proposals little, since one more point moves a forest of many points little. A `batch`
  // takes that many from one fit, so that they compile at once.
  //
  // With bucket scores (Evaluation::parts) a forest is fitted to each bucket's: the record takes
  // a winner per bucket, and one model of the overall score ranks a variant that only the large
  // problems favour below the variants that win the small ones (attention_d64's 192-row tiles,
  // 2026-12-01).
  void rank() {
    std::vector<const std::vector<int>*> points;
    for (const auto& m : measured_) points.push_back(&space_.coordinates[m.variant]);
    const std::size_t parts = part_best_.size() >= 2 ? part_best_.size() : 0;
    std::vector<RegressionForest> forests(parts == 0 ? 1 : parts);
    for (std::size_t k = 0; k < forests.size(); ++k) {
      std::vector<double> targets;
      for (const auto& m : measured_) {
        if (parts == 0) {
          targets.push_back(m.score ? std::log(*m.score) : worst_);
        } else {
          targets.push_back(m.score ? std::log(m.parts[k]) : part_worst_[k]);
        }
      }
      forests[k].fit(points, targets, space_.value_counts, o_.shape, rng_);
    }
    struct Candidate {
      double improvement, mean;
      std::size_t variant;
    };
    auto by_improvement = [](const Candidate& a, const Candidate& b) {
      if (a.improvement != b.improvement) return a.improvement > b.improvement;
      if (a.mean != b.mean) return a.mean < b.mean;
      return a.variant < b.variant;
    };
    // One ranking per forest; with several, their heads are taken in turn, so that every bucket
    // gets its share of the proposals. (The largest expected improvement over all buckets did
    // about as well on tuner_strategy_tests' two-bucket space; turns are simpler to reason about.)
    std::vector<std::vector<Candidate>> rankings(forests.size());
    for (std::size_t v = 0; v < space_.size(); ++v) {
      if (proposals_.taken(v)) continue;
      for (std::size_t k = 0; k < forests.size(); ++k) {
        Prediction p = forests[k].predict(space_.coordinates[v]);
        rankings[k].push_back({expected_improvement(p, parts == 0 ? best_ : part_best_[k]), p.mean, v});
      }
    }
    for (auto& r : rankings) std::sort(r.begin(), r.end(), by_improvement);
    ranked_.clear();
    std::vector<bool> listed(space_.size(), false);
    for (std::size_t at = 0; rankings.size() > 0 && at < rankings[0].size(); ++at) {
      for (std::size_t k = 0; k < rankings.size(); ++k) {
        const std::size_t v = rankings[(k + turn_) % rankings.size()][at].variant;
        if (!listed[v]) ranked_.push_back(v);
        listed[v] = true;
      }
    }
    turn_ = (turn_ + 1) % rankings.size();
    next_ranked_ = 0;
    next_fit_ = measured_.size() + std::max<std::size_t>(o_.batch, measured_.size() / 20);
  }

  const SearchSpace& space_;
  ForestOptions o_;
  grid::Proposals proposals_;
  std::mt19937_64 rng_;
  std::vector<Evaluation> measured_;
  std::size_t successes_ = 0;
  double worst_ = -1e300, best_ = 1e300;  // log scores
  std::vector<double> part_best_, part_worst_;  // log bucket scores, where every success has them
  std::vector<std::size_t> ranked_;
  std::size_t next_ranked_ = 0;
  std::size_t next_fit_ = 0;
  std::size_t priors_ = 0;
  std::size_t turn_ = 0;  // the bucket whose ranking leads the next fit's
  bool guided_ = false;
  bool covering_ = false;
};

ForestOptions forest_options(const SearchSpace& space, const StrategyOptions& o) {
  ForestOptions f;
  f.budget = o.budget(space.size());
  f.initial = o.count("initial", space.size()).value_or(std::clamp<std::size_t>(f.budget / 10, 3, 20));
  f.batch = o.count("batch", space.size()).value_or(1);
  if (f.batch < 1) throw Error("strategy option batch=0: at least 1 variant a fit");
  f.shape.trees = o.count("trees", space.size()).value_or(f.shape.trees);
  if (f.shape.trees < 1) throw Error("strategy option trees=0: at least 1 tree");
  return f;
}

}  // namespace

KILN_REGISTER_STRATEGY({"forest",
                        "model-guided: a random forest fitted to the measured variants picks the variant of largest "
                        "expected improvement; never proposes a variant twice",
                        {{"budget", "distinct variants to measure: a count, or a fraction of the space (default 1/3)"},
                         {"initial", "variants drawn at random before the model guides, the default and one variant "
                                     "for each value of a categorical parameter included (default budget/10, from 3 to "
                                     "20)"},
                         {"trees", "trees in the forest (default 32)"},
                         {"batch", "variants taken from one fit of the forest, compiled at once (default 1; the fit "
                                   "is also renewed only every twentieth of what was measured)"}},
                        [](const SearchSpace& space, const StrategyOptions& o, std::uint64_t seed) -> std::unique_ptr<Searcher> {
                          return std::make_unique<ForestSearch>(space, forest_options(space, o), seed);
                        }});

}  // namespace kiln::tuner
