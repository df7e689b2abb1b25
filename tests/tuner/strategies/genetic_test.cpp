// The genetic strategy (autotune/tuner/strategies/genetic.cpp).
#include "strategies/budgeted_strategy_tests.hpp"

using namespace kiln::tuner;

KILN_BUDGETED_STRATEGY_TESTS("genetic", "population")

TEST_CASE("genetic search checks its options") {
  kiln_test::SyntheticSpace s;
  CHECK_THROWS_WITH(make_searcher("genetic", s.space, StrategyOptions{{"populace", "8"}}, 1),
                    kiln_test::ContainsSubstring("has no option 'populace' (its options: budget, population, tournament, mutation)"));
  CHECK_THROWS_WITH(make_searcher("genetic", s.space, StrategyOptions{{"population", "1"}}, 1),
                    kiln_test::ContainsSubstring("population=1: at least 2 parents"));
  CHECK_THROWS_WITH(make_searcher("genetic", s.space, StrategyOptions{{"tournament", "0"}}, 1),
                    kiln_test::ContainsSubstring("tournament=0: at least 1 contender"));
  for (const char* bad : {"1.5", "-0.1", "often", ""}) {
    INFO(bad);
    CHECK_THROWS_WITH(make_searcher("genetic", s.space, StrategyOptions{{"mutation", bad}}, 1),
                      kiln_test::ContainsSubstring("mutation=" + std::string(bad) + ": expected a number from 0 to 1"));
  }
  auto ok = make_searcher("genetic", s.space, StrategyOptions{{"population", "6"}, {"tournament", "2"}, {"mutation", "0.5"}}, 1);
  CHECK(ok->name() == "genetic");
  CHECK(ok->hypothesis().find("genetic search") == 0);
}

TEST_CASE("genetic search founds its population with every value of a categorical parameter") {
  kiln_test::check_algorithms_measured_first("genetic");
}
