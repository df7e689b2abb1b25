// The markdown journey of a tuning session.
#include "kiln/worklog/markdown.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using namespace kiln::worklog;
using kiln_test::ContainsSubstring;

namespace {

// The text between a heading and the next one.
std::string section(const std::string& text, const std::string& heading) {
  const std::size_t start = text.find("## " + heading + "\n");
  REQUIRE(start != std::string::npos);
  const std::size_t end = text.find("\n## ", start + 1);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

struct SmallSession {
  std::int64_t session = 0;
  std::int64_t first_keep = 0, winner = 0, compile_failure = 0, revert = 0, wrong = 0;
};

// Softmax on one problem: two keeps (the second wins), a compile failure, a revert, a wrong
// result, and a link.
SmallSession record_small_session(Worklog& log) {
  SmallSession s;
  Session session = worklog_test::make_session("softmax_cuda");
  session.started_at = "2026-11-21T10:00:00.000Z";
  s.session = log.start_session(session);
  const auto add = [&](const std::string& params, Verdict verdict,
                       std::optional<FailureKind> kind, std::optional<double> baseline,
                       std::optional<double> result, const std::string& change,
                       const std::string& explanation) {
    Attempt a;
    a.session_id = s.session;
    a.kernel = "softmax_cuda";
    a.variant = "softmax_cuda__" + params;
    a.problem = "rows=16384 cols=8192 dtype=bf16";
    a.change = change;
    a.baseline = baseline;
    a.result = result;
    a.unit = "s";
    a.verdict = verdict;
    a.failure_kind = kind;
    a.explanation = explanation;
    a.floor = 5.0e-4;
    return log.add_attempt(a);
  };
  s.first_keep = add("THREADS128_VEC2", Verdict::keep, std::nullopt, std::nullopt, 2.0e-3,
                     "default variant", "first measurement");
  s.winner = add("THREADS256_VEC4", Verdict::keep, std::nullopt, 2.0e-3, 1.0e-3,
                 "THREADS 128 -> 256, VEC 2 -> 4", "twice the bytes in flight per SM");
  s.compile_failure = add("THREADS512_VEC8", Verdict::failed, FailureKind::compile, std::nullopt,
                          std::nullopt, "THREADS 512, VEC 8", "ptxas: too many registers");
  s.revert = add("THREADS256_VEC8", Verdict::revert, std::nullopt, 1.0e-3, 1.1e-3, "VEC 4 -> 8",
                 "the cached row spills | registers");
  s.wrong = add("THREADS128_VEC8", Verdict::invalid, FailureKind::correctness, std::nullopt,
                std::nullopt, "VEC 8 at 128 threads", "tail of odd rows unwritten");
  log.add_link(s.winner, s.revert, LinkKind::blocks, "VEC 8 needs fewer registers per row");
  log.end_session(s.session);
  return s;
}

}  // namespace

TEST_CASE("the session report holds the header, the winner, the dead ends, links and headroom") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const SmallSession s = record_small_session(log);
  const std::string md = session_markdown(log, s.session);

  CHECK_THAT(md, ContainsSubstring("# Tuning session 1: softmax_cuda\n"));
  CHECK_THAT(md, ContainsSubstring("- Strategy: exhaustive\n"));
  CHECK_THAT(md, ContainsSubstring("- Device: NVIDIA H100 80GB HBM3 (compute capability 9.0, "
                                   "driver 550.54.15, CUDA runtime 12.4)\n"));
  CHECK_THAT(md, ContainsSubstring("- Started: 2026-11-21T10:00:00.000Z\n"));
  CHECK_THAT(md, !ContainsSubstring("not ended"));
  CHECK_THAT(md, ContainsSubstring("- Attempts: 5 (2 kept, 1 reverted, 1 invalid, 1 failed)\n"));

  const std::string won = section(md, "What won");
  CHECK_THAT(won, ContainsSubstring("| rows=16384 cols=8192 dtype=bf16 | #2 | "
                                    "`softmax_cuda__THREADS256_VEC4` | 1 ms | 2 ms | -50.0 % | "
                                    "500 µs | 2.00× | scheduling"));
  CHECK_THAT(won, !ContainsSubstring("THREADS128_VEC2"));  // superseded by the later keep

  const std::string attempts = section(md, "Attempts");
  CHECK_THAT(attempts, ContainsSubstring("| 4 | `softmax_cuda__THREADS256_VEC8` | rows=16384 "
                                         "cols=8192 dtype=bf16 | VEC 4 -> 8 | 1 ms | 1.1 ms | "
                                         "+10.0 % | revert | the cached row spills \\| registers |"));
  CHECK_THAT(attempts, ContainsSubstring("| failed (compile) |"));
  // In order of id.
  CHECK(attempts.find("| 1 |") < attempts.find("| 2 |"));
  CHECK(attempts.find("| 4 |") < attempts.find("| 5 |"));

