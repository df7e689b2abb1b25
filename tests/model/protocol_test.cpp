// The protocol between the tuner and a variant process (kiln/model/protocol.hpp): every type goes
// through its to_json and back unchanged, and what cannot be read is one error naming the place.
#include <fstream>
#include <functional>
#include <string>

#include "kiln/model/json_reader.hpp"
#include "kiln/model/protocol.hpp"
#include "kiln_catch.hpp"
#include "protocol_examples.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;
namespace model = kiln::model;

namespace {

kiln::Problem problem(std::int64_t rows, const std::string& dtype) {
  kiln::Problem p;
  p.set("rows", rows);
  p.set("dtype", dtype);
  return p;
}

// The event read back from its own line.
model::Event round_trip(const model::Event& event) {
  return model::parse_event(model::to_json(event).dump(), "line");
}

std::string error_of(const std::string& line) {
  try {
    model::parse_event(line, "line");
  } catch (const model::InputError& e) {
    return e.what();
  }
  return "";
}

model::BenchEvent bench() {
  model::BenchEvent e = kiln_test::example_bench(problem(4096, "bf16"));
  model::LaunchShape s;
  s.kernel = "softmax_rows(float*, int)";
  s.grid = {132, 1, 1};
  s.block = {256, 1, 1};
  s.ctas = 132;
  s.threads_per_cta = 256;
  s.dynamic_shared_bytes = 1024;
  s.registers = 40;
  s.ctas_per_sm = 8;
  e.launches = std::vector<model::LaunchShape>{s};
  return e;
}

}  // namespace

TEST_CASE("a plan goes to its file and back unchanged, seed and problems in order") {
  model::Plan plan;
  plan.seed = 0xFEDCBA9876543210ull;  // above 2^63: a seed is any 64-bit number
  plan.check_seed = 0x8000000000000001ull;
  plan.check = {problem(7, "fp32")};
  plan.bench = {problem(4096, "bf16"), problem(16, "fp32")};
  plan.checks_per_problem = 3;
  plan.tolerance = {{"bf16", 1e-2}, {"fp32", 1e-5}};
  plan.repetitions = 9;
  plan.min_repetitions = 3;
  plan.settled_spread = 0.01;
  plan.stop_above_s = {{"rows=16 dtype=fp32", 2.5e-6}};
  kiln_test::TempDir dir("kiln-protocol");
  const auto file = dir / "plan.json";
  std::ofstream(file) << model::to_json(plan).dump(2);
  const model::Plan back = model::read_plan(file);
  CHECK(back.seed == plan.seed);
  CHECK(back.check_seed == plan.check_seed);
  CHECK(back.check == plan.check);
  CHECK(back.bench == plan.bench);
  CHECK(back.bench[0].key() == "rows=4096 dtype=bf16");
  CHECK(back.checks_per_problem == 3);
  CHECK(back.tolerance == plan.tolerance);
  CHECK(back.repetitions == 9);
  CHECK(back.min_repetitions == 3);
  CHECK(back.settled_spread == plan.settled_spread);
  CHECK(back.repetition_seconds == plan.repetition_seconds);
  CHECK(back.max_rotation_bytes == plan.max_rotation_bytes);
  CHECK(back.stop_above_s == plan.stop_above_s);
  CHECK(model::to_json(back) == model::to_json(plan));
  CHECK(model::tolerance_for(back, "bf16") == 1e-2);
  CHECK_THROWS_WITH(model::tolerance_for(back, "fp8"), ContainsSubstring("no tolerance for output dtype 'fp8'"));
}

