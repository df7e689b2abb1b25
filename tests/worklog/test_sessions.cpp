// Listing a worklog's sessions, and the session a report shows when none is named.
#include <fstream>
#include <limits>
#include <iterator>

#include "committed_worklog.hpp"
#include "kiln/worklog/markdown.hpp"
#include "kiln/worklog/sessions.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using namespace kiln::worklog;
using kiln_test::ContainsSubstring;

TEST_CASE("the default session of a report is the newest that recorded an attempt", "[sessions]") {
  kiln_test::TempDir dir;
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t measured = log.start_session(worklog_test::make_session("softmax_cuda"));
  Attempt keep = worklog_test::make_attempt("softmax_cuda", "softmax_cuda__VEC8");
  keep.session_id = measured;
  log.add_attempt(keep);
  Attempt failed = worklog_test::make_attempt("softmax_cuda", "softmax_cuda__VEC16");
  failed.session_id = measured;
  failed.verdict = Verdict::failed;
  failed.failure_kind = FailureKind::compile;
  log.add_attempt(failed);
  log.end_session(measured);
  // A resumed run that found every measurement in the cache, then another kernel's run.
  const std::int64_t resumed = log.start_session(worklog_test::make_session("softmax_cuda"));
  log.end_session(resumed);
  const std::int64_t other = log.start_session(worklog_test::make_session("nbody_cuda"));
  Attempt nbody = worklog_test::make_attempt("nbody_cuda", "nbody_cuda__TILE64");
  nbody.session_id = other;
  log.add_attempt(nbody);

  CHECK(latest_session_with_attempts(log, "softmax_cuda") == measured);
  CHECK(latest_session_with_attempts(log) == other);
  CHECK_FALSE(latest_session_with_attempts(log, "attention_d64").has_value());

  const auto summaries = session_summaries(log, "softmax_cuda");
  REQUIRE(summaries.size() == 2);
  CHECK(summaries[0].session.id == measured);
  CHECK(summaries[0].attempts == 2);
  CHECK(summaries[0].kept == 1);
  CHECK(summaries[0].failed == 1);
  CHECK(summaries[1].attempts == 0);
  const std::string table = sessions_markdown(session_summaries(log));
  CHECK_THAT(table, ContainsSubstring("| " + std::to_string(resumed) + " | softmax_cuda | exhaustive |"));
  CHECK_THAT(table, ContainsSubstring("| started | ended | seconds | attempts |"));
  CHECK_THAT(table, ContainsSubstring("| " + std::to_string(other) + " | nbody_cuda |"));
}

TEST_CASE("the report's device line reads what the CUDA probe records", "[sessions]") {
  kiln_test::TempDir dir;
  Worklog log = Worklog::open(dir / "w.db");
  Session s = worklog_test::make_session("softmax_cuda");
  s.device = R"({"backend":"cuda","name":"NVIDIA H200","compute_capability":"9.0","driver":"580.159.04",)"
             R"("cuda_driver_api":"13.0","cuda_runtime":"13.0","sm_count":132,"cache_bytes":62914560,)"
             R"("max_smem_per_block":232448,"memory_bytes":150109880320,)"
             R"("measured":{"dram_bytes_per_s":4226531470112.975,"fp32_flops_per_s":63681637081005.83,)"
             R"("launch_s":5.126399919390678e-07}})";
  const std::int64_t id = log.start_session(s);
  const std::string md = session_markdown(log, id);
  CHECK_THAT(md, ContainsSubstring("- Device: NVIDIA H200 (compute capability 9.0, driver 580.159.04, CUDA runtime "
                                   "13.0, CUDA driver API 13.0, 132 SMs, 139.8 GiB, cache 60 MiB); measured: copy "
                                   "4.23 TB/s, FP32 63.7 TFLOP/s, launch 512.6 ns\n"));
  CHECK_THAT(md, !ContainsSubstring("{"));
}

