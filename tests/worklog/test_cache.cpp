// The measurement cache and the variant failures that let an interrupted run resume.
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using namespace kiln::worklog;
using kiln_test::ContainsSubstring;

namespace {

Measurement bench(const std::string& context, const std::string& variant,
                  const std::string& problem) {
  Measurement m;
  m.key = {context, "softmax_cuda", variant, "hash-" + variant, problem, Phase::bench};
  m.result = R"({"median_s":1.5e-4,"samples":50})";
  return m;
}

}  // namespace

TEST_CASE("a measurement is stored, read back, and replaced by a newer one with the same key") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t session = log.start_session(worklog_test::make_session());

  Measurement m = bench("ctx", "softmax_cuda__THREADS256_VEC8", "rows=16384 cols=8192 dtype=bf16");
  m.session_id = session;
  log.put_measurement(m);

  std::optional<Measurement> got = log.measurement(m.key);
  REQUIRE(got);
  CHECK(got->key.context_key == "ctx");
  CHECK(got->key.kernel == "softmax_cuda");
  CHECK(got->key.variant == "softmax_cuda__THREADS256_VEC8");
  CHECK(got->key.variant_hash == "hash-softmax_cuda__THREADS256_VEC8");
  CHECK(got->key.problem_key == "rows=16384 cols=8192 dtype=bf16");
  CHECK(got->key.phase == Phase::bench);
  CHECK(got->status == MeasurementStatus::ok);
  CHECK(got->result == m.result);
  CHECK(got->session_id == session);
  CHECK_FALSE(got->created_at.empty());

  Measurement again = m;
  again.status = MeasurementStatus::failed;
  again.result = R"({"error":"launch failed"})";
  again.session_id.reset();
  log.put_measurement(again);
  got = log.measurement(m.key);
  REQUIRE(got);
  CHECK(got->status == MeasurementStatus::failed);
  CHECK(got->result == again.result);
  CHECK_FALSE(got->session_id);
  CHECK(log.count_measurements("ctx") == 1);
}

TEST_CASE("each part of the key tells measurements apart") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const Measurement base = bench("ctx", "v1", "p1");
  log.put_measurement(base);

  Measurement check = base;
  check.key.phase = Phase::check;
  Measurement other_hash = base;
  other_hash.key.variant_hash = "edited-source";
  Measurement other_problem = base;
  other_problem.key.problem_key = "p2";
  Measurement other_context = base;
  other_context.key.context_key = "ctx-l4";
  for (const Measurement* m : {&check, &other_hash, &other_problem}) {
    CHECK_FALSE(log.measurement(m->key));
    log.put_measurement(*m);
    CHECK(log.measurement(m->key));
  }
  CHECK_FALSE(log.measurement(other_context.key));
  log.put_measurement(other_context);

  CHECK(log.count_measurements("ctx") == 4);
  CHECK(log.count_measurements("ctx-l4") == 1);
  CHECK(log.count_measurements("unknown") == 0);
  const std::vector<Measurement> listed = log.measurements("ctx", "softmax_cuda");
  REQUIRE(listed.size() == 4);
  CHECK(listed[0].key.variant_hash == "edited-source");  // ordered by key
  CHECK(log.measurements("ctx", "gemm").empty());
}

TEST_CASE("a measurement whose result is not JSON is refused") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  Measurement m = bench("ctx", "v1", "p1");
  m.result = "median 1.5e-4";
  REQUIRE_THROWS_WITH(log.put_measurement(m), ContainsSubstring("CHECK constraint failed"));
  CHECK(log.count_measurements("ctx") == 0);
}

TEST_CASE("variant failures are stored per variant and context, and replaced") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  VariantFailure f;
  f.key = {"ctx", "softmax_cuda", "softmax_cuda__THREADS512_VEC8", "h1"};
  f.kind = FailureKind::compile;
  f.detail = "ptxas error: too many registers";
  log.put_variant_failure(f);

  std::optional<VariantFailure> got = log.variant_failure(f.key);
  REQUIRE(got);
  CHECK(got->kind == FailureKind::compile);
  CHECK(got->detail == f.detail);
  CHECK(got->key.variant == f.key.variant);
  CHECK_FALSE(got->session_id);

  f.kind = FailureKind::timeout;
  f.detail = "killed after 60 s";
  log.put_variant_failure(f);
  got = log.variant_failure(f.key);
  REQUIRE(got);
  CHECK(got->kind == FailureKind::timeout);
  CHECK(log.variant_failures("ctx", "softmax_cuda").size() == 1);

  VariantKey edited = f.key;
  edited.variant_hash = "h2";  // the source changed: the old failure no longer applies
  CHECK_FALSE(log.variant_failure(edited));

  VariantFailure per_problem = f;
  per_problem.kind = FailureKind::correctness;
  REQUIRE_THROWS_WITH(log.put_variant_failure(per_problem),
                      ContainsSubstring("a 'correctness' failure belongs to a problem"));
}
