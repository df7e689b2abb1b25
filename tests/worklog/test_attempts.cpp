// Attempts: the round trip of every field, validation, delta, filters and full-text search.
#include <cmath>
#include <limits>
#include <vector>

#include "kiln/join.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using namespace kiln::worklog;
using kiln_test::ContainsSubstring;
using worklog_test::make_attempt;
using worklog_test::make_session;

namespace {

std::vector<std::int64_t> ids_of(const std::vector<Attempt>& attempts) {
  std::vector<std::int64_t> ids;
  for (const Attempt& a : attempts) ids.push_back(a.id);
  return ids;
}

using Ids = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("an attempt with every field set reads back the same") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t session = log.start_session(make_session());

  Attempt in;
  in.session_id = session;
  in.kernel = "softmax_cuda";
  in.variant = "softmax_cuda__THREADS256_VEC8";
  in.problem = "rows=16384 cols=8192 dtype=bf16";
  in.author = Author::person;
  in.hypothesis = "8-wide loads reach the DRAM roofline";
  in.change = "VEC 4 -> 8";
  in.baseline = 1.25e-4;
  in.result = 1.5e-4;
  in.unit = "s";
  in.delta_pct = 20.0;
  in.verdict = Verdict::invalid;
  in.failure_kind = FailureKind::correctness;
  in.explanation = "the tail of odd rows was never written";
  in.unlocks = "cols not multiple of 8";
  in.blocks = "needs a masked tail";
  in.tags = {"Vector-Loads", " bf16 ", "tail", "bf16"};
  in.floor = 9.0e-5;
  in.created_at = "2026-11-21T10:00:00.000Z";
  const std::int64_t id = log.add_attempt(in);

  const std::optional<Attempt> out = log.attempt(id);
  REQUIRE(out);
  CHECK(out->id == id);
  CHECK(out->session_id == session);
  CHECK(out->kernel == in.kernel);
  CHECK(out->variant == in.variant);
  CHECK(out->problem == in.problem);
  CHECK(out->author == Author::person);
  CHECK(out->hypothesis == in.hypothesis);
  CHECK(out->change == in.change);
  CHECK(out->baseline == in.baseline);
  CHECK(out->result == in.result);
  CHECK(out->unit == "s");
  CHECK(out->delta_pct == 20.0);
  CHECK(out->verdict == Verdict::invalid);
  CHECK(out->failure_kind == FailureKind::correctness);
  CHECK(out->explanation == in.explanation);
  CHECK(out->unlocks == in.unlocks);
  CHECK(out->blocks == in.blocks);
  CHECK(out->tags == std::vector<std::string>{"bf16", "tail", "vector-loads"});
  CHECK(out->floor == in.floor);
  CHECK(out->created_at == in.created_at);
  CHECK_FALSE(log.attempt(id + 1).has_value());
}

TEST_CASE("an attempt with only the required fields gets nulls and a timestamp") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  Attempt in;
  in.kernel = "gemm";
  in.author = Author::person;
  in.verdict = Verdict::revert;
  in.hypothesis = "split-K helps the skinny shapes";
  const std::optional<Attempt> out = log.attempt(log.add_attempt(in));
  REQUIRE(out);
  CHECK_FALSE(out->session_id);
  CHECK_FALSE(out->variant);
  CHECK_FALSE(out->problem);
  CHECK_FALSE(out->baseline);
  CHECK_FALSE(out->result);
  CHECK_FALSE(out->delta_pct);
  CHECK_FALSE(out->failure_kind);
  CHECK_FALSE(out->floor);
  CHECK(out->tags.empty());
  // UTC, ISO 8601 with milliseconds: 2026-11-21T10:00:00.000Z
  REQUIRE(out->created_at.size() == 24);
  CHECK(out->created_at[10] == 'T');
  CHECK(out->created_at.back() == 'Z');
}

TEST_CASE("delta_pct is computed from baseline and result when not given, and kept when given") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");

  Attempt computed = make_attempt("k", "k__A1");  // 2.0 ms -> 1.5 ms
  const std::optional<double> delta = log.attempt(log.add_attempt(computed))->delta_pct;
  REQUIRE(delta);
  CHECK(std::fabs(*delta - -25.0) < 1e-12);

  Attempt given = make_attempt("k", "k__A2");
  given.delta_pct = -30.0;  // the caller's own reading, e.g. over several problems
  CHECK(log.attempt(log.add_attempt(given))->delta_pct == -30.0);

  Attempt zero_baseline = make_attempt("k", "k__A3");
  zero_baseline.baseline = 0.0;
  CHECK_FALSE(log.attempt(log.add_attempt(zero_baseline))->delta_pct);

  Attempt no_baseline = make_attempt("k", "k__A4");
  no_baseline.baseline.reset();
  CHECK_FALSE(log.attempt(log.add_attempt(no_baseline))->delta_pct);
}

