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
  kiln_test::check_algorithms_measured_first("forest");
  // The proposal after the default says why it was made.
  kiln_test::AlgorithmSpace s;
  auto searcher = make_searcher("forest", s.space, StrategyOptions{{"budget", "0.3"}}, 1);
  searcher->observe({*searcher->propose(), 1.0});
  searcher->propose();
  CHECK(searcher->hypothesis() == "forest search: a value of a categorical parameter (an algorithm) not measured yet");
}