TEST_CASE("the committed H200 worklog reports each kernel's measured session, read only") {
  // The committed file is an older schema version: it is read through a migrated copy in memory,
  // and the file is left as it was, with no journal files beside it.
  const std::filesystem::path file = kiln_test::committed_h200_worklog();
  const auto bytes = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string before = bytes(file);
  {
    Worklog log = Worklog::open(file, OpenMode::read_only);
    for (const char* kernel : {"softmax_cuda", "nbody_cuda", "attention_d64", "attention_d128", "attention_d256"}) {
      INFO(kernel);
      const auto session = latest_session_with_attempts(log, kernel);
      REQUIRE(session.has_value());
      const std::string md = session_markdown(log, *session);
      CHECK_THAT(md, !ContainsSubstring("- Attempts: 0 "));
      CHECK_THAT(md, ContainsSubstring("- Device: NVIDIA H200 (compute capability 9.0"));
    }
  }
  CHECK(bytes(file) == before);
  CHECK_FALSE(std::filesystem::exists(file.string() + "-wal"));
  CHECK_FALSE(std::filesystem::exists(file.string() + "-shm"));
}

TEST_CASE("a session keeps its stage times in the order they ran", "[sessions]") {
  kiln_test::TempDir dir;
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t id = log.start_session(worklog_test::make_session("attention_d128"));
  const std::vector<StageSeconds> stages = {
      {"open", 1.9}, {"compile", 77.0}, {"search", 70.125}, {"near-ties", 120.3}, {"coverage", 0.0}, {"gate", 98.9}};
  log.end_session(id, stages);
  const auto read = log.session(id);
  REQUIRE(read.has_value());
  CHECK(read->stages == stages);
  CHECK(read->ended_at.has_value());
  // The report gives the total and every stage that shows as 0.1 s or more.
  CHECK_THAT(session_markdown(log, id),
             ContainsSubstring("\n- Time: 368.2 s: open 1.9 s, compile 77.0 s, search 70.1 s, near-ties 120.3 s, "
                               "gate 98.9 s\n"));
  // A session ended without them (an older Kiln's) has none, and its report no time line.
  const std::int64_t plain = log.start_session(worklog_test::make_session("attention_d128"));
  log.end_session(plain);
  CHECK(log.session(plain)->stages.empty());
  // The list of sessions gives the total: one decimal, empty without stages.
  const std::string table = sessions_markdown(session_summaries(log));
  CHECK_THAT(table, ContainsSubstring(" | 368.2 | 0 | 0 | 0 | 0 | 0 |\n"));
  CHECK_THAT(table, ContainsSubstring(" |  | 0 | 0 | 0 | 0 | 0 |\n"));
  CHECK_THAT(session_markdown(log, plain), !ContainsSubstring("- Time:"));
}

TEST_CASE("stage times that are no times are refused, and the session stays open", "[sessions]") {
  kiln_test::TempDir dir;
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t id = log.start_session(worklog_test::make_session());
  const std::vector<std::vector<StageSeconds>> bad = {
      {{"search", 1.0}, {"search", 2.0}},
      {{"", 1.0}},
      {{"gate", -1.0}},
      {{"gate", std::numeric_limits<double>::quiet_NaN()}},
      {{"gate", std::numeric_limits<double>::infinity()}},
  };
  for (const auto& stages : bad) {
    CHECK_THROWS_WITH(log.end_session(id, stages), ContainsSubstring("a stage needs a name of its own and a time >= 0"));
  }
  CHECK_FALSE(log.session(id)->ended_at.has_value());
  log.end_session(id, {{"search", 2.0}});
  CHECK(log.session(id)->stages.size() == 1);
}

TEST_CASE("a worklog whose stage times are no times is refused by name", "[sessions]") {
  kiln_test::TempDir dir;
  const auto path = dir / "w.db";
  std::int64_t id = 0;
  {
    Worklog log = Worklog::open(path);
    id = log.start_session(worklog_test::make_session());
    // Not an object: the schema refuses it.
    CHECK_THROWS(log.database().exec("UPDATE sessions SET stages = '[1, 2]'", "write a list"));
    log.database().exec(R"(UPDATE sessions SET stages = '{"search": "long"}')", "write a word for a time");
  }
  Worklog log = Worklog::open(path, OpenMode::read_only);
  CHECK_THROWS_WITH(log.session(id),
                    ContainsSubstring(path.string() + ": session " + std::to_string(id) +
                                      ": stages: \"search\" is \"long\", not a number of seconds >= 0"));
  CHECK_THROWS_WITH(log.sessions(), ContainsSubstring(": stages: \"search\" is \"long\""));
}
