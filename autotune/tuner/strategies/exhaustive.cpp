// Exhaustive search: every feasible variant once, the space's default first.
#include <algorithm>
#include <cstddef>

#include "search.hpp"

namespace kiln::tuner {
namespace {

class ExhaustiveSearch final : public Searcher {
 public:
  explicit ExhaustiveSearch(const SearchSpace& space) {
    order_.push_back(space.default_variant);
    for (std::size_t i = 0; i < space.size(); ++i) {
      if (i != space.default_variant) order_.push_back(i);
    }
  }
  std::string name() const override { return "exhaustive"; }
  std::optional<std::size_t> propose() override {
    if (next_ >= order_.size()) return std::nullopt;
    return order_[next_++];
  }
  void observe(const Evaluation&) override {}
  std::vector<std::size_t> upcoming(std::size_t limit) const override {
    const std::size_t end = std::min(order_.size(), next_ + limit);
    return {order_.begin() + static_cast<std::ptrdiff_t>(next_), order_.begin() + static_cast<std::ptrdiff_t>(end)};
  }
  std::string hypothesis() const override {
    return "exhaustive search: every feasible variant is measured; this one may beat the best so far";
  }
  std::size_t planned() const override { return order_.size(); }

 private:
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
};

}  // namespace

KILN_REGISTER_STRATEGY({"exhaustive", "every feasible variant once, the space's default first", {},
                        [](const SearchSpace& space, const StrategyOptions&, std::uint64_t) -> std::unique_ptr<Searcher> {
                          return std::make_unique<ExhaustiveSearch>(space);
                        }});

}  // namespace kiln::tuner
