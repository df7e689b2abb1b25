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

TEST_CASE("the registry names every strategy and refuses unknown ones") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  const auto names = strategy_names();
  // A space's tuning.search is checked against the model's list when generated: the two agree.
  std::vector<std::string> listed(std::begin(kiln::model::kSearchStrategies), std::end(kiln::model::kSearchStrategies));
  std::sort(listed.begin(), listed.end());
  CHECK(listed == names);
  CHECK_THROWS_WITH(make_searcher("bayes", space, {}, 1),
                    kiln_test::ContainsSubstring("unknown search strategy 'bayes' (known: anneal, exhaustive, forest, genetic, random)"));
}

TEST_CASE("the options a space may set are the registry's, but the budget") {
  for (const auto& named : kiln::model::search_option_names()) {
    INFO(named.strategy);
    const auto& schema = strategies().at(named.strategy).options;
    std::vector<std::string> registry, model(named.options.begin(), named.options.end());
    for (const auto& o : schema) {
      if (o.name != "budget") registry.push_back(o.name);
    }
    CHECK(model == registry);
  }
  CHECK(kiln::model::search_option_names().size() == strategy_names().size());
}

TEST_CASE("a strategy's options are checked against its schema") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  CHECK_THROWS_WITH(make_searcher("anneal", space, StrategyOptions{{"budjet", "5"}}, 1),
                    kiln_test::ContainsSubstring("search strategy 'anneal' has no option 'budjet' (its options: budget)"));
  CHECK_THROWS_WITH(make_searcher("exhaustive", space, StrategyOptions{{"budget", "5"}}, 1),
                    kiln_test::ContainsSubstring("(its options: none)"));
  for (const char* bad : {"-1", "1.5", "five", "nan", "", "1e300"}) {
    INFO(bad);
    CHECK_THROWS_WITH(make_searcher("random", space, StrategyOptions{{"budget", bad}}, 1),
                      kiln_test::ContainsSubstring("expected a count (20) or a fraction of the space (0.15)"));
  }
  CHECK_THROWS_WITH(StrategyOptions::parse({"budget"}), kiln_test::ContainsSubstring("not of the form key=value"));
  CHECK(StrategyOptions::parse({"budget=7", "x=a=b"}).values().at("x") == "a=b");
}
