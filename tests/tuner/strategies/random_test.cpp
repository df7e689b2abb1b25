// The random strategy (autotune/tuner/strategies/random.cpp).
#include <set>

#include "kiln_catch.hpp"
#include "search.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;

TEST_CASE("random search measures the default, then distinct variants, within its budget") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  auto score = [](std::size_t v) { return std::optional<double>(10.0 - static_cast<double>(v % 7)); };
  auto s = make_searcher("random", space, StrategyOptions{{"budget", "5"}}, 11);
  CHECK(s->planned() == 5);
  auto r = replay(*s, score);
  REQUIRE(r.evaluations.size() == 5);
  CHECK(r.evaluations.front().variant == space.default_variant);
  std::set<std::size_t> unique;
  for (const auto& e : r.evaluations) unique.insert(e.variant);
  CHECK(unique.size() == 5);

  // The same seed draws the same variants; another seed, another order.
  auto again = replay(*make_searcher("random", space, StrategyOptions{{"budget", "5"}}, 11), score);
  auto other = replay(*make_searcher("random", space, StrategyOptions{{"budget", "10"}}, 12), score);
  bool differs = false;
  for (std::size_t i = 0; i < r.evaluations.size(); ++i) {
    CHECK(again.evaluations[i].variant == r.evaluations[i].variant);
    differs = differs || other.evaluations[i].variant != r.evaluations[i].variant;
  }
  CHECK(differs);
}

TEST_CASE("random search with the whole space as budget finds the best") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  auto score = [](std::size_t v) { return std::optional<double>(v == 6 ? 1.0 : 2.0); };
  auto r = replay(*make_searcher("random", space, StrategyOptions{{"budget", "1000"}}, 5), score);
  CHECK(r.evaluations.size() == space.size());
  CHECK(r.best == std::optional<std::size_t>(6));
}
