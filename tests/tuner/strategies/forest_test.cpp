// The forest strategy (autotune/tuner/strategies/forest.cpp).
#include <set>

#include "kiln_catch.hpp"
#include "search.hpp"
#include "strategies/synthetic_space.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;

namespace {

std::vector<std::size_t> proposals(const ReplayResult& r) {
  std::vector<std::size_t> v;
  for (const auto& e : r.evaluations) v.push_back(e.variant);
  return v;
}

}  // namespace

TEST_CASE("forest search spends its budget on distinct variants, the default first, reproducibly") {
  kiln_test::SyntheticSpace s;
  auto recorded = [&](std::size_t v) { return s.scores[v]; };
  auto first = make_searcher("forest", s.space, StrategyOptions{{"budget", "120"}}, 5);
  CHECK(first->planned() == 120);
  const auto a = replay(*first, recorded);
  REQUIRE(a.evaluations.size() == 120);
  CHECK(a.evaluations.front().variant == s.space.default_variant);
  const auto order = proposals(a);
  CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == order.size());
  CHECK(proposals(replay(*make_searcher("forest", s.space, StrategyOptions{{"budget", "120"}}, 5), recorded)) == order);
  CHECK(proposals(replay(*make_searcher("forest", s.space, StrategyOptions{{"budget", "120"}}, 6), recorded)) != order);
  // A fraction of the space, rounded up.
  CHECK(make_searcher("forest", s.space, StrategyOptions{{"budget", "0.1"}}, 1)->planned() == (s.space.size() + 9) / 10);
}

TEST_CASE("forest search proposes every variant once when the budget is the whole space") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  auto s = make_searcher("forest", space, StrategyOptions{{"budget", "1000"}, {"initial", "2"}}, 3);
  CHECK(s->planned() == space.size());
  const auto order = proposals(replay(*s, [](std::size_t v) { return std::optional<double>(1.0 + static_cast<double>(v % 4)); }));
  CHECK(order.size() == space.size());
  CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == space.size());
}

TEST_CASE("forest search goes on past failed variants and finds a passing best") {
  kiln_test::SyntheticSpace s(0.6);
  const auto fails = [&](std::size_t v) { return !s.scores[v]; };
  const auto r = replay(*make_searcher("forest", s.space, StrategyOptions{{"budget", "200"}}, 9),
                        [&](std::size_t v) { return s.scores[v]; });
  REQUIRE(r.evaluations.size() == 200);
  REQUIRE(r.best.has_value());
  CHECK_FALSE(fails(*r.best));
  // Every variant failing: the budget is spent all the same, with no variant twice.
  const auto none = replay(*make_searcher("forest", s.space, StrategyOptions{{"budget", "50"}}, 9),
                           [](std::size_t) { return std::optional<double>(); });
  CHECK(none.evaluations.size() == 50);
  CHECK_FALSE(none.best.has_value());
  const auto order = proposals(none);
  CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == 50);
}

TEST_CASE("forest search beats random search at a tenth of a rugged space") {
  kiln_test::SyntheticSpace s;
  auto recorded = [&](std::size_t v) { return s.scores[v]; };
  int forest_wins = 0, optimum = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto g = replay(*make_searcher("forest", s.space, StrategyOptions{{"budget", "0.1"}}, seed), recorded);
    const auto r = replay(*make_searcher("random", s.space, StrategyOptions{{"budget", "0.1"}}, seed), recorded);
    if (*s.scores[*g.best] <= *s.scores[*r.best]) ++forest_wins;
    if (*s.scores[*g.best] == s.optimum()) ++optimum;
  }
  CHECK(forest_wins == 10);
  CHECK(optimum >= 8);
}

TEST_CASE("forest search checks its options") {
  kiln_test::SyntheticSpace s;
  CHECK_THROWS_WITH(make_searcher("forest", s.space, StrategyOptions{{"tree", "8"}}, 1),
                    kiln_test::ContainsSubstring("has no option 'tree' (its options: budget, initial, trees)"));
  CHECK_THROWS_WITH(make_searcher("forest", s.space, StrategyOptions{{"trees", "0"}}, 1),
                    kiln_test::ContainsSubstring("trees=0: at least 1 tree"));
  for (const char* bad : {"-1", "some", "2.5"}) {
    INFO(bad);
    CHECK_THROWS_WITH(make_searcher("forest", s.space, StrategyOptions{{"initial", bad}}, 1),
                      kiln_test::ContainsSubstring("initial=" + std::string(bad) + ": expected a count"));
  }
  auto ok = make_searcher("forest", s.space, StrategyOptions{{"initial", "5"}, {"trees", "8"}}, 1);
  CHECK(ok->name() == "forest");
  CHECK(ok->hypothesis().find("forest search") == 0);
}