  const std::string dead = section(md, "Dead ends");
  CHECK_THAT(dead, ContainsSubstring("### Failed: compile (1)\n\n- #3 `softmax_cuda__THREADS512_VEC8`"
                                     " on rows=16384 cols=8192 dtype=bf16 — ptxas: too many "
                                     "registers\n"));
  CHECK_THAT(dead, ContainsSubstring("### Invalid: correctness (1)\n\n- #5"));
  CHECK_THAT(dead, ContainsSubstring("### Reverted (1)\n\n- #4 `softmax_cuda__THREADS256_VEC8` on "
                                     "rows=16384 cols=8192 dtype=bf16: +10.0 % — the cached row "
                                     "spills | registers\n"));
  CHECK(dead.find("### Failed") < dead.find("### Invalid"));
  CHECK(dead.find("### Invalid") < dead.find("### Reverted"));

  CHECK_THAT(section(md, "Links"),
             ContainsSubstring("- #2 blocks #4: VEC 8 needs fewer registers per row\n"));
  CHECK_THAT(section(md, "Headroom"),
             ContainsSubstring("- rows=16384 cols=8192 dtype=bf16: `softmax_cuda__THREADS256_VEC4` "
                               "at 1 ms against a floor of 500 µs: 500 µs above it (50.0 % of the "
                               "result), 2.00× the floor: scheduling"));
}

TEST_CASE("exporting the same session twice gives the same bytes") {
  kiln_test::TempDir dir("kiln-worklog");
  const SmallSession s = [&] {
    Worklog log = Worklog::open(dir / "w.db");
    return record_small_session(log);
  }();
  const std::string first = session_markdown(Worklog::open(dir / "w.db"), s.session);
  const std::string second = session_markdown(Worklog::open(dir / "w.db"), s.session);
  CHECK(first == second);
  CHECK(first.size() > 500);
}

TEST_CASE("a session without keeps or floors says so, and an unknown session is an error") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  Session bare;
  bare.kernel = "gemm";
  const std::int64_t id = log.start_session(bare);
  std::string md = session_markdown(log, id);
  CHECK_THAT(md, ContainsSubstring("- Device: not recorded\n"));
  CHECK_THAT(md, ContainsSubstring("- Ended: not ended (still running, or interrupted)\n"));
  CHECK_THAT(md, ContainsSubstring("Nothing was kept in this session."));
  CHECK_THAT(md, ContainsSubstring("No attempts were recorded."));
  CHECK_THAT(md, ContainsSubstring("No dead ends."));
  CHECK_THAT(md, ContainsSubstring("No links."));
  CHECK_THAT(md, ContainsSubstring("No kept result to compare with a floor."));

  Attempt kept = worklog_test::make_attempt("gemm", "gemm__TILE64");
  kept.session_id = id;
  log.add_attempt(kept);
  md = session_markdown(log, id);
  CHECK_THAT(section(md, "What won"), ContainsSubstring("| all problems | #1 | `gemm__TILE64` | "
                                                        "1.5 ms | 2 ms | -25.0 % | — | — | no "
                                                        "floor recorded |"));
  CHECK_THAT(md, ContainsSubstring("No floor was recorded for the kept results; headroom unknown."));

  REQUIRE_THROWS_WITH(session_markdown(log, 99), log.path() + ": no session 99");
}

TEST_CASE("the floor ratio reads as the method says") {
  CHECK_THAT(std::string(floor_reading(0.9)), ContainsSubstring("below the floor"));
  CHECK(floor_reading(1.0) == "near optimal");
  CHECK(floor_reading(1.5) == "near optimal");
  CHECK_THAT(std::string(floor_reading(1.51)), ContainsSubstring("scheduling"));
  CHECK_THAT(std::string(floor_reading(3.0)), ContainsSubstring("scheduling"));
  CHECK_THAT(std::string(floor_reading(3.01)), ContainsSubstring("architectural"));
  CHECK_THAT(std::string(floor_reading(10.0)), ContainsSubstring("architectural"));
  CHECK_THAT(std::string(floor_reading(10.5)), ContainsSubstring("algorithmic"));
}

