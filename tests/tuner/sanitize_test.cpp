// The sanitizer gate's reading of compute-sanitizer's log (text as memcheck 2025 prints it) and
// its failures kept as deterministic.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "evaluate.hpp"
#include "kiln_catch.hpp"
#include "retry.hpp"
#include "sanitize.hpp"
#include "temp_dir.hpp"
#include "tuner_fixture.hpp"

namespace {

// A stand-in for compute-sanitizer at dir/compute-sanitizer running `script`, and a context whose
// gate runs the toy's variants with it.
struct StandIn {
  std::filesystem::path tool;
  kiln::tuner::EvaluationContext ctx;

  StandIn(const kiln_test::GeneratedToy& toy, const std::filesystem::path& dir) : tool(dir / "compute-sanitizer") {
    ctx.manifest = &toy.manifest;
    ctx.variants_dir = dir / "variants";
    ctx.scratch_dir = dir / "scratch";
  }
  kiln::tuner::SanitizerResult run(const std::string& script) {
    kiln_test::write_file(tool, script);
    chmod(tool.c_str(), 0755);
    return kiln::tuner::sanitize_variant(ctx, 0, tool);
  }
};

}  // namespace

TEST_CASE("memcheck's log gives the error, where it was, and the summary, not the backtrace", "[sanitize]") {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "{\"event\": \"start\"}\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at void faulty::saxpy_kernel<Config>(float, const float *, const float *, float *, long, long, "
      "const volatile int *)+0x2d0\n"
      "=========     by thread (232,0,0) in block (3,0,0)\n"
      "=========     Address 0x7f3a4e000fa4 is out of bounds\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: [0x2e2a5f] in libcuda.so.1\n"
      "========= \n"
      "========= ERROR SUMMARY: 1 error\n";
  const std::string e = kiln::tuner::sanitizer_errors(log);
  CHECK(e.rfind("Invalid __global__ write of size 4 bytes\nat void faulty::saxpy_kernel", 0) == 0);
  CHECK(e.find("by thread (232,0,0) in block (3,0,0)") != std::string::npos);
  CHECK(e.find("ERROR SUMMARY: 1 error") != std::string::npos);
  CHECK(e.find("Host Frame") == std::string::npos);
  CHECK(e.find("event") == std::string::npos);
  CHECK(kiln::tuner::sanitizer_errors(log, 1) == "Invalid __global__ write of size 4 bytes");
  CHECK(kiln::tuner::sanitizer_errors("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n") ==
        "ERROR SUMMARY: 0 errors");
}

TEST_CASE("a sanitizer failure is kept, even on request, until the problems or Kiln change", "[sanitize]") {
  kiln::worklog::VariantFailure f;
  f.kind = kiln::worklog::FailureKind::sanitizer;
  f.problem_set = "a";
  f.kiln_version = "1";
  kiln::tuner::RunConditions now;
  now.problem_set = "a";
  now.kiln_version = "1";
  now.retry_failed = true;
  CHECK_FALSE(kiln::tuner::retry_decision(f, now).retry);
  now.problem_set = "b";
  CHECK(kiln::tuner::retry_decision(f, now).retry);
}

