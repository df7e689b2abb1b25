// Creating, recognising, refusing and migrating worklog files.
#include <vector>

#include "committed_worklog.hpp"
#include "kiln/worklog/schema.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

namespace schema = kiln::worklog::schema;
using kiln::worklog::OpenMode;
using kiln::worklog::Worklog;
using kiln::worklog::sqlite::Database;
using kiln::worklog::sqlite::OpenOptions;
using kiln_test::ContainsSubstring;
using worklog_test::query_int;
using worklog_test::query_text;

namespace {

OpenOptions inspect_only() {
  OpenOptions options;
  options.wal = false;
  return options;
}

}  // namespace

TEST_CASE("a new file becomes a worklog at the latest version, and reopens") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "new.kiln.db";
  std::int64_t session_id = 0;
  {
    Worklog log = Worklog::open(path);
    session_id = log.start_session(worklog_test::make_session());
    CHECK(log.integrity_problems().empty());
  }
  CHECK(query_int(path, "PRAGMA user_version") == schema::latest_version());
  CHECK(query_int(path, "PRAGMA application_id") == schema::kiln_application_id);
  CHECK(query_text(path, "PRAGMA journal_mode") == "wal");
  const std::string tables = query_text(
      path, "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master "
            "WHERE type = 'table' AND name NOT LIKE 'attempts_fts_%' ORDER BY name)");
  CHECK(tables == "attempts attempts_fts links measurements profiles sanitizer_passes sessions variant_failures");

  Worklog again = Worklog::open(path, OpenMode::existing);
  REQUIRE(again.sessions().size() == 1);
  CHECK(again.sessions().front().id == session_id);
}

TEST_CASE("an empty file becomes a worklog, a missing one is refused in existing mode") {
  kiln_test::TempDir dir("kiln-worklog");
  kiln_test::write_file(dir / "empty.db", "");
  CHECK_NOTHROW(Worklog::open(dir / "empty.db", OpenMode::existing));
  CHECK(query_int(dir / "empty.db", "PRAGMA user_version") == schema::latest_version());

  const std::string missing = (dir / "missing.db").string();
  REQUIRE_THROWS_WITH(Worklog::open(missing, OpenMode::existing),
                      missing + ": no such worklog");
  CHECK_FALSE(std::filesystem::exists(missing));
}

TEST_CASE("a version 1 file opens with this Kiln and keeps its content") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "v1.kiln.db";
  {
    Database db(path, inspect_only());
    schema::prepare(db, schema::migrations().first(1));
    db.exec("INSERT INTO sessions (kernel, strategy, context_key) VALUES ('gemm', 'random', 'c')",
            "add a session as version 1 wrote it");
  }
  REQUIRE(query_int(path, "PRAGMA user_version") == 1);

  Worklog log = Worklog::open(path);
  CHECK(query_int(path, "PRAGMA user_version") == schema::latest_version());
  REQUIRE(log.sessions().size() == 1);
  CHECK(log.sessions().front().kernel == "gemm");
  CHECK(log.sessions().front().device == "{}");
}

namespace {

int version_2_runs = 0;

void add_notes_table(const Database& db) {
  ++version_2_runs;
  db.exec("CREATE TABLE notes (attempt_id INTEGER REFERENCES attempts(id), body TEXT)",
          "create the notes table");
  db.exec("ALTER TABLE sessions ADD COLUMN host TEXT NOT NULL DEFAULT 'unknown'",
          "add the host column");
}

void half_done_then_broken(const Database& db) {
  db.exec("CREATE TABLE notes (body TEXT)", "create the notes table");
  db.exec("ALTER TABLE no_such_table ADD COLUMN x TEXT", "add a column to a missing table");
}

std::vector<schema::Migration> with_version_2(void (*apply)(const Database&)) {
  std::vector<schema::Migration> steps(schema::migrations().begin(), schema::migrations().end());
  steps.push_back({static_cast<int>(steps.size()) + 1, "test step", apply});
  return steps;
}

}  // namespace

TEST_CASE("appending a migration upgrades an existing file once, in place") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "upgrade.kiln.db";
  Worklog::open(path).start_session(worklog_test::make_session("kept_kernel"));

  const std::vector<schema::Migration> steps = with_version_2(&add_notes_table);
  const int next = static_cast<int>(steps.size());
  version_2_runs = 0;
  {
    Database db(path, inspect_only());
    schema::prepare(db, steps);
    schema::prepare(db, steps);  // already there: nothing to do
  }
  CHECK(version_2_runs == 1);
  CHECK(query_int(path, "PRAGMA user_version") == next);
  CHECK(query_text(path, "SELECT kernel || ':' || host FROM sessions") == "kept_kernel:unknown");
  CHECK(query_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'notes'") == 1);

  // This Kiln does not know the appended version, so it refuses the upgraded file.
  REQUIRE_THROWS_WITH(Worklog::open(path),
                      path.string() + ": worklog schema version " + std::to_string(next) +
                          " is newer than this Kiln (" + std::to_string(schema::latest_version()) +
                          "); upgrade Kiln");
}

TEST_CASE("a migration that fails leaves the file at its previous version") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "broken.kiln.db";
  Worklog::open(path);
  {
    Database db(path, inspect_only());
    REQUIRE_THROWS_WITH(schema::prepare(db, with_version_2(&half_done_then_broken)),
                        ContainsSubstring("no such table: no_such_table"));
  }
  CHECK(query_int(path, "PRAGMA user_version") == schema::latest_version());
  CHECK(query_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'notes'") == 0);
  CHECK_NOTHROW(Worklog::open(path));
}

