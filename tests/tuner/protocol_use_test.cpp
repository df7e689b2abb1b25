// The tuner's side of the protocol: the plan it writes (the one seed rule), the events it reads
// from a variant process (one it cannot read fails the variant, naming the key), and timings read
// from their median column rather than from the JSON beside it.
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "evaluate.hpp"
#include "kiln_catch.hpp"
#include "replay.hpp"
#include "temp_dir.hpp"
#include "tuner_fixture.hpp"

using kiln_test::ContainsSubstring;
namespace model = kiln::model;

namespace {

// A stand-in for a variant executable: keeps the plan it was given and prints `lines`.
std::filesystem::path fake_variant(const kiln_test::TempDir& dir, const std::string& lines) {
  const auto script = dir / "fake_variant";
  kiln_test::write_file(script, "#!/bin/sh\ncp \"$3\" \"" + (dir / "given.plan.json").string() + "\"\n" + lines);
  chmod(script.c_str(), 0755);
  return script;
}

}  // namespace

TEST_CASE("the tuner writes the plan through the protocol, with the seed rule's seed for the variant") {
  kiln_test::GeneratedToy toy;
  kiln_test::TempDir dir("kiln-protocol-use");
  kiln::tuner::EvaluationContext ctx;
  ctx.manifest = &toy.manifest;
  ctx.seed = 99;
  ctx.repetitions = 5;
  ctx.min_repetitions = 3;
  ctx.checks_per_problem = 2;
  ctx.repetition_seconds = 0.004;
  const std::string variant = toy.manifest.variants[0].name;
  const model::Plan plan = kiln::tuner::plan_for(ctx, variant, toy.manifest.problems, {toy.manifest.problems[1]});
  const auto r = kiln::tuner::run_plan(fake_variant(dir, "echo '{\"event\":\"done\"}'\n"), plan, dir / "scratch", 30.0,
                                       [](const model::Event&) {});
  REQUIRE(r.exited_cleanly());
  const model::Plan given = model::read_plan(dir / "given.plan.json");
  CHECK(given.seed == model::plan_seed(99, variant));
  CHECK(given.check_seed == 99);  // the same for every variant: checks see the same inputs
  CHECK(given.check == toy.manifest.problems);
  CHECK(given.bench.size() == 1);
  CHECK(given.checks_per_problem == 2);
  CHECK(given.repetitions == 5);
  CHECK(given.min_repetitions == 3);
  CHECK(given.repetition_seconds == 0.004);
  CHECK(given.tolerance == toy.manifest.tolerance);
}

TEST_CASE("an event the tuner cannot read arrives as a runtime error naming the key, a launcher's lines are skipped") {
  kiln_test::TempDir dir("kiln-protocol-use");
  const std::string lines =
      "echo '==PROF== Connected to process'\n"
      "echo '{\"event\":\"bench\",\"index\":0}'\n"
      "echo '{\"event\":\"done\"}'\n";
  std::vector<model::Event> events;
  const auto r = kiln::tuner::run_plan(fake_variant(dir, lines), model::Plan{}, dir / "scratch", 30.0,
                                       [&](const model::Event& e) { events.push_back(e); });
  REQUIRE(r.exited_cleanly());
  REQUIRE(events.size() == 2);
  const auto* error = std::get_if<model::ErrorEvent>(&events[0]);
  REQUIRE(error != nullptr);
  CHECK(error->kind == model::HarnessFailure::runtime);
  CHECK_THAT(error->message, ContainsSubstring("the tuner cannot read the variant's event: fake_variant output line 2: "
                                               "/problem: required key is missing"));
  CHECK(std::holds_alternative<model::DoneEvent>(events[1]));
}

TEST_CASE("recorded timings are read from their median column, and one without it is an error naming it") {
  kiln_test::GeneratedToy toy;
  const kiln::tuner::Manifest& m = toy.manifest;
  auto log = kiln::worklog::Worklog::open(toy.dir / "w.sqlite");
  kiln::worklog::Session s;
  s.kernel = m.kernel;
  s.context_key = "ctx";
  const std::int64_t session = log.start_session(s);
  auto put = [&](std::size_t v, const kiln::Problem& p, std::optional<double> median) {
    kiln::worklog::Measurement meas;
    meas.key = {"ctx", m.kernel, m.variants[v].name, "hash", p.key(), kiln::worklog::Phase::bench};
    meas.result = R"({"median_s": 1.0})";  // not what was measured: the column is
    meas.session_id = session;
    meas.median_s = median;
    log.put_measurement(meas);
  };
  for (std::size_t v = 0; v < m.variants.size(); ++v) {
    for (const auto& p : m.problems) put(v, p, 2e-6 * static_cast<double>(v + 1));
  }
  const auto scores = kiln::tuner::recorded_scores(log, m);
  REQUIRE(scores.size() == m.variants.size());
  CHECK(*scores.at(0) == kiln_test::Approx(2e-6));
  CHECK(*scores.at(2) == kiln_test::Approx(6e-6));

  put(1, m.problems[0], std::nullopt);
  CHECK_THROWS_WITH(kiln::tuner::recorded_scores(log, m),
                    ContainsSubstring("the worklog's timing of " + m.variants[1].name + " on " + m.problems[0].key() +
                                      " (context ctx) has no median_s"));
}

TEST_CASE("a timing's bound: the ratio times the fastest current timing of another variant on the problem") {
  kiln_test::GeneratedToy toy;
  const kiln::tuner::Manifest& m = toy.manifest;
  REQUIRE(m.variants.size() >= 4);
  auto log = kiln::worklog::Worklog::open(toy.dir / "w.sqlite");
  kiln::tuner::EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.log = &log;
  ctx.context_key = "ctx";
  ctx.stop_ratio = 3;
  auto put = [&](std::size_t v, const std::string& hash, const kiln::Problem& p, double median,
                 const std::string& context = "ctx") {
    kiln::worklog::Measurement meas;
    meas.key = {context, m.kernel, m.variants[v].name, hash, p.key(), kiln::worklog::Phase::bench};
    meas.result = "{}";
    meas.median_s = median;
    log.put_measurement(meas);
  };
  const auto& a = m.problems[0];
  const auto& b = m.problems[1];
  put(1, kiln::tuner::variant_hash(ctx, 1), a, 4e-6);
  put(2, kiln::tuner::variant_hash(ctx, 2), a, 5e-6);
  put(3, "an older source", a, 1e-6);                   // not the code that runs now
  put(0, kiln::tuner::variant_hash(ctx, 0), a, 2e-6);   // the variant's own: not a bound on itself
  put(2, kiln::tuner::variant_hash(ctx, 2), b, 1e-6, "another machine");

  const auto bounds = kiln::tuner::stop_bounds(ctx, 0, {a, b});
  REQUIRE(bounds.size() == 1);  // nobody has timed b here
  CHECK(bounds.at(a.key()) == kiln_test::Approx(12e-6));
  CHECK(kiln::tuner::stop_bounds(ctx, 1, {a}).at(a.key()) == kiln_test::Approx(6e-6));
  // Never within twice the regret tolerance, where a variant may still serve a point.
  kiln::tuner::Manifest tolerant = m;
  tolerant.tuning.regret_tolerance = 2;
  ctx.manifest = &tolerant;
  CHECK(kiln::tuner::stop_bounds(ctx, 0, {a}).at(a.key()) == kiln_test::Approx(16e-6));
  ctx.stop_ratio = 0;
  CHECK(kiln::tuner::stop_bounds(ctx, 0, {a, b}).empty());
}
