// Random search: the space's default, then distinct variants drawn uniformly without replacement
// until the budget is spent. The baseline a smarter strategy has to beat at the same budget.
#include <algorithm>
#include <numeric>
#include <random>

#include "search.hpp"

namespace kiln::tuner {
namespace {

class RandomSearch final : public Searcher {
 public:
  RandomSearch(const SearchSpace& space, std::size_t budget, std::uint64_t seed) {
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < space.size(); ++i) {
      if (i != space.default_variant) rest.push_back(i);
    }
    std::mt19937_64 rng(seed);
    std::shuffle(rest.begin(), rest.end(), rng);
    if (space.size() > 0) order_.push_back(space.default_variant);
    order_.insert(order_.end(), rest.begin(), rest.end());
    order_.resize(std::min(order_.size(), std::max<std::size_t>(budget, 1)));
  }
  std::string name() const override { return "random"; }
  std::optional<std::size_t> propose() override {
    if (next_ >= order_.size()) return std::nullopt;
    return order_[next_++];
  }
  void observe(const Evaluation&) override {}
  std::vector<std::size_t> upcoming(std::size_t limit) const override {
    const std::size_t end = std::min(order_.size(), next_ + limit);
    return {order_.begin() + static_cast<std::ptrdiff_t>(next_), order_.begin() + static_cast<std::ptrdiff_t>(end)};
  }
  std::size_t planned() const override { return order_.size(); }
  std::string hypothesis() const override {
    return next_ <= 1 ? "random search: the space's default, the baseline"
                      : "random search: a variant drawn at random may beat the best so far";
  }

 private:
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
};

}  // namespace

KILN_REGISTER_STRATEGY({"random", "the default, then distinct variants drawn at random (the baseline for budgets)",
                        {{"budget", "distinct variants to measure: a count, or a fraction of the space (default 1/3)"}},
                        [](const SearchSpace& space, const StrategyOptions& o, std::uint64_t seed) -> std::unique_ptr<Searcher> {
                          return std::make_unique<RandomSearch>(space, o.budget(space.size()), seed);
                        }});

}  // namespace kiln::tuner
