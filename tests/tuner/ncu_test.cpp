// ncu's CSV, parsed from real output (tests/tuner/data/README.md), and ncu's complaints.
#include <filesystem>

#include "kiln/error.hpp"
#include "kiln_catch.hpp"
#include "ncu.hpp"
#include "temp_dir.hpp"

using kiln::tuner::NcuLaunch;
using kiln_test::Approx;
using kiln_test::ContainsSubstring;

namespace {

std::string fixture(const std::string& name) {
  return kiln_test::read_file(std::filesystem::path(KILN_SOURCE_DIR) / "tests/tuner/data" / name);
}

double value(const NcuLaunch& l, const std::string& metric) {
  auto it = l.metrics.find(metric);
  REQUIRE(it != l.metrics.end());
  return it->second.value;
}

}  // namespace

TEST_CASE("ncu CSV: the raw page gives one launch per row, in launch order, with units") {
  const auto launches = kiln::tuner::parse_ncu_csv(fixture("ncu_raw_h100.csv"), "ncu_raw_h100.csv");
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].kernel == "scale_rows(float *, int)");
  CHECK(launches[1].kernel == "local_array(float *, int, int)");
  CHECK(value(launches[0], "launch__grid_size") == 66);
  CHECK(value(launches[0], "device__attribute_multiprocessor_count") == 132);
  CHECK(value(launches[0], "launch__waves_per_multiprocessor") == Approx(0.06));
  // Thousands separators: "4,096", "2,944".
  CHECK(value(launches[1], "launch__grid_size") == 4096);
  CHECK(value(launches[0], "gpu__time_duration.sum") == 2944);
  CHECK(launches[0].metrics.at("gpu__time_duration.sum").unit == "ns");
  CHECK(*kiln::tuner::seconds_from(launches[0].metrics.at("gpu__time_duration.sum")) == Approx(2.944e-6));
  CHECK(value(launches[1], "dram__throughput.avg.pct_of_peak_sustained_elapsed") == Approx(75.49));
  CHECK(launches[1].metrics.at("dram__throughput.avg.pct_of_peak_sustained_elapsed").unit == "%");
  CHECK(value(launches[1], "smsp__sass_inst_executed_op_local_st.sum") == 262144);
  CHECK(value(launches[1], "launch__shared_mem_per_block_dynamic") == 512);
  // Words are not numbers: the cluster scheduling policy ("PolicySpread") is left out.
  CHECK(launches[0].metrics.count("launch__cluster_scheduling_policy") == 0);
}

TEST_CASE("ncu CSV: every metric kiln profile asks for is in ncu's real output") {
  const auto launches = kiln::tuner::parse_ncu_csv(fixture("ncu_raw_h100.csv"), "ncu_raw_h100.csv");
  REQUIRE_FALSE(launches.empty());
  for (const auto& m : kiln::tuner::ncu_metrics()) {
    INFO(m);
    CHECK(launches[0].metrics.count(m) == 1);
  }
}

TEST_CASE("ncu CSV: the details page reads to the same launches and metrics as the raw page") {
  const auto raw = kiln::tuner::parse_ncu_csv(fixture("ncu_raw_h100.csv"), "raw");
  const auto details = kiln::tuner::parse_ncu_csv(fixture("ncu_details_h100.csv"), "details");
  REQUIRE(details.size() == raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    CHECK(details[i].kernel == raw[i].kernel);
    for (const auto& m : kiln::tuner::ncu_metrics()) {
      INFO(raw[i].kernel << " " << m);
      REQUIRE(details[i].metrics.count(m) == 1);
      // Another run of ncu: the counters differ a little, the launch's shape not at all.
      if (m.rfind("launch__", 0) == 0 || m.rfind("device__", 0) == 0) {
        CHECK(details[i].metrics.at(m).value == raw[i].metrics.at(m).value);
      }
    }
  }
}

TEST_CASE("ncu CSV: stored as JSON, only the metrics asked for, and read back") {
  const auto launches = kiln::tuner::parse_ncu_csv(fixture("ncu_raw_h100.csv"), "raw");
  const auto json = kiln::tuner::launches_to_json(launches);
  REQUIRE(json.size() == 2);
  CHECK(json[0]["metrics"].size() == kiln::tuner::ncu_metrics().size());
  const auto back = kiln::tuner::parse_stored_launches(json.dump(), "stored");
  REQUIRE(back.size() == 2);
  CHECK(back[1].kernel == launches[1].kernel);
  CHECK(back[1].metrics.at("launch__grid_size").value == 4096);
  CHECK(back[1].metrics.at("gpu__time_duration.sum").unit == "ns");
}

