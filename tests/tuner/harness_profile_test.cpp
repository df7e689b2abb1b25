// The harness as the tuner runs it, on a real variant executable (toy_cpu's default, linked with
// the CPU harness; a run of problem n takes n nanoseconds): profile mode runs each bench problem
// once inside the profiler range and reports it (nothing is validated or timed); run mode stops a
// timing at its first figure when that is above the plan's bound, and takes a check run of a
// second or more far above the bound as that figure.
#include <filesystem>
#include <fstream>

#include "evaluate.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;

namespace {

kiln::Problem problem(std::int64_t n) {
  kiln::Problem p;
  p.set("n", n);
  p.set("dtype", std::string("fp32"));
  return p;
}

}  // namespace

TEST_CASE("harness profile mode: one profiled run per bench problem, then done") {
  kiln_test::TempDir dir("kiln-harness-profile");
  kiln::model::Plan plan;
  plan.seed = 3;
  plan.bench = {problem(1000), problem(64)};
  std::vector<kiln::model::Event> events;
  auto limit = [] { return std::chrono::duration<double>(30); };
  const auto r = kiln::tuner::run_plan(KILN_TOY_VARIANT, plan, dir.path(), kiln::tuner::SilenceLimit(limit),
                                       [&](const kiln::model::Event& e) { events.push_back(e); }, {}, {}, "profile");
  REQUIRE(r.exited_cleanly());
  std::vector<std::string> kinds;
  std::vector<kiln::model::ProfiledEvent> profiled;
  for (const auto& e : events) {
    const auto json = kiln::model::to_json(e);
    if (json.at("event") != "progress") kinds.push_back(json.at("event").get<std::string>());
    if (const auto* p = std::get_if<kiln::model::ProfiledEvent>(&e)) profiled.push_back(*p);
  }
  CHECK(kinds == std::vector<std::string>{"start", "profiled", "profiled", "done"});
  REQUIRE(profiled.size() == 2);
  CHECK(profiled[0].index == 0);
  CHECK(profiled[0].problem.key() == "n=1000 dtype=fp32");
  CHECK(profiled[1].problem.key() == "n=64 dtype=fp32");
  // The CPU has no kernel launches to describe.
  CHECK_FALSE(profiled[0].launches);
  // The start event describes the CPU the way the probe does.
  const auto* start = std::get_if<kiln::model::StartEvent>(&events.front());
  REQUIRE(start != nullptr);
  CHECK(start->device.backend == "cpu");
  CHECK(start->device.threads);
}

TEST_CASE("harness: a plan it cannot read is a usage error naming the key") {
  kiln_test::TempDir dir("kiln-harness-profile");
  const auto plan_file = dir / "bad.plan.json";
  {
    nlohmann::ordered_json plan = kiln::model::to_json(kiln::model::Plan{});
    plan.erase("repetitions");
    std::ofstream(plan_file) << plan.dump();
  }
  std::string output;
  const auto r = kiln::tuner::run_child({KILN_TOY_VARIANT, "run", "--plan", plan_file.string()}, std::chrono::seconds(30),
                                        [&](const std::string& line) { output += line; });
  CHECK(r.exit_code == 2);
  CHECK(output.empty());
  CHECK_THAT(r.stderr_tail, ContainsSubstring(plan_file.string() + ": /repetitions: required key is missing"));
}

TEST_CASE("harness: an unknown mode is a usage error that names the modes") {
  kiln_test::TempDir dir("kiln-harness-profile");
  const auto r = kiln::tuner::run_plan(KILN_TOY_VARIANT, kiln::model::Plan{}, dir.path(), 30.0,
                                       [](const kiln::model::Event&) {});
  REQUIRE(r.exited_cleanly());  // an empty plan runs and is done
  auto limit = [] { return std::chrono::duration<double>(30); };
  const auto bad = kiln::tuner::run_plan(KILN_TOY_VARIANT, kiln::model::Plan{}, dir.path(),
                                         kiln::tuner::SilenceLimit(limit), [](const kiln::model::Event&) {}, {}, {},
                                         "profiles");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.stderr_tail, ContainsSubstring("info | run --plan FILE | profile --plan FILE"));
}

