// Search strategies, driven offline: by synthetic landscapes for their mechanics, and by results
// recorded in a real tuning run (data/) for how well they find the best variant.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "kiln_catch.hpp"
#include "search.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;

TEST_CASE("the toy space's grid") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  // TILE*VEC <= 64 prunes (8,16): 11 of 12 combinations.
  REQUIRE(space.size() == 11);
  CHECK(space.value_counts == std::vector<int>{4, 3});
  CHECK(toy.manifest.variants[space.default_variant].name == "toy__TILE2_VEC8");
  CHECK(space.find({3, 2}) == std::nullopt);
  CHECK(space.find({0, 0}) == std::optional<std::size_t>(0));
}

TEST_CASE("exhaustive search measures the default first, then every variant once") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  auto s = make_exhaustive(space);
  auto result = replay(*s, [](std::size_t v) { return std::optional<double>(1.0 + static_cast<double>(v)); });
  REQUIRE(result.evaluations.size() == space.size());
  CHECK(result.evaluations.front().variant == space.default_variant);
  std::set<std::size_t> seen;
  for (const auto& e : result.evaluations) seen.insert(e.variant);
  CHECK(seen.size() == space.size());
  CHECK(result.best == std::optional<std::size_t>(0));
}

TEST_CASE("annealing stays in budget, never repeats, and is reproducible from its seed") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  // A bowl with its minimum at TILE=8, VEC=8 and one failing variant.
  auto landscape = [&](std::size_t v) -> std::optional<double> {
    const auto& c = space.coordinates[v];
    if (c[0] == 0 && c[1] == 0) return std::nullopt;
    return 1.0 + std::pow(c[0] - 3, 2) + std::pow(c[1] - 1, 2);
  };
  auto first = make_annealing(space, 6, 42);
  auto a = replay(*first, landscape);
  CHECK(a.evaluations.size() == 6);
  std::set<std::size_t> unique;
  for (const auto& e : a.evaluations) unique.insert(e.variant);
  CHECK(unique.size() == a.evaluations.size());
  CHECK(a.evaluations.front().variant == space.default_variant);

  auto second = make_annealing(space, 6, 42);
  auto b = replay(*second, landscape);
  REQUIRE(b.evaluations.size() == a.evaluations.size());
  for (std::size_t i = 0; i < a.evaluations.size(); ++i) CHECK(a.evaluations[i].variant == b.evaluations[i].variant);

  auto whole = make_annealing(space, 100, 7);
  CHECK(replay(*whole, landscape).evaluations.size() == space.size());
}

TEST_CASE("an unknown strategy is refused") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  CHECK_THROWS_WITH(make_searcher("random", space, 0, 1), kiln_test::ContainsSubstring("unknown search strategy 'random'"));
}