TEST_CASE("attempts that do not hold together are refused with the reason") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::string prefix = log.path() + ": cannot add attempt: ";

  Attempt failed = make_attempt("k", "k__A1");
  failed.verdict = Verdict::failed;
  REQUIRE_THROWS_WITH(log.add_attempt(failed), prefix + "a failed attempt needs a failure kind");

  Attempt kept = make_attempt("k", "k__A1");
  kept.failure_kind = FailureKind::timeout;
  REQUIRE_THROWS_WITH(log.add_attempt(kept), ContainsSubstring("verdict 'keep' means the variant "
                                                               "ran, so it takes no failure kind"));

  Attempt nan = make_attempt("k", "k__A1");
  nan.result = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_WITH(log.add_attempt(nan), prefix + "result is not a finite number");

  Attempt no_unit = make_attempt("k", "k__A1");
  no_unit.unit.clear();
  REQUIRE_THROWS_WITH(log.add_attempt(no_unit), prefix + "baseline, result and floor need a unit");

  Attempt bad_floor = make_attempt("k", "k__A1");
  bad_floor.floor = 0.0;
  REQUIRE_THROWS_WITH(log.add_attempt(bad_floor), prefix + "the floor must be positive");

  Attempt no_kernel = make_attempt("", "k__A1");
  REQUIRE_THROWS_WITH(log.add_attempt(no_kernel), prefix + "the kernel is empty");

  Attempt orphan = make_attempt("k", "k__A1");
  orphan.session_id = 42;
  REQUIRE_THROWS_WITH(log.add_attempt(orphan), prefix + "no session 42");

  Attempt bad_tag = make_attempt("k", "k__A1");
  bad_tag.tags = {"memory bound"};
  REQUIRE_THROWS_WITH(log.add_attempt(bad_tag), ContainsSubstring("tag 'memory bound' may hold only"));

  Attempt bad_verdict = make_attempt("k", "k__A1");
  bad_verdict.verdict = static_cast<Verdict>(9);
  REQUIRE_THROWS_WITH(log.add_attempt(bad_verdict), "invalid verdict value 9");

  CHECK(log.attempts().empty());
}

TEST_CASE("words from the command line parse, and unknown words name the choices") {
  CHECK(parse_verdict("revert") == Verdict::revert);
  CHECK(parse_failure_kind("correctness") == FailureKind::correctness);
  CHECK(parse_author("person") == Author::person);
  CHECK(parse_link_kind("contradicts") == LinkKind::contradicts);
  CHECK(parse_phase("check") == Phase::check);
  REQUIRE_THROWS_WITH(parse_verdict("kept"),
                      "unknown verdict 'kept' (expected keep, revert, invalid or failed)");
  REQUIRE_THROWS_WITH(parse_failure_kind("oom"),
                      "unknown failure kind 'oom' (expected constraint, compile, crash, timeout, "
                      "runtime, correctness or sanitizer)");
  for (const Verdict v : {Verdict::keep, Verdict::revert, Verdict::invalid, Verdict::failed}) {
    CHECK(parse_verdict(to_string(v)) == v);
  }
}

TEST_CASE("tags normalise to sorted, distinct lower-case words") {
  CHECK(normalise_tags("Memory-Bound, smem,,  SMEM ,l2") ==
        std::vector<std::string>{"l2", "memory-bound", "smem"});
  CHECK(normalise_tags("").empty());
  CHECK(kiln::join(normalise_tags("b,a"), ",") == "a,b");
  CHECK(kiln::join(std::vector<std::string>{}, ",").empty());
  REQUIRE_THROWS_WITH(normalise_tags("ok, not;ok"), ContainsSubstring("tag 'not;ok'"));
}

