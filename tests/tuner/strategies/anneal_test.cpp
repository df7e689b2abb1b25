// The annealing strategy (autotune/tuner/strategies/anneal.cpp).
#include <cmath>
#include <set>

#include "kiln_catch.hpp"
#include "search.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;

TEST_CASE("annealing stays in budget, never repeats, and is reproducible from its seed") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  // A bowl with its minimum at TILE=8, VEC=8 and one failing variant.
  auto landscape = [&](std::size_t v) -> std::optional<double> {
    const auto& c = space.coordinates[v];
    if (c[0] == 0 && c[1] == 0) return std::nullopt;
    return 1.0 + std::pow(c[0] - 3, 2) + std::pow(c[1] - 1, 2);
  };
  auto first = make_searcher("anneal", space, StrategyOptions{{"budget", "6"}}, 42);
  auto a = replay(*first, landscape);
  CHECK(a.evaluations.size() == 6);
  std::set<std::size_t> unique;
  for (const auto& e : a.evaluations) unique.insert(e.variant);
  CHECK(unique.size() == a.evaluations.size());
  CHECK(a.evaluations.front().variant == space.default_variant);

  auto second = make_searcher("anneal", space, StrategyOptions{{"budget", "6"}}, 42);
  auto b = replay(*second, landscape);
  REQUIRE(b.evaluations.size() == a.evaluations.size());
  for (std::size_t i = 0; i < a.evaluations.size(); ++i) CHECK(a.evaluations[i].variant == b.evaluations[i].variant);

  auto whole = make_searcher("anneal", space, StrategyOptions{{"budget", "100"}}, 7);
  CHECK(replay(*whole, landscape).evaluations.size() == space.size());
}


TEST_CASE("annealing's budget may be a fraction of the space") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  auto s = make_searcher("anneal", space, StrategyOptions{{"budget", "0.5"}}, 3);
  CHECK(s->planned() == 6);  // half of 11, rounded up
  CHECK(make_searcher("anneal", space, {}, 3)->planned() == 4);  // default: a third, rounded up
}