TEST_CASE("stored ncu metrics read strictly: anything but what was written is an error naming the place") {
  CHECK(kiln::tuner::parse_stored_launches("[]", "stored").empty());
  CHECK_THROWS_WITH(kiln::tuner::parse_stored_launches(R"([{"kernel":"k","metrics":{"x":{"value":"n/a","unit":""}}}])", "stored"),
                    ContainsSubstring("stored: /0/metrics/x/value: expected a number, got \"n/a\""));
  CHECK_THROWS_WITH(kiln::tuner::parse_stored_launches(R"([{"kernel":"k","metrics":{"x":{"value":1}}}])", "stored"),
                    ContainsSubstring("stored: /0/metrics/x/unit: required key is missing"));
  CHECK_THROWS_WITH(kiln::tuner::parse_stored_launches(R"({"kernel":"k"})", "stored"),
                    ContainsSubstring("stored: expected an array"));
  CHECK_THROWS_WITH(kiln::tuner::parse_stored_launches("[{", "stored"), ContainsSubstring("malformed JSON"));
}

TEST_CASE("ncu CSV: no header, a cut row and an unterminated quote are errors naming the place") {
  CHECK_THROWS_WITH(kiln::tuner::parse_ncu_csv("==PROF== Connected to process 1\n==PROF== Disconnected from process 1\n", "x.csv"),
                    ContainsSubstring("x.csv: no CSV from ncu"));
  const std::string header = "\"ID\",\"Process ID\",\"Kernel Name\",\"launch__grid_size\"\n";
  CHECK_THROWS_WITH(kiln::tuner::parse_ncu_csv(header + "\"\",\"\",\"\",\"\"\n\"0\",\"1\",\"k\"\n", "x.csv"),
                    ContainsSubstring("x.csv:3: 3 fields where the header has 4"));
  CHECK_THROWS_WITH(kiln::tuner::parse_ncu_csv(header + "\"0\",\"1\",\"k(int\n", "x.csv"),
                    ContainsSubstring("x.csv:2: a quoted field of ncu's CSV does not end"));
  CHECK_THROWS_WITH(kiln::tuner::parse_ncu_csv("\"Kernel\",\"Value\"\n", "x.csv"),
                    ContainsSubstring("not ncu's CSV header"));
}

TEST_CASE("ncu's complaints: no permission for the counters is one message saying what to do") {
  // As ncu prints it (quoted from a public report of the error).
  const std::string log =
      "==PROF== Connected to process 17664 (/usr/bin/python3.12)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
      "the target device 0.\n==PROF== Disconnected from process 17664\n";
  auto message = kiln::tuner::ncu_error(log, "");
  REQUIRE(message);
  CHECK_THAT(*message, ContainsSubstring("ERR_NVGPUCTRPERM"));
  CHECK_THAT(*message, ContainsSubstring("NVreg_RestrictProfilingToAdminUsers=0"));
  CHECK(message->find('\n') == std::string::npos);
  auto other = kiln::tuner::ncu_error("", "==ERROR== Failed to prepare kernel for profiling\n");
  REQUIRE(other);
  CHECK(*other == "ncu: Failed to prepare kernel for profiling");
  CHECK_FALSE(kiln::tuner::ncu_error(fixture("ncu_raw_h100.csv"), ""));
}

TEST_CASE("ncu's command line: the raw page in base units, the profiler range only, into the log file") {
  const auto argv = kiln::tuner::ncu_command("/opt/ncu", "/tmp/v.csv");
  const std::string line = [&] {
    std::string s;
    for (const auto& a : argv) s += a + " ";
    return s;
  }();
  CHECK(argv.front() == "/opt/ncu");
  CHECK_THAT(line, ContainsSubstring("--csv --page raw --print-units base --metrics "));
  CHECK_THAT(line, ContainsSubstring("--target-processes all --profile-from-start off --log-file /tmp/v.csv"));
  CHECK_THAT(line, ContainsSubstring("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"));
}