TEST_CASE("filters select by kernel, verdict, tag, session, author, and all at once") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t s1 = log.start_session(make_session("softmax_cuda"));
  const std::int64_t s2 = log.start_session(make_session("softmax_cuda"));

  const auto add = [&](const std::string& kernel, std::optional<std::int64_t> session,
                       Verdict verdict, Author author, std::vector<std::string> tags) {
    Attempt a = make_attempt(kernel, kernel + "__X");
    a.session_id = session;
    a.verdict = verdict;
    if (verdict == Verdict::failed) a.failure_kind = FailureKind::compile;
    a.author = author;
    a.tags = std::move(tags);
    return log.add_attempt(a);
  };
  const auto a1 = add("softmax_cuda", s1, Verdict::keep, Author::kiln, {"smem"});
  const auto a2 = add("softmax_cuda", s1, Verdict::revert, Author::kiln, {"smem-bank", "vec"});
  const auto a3 = add("softmax_cuda", s2, Verdict::failed, Author::kiln, {"vec"});
  const auto a4 = add("gemm", std::nullopt, Verdict::keep, Author::person, {"smem", "vec"});
  const auto a5 = add("softmax_cuda", std::nullopt, Verdict::invalid, Author::person, {});

  CHECK(ids_of(log.attempts()) == Ids{a1, a2, a3, a4, a5});

  AttemptFilter by_kernel;
  by_kernel.kernel = "gemm";
  CHECK(ids_of(log.attempts(by_kernel)) == Ids{a4});

  AttemptFilter by_verdict;
  by_verdict.verdict = Verdict::keep;
  CHECK(ids_of(log.attempts(by_verdict)) == Ids{a1, a4});

  AttemptFilter by_tag;  // "smem" must not match "smem-bank"
  by_tag.tag = " SMEM ";
  CHECK(ids_of(log.attempts(by_tag)) == Ids{a1, a4});

  AttemptFilter by_session;
  by_session.session_id = s1;
  CHECK(ids_of(log.attempts(by_session)) == Ids{a1, a2});

  AttemptFilter by_author;
  by_author.author = Author::person;
  CHECK(ids_of(log.attempts(by_author)) == Ids{a4, a5});

  AttemptFilter combined;
  combined.kernel = "softmax_cuda";
  combined.tag = "vec";
  combined.author = Author::kiln;
  CHECK(ids_of(log.attempts(combined)) == Ids{a2, a3});

  AttemptFilter two_tags;
  two_tags.tag = "smem,vec";
  REQUIRE_THROWS_WITH(log.attempts(two_tags), ContainsSubstring("must name exactly one tag"));
}

TEST_CASE("full-text search finds words of the hypothesis, explanation, tags and variant") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");

  Attempt a = make_attempt("softmax_cuda", "softmax_cuda__THREADS256_VEC8");
  a.hypothesis = "Coalesced loads should double the bandwidth";
  a.explanation = "bank conflicts in the reduction ate the gain";
  a.tags = {"shuffle"};
  const std::int64_t first = log.add_attempt(a);

  const auto search = [&](const std::string& text) {
    AttemptFilter f;
    f.text = text;
    return ids_of(log.attempts(f));
  };
  CHECK(search("coalesced") == Ids{first});        // hypothesis, any case
  CHECK(search("\"bank conflicts\"") == Ids{first});  // phrase in the explanation
  CHECK(search("shuffle") == Ids{first});          // tag
  CHECK(search("VEC8") == Ids{first});             // part of the variant name
  CHECK(search("bandw*") == Ids{first});           // prefix
  CHECK(search("occupancy").empty());

  Attempt b = make_attempt("softmax_cuda", "softmax_cuda__THREADS128_VEC8");
  b.hypothesis = "fewer threads, more rows per block";
  b.explanation = "occupancy fell; coalesced loads did not matter";
  const std::int64_t second = log.add_attempt(b);
  CHECK(search("coalesced") == Ids{first, second});
  CHECK(search("occupancy") == Ids{second});
  CHECK(search("VEC8 NOT THREADS256") == Ids{second});

  AttemptFilter with_kernel;
  with_kernel.text = "coalesced";
  with_kernel.kernel = "gemm";
  CHECK(log.attempts(with_kernel).empty());
}

TEST_CASE("a malformed full-text query is an error that says so") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  log.add_attempt(make_attempt("k", "k__A1"));
  for (const std::string query : {"AND", "\"unterminated", "(vec8", "nosuchcolumn: x"}) {
    AttemptFilter f;
    f.text = query;
    REQUIRE_THROWS_WITH(log.attempts(f),
                        ContainsSubstring(log.path() + ": malformed search query '" + query + "'"));
  }
}

TEST_CASE("evidence is reported once: a second attempt naming it returns the first, even from another connection") {
  kiln_test::TempDir dir("kiln-worklog");
  auto first = Worklog::open(dir / "w.db");
  auto second = Worklog::open(dir / "w.db");
  Attempt a = make_attempt("softmax_cuda", "softmax_cuda__VEC8");
  a.evidence = "timing ctx/softmax_cuda__VEC8/abc @2026-11-21T10:00:00.000Z";
  const auto id = first.add_attempt(a);
  a.explanation = "the same timing, read by a second tuner";
  CHECK(second.add_attempt(a) == id);
  CHECK(first.attempts().size() == 1);
  CHECK(first.attempt(id)->evidence == a.evidence);

  a.evidence = "timing ctx/softmax_cuda__VEC8/abc @2026-11-21T11:00:00.000Z";  // measured again: new evidence
  CHECK(second.add_attempt(a) != id);
  a.evidence.reset();  // a person's attempts name no evidence and never collide
  second.add_attempt(a);
  second.add_attempt(a);
  CHECK(first.attempts().size() == 4);
}
