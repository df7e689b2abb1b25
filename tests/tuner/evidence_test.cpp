// Failures as evidence and winners against noise: when a stored failure is retried, and how a
// winner is chosen once timings carry their spread. Real worklogs, the real generator's output.
#include <cmath>
#include <limits>

#include "kiln_catch.hpp"
#include "noise.hpp"
#include "retry.hpp"
#include "select.hpp"
#include "tuner_fixture.hpp"

using kiln_test::Approx;
using kiln::tuner::retry_decision;
using kiln::tuner::RunConditions;
using kiln::worklog::FailureKind;
using kiln::worklog::VariantFailure;

namespace {

VariantFailure failure(FailureKind kind, std::optional<double> limit, std::optional<double> others) {
  VariantFailure f;
  f.key = {"ctx", "toy", "toy__TILE1_VEC4", "h"};
  f.kind = kind;
  f.limit_s = limit;
  f.others_cores = others;
  f.problem_set = "problems-a";
  f.kiln_version = "0.1.0";
  return f;
}

RunConditions now(double limit, std::optional<double> others = 0.0) {
  RunConditions c;
  c.limit_s = limit;
  c.others_cores = others;
  c.problem_set = "problems-a";
  c.kiln_version = "0.1.0";
  return c;
}

}  // namespace

TEST_CASE("a timeout is retried when the limit rises, and kept under the same limit") {
  auto f = failure(FailureKind::timeout, 5, 0.0);
  auto same = retry_decision(f, now(5));
  CHECK_FALSE(same.retry);
  CHECK(same.why == "kept until the limit exceeds 5 s, the problems or Kiln change, or --retry-failed");
  auto raised = retry_decision(f, now(60));
  CHECK(raised.retry);
  CHECK(raised.why == "the limit rose from 5 s to 60 s");
}

TEST_CASE("a failure on a busy machine is retried once the machine is quiet") {
  auto timeout = failure(FailureKind::timeout, 5, 1.9);
  CHECK_FALSE(retry_decision(timeout, now(5, 1.8)).retry);
  CHECK(retry_decision(timeout, now(5, 0.05)).retry);
  auto runtime = failure(FailureKind::runtime, 5, 1.9);
  auto quiet = retry_decision(runtime, now(5, 0.0));
  CHECK(quiet.retry);
  CHECK_THAT(quiet.why, kiln_test::ContainsSubstring("1.9 other cores were busy"));
  CHECK_FALSE(retry_decision(failure(FailureKind::runtime, 5, 0.0), now(5, 0.0)).retry);
}

TEST_CASE("compile failures are kept even when asked, transient ones are retried when asked or when the problems change") {
  auto compile = failure(FailureKind::compile, std::nullopt, std::nullopt);
  auto asked = now(5);
  asked.retry_failed = true;
  auto kept = retry_decision(compile, asked);
  CHECK_FALSE(kept.retry);
  CHECK_THAT(kept.why, kiln_test::ContainsSubstring("deterministic"));
  CHECK(retry_decision(failure(FailureKind::crash, 5, 0.0), asked).why == "asked to (--retry-failed)");
  auto changed = now(5);
  changed.problem_set = "problems-b";
  CHECK(retry_decision(failure(FailureKind::crash, 5, 0.0), changed).why == "the problems changed since it failed");
  CHECK_FALSE(retry_decision(failure(FailureKind::crash, 5, 0.0), now(500)).retry);
}

TEST_CASE("a runtime failure stored from the device's setup (before it was told apart) is retried, others are not") {
  auto setup = failure(FailureKind::runtime, 5, 0.0);
  setup.detail = "cudaErrorInitializationError (initialization error) from cudaGetDeviceCount(&count) at "
                 "/work/main/autotune/harness/device_cuda.cu:82";
  auto d = retry_decision(setup, now(5));
  CHECK(d.retry);
  CHECK_THAT(d.why, kiln_test::ContainsSubstring("failed setting up the device"));
  setup.detail = "no CUDA device found";
  CHECK(retry_decision(setup, now(5)).retry);
  auto launch = failure(FailureKind::runtime, 5, 0.0);
  launch.detail = "cudaErrorIllegalAddress (an illegal memory access was encountered) from cudaStreamSynchronize(stream_) at "
                  "/work/main/autotune/harness/device_cuda.cu:108";
  CHECK_FALSE(retry_decision(launch, now(5)).retry);
  auto timeout = failure(FailureKind::timeout, 5, 0.0);
  timeout.detail = setup.detail;
  CHECK_FALSE(retry_decision(timeout, now(5)).retry);
}