TEST_CASE("a plan file with a key missing, unknown or of the wrong type is an error naming it") {
  kiln_test::TempDir dir("kiln-protocol");
  const auto file = dir / "plan.json";
  auto error_with = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json j = model::to_json(model::Plan{});
    edit(j);
    std::ofstream(file, std::ios::trunc) << j.dump();
    try {
      model::read_plan(file);
    } catch (const model::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_with([](auto& j) { j.erase("seed"); }) == file.string() + ": /seed: required key is missing");
  CHECK(error_with([](auto& j) { j.erase("check_seed"); }) == file.string() + ": /check_seed: required key is missing");
  CHECK_THAT(error_with([](auto& j) { j["sead"] = 1; }), ContainsSubstring(file.string() + ": /sead: unknown key"));
  CHECK_THAT(error_with([](auto& j) { j["repetitions"] = "7"; }),
             ContainsSubstring("/repetitions: expected a positive integer, got \"7\""));
  CHECK_THAT(error_with([](auto& j) { j["min_repetitions"] = 8; }),
             ContainsSubstring("/min_repetitions: more than the 7 repetitions"));
  CHECK_THAT(error_with([](auto& j) { j["bench"] = {{{"rows", 1.5}}}; }),
             ContainsSubstring("/bench/0/rows: expected an integer or a symbol"));
  CHECK_THAT(error_with([](auto& j) { j["seed"] = -1; }), ContainsSubstring("/seed: expected a whole number >= 0"));
  CHECK_THAT(error_with([](auto& j) { j["tolerance"] = {{"fp32", 0}}; }),
             ContainsSubstring("/tolerance/fp32: expected a positive number"));
  // A bound belongs to one of the plan's bench problems, and is a positive time.
  CHECK_THAT(error_with([](auto& j) { j["stop_above_s"] = {{"rows=3 dtype=fp32", 1e-3}}; }),
             ContainsSubstring("/stop_above_s/rows=3 dtype=fp32: not the key of a bench problem of the plan"));
  CHECK_THAT(error_with([](auto& j) {
               j["bench"] = {{{"rows", 3}, {"dtype", "fp32"}}};
               j["stop_above_s"] = {{"rows=3 dtype=fp32", -1}};
             }),
             ContainsSubstring("/stop_above_s/rows=3 dtype=fp32: expected a positive number"));
}

TEST_CASE("the seed rule: one per variant, the same every run, another for another run") {
  CHECK(model::plan_seed(1, "softmax__A") == model::plan_seed(1, "softmax__A"));
  CHECK(model::plan_seed(1, "softmax__A") != model::plan_seed(1, "softmax__B"));
  CHECK(model::plan_seed(1, "softmax__A") != model::plan_seed(2, "softmax__A"));
}

TEST_CASE("every event goes to its line and back unchanged") {
  model::DeviceInfo cpu;
  cpu.backend = "cpu";
  cpu.name = "AMD EPYC";
  cpu.threads = 2;
  cpu.cpus = std::vector<std::int64_t>{0, 1};
  cpu.proc_bind = "close";
  cpu.places = 2;
  cpu.isa = "avx avx2 fma";
  model::CheckEvent check;
  check.index = 1;
  check.problem = problem(7, "fp32");
  check.seed = 42;
  check.passed = false;
  check.run_s = 0.001;
  check.reference_s = 0.01;
  model::OutputCheck o;
  o.output = "out";
  o.dtype = "fp32";
  o.elements = 7;
  o.compared = 7;
  o.non_finite = 1;
  o.max_abs_err = 0.5;  // rel_l2 not finite: absent
  o.tolerance = 1e-5;
  check.outputs = {o};
  check.reason = "1 elements of 'out' are NaN or infinite (the first at element 3)";
  const std::vector<model::Event> events = {
      model::StartEvent{"softmax", "softmax__A", cpu},
      model::ProgressEvent{"bench", 3, "warm-up"},
      check,
      bench(),
      model::ProfiledEvent{0, problem(16, "fp32"), std::nullopt},
      model::ErrorEvent{model::HarnessFailure::runtime, std::string("bench"), 2, "illegal address"},
      model::ErrorEvent{model::HarnessFailure::compile, std::nullopt, std::nullopt, "did not compile"},
      model::ErrorEvent{model::HarnessFailure::device, std::string("device setup"), std::nullopt, "no CUDA device"},
      model::DoneEvent{}};
  for (const auto& e : events) {
    const auto json = model::to_json(e);
    INFO(json.dump());
    const model::Event back = round_trip(e);
    CHECK(back.index() == e.index());
    CHECK(model::to_json(back) == json);
  }
  const auto b = std::get<model::BenchEvent>(round_trip(bench()));
  CHECK(b.median_s == 2.5e-5);
  CHECK(b.spread_s() == kiln_test::Approx(0.35e-5));
  REQUIRE(b.launches);
  CHECK(b.launches->at(0).grid[0] == 132);
  CHECK_FALSE(b.launches->at(0).static_shared_bytes);
  CHECK_FALSE(b.stopped_above_s);
  model::BenchEvent stopped = bench();
  stopped.stopped_above_s = 7.5e-6;
  CHECK(std::get<model::BenchEvent>(round_trip(stopped)).stopped_above_s == 7.5e-6);
  const auto c = std::get<model::CheckEvent>(round_trip(check));
  CHECK_FALSE(c.outputs[0].rel_l2);
  CHECK(c.outputs[0].max_abs_err == 0.5);
  CHECK(model::to_json(check).at("outputs").at(0).at("rel_l2").is_null());
}