TEST_CASE("the gate covers every variant a header dispatches to: bucket winners, runners-up on request, tree leaves",
          "[sanitize]") {
  kiln::tuner::Record r;
  kiln::tuner::RecordedBucket b1;
  b1.name = "narrow";
  b1.winner = "k__A";
  b1.contenders = {{"k__B", 1.0, std::nullopt, std::nullopt}, {"k__C", 1.1, std::nullopt, std::nullopt}};
  kiln::tuner::RecordedBucket b2;
  b2.name = "wide";
  b2.winner = "k__A";  // a variant that wins twice is gated once
  kiln::tuner::RecordedBucket empty;
  empty.name = "none";  // no winner: nothing to gate
  r.buckets = {b1, b2, empty};
  CHECK(kiln::tuner::dispatched_variants(r, 0) == std::vector<std::string>{"k__A"});
  CHECK(kiln::tuner::dispatched_variants(r, 1) == std::vector<std::string>{"k__A", "k__B"});

  // A learned tree: a split and two leaves, one of them a variant no bucket chose.
  kiln::tuner::DispatchTree tree;
  kiln::tuner::TreeNode split;
  split.dim = "cols";
  split.threshold = 256;
  split.yes = 1;
  split.no = 2;
  kiln::tuner::TreeNode narrow;
  narrow.variant = "k__D";
  kiln::tuner::TreeNode wide;
  wide.variant = "k__A";
  tree.nodes = {split, narrow, wide};
  kiln::tuner::RecordedDomain d;
  d.tree = tree;
  r.domain = d;
  CHECK(kiln::tuner::dispatched_variants(r, 0) == std::vector<std::string>{"k__A", "k__D"});
  r.buckets.clear();
  CHECK(kiln::tuner::dispatched_variants(r, 0) == std::vector<std::string>{"k__D", "k__A"});
}

TEST_CASE("a sanitizer that stops before writing its log is not a pass, and its own words are the reason",
          "[sanitize]") {
  kiln_test::GeneratedToy toy;
  kiln_test::TempDir dir("kiln-sanitize");
  StandIn sanitizer(toy, dir.path());
  // One that cannot start: a word on stderr, exit code 1, no log.
  const kiln::tuner::SanitizerResult s =
      sanitizer.run("#!/bin/sh\necho 'cannot attach to the target: device busy' >&2\nexit 1\n");
  CHECK_FALSE(s.ran);
  CHECK_THAT(s.detail, kiln_test::ContainsSubstring("compute-sanitizer --tool memcheck did not finish the checks"));
  CHECK_THAT(s.detail, kiln_test::ContainsSubstring("cannot attach to the target: device busy"));

  // A log without errors and a variant that failed: the variant's stderr is the reason.
  const kiln::tuner::SanitizerResult t =
      sanitizer.run("#!/bin/sh\n"
                    "while [ \"$1\" != --log-file ]; do shift; done\n"
                    "printf '========= COMPUTE-SANITIZER\\n========= ERROR SUMMARY: 0 errors\\n' > \"$2\"\n"
                    "echo 'launch failed: too many resources requested for launch' >&2\n"
                    "exit 1\n");
  CHECK_FALSE(t.ran);
  CHECK_THAT(t.detail, kiln_test::ContainsSubstring("too many resources requested for launch"));
}

TEST_CASE("a sanitizer run silent past --sanitize-timeout is stopped there, and is not a pass", "[sanitize]") {
  kiln_test::GeneratedToy toy;
  kiln_test::TempDir dir("kiln-sanitize-timeout");
  StandIn sanitizer(toy, dir.path());
  sanitizer.ctx.sanitize_timeout_s = 0.5;
  const auto started = std::chrono::steady_clock::now();
  // A run that never reports: it outlasts the limit by far.
  const kiln::tuner::SanitizerResult s = sanitizer.run("#!/bin/sh\nexec sleep 60\n");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK_FALSE(s.ran);  // no pass is kept: the next tuning asks again
  CHECK(s.timed_out);
  CHECK_THAT(s.detail, kiln_test::ContainsSubstring("compute-sanitizer --tool memcheck did not finish the checks"));
  CHECK(took < 30);  // stopped at its limit, not at the stand-in's end
}

TEST_CASE("a gate run's silence limit: --sanitize-timeout, else 100 times the silence limit, at most ten minutes",
          "[sanitize]") {
  kiln::tuner::EvaluationContext ctx;
  ctx.timeout_s = 120;  // softmax_cuda's: 200 minutes before the cap
  CHECK(kiln::tuner::sanitizer_silence_s(ctx) == 600);
  ctx.timeout_s = 2;
  CHECK(kiln::tuner::sanitizer_silence_s(ctx) == 200);
  ctx.sanitize_timeout_s = 3600;  // asked for: above the cap is allowed
  CHECK(kiln::tuner::sanitizer_silence_s(ctx) == 3600);
}