TEST_CASE("a worklog written by a newer Kiln is refused with the versions") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "future.kiln.db";
  Worklog::open(path);
  Database(path, inspect_only()).exec("PRAGMA user_version = 99", "pretend a newer Kiln wrote it");
  REQUIRE_THROWS_WITH(Worklog::open(path),
                      path.string() + ": worklog schema version 99 is newer than this Kiln (" +
                          std::to_string(schema::latest_version()) + "); upgrade Kiln");
}

TEST_CASE("an SQLite file of another program is refused and left untouched") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "other.db";
  Database(path, inspect_only())
      .exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
            "INSERT INTO customers (name) VALUES ('Ada');",
            "create another program's file");
  const std::string before = kiln_test::read_file(path);

  REQUIRE_THROWS_WITH(Worklog::open(path),
                      path.string() + ": not a Kiln worklog (an SQLite database with "
                                      "application_id 0x00000000, schema version 0 and 1 schema "
                                      "objects)");
  CHECK(kiln_test::read_file(path) == before);
  CHECK(query_text(path, "PRAGMA journal_mode") == "delete");
}

TEST_CASE("an SQLite file with another application id is refused") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "tagged.db";
  Database(path, inspect_only()).exec("PRAGMA application_id = 1234", "tag the file");
  REQUIRE_THROWS_WITH(Worklog::open(path),
                      ContainsSubstring(path.string() + ": not a Kiln worklog (an SQLite database "
                                                        "with application_id 0x000004d2"));
}

TEST_CASE("a file that is not an SQLite database is refused and left untouched") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "notes.txt";
  std::string text;
  for (int i = 0; i < 200; ++i) text += "THREADS=256 was faster than 128 on the wide rows.\n";
  kiln_test::write_file(path, text);
  REQUIRE_THROWS_WITH(Worklog::open(path),
                      path.string() + ": not a Kiln worklog (the file is not an SQLite database)");
  CHECK(kiln_test::read_file(path) == text);
}

TEST_CASE("the integrity check finds a full-text index out of step with the attempts") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "drift.kiln.db";
  Worklog log = Worklog::open(path);
  log.add_attempt(worklog_test::make_attempt("k", "k__A1"));
  REQUIRE(log.integrity_problems().empty());
  // Writing around the trigger, as a hand-edited file might.
  log.database().exec(
      "DROP TRIGGER attempts_fts_after_insert;"
      "INSERT INTO attempts (kernel, author, verdict) VALUES ('k', 'person', 'keep');",
      "write an attempt the index does not see");
  const std::vector<std::string> problems = log.integrity_problems();
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems.front(),
             ContainsSubstring("the full-text index does not match the attempts table"));
}

// tests/worklog/data/h200_worklog_v1.sqlite: the H200 worklog as committed in version 1 (2026-11-22,
// tuned before the schema had median columns), kept as it was written.
TEST_CASE("a real version 1 worklog (H200) migrates: medians become columns, spreads stay unknown") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "h200.sqlite";
  std::filesystem::copy_file(std::filesystem::path(KILN_SOURCE_DIR) / "tests/worklog/data/h200_worklog_v1.sqlite", path);
  REQUIRE(query_int(path, "PRAGMA user_version") == 1);
  const auto timings = query_int(path, "SELECT count(*) FROM measurements WHERE phase = 'bench' AND status = 'ok'");
  REQUIRE(timings > 0);

  Worklog log = Worklog::open(path, OpenMode::existing);
  CHECK(query_int(path, "PRAGMA user_version") == schema::latest_version());
  CHECK(query_int(path, "SELECT count(*) FROM measurements WHERE median_s = json_extract(result, '$.median_s')") == timings);
  CHECK(query_int(path, "SELECT count(*) FROM measurements WHERE spread_s IS NOT NULL OR others_cores IS NOT NULL") == 0);
  CHECK(query_int(path, "SELECT count(*) FROM sessions WHERE preflight IS NOT NULL") == 0);
  for (const auto& m : log.measurements(log.sessions().front().context_key, log.sessions().front().kernel)) {
    if (m.key.phase == kiln::worklog::Phase::bench) {
      CHECK(m.median_s);
      CHECK_FALSE(m.spread_s);
    }
  }
  CHECK(log.integrity_problems().empty());
}

TEST_CASE("version 3 takes the failure kind sanitizer, in attempts and variant failures, after migrating") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "h200.sqlite";
  std::filesystem::copy_file(kiln_test::committed_h200_worklog(), path);
  const auto attempts = query_int(path, "SELECT count(*) FROM attempts");
  Worklog log = Worklog::open(path, OpenMode::existing);
  REQUIRE(schema::latest_version() >= 3);
  auto a = worklog_test::make_attempt("saxpy", "saxpy__FAULToverrun");
  a.verdict = kiln::worklog::Verdict::failed;
  a.failure_kind = kiln::worklog::FailureKind::sanitizer;
  const auto id = log.add_attempt(a);
  CHECK(log.attempt(id)->failure_kind == kiln::worklog::FailureKind::sanitizer);
  kiln::worklog::VariantFailure f;
  f.key = {"ctx", "saxpy", "saxpy__FAULToverrun", "h"};
  f.kind = kiln::worklog::FailureKind::sanitizer;
  f.detail = "Invalid __global__ write of size 4 bytes";
  log.put_variant_failure(f);
  CHECK(log.variant_failure(f.key)->kind == kiln::worklog::FailureKind::sanitizer);
  CHECK(query_int(path, "SELECT count(*) FROM attempts") == attempts + 1);
  CHECK(log.integrity_problems().empty());
  // Still refused: a kind nobody defined.
  CHECK_THROWS(log.database().exec("UPDATE attempts SET failure_kind = 'bogus' WHERE id = " + std::to_string(id), "bad kind"));
}
