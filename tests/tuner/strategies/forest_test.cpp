// The forest strategy (autotune/tuner/strategies/forest.cpp).
#include "strategies/budgeted_strategy_tests.hpp"

using namespace kiln::tuner;

KILN_BUDGETED_STRATEGY_TESTS("forest", "initial")

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

TEST_CASE("forest search measures every value of a categorical parameter before its random design") {
  // The tree N-body's space at a budget of 30 %: all-pairs is one variant of 65, and a random
  // initial design missed it (an H200 tuning of 2026-11-28 measured 25 tree variants and no
  // all-pairs, so its dispatch could not place the crossover).
  kiln_test::AlgorithmSpace s;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    auto searcher = make_searcher("forest", s.space, StrategyOptions{{"budget", "0.3"}}, seed);
    std::vector<std::size_t> proposed;
    while (auto v = searcher->propose()) {
      if (proposed.size() == 1) CHECK(searcher->hypothesis().find("categorical") != std::string::npos);
      proposed.push_back(*v);
      searcher->observe({*v, s.scores[*v]});
    }
    REQUIRE(proposed.size() == 20);
    CHECK(proposed[0] == s.space.default_variant);
    CHECK(proposed[1] == s.allpairs);                     // METHOD's other value first
    CHECK(s.space.coordinates[proposed[2]][1] == 1);      // then WALK's
    CHECK(std::count(proposed.begin(), proposed.end(), s.allpairs) == 1);
    std::sort(proposed.begin(), proposed.end());
    CHECK(std::adjacent_find(proposed.begin(), proposed.end()) == proposed.end());
  }
}
