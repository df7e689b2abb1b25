// Genetic search on the parameter grid, one child at a time (a steady-state genetic algorithm):
// the population is the fastest variants measured so far; each child takes every parameter from
// one of two parents chosen by tournament, then mutates some parameters. A child the constraints
// pruned or one already proposed is bred again, and after a few tries replaced by the nearest
// variant not yet proposed, so no variant is proposed twice. Variants that failed never breed. The
// first population has one variant of each value of a categorical parameter (each algorithm).
#include <algorithm>
#include <string>

#include "grid.hpp"
#include "kiln/error.hpp"
#include "search.hpp"

namespace kiln::tuner {
namespace {

struct GeneticOptions {
  std::size_t budget = 0;
  std::size_t population = 0;
  std::size_t tournament = 0;
  double mutation = 0;  // per parameter
};

class GeneticSearch final : public Searcher {
 public:
  GeneticSearch(const SearchSpace& space, const GeneticOptions& o, std::uint64_t seed)
      : space_(space), o_(o), proposals_(space), rng_(seed) {}

  std::string name() const override { return "genetic"; }
  std::size_t planned() const override { return std::min(o_.budget, space_.size()); }
  std::string hypothesis() const override {
    if (proposals_.count() <= 1) return "genetic search: the space's default, the baseline";
    if (!bred_) return "genetic search: the first population, drawn at random";
    return "genetic search: a child of two fast variants (crossover and mutation on the parameter grid) may be faster";
  }

  std::optional<std::size_t> propose() override {
    if (proposals_.count() >= planned()) return std::nullopt;
    bred_ = false;
    if (proposals_.count() == 0) return proposals_.take(space_.default_variant);
    // The first population is drawn at random; failures do not count towards it, within reason.
    const bool founding = population_.size() < o_.population && proposals_.count() < 2 * o_.population;
    if (founding || population_.size() < 2) {
      // Every algorithm (each value of a categorical parameter) founds the population once.
      if (auto v = proposals_.uncovered_free(rng_)) return proposals_.take(*v);
      return proposals_.take(proposals_.random_free(rng_));
    }
    bred_ = true;
    std::vector<int> child;
    for (int attempt = 0; attempt < 16; ++attempt) {
      child = breed();
      if (auto v = space_.find(child); v && !proposals_.taken(*v)) return proposals_.take(*v);
    }
    return proposals_.take(proposals_.nearest_free(child));
  }

  void observe(const Evaluation& e) override {
    if (!e.score) return;
    // Keep the population sorted, fastest first; ties keep the earlier member first.
    auto at = std::upper_bound(population_.begin(), population_.end(), *e.score,
                               [](double s, const Member& m) { return s < m.score; });
    population_.insert(at, Member{e.variant, *e.score});
    if (population_.size() > o_.population) population_.pop_back();
  }

 private:
  struct Member {
    std::size_t variant;
    double score;
  };

  // The fastest of `tournament` members drawn at random (with replacement).
  const Member& select() {
    std::size_t best = grid::draw(rng_, population_.size());
    for (std::size_t i = 1; i < o_.tournament; ++i) best = std::min(best, grid::draw(rng_, population_.size()));
    return population_[best];
  }

  std::vector<int> breed() {
    const auto& a = space_.coordinates[select().variant];
    const auto& b = space_.coordinates[select().variant];
    std::vector<int> child(a.size());
    for (std::size_t p = 0; p < child.size(); ++p) {
      child[p] = grid::unit(rng_) < 0.5 ? a[p] : b[p];
      const int count = space_.value_counts[p];
      if (count < 2 || grid::unit(rng_) >= o_.mutation) continue;
      // Half the mutations step to a neighbouring value (parameters are mostly ordered: sizes,
      // widths), half jump to any other value.
      if (grid::unit(rng_) < 0.5) {
        int step = grid::unit(rng_) < 0.5 ? -1 : 1;
        if (child[p] + step < 0 || child[p] + step >= count) step = -step;
        child[p] += step;
      } else {
        int other = static_cast<int>(grid::draw(rng_, static_cast<std::size_t>(count - 1)));
        child[p] = other >= child[p] ? other + 1 : other;
      }
    }
    return child;
  }

  const SearchSpace& space_;
  GeneticOptions o_;
  grid::Proposals proposals_;
  std::mt19937_64 rng_;
  std::vector<Member> population_;  // fastest first
  bool bred_ = false;
};

GeneticOptions genetic_options(const SearchSpace& space, const StrategyOptions& o) {
  GeneticOptions g;
  g.budget = o.budget(space.size());
  g.population = o.count("population", space.size()).value_or(std::clamp<std::size_t>(g.budget / 8, 4, 32));
  g.tournament = o.count("tournament", g.population).value_or(3);
  std::size_t parameters = 0;
  for (int c : space.value_counts) parameters += c > 1 ? 1 : 0;
  g.mutation = o.number("mutation", 0, 1).value_or(1.0 / static_cast<double>(std::max<std::size_t>(parameters, 1)));
  if (g.population < 2) throw Error("strategy option population=" + std::to_string(g.population) + ": at least 2 parents");
  if (g.tournament < 1) throw Error("strategy option tournament=0: at least 1 contender");
  return g;
}

}  // namespace

KILN_REGISTER_STRATEGY({"genetic",
                        "steady-state genetic algorithm on the parameter grid: tournament selection, uniform crossover, "
                        "mutation; never proposes a variant twice",
                        {{"budget", "distinct variants to measure: a count, or a fraction of the space (default 1/3)"},
                         {"population", "fastest variants kept as parents (default budget/8, from 4 to 32)"},
                         {"tournament", "contenders per parent selection; more is greedier (default 3)"},
                         {"mutation", "chance that a child's parameter mutates, 0 to 1 (default 1/parameters)"}},
                        [](const SearchSpace& space, const StrategyOptions& o, std::uint64_t seed) -> std::unique_ptr<Searcher> {
                          return std::make_unique<GeneticSearch>(space, genetic_options(space, o), seed);
                        }});

}  // namespace kiln::tuner
