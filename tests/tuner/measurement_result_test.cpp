// A measurement's result as the tuner stores it (measurement_result.hpp): written and read back
// through the protocol's types, strictly, with one fallback for rows stored before worklog schema
// version 2; the committed H200 worklog reads through it, and a failed check's stored reason
// reaches the variant's outcome.
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "committed_worklog.hpp"
#include "error_message.hpp"
#include "evaluate.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln_catch.hpp"
#include "measurement_result.hpp"
#include "protocol_examples.hpp"
#include "tuner_fixture.hpp"

using kiln::tuner::StoredTiming;
using kiln::worklog::Measurement;
using kiln::worklog::MeasurementStatus;
using kiln::worklog::Phase;
using kiln_test::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

kiln::Problem problem(std::int64_t n) {
  kiln::Problem p;
  p.set("n", n);
  return p;
}

Measurement row(Phase phase, const std::string& result) {
  Measurement m;
  m.key = {"ctx", "toy", "toy__TILE1_VEC4", "h", "n=1", phase};
  m.result = result;
  return m;
}

kiln::model::BenchEvent bench() { return kiln_test::example_bench(problem(1)); }

// A timing with nothing beside the harness's event.
StoredTiming timing() {
  StoredTiming t;
  t.bench = bench();
  return t;
}

kiln::model::CheckEvent failed_check(const std::string& reason) {
  kiln::model::CheckEvent e;
  e.problem = problem(1);
  e.seed = 9;
  e.passed = false;
  e.run_s = 1e-3;
  e.reference_s = 2e-3;
  e.reason = reason;
  return e;
}

// The message of the InputError `f` throws, or "" when it throws none.
template <class F>
std::string input_error(F&& f) {
  return kiln_test::message_of<kiln::model::InputError>(std::forward<F>(f));
}

}  // namespace

TEST_CASE("a timing is stored through the protocol and read back as it was written", "[measurement]") {
  StoredTiming t;
  t.bench = bench();
  t.quietness = {{"others_cores", 0.1}, {"load_average", 0.5}, {"window_s", 1.5}, {"waited_s", 0}, {"quiet", true}};
  kiln::model::DeviceInfo device;
  device.backend = "cpu";
  device.name = "AMD EPYC";
  device.threads = 2;
  t.device = kiln::model::to_json(device);
  t.superseded = nlohmann::ordered_json{{"event", "bench"}, {"median_s", 3e-5}};
  t.interleaved_with = {"toy__TILE1_VEC4", "toy__TILE2_VEC8"};
  t.interleaved_rounds = 2;
  const std::string text = to_json(t).dump();

  const std::optional<StoredTiming> back = kiln::tuner::stored_timing(row(Phase::bench, text));
  REQUIRE(back);
  CHECK(back->bench.median_s == t.bench.median_s);
  CHECK(back->bench.samples_s == t.bench.samples_s);
  CHECK(back->bench.problem.key() == "n=1");
  CHECK(back->quietness == t.quietness);
  CHECK(back->device == t.device);
  CHECK(back->superseded == t.superseded);
  CHECK(back->interleaved_with == t.interleaved_with);
  CHECK(back->interleaved_rounds == 2);
  // Written again, byte for byte: what interleaving rewrites keeps the rest of the row.
  CHECK(to_json(*back).dump() == text);

  // A timing with nothing added (no device reported, never interleaved) reads too.
  const std::optional<StoredTiming> plain_back = kiln::tuner::stored_timing(row(Phase::bench, to_json(timing()).dump()));
  REQUIRE(plain_back);
  CHECK(plain_back->device.empty());
  CHECK(plain_back->interleaved_with.empty());
  CHECK_FALSE(plain_back->interleaved_rounds);
}

TEST_CASE("a stored check reads through the protocol, with its reason", "[measurement]") {
  const std::string text = kiln::model::to_json(kiln::model::Event{failed_check("out[17] is 3, expected 2")}).dump();
  const auto check = kiln::tuner::stored_check(row(Phase::check, text));
  REQUIRE(check);
  CHECK_FALSE(check->passed);
  CHECK(check->reason == "out[17] is 3, expected 2");
}

