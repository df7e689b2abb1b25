// The exhaustive strategy (autotune/tuner/strategies/exhaustive.cpp).
#include <cmath>
#include <set>

#include "kiln_catch.hpp"
#include "search.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;

TEST_CASE("exhaustive search measures the default first, then every variant once") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  auto s = make_searcher("exhaustive", space, {}, 1);
  auto result = replay(*s, [](std::size_t v) { return std::optional<double>(1.0 + static_cast<double>(v)); });
  REQUIRE(result.evaluations.size() == space.size());
  CHECK(result.evaluations.front().variant == space.default_variant);
  std::set<std::size_t> seen;
  for (const auto& e : result.evaluations) seen.insert(e.variant);
  CHECK(seen.size() == space.size());
  CHECK(result.best == std::optional<std::size_t>(0));
}