TEST_CASE("an event with a key missing, unknown or of the wrong type is an error naming it") {
  auto bench_with = [](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json j = model::to_json(bench());
    edit(j);
    return error_of(j.dump());
  };
  CHECK(bench_with([](auto& j) { j.erase("median_s"); }) == "line: /median_s: required key is missing");
  CHECK(bench_with([](auto& j) { j["median_s"] = "fast"; }) == "line: /median_s: expected a positive number, got \"fast\"");
  CHECK_THAT(bench_with([](auto& j) { j["medain_s"] = 1; }), ContainsSubstring("line: /medain_s: unknown key"));
  CHECK_THAT(bench_with([](auto& j) { j["key"] = "rows=1"; }),
             ContainsSubstring("line: /key: \"rows=1\" is not the key of the problem beside it"));
  CHECK_THAT(bench_with([](auto& j) { j["launches"][0]["grid"] = {1, 2}; }),
             ContainsSubstring("line: /launches/0/grid: expected 3 numbers [x, y, z], got 2"));
  CHECK_THAT(bench_with([](auto& j) { j["q3_s"] = 1e-6; }), ContainsSubstring("/q3_s: the third quartile is below the first"));
  CHECK(error_of(R"({"event":"finish"})") ==
        "line: /event: unknown event \"finish\" (known events: start, progress, check, bench, profiled, error, done)");
  CHECK(error_of(R"({"kind":"runtime"})") == "line: /event: required key is missing");
  CHECK(error_of(R"({"event":"error","kind":"oom","message":"x"})") ==
        "line: /kind: expected \"compile\", \"runtime\" or \"device\", got \"oom\"");
  CHECK(error_of(R"({"event":"done","index":1})").rfind("line: /index: unknown key", 0) == 0);
  CHECK_THAT(error_of(R"({"event":"progress","stage":"bench","index":-1,"step":"x"})"),
             ContainsSubstring("line: /index: expected a whole number >= 0, got -1"));
  CHECK_THAT(error_of("{\"event\":\"done\""), ContainsSubstring("line:1:16: malformed JSON"));
  nlohmann::ordered_json failed = model::to_json(model::CheckEvent{});
  failed.erase("reason");
  CHECK(error_of(failed.dump()) == "line: a failed check without a reason");
}

TEST_CASE("device info: what the probes print reads back unchanged, a drifted one is an error") {
  // As kiln_probe_cuda printed it on the H200 (presets/records/h200/worklog.tar.gz, its sessions).
  const std::string h200 =
      R"({"backend":"cuda","name":"NVIDIA H200","compute_capability":"9.0","driver":"580.159.04",)"
      R"("cuda_driver_api":"13.0","cuda_runtime":"13.0","sm_count":132,"cache_bytes":62914560,)"
      R"("max_smem_per_block":232448,"memory_bytes":150109880320,"measured":{"dram_bytes_per_s":4226531470112.975,)"
      R"("fp32_flops_per_s":63681637081005.83,"launch_s":5.126399919390678e-07}})";
  const model::DeviceInfo d = model::parse_device_info(h200, "probe");
  CHECK(d.name == "NVIDIA H200");
  CHECK(d.cuda_runtime == "13.0");
  CHECK(d.sm_count == 132);
  REQUIRE(d.measured.size() == 3);
  CHECK(d.measured[2].first == "launch_s");
  CHECK(model::to_json(d).dump() == h200);

  auto error = [](const std::string& text) {
    try {
      model::parse_device_info(text, "probe");
    } catch (const model::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // The key a reader once looked for instead of cuda_runtime.
  CHECK_THAT(error(R"({"backend":"cuda","name":"GPU","cuda":"12.4"})"), ContainsSubstring("probe: /cuda: unknown key"));
  CHECK(error(R"({"name":"GPU"})") == "probe: /backend: required key is missing");
  CHECK(error(R"({"backend":"hip","name":"GPU"})") ==
        "probe: /backend: unknown backend \"hip\" (Kiln's backends: cpu, cuda)");
  CHECK_THAT(error(R"({"backend":"cpu","name":"x","measured":{"fp32_flops_per_s":"fast"}})"),
             ContainsSubstring("probe: /measured/fp32_flops_per_s: expected a number"));
}

TEST_CASE("variant info goes to JSON and back") {
  const model::VariantInfo info{"softmax", "softmax__A", "cpu", {{"THREADS", 256}}};
  const kiln::model::JsonFile file = model::parse_json_text("info", model::to_json(info).dump());
  const model::VariantInfo back = model::variant_info_from_json(model::JsonNode::root(file));
  CHECK(back.variant == "softmax__A");
  CHECK(back.params == info.params);
}