TEST_CASE("a many-line explanation stays whole and out of the attempts table") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t session = log.start_session(worklog_test::make_session("softmax_cuda"));
  Attempt a = worklog_test::make_attempt("softmax_cuda", "softmax_cuda__VEC16");
  a.session_id = session;
  a.verdict = Verdict::failed;
  a.failure_kind = FailureKind::compile;
  a.explanation = "variant.cu(12): error: too many resources\n  static_assert(sizeof(T) < 8)\n```\nptxas fatal\n";
  log.add_attempt(a);
  const std::string md = session_markdown(log, session);
  const std::string attempts = md.substr(md.find("## Attempts"), md.find("## Dead ends") - md.find("## Attempts"));
  CHECK_THAT(attempts, ContainsSubstring("| variant.cu(12): error: too many resources … |"));
  CHECK_THAT(attempts, !ContainsSubstring("<br>"));
  CHECK_THAT(md, ContainsSubstring("— variant.cu(12): error: too many resources …\n\n  ````\n"
                                   "  variant.cu(12): error: too many resources\n"
                                   "    static_assert(sizeof(T) < 8)\n  ```\n  ptxas fatal\n  ````\n"));
}

TEST_CASE("worklog text cannot break the report: controls, bad UTF-8, HTML and backticks are escaped") {
  kiln_test::TempDir tmp("kiln-md-hostile");
  auto log = Worklog::open(tmp / "w.sqlite");
  Session session = worklog_test::make_session("softmax_cuda\n# forged heading");
  session.note = "note\x1b]0;title\x07";
  const std::int64_t id = log.start_session(session);
  Attempt a = worklog_test::make_attempt("softmax_cuda", "softmax`_VEC8<script>");
  a.session_id = id;
  a.problem = "rows=1\n## Forged";
  a.change = "VEC 4 -> 8\n| forged | row |\x1b[2J";
  a.explanation = "bad \xff\xfe bytes <img src=x onerror=alert(1)> & \xc2\x9b" "31m";
  a.floor = 1e-3;
  log.add_attempt(a);
  log.end_session(id);

  const std::string md = session_markdown(log, id);
  CHECK(md.find('\x1b') == std::string::npos);
  CHECK(md.find('\x07') == std::string::npos);
  CHECK(md.find("\xc2\x9b") == std::string::npos);
  CHECK(md.find('\xff') == std::string::npos);
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(md.find("<img") == std::string::npos);
  CHECK(md.find("\n# forged") == std::string::npos);
  CHECK(md.find("\n## Forged") == std::string::npos);
  CHECK(md.find("\n| forged") == std::string::npos);
  CHECK_THAT(md, ContainsSubstring("bad \\xff\\xfe bytes &lt;img src=x onerror=alert(1)> & \\xc2\\x9b31m"));
  CHECK_THAT(md, ContainsSubstring("VEC 4 -> 8<br>\\| forged \\| row \\|\\u001b[2J"));
  // Each heading is one we wrote.
  std::size_t headings = 0;
  for (std::size_t at = md.find("\n#"); at != std::string::npos; at = md.find("\n#", at + 1)) ++headings;
  CHECK(headings == 5);  // What won, Attempts, Dead ends, Links, Headroom (the title starts the text)
}

TEST_CASE("the device line reads the probe's device info: the H200's in full, a drifted one as stored with why") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  Session h200 = worklog_test::make_session("softmax_cuda");
  h200.device =
      R"({"backend":"cuda","name":"NVIDIA H200","compute_capability":"9.0","driver":"580.159.04",)"
      R"("cuda_driver_api":"13.0","cuda_runtime":"13.0","sm_count":132,"cache_bytes":62914560,)"
      R"("max_smem_per_block":232448,"memory_bytes":150109880320,"measured":{"dram_bytes_per_s":4226531470112.975,)"
      R"("fp32_flops_per_s":63681637081005.83,"launch_s":5.126399919390678e-07}})";
  const std::string md = session_markdown(log, log.start_session(h200));
  CHECK_THAT(md, ContainsSubstring("- Device: NVIDIA H200 (compute capability 9.0, driver 580.159.04, CUDA runtime 13.0, "
                                   "CUDA driver API 13.0, 132 SMs, 139.8 GiB, cache 60 MiB); measured: copy 4.23 TB/s, "
                                   "FP32 63.7 TFLOP/s, launch "));
  Session drifted = worklog_test::make_session("softmax_cuda");
  drifted.device = R"({"backend":"cuda","name":"GPU","cuda":"12.4"})";
  CHECK_THAT(session_markdown(log, log.start_session(drifted)),
             ContainsSubstring(R"(- Device: {"backend":"cuda","name":"GPU","cuda":"12.4"} (unread: the session's device: )"
                               R"(/cuda: unknown key)"));
}