TEST_CASE("a row stored before schema version 2 reads as nothing, and a damaged one is an error naming it and the place",
          "[measurement]") {
  // As the harness of that time wrote them (presets/records/h200/worklog.tar.gz has both).
  const std::string old_timing =
      R"({"event":"bench","index":0,"problem":{"n":1},"key":"n=1","median_s":2e-05,"mean_s":2e-05,"min_s":1.9e-05,)"
      R"("stddev_s":1e-06,"repetitions":7,"iterations":10,"batch":4,"rotation":2,"method":"steady-clock"})";
  CHECK_FALSE(kiln::tuner::stored_timing(row(Phase::bench, old_timing)));
  const std::string old_check =
      R"({"event":"check","index":0,"problem":{"n":1},"key":"n=1","seed":9,"passed":false,"outputs":[],"reason":"x"})";
  CHECK_FALSE(kiln::tuner::stored_check(row(Phase::check, old_check)));

  nlohmann::ordered_json damaged = to_json(timing());
  damaged["median_s"] = "fast";
  CHECK_THAT(input_error([&] { kiln::tuner::stored_timing(row(Phase::bench, damaged.dump())); }),
             ContainsSubstring("the worklog's timing of toy__TILE1_VEC4 on n=1 (context ctx): /median_s:"));
  damaged = to_json(timing());
  damaged["interleaved_rounds"] = 0;
  CHECK_THAT(input_error([&] { kiln::tuner::stored_timing(row(Phase::bench, damaged.dump())); }),
             ContainsSubstring("/interleaved_rounds:"));
  damaged.erase("interleaved_rounds");
  damaged["noted"] = 1;
  CHECK_THAT(input_error([&] { kiln::tuner::stored_timing(row(Phase::bench, damaged.dump())); }),
             ContainsSubstring("/noted: unknown key"));

  const std::string timing_as_check = to_json(timing()).dump();
  CHECK_THAT(input_error([&] { kiln::tuner::stored_check(row(Phase::check, timing_as_check)); }),
             ContainsSubstring("the worklog's check of toy__TILE1_VEC4 on n=1 (context ctx): /event: expected a check event"));
  CHECK_THAT(input_error([&] { kiln::tuner::stored_check(row(Phase::check, "{\"run_s\": ")); }),
             ContainsSubstring("malformed JSON"));
}

TEST_CASE("every timing and check of the committed H200 worklog reads, the older ones by their columns alone",
          "[measurement]") {
  // Read-only: nothing is written to the committed file, not even a -wal.
  const auto log = kiln::worklog::Worklog::open(kiln_test::committed_h200_worklog(),
                                                kiln::worklog::OpenMode::read_only);
  std::set<std::pair<std::string, std::string>> contexts;
  for (const auto& s : log.sessions()) contexts.insert({s.context_key, s.kernel});
  std::size_t timings = 0, older_timings = 0, checks = 0, older_checks = 0;
  for (const auto& [context, kernel] : contexts) {
    for (const Measurement& m : log.measurements(context, kernel)) {
      INFO(m.key.variant << " " << m.key.problem_key);
      if (m.key.phase == Phase::bench) {
        const auto t = kiln::tuner::stored_timing(m);
        ++timings;
        if (!t) ++older_timings;
        // A row of before version 2 is the one whose spread its migration could not fill in.
        CHECK(t.has_value() == m.spread_s.has_value());
        if (t) CHECK(t->bench.median_s == m.median_s);
      } else {
        const auto c = kiln::tuner::stored_check(m);
        ++checks;
        if (!c) ++older_checks;
        if (c) CHECK(c->passed == (m.status == MeasurementStatus::ok));
      }
    }
  }
  CHECK(timings > 0);
  CHECK(older_timings > 0);
  CHECK(older_timings < timings);
  CHECK(checks > 0);
  CHECK(older_checks > 0);
  CHECK(older_checks < checks);
}

TEST_CASE("a failed check in the worklog gives its stored reason to the variant's outcome", "[measurement]") {
  kiln_test::GeneratedToy toy;
  kiln_test::TempDir dir("kiln-stored-check");
  auto log = kiln::worklog::Worklog::open(dir / "w.sqlite");
  kiln::tuner::EvaluationContext ctx;
  ctx.manifest = &toy.manifest;
  ctx.log = &log;
  ctx.context_key = "ctx";
  ctx.measure = false;
  const std::size_t v = *toy.manifest.variant_index(toy.manifest.default_variant);
  const std::string hash = kiln::tuner::variant_hash(ctx, v);
  const kiln::Problem& first = toy.manifest.problems.front();

  Measurement m;
  m.key = kiln::tuner::measurement_key(ctx, v, hash, first, Phase::check);
  m.status = MeasurementStatus::failed;
  kiln::model::CheckEvent check = failed_check("out[3] is nan");
  check.problem = first;
  m.result = kiln::model::to_json(kiln::model::Event{check}).dump();
  log.put_measurement(m);
  kiln::tuner::VariantOutcome out = kiln::tuner::evaluate_variant(ctx, v);
  CHECK(out.failure == kiln::worklog::FailureKind::correctness);
  CHECK(out.detail == "out[3] is nan");

  // Stored before version 2: failed, and why is not known.
  nlohmann::ordered_json older = nlohmann::ordered_json::parse(m.result);
  older.erase("run_s");
  older.erase("reference_s");
  m.result = older.dump();
  log.put_measurement(m);
  out = kiln::tuner::evaluate_variant(ctx, v);
  CHECK(out.failure == kiln::worklog::FailureKind::correctness);
  CHECK(out.detail == "check failed");
}
