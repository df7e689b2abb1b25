// The test cases every budgeted search strategy owes (strategies/<name>_test.cpp instantiates them
// with KILN_BUDGETED_STRATEGY_TESTS): its budget spent on distinct variants, the default first,
// reproducibly; the whole space once; failures gone past; better than random search at a tenth of
// a rugged space.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "kiln_catch.hpp"
#include "search.hpp"
#include "strategies/synthetic_space.hpp"
#include "tuner_fixture.hpp"

namespace kiln_test {

inline std::vector<std::size_t> proposals(const kiln::tuner::ReplayResult& r) {
  std::vector<std::size_t> v;
  for (const auto& e : r.evaluations) v.push_back(e.variant);
  return v;
}

// For the strategies that measure each value of a categorical parameter first (forest, genetic):
// on AlgorithmSpace at a budget of 30 %, over 20 seeds, the default comes first, then the one
// all-pairs variant (METHOD's other value), then a body walk (WALK's), each variant once. A random
// design misses all-pairs (1 of 65) in most seeds: an H200 tuning of nbody_tree_cuda_e3 on
// 2026-11-28 measured 25 tree variants and no all-pairs, so its dispatch could place no crossover.
inline void check_algorithms_measured_first(const char* strategy) {
  AlgorithmSpace s;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO(strategy << " seed " << seed);
    auto searcher = kiln::tuner::make_searcher(strategy, s.space, kiln::tuner::StrategyOptions{{"budget", "0.3"}}, seed);
    const auto order = proposals(kiln::tuner::replay(*searcher, [&](std::size_t v) { return std::optional<double>(s.scores[v]); }));
    REQUIRE(order.size() == searcher->planned());
    REQUIRE(order.size() >= 3);
    CHECK(order[0] == s.space.default_variant);
    CHECK(order[1] == s.allpairs);
    CHECK(s.space.coordinates[order[2]][1] == 1);
    CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == order.size());
  }
}

}  // namespace kiln_test

// STRATEGY: the strategy's name (a string literal); SMALL_KEY: its option that, set to 2, lets a
// budget of the whole space be spent (e.g. the random design's or the population's size).
#define KILN_BUDGETED_STRATEGY_TESTS(STRATEGY, SMALL_KEY) \
TEST_CASE(STRATEGY " search spends its budget on distinct variants, the default first, reproducibly") { \
  kiln_test::SyntheticSpace s; \
  auto recorded = [&](std::size_t v) { return s.scores[v]; }; \
  auto first = make_searcher(STRATEGY, s.space, StrategyOptions{{"budget", "120"}}, 5); \
  CHECK(first->planned() == 120); \
  const auto a = replay(*first, recorded); \
  REQUIRE(a.evaluations.size() == 120); \
  CHECK(a.evaluations.front().variant == s.space.default_variant); \
  const auto order = kiln_test::proposals(a); \
  CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == order.size()); \
  CHECK(kiln_test::proposals(replay(*make_searcher(STRATEGY, s.space, StrategyOptions{{"budget", "120"}}, 5), recorded)) == order); \
  CHECK(kiln_test::proposals(replay(*make_searcher(STRATEGY, s.space, StrategyOptions{{"budget", "120"}}, 6), recorded)) != order); \
  /* A fraction of the space, rounded up. */ \
  CHECK(make_searcher(STRATEGY, s.space, StrategyOptions{{"budget", "0.1"}}, 1)->planned() == (s.space.size() + 9) / 10); \
} \
 \
TEST_CASE(STRATEGY " search proposes every variant once when the budget is the whole space") { \
  kiln_test::GeneratedToy toy; \
  SearchSpace space = SearchSpace::from(toy.manifest); \
  auto s = make_searcher(STRATEGY, space, StrategyOptions{{"budget", "1000"}, {SMALL_KEY, "2"}}, 3); \
  CHECK(s->planned() == space.size()); \
  const auto order = kiln_test::proposals(replay(*s, [](std::size_t v) { return std::optional<double>(1.0 + static_cast<double>(v % 4)); })); \
  CHECK(order.size() == space.size()); \
  CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == space.size()); \
} \
 \
TEST_CASE(STRATEGY " search goes on past failed variants and finds a passing best") { \
  kiln_test::SyntheticSpace s(0.6); \
  const auto fails = [&](std::size_t v) { return !s.scores[v]; }; \
  const auto r = replay(*make_searcher(STRATEGY, s.space, StrategyOptions{{"budget", "200"}}, 9), \
                        [&](std::size_t v) { return s.scores[v]; }); \
  REQUIRE(r.evaluations.size() == 200); \
  REQUIRE(r.best.has_value()); \
  CHECK_FALSE(fails(*r.best)); \
  /* Every variant failing: the budget is spent all the same, with no variant twice. */ \
  const auto none = replay(*make_searcher(STRATEGY, s.space, StrategyOptions{{"budget", "50"}}, 9), \
                           [](std::size_t) { return std::optional<double>(); }); \
  CHECK(none.evaluations.size() == 50); \
  CHECK_FALSE(none.best.has_value()); \
  const auto order = kiln_test::proposals(none); \
  CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == 50); \
} \
 \
TEST_CASE(STRATEGY " search beats random search at a tenth of a rugged space") { \
  kiln_test::SyntheticSpace s; \
  auto recorded = [&](std::size_t v) { return s.scores[v]; }; \
  int wins = 0, optimum = 0; \
  for (std::uint64_t seed = 1; seed <= 10; ++seed) { \
    const auto g = replay(*make_searcher(STRATEGY, s.space, StrategyOptions{{"budget", "0.1"}}, seed), recorded); \
    const auto r = replay(*make_searcher("random", s.space, StrategyOptions{{"budget", "0.1"}}, seed), recorded); \
    if (*s.scores[*g.best] <= *s.scores[*r.best]) ++wins; \
    if (*s.scores[*g.best] == s.optimum()) ++optimum; \
  } \
  CHECK(wins == 10); \
  CHECK(optimum >= 8); \
}
