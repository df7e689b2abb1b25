// Sanitizer passes (schema version 5): a clean compute-sanitizer run of one variant's source with
// one set of problems and checks, kept so that a fresh build or a resumed tuning need not run the
// sanitizer again; a version 4 file gains the table and keeps its rows.
#include "kiln/error.hpp"
#include "kiln/worklog/schema.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

namespace schema = kiln::worklog::schema;
using kiln::worklog::OpenMode;
using kiln::worklog::SanitizerPass;
using kiln::worklog::VariantKey;
using kiln::worklog::Worklog;
using worklog_test::query_int;

TEST_CASE("sanitizer passes: a pass is found only for the same context, source and problem set") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.sqlite", OpenMode::create_if_missing);
  const VariantKey key{"ctx", "softmax_cuda", "softmax_cuda__A", "h1"};
  CHECK_FALSE(log.sanitizer_pass(key, "p1"));

  SanitizerPass pass;
  pass.key = key;
  pass.problem_set = "p1";
  pass.tools = "memcheck,racecheck";
  log.put_sanitizer_pass(pass);

  auto found = log.sanitizer_pass(key, "p1");
  REQUIRE(found);
  CHECK(found->tools == "memcheck,racecheck");
  CHECK_FALSE(found->created_at.empty());
  CHECK_FALSE(found->session_id);
  // Another source, other checks, another context or another variant: not passed.
  CHECK_FALSE(log.sanitizer_pass(VariantKey{"ctx", "softmax_cuda", "softmax_cuda__A", "h2"}, "p1"));
  CHECK_FALSE(log.sanitizer_pass(key, "p2"));
  CHECK_FALSE(log.sanitizer_pass(VariantKey{"ctx2", "softmax_cuda", "softmax_cuda__A", "h1"}, "p1"));
  CHECK_FALSE(log.sanitizer_pass(VariantKey{"ctx", "softmax_cuda", "softmax_cuda__B", "h1"}, "p1"));

  // Stored again: one row, the newer tools.
  pass.tools = "memcheck";
  log.put_sanitizer_pass(pass);
  CHECK(log.sanitizer_pass(key, "p1")->tools == "memcheck");
  CHECK(query_int(dir / "w.sqlite", "SELECT count(*) FROM sanitizer_passes") == 1);
}

TEST_CASE("sanitizer passes: a pass without a variant or tools is refused") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.sqlite", OpenMode::create_if_missing);
  SanitizerPass pass;
  pass.key = VariantKey{"ctx", "softmax_cuda", "", "h1"};
  pass.tools = "memcheck";
  CHECK_THROWS_AS(log.put_sanitizer_pass(pass), kiln::Error);
  pass.key.variant = "softmax_cuda__A";
  pass.tools.clear();
  CHECK_THROWS_AS(log.put_sanitizer_pass(pass), kiln::Error);
  CHECK(query_int(dir / "w.sqlite", "SELECT count(*) FROM sanitizer_passes") == 0);
}

TEST_CASE("sanitizer passes: a version 4 worklog migrates with an empty table, its rows kept") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "v4.sqlite";
  {
    kiln::worklog::sqlite::Database db(path);
    schema::prepare(db, schema::migrations().first(4));
    db.exec("INSERT INTO sessions (kernel, strategy, device, context_key) VALUES ('softmax_cuda', 'exhaustive', '{}', 'ctx')",
            "fill a version 4 worklog");
  }
  REQUIRE(query_int(path, "PRAGMA user_version") == 4);
  REQUIRE(query_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'sanitizer_passes'") == 0);
  Worklog log = Worklog::open(path, OpenMode::existing);
  CHECK(query_int(path, "PRAGMA user_version") == schema::latest_version());
  CHECK(query_int(path, "SELECT count(*) FROM sanitizer_passes") == 0);
  CHECK(query_int(path, "SELECT count(*) FROM sessions") == 1);
  CHECK(log.integrity_problems().empty());
}
