// The harness's profile mode as kiln profile runs it (run_plan with the command "profile"): a real
// variant executable (toy_cpu's default, linked with the CPU harness) runs each bench problem once
// inside the profiler range and reports it; nothing is validated or timed.
#include <filesystem>

#include "evaluate.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;

TEST_CASE("harness profile mode: one profiled run per bench problem, then done") {
  kiln_test::TempDir dir("kiln-harness-profile");
  nlohmann::ordered_json plan = {{"seed", 3},
                                 {"check", nlohmann::ordered_json::array()},
                                 {"bench", {{{"n", 1000}, {"dtype", "fp32"}}, {{"n", 64}, {"dtype", "fp32"}}}}};
  std::vector<nlohmann::ordered_json> events;
  auto limit = [] { return std::chrono::duration<double>(30); };
  const auto r = kiln::tuner::run_plan(KILN_TOY_VARIANT, plan, dir.path(), kiln::tuner::SilenceLimit(limit),
                                       [&](const nlohmann::ordered_json& e) { events.push_back(e); }, {}, {}, "profile");
  REQUIRE(r.exited_cleanly());
  std::vector<std::string> kinds;
  for (const auto& e : events) {
    if (e.at("event") != "progress") kinds.push_back(e.at("event").get<std::string>());
  }
  CHECK(kinds == std::vector<std::string>{"start", "profiled", "profiled", "done"});
  const auto profiled = [&](std::size_t index) {
    for (const auto& e : events) {
      if (e.at("event") == "profiled" && e.at("index") == index) return e;
    }
    return nlohmann::ordered_json();
  };
  CHECK(profiled(0).at("key") == "n=1000 dtype=fp32");
  CHECK(profiled(1).at("key") == "n=64 dtype=fp32");
  // The CPU has no kernel launches to describe.
  CHECK_FALSE(profiled(0).contains("launches"));
}

TEST_CASE("harness: an unknown mode is a usage error that names the modes") {
  kiln_test::TempDir dir("kiln-harness-profile");
  const auto r = kiln::tuner::run_plan(KILN_TOY_VARIANT, {{"bench", nlohmann::ordered_json::array()}}, dir.path(), 30.0,
                                       [](const nlohmann::ordered_json&) {});
  REQUIRE(r.exited_cleanly());  // an empty plan runs and is done
  auto limit = [] { return std::chrono::duration<double>(30); };
  const auto bad = kiln::tuner::run_plan(KILN_TOY_VARIANT, {{"bench", nlohmann::ordered_json::array()}}, dir.path(),
                                         kiln::tuner::SilenceLimit(limit), [](const nlohmann::ordered_json&) {}, {}, {},
                                         "profiles");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.stderr_tail, ContainsSubstring("info | run --plan FILE | profile --plan FILE"));
}