TEST_CASE("harness run: a timing above the plan's bound stops at its first figure and says so") {
  kiln_test::TempDir dir("kiln-harness-stop");
  kiln::model::Plan plan;
  plan.seed = 5;
  plan.repetitions = 7;
  plan.min_repetitions = 3;
  plan.settled_spread = 0.5;
  plan.repetition_seconds = 0.005;
  // 20 us: stopped after its first repetition; 20.001 us: no bound; 20.002 us: a bound far above;
  // 3 ms: stopped at the calibration's single runs (long enough that their overhead is nothing).
  plan.bench = {problem(20000), problem(20001), problem(20002), problem(3000000)};
  plan.stop_above_s = {{problem(20000).key(), 1e-9}, {problem(20002).key(), 10.0}, {problem(3000000).key(), 1e-3}};
  std::vector<kiln::model::BenchEvent> timed;
  const auto r = kiln::tuner::run_plan(KILN_TOY_VARIANT, plan, dir.path(), 60.0, [&](const kiln::model::Event& e) {
    if (const auto* b = std::get_if<kiln::model::BenchEvent>(&e)) timed.push_back(*b);
  });
  REQUIRE(r.exited_cleanly());
  REQUIRE(timed.size() == 4);

  CHECK(timed[0].stopped_above_s == 1e-9);
  CHECK(timed[0].repetitions == 1);
  CHECK(timed[0].samples_s.size() == 1);
  CHECK(timed[0].batch > 1);  // a timed batch, not a single run
  CHECK(timed[0].median_s >= 20e-6);

  for (std::size_t i : {1, 2}) {
    INFO(timed[i].problem.key());
    CHECK_FALSE(timed[i].stopped_above_s);
    CHECK(timed[i].repetitions >= 3);
  }

  CHECK(timed[3].stopped_above_s == 1e-3);
  CHECK(timed[3].batch == 1);
  CHECK(timed[3].iterations == 1);
  CHECK(timed[3].rotation == 1);
  CHECK(timed[3].repetitions == 1);  // the calibration's first single run
  CHECK(timed[3].median_s >= 3e-3);
}

TEST_CASE("harness run: a check run of a second or more, three times over the bound, is the timing's one figure") {
  kiln_test::TempDir dir("kiln-harness-first");
  kiln::model::Plan plan;
  plan.seed = 7;
  plan.tolerance = {{"fp32", 1e-6}};
  plan.repetitions = 5;
  plan.min_repetitions = 3;
  plan.repetition_seconds = 0.005;
  // 1.05 s, checked first, bound 0.1 s: the check run is the figure and nothing of it runs again.
  // 0.5 s checked, bound 0.01 s: a check run under a second is not taken (a first run can hold
  // costs the later ones do not have); the calibration's single run stops it, as before. 30 ms,
  // not checked, bound 1 ms: its warm-up is never a figure; the single run stops it.
  plan.check = {problem(1'050'000'000), problem(500'000'000)};
  plan.bench = {problem(1'050'000'000), problem(500'000'000), problem(30'000'000)};
  plan.stop_above_s = {{problem(1'050'000'000).key(), 0.1}, {problem(500'000'000).key(), 0.01},
                       {problem(30'000'000).key(), 0.001}};
  std::vector<kiln::model::BenchEvent> timed;
  std::vector<kiln::model::CheckEvent> checked;
  std::string failure;
  const auto r = kiln::tuner::run_plan(KILN_TOY_VARIANT, plan, dir.path(), 60.0, [&](const kiln::model::Event& e) {
    if (const auto* b = std::get_if<kiln::model::BenchEvent>(&e)) timed.push_back(*b);
    if (const auto* c = std::get_if<kiln::model::CheckEvent>(&e)) checked.push_back(*c);
    if (const auto* f = std::get_if<kiln::model::ErrorEvent>(&e)) failure = f->message;
  });
  INFO(r.describe() + ": " + failure);
  REQUIRE(r.exited_cleanly());
  REQUIRE(checked.size() == 2);
  CHECK(checked[0].passed);
  REQUIRE(timed.size() == 3);

  CHECK(timed[0].method == "check run");
  CHECK(timed[0].stopped_above_s == 0.1);
  CHECK(timed[0].samples_s == std::vector<double>{checked[0].run_s});
  CHECK(timed[0].median_s >= 1.05);

  for (std::size_t i : {1, 2}) {
    INFO(timed[i].problem.key());
    CHECK(timed[i].method != "check run");
    CHECK(timed[i].repetitions == 1);
    CHECK(timed[i].batch == 1);  // the calibration's single run
    CHECK(timed[i].stopped_above_s);
  }
}