TEST_CASE("a timeout stored without its limit (an older worklog) is retried") {
  VariantFailure old = failure(FailureKind::timeout, std::nullopt, std::nullopt);
  old.problem_set.clear();
  old.kiln_version.clear();
  CHECK(retry_decision(old, now(60)).why == "the limit it timed out under was not recorded");
}

TEST_CASE("noise is the worst relative interquartile range, unknown when any spread is") {
  CHECK(kiln::tuner::relative_noise({1.0, 2.0}, {0.01, 0.1}) == Approx(0.05));
  CHECK_FALSE(kiln::tuner::relative_noise({1.0, 2.0}, {0.01, std::nullopt}));
  auto s = kiln::tuner::spread_of({1, 2, 3, 4, 5});
  CHECK(s.median_s == 3);
  CHECK(s.iqr_s == 2);
  CHECK(kiln::tuner::within_noise(1.0, 0.05, 1.04, 0.01));
  CHECK_FALSE(kiln::tuner::within_noise(1.0, 0.02, 1.04, 0.01));
}

namespace {

// Outcomes of the toy space where every variant is 2 ms and `fast` is `factor` times that, each
// problem's timing with a relative spread `noise` (nothing: not recorded).
std::vector<kiln::tuner::VariantOutcome> outcomes(const kiln::tuner::Manifest& m, const std::string& fast, double factor,
                                                  std::optional<double> noise) {
  std::vector<kiln::tuner::VariantOutcome> out;
  for (std::size_t v = 0; v < m.variants.size(); ++v) {
    kiln::tuner::VariantOutcome oc;
    oc.index = v;
    for (const auto& p : m.problems) {
      double t = m.variants[v].name == fast ? 2e-3 * factor : 2e-3;
      oc.median_s[p.key()] = t;
      if (noise) oc.spread_s[p.key()] = t * *noise;
    }
    out.push_back(std::move(oc));
  }
  return out;
}

kiln::tuner::Record select(const kiln_test::GeneratedToy& toy, const kiln::worklog::Worklog& log,
                           const std::vector<kiln::tuner::VariantOutcome>& oc) {
  kiln::tuner::SelectionInput in{&toy.manifest, &log, "ctx", "cpu", kiln::model::DeviceInfo{"cpu", "cpu"}, {}, "exhaustive"};
  return kiln::tuner::select_winners(in, oc, [](std::size_t) { return std::string("h"); });
}

}  // namespace

TEST_CASE("a variant must beat the default by more than the noise to replace it") {
  kiln_test::GeneratedToy toy;
  auto log = kiln::worklog::Worklog::open(toy.dir / "worklog.sqlite");
  const std::string fast = "toy__TILE1_VEC4";
  REQUIRE(toy.manifest.default_variant != fast);

  auto within = select(toy, log, outcomes(toy.manifest, fast, 0.97, 0.05));
  for (const auto& b : within.buckets) {
    REQUIRE(b.winner);
    CHECK(*b.winner == toy.manifest.default_variant);
    CHECK_THAT(b.choice, kiln_test::ContainsSubstring("the default is kept: " + fast + " was 3.0% faster"));
    REQUIRE(b.noise);
    CHECK(*b.noise == Approx(0.05));
  }
  auto beyond = select(toy, log, outcomes(toy.manifest, fast, 0.80, 0.05));
  for (const auto& b : beyond.buckets) CHECK(*b.winner == fast);

  // Timings without spreads (recorded before spreads were): the fastest median, as it always was,
  // and a record without noise fields.
  auto unknown = select(toy, log, outcomes(toy.manifest, fast, 0.97, std::nullopt));
  for (const auto& b : unknown.buckets) {
    CHECK(*b.winner == fast);
    CHECK_FALSE(b.noise);
    CHECK(b.choice.empty());
    for (const auto& c : b.contenders) CHECK_FALSE(c.within_noise);
  }
  CHECK(kiln::tuner::record_text(unknown).find("noise") == std::string::npos);
}
