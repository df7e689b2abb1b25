// The RAII layer over SQLite: connection settings, statements, transactions, error messages.
#include <sqlite3.h>

#include "kiln/worklog/sqlite.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"

using kiln::worklog::sqlite::Database;
using kiln::worklog::sqlite::OpenOptions;
using kiln::worklog::sqlite::SqliteError;
using kiln::worklog::sqlite::Statement;
using kiln::worklog::sqlite::Transaction;
using kiln_test::ContainsSubstring;

namespace {

std::string pragma(const Database& db, const std::string& name) {
  Statement statement = db.prepare("PRAGMA " + name, "read " + name);
  REQUIRE(statement.step());
  return statement.get_text(0);
}

}  // namespace

TEST_CASE("a database opens with WAL, foreign keys, a busy timeout and synchronous=NORMAL") {
  kiln_test::TempDir dir("kiln-worklog");
  Database db(dir / "plain.db");
  CHECK(pragma(db, "journal_mode") == "wal");
  CHECK(pragma(db, "foreign_keys") == "1");
  CHECK(pragma(db, "synchronous") == "1");  // NORMAL
  CHECK(pragma(db, "busy_timeout") == "10000");
}

TEST_CASE("the linked SQLite has FTS5") {
  kiln_test::TempDir dir("kiln-worklog");
  Database db(dir / "fts.db");
  Statement option = db.prepare("SELECT sqlite_compileoption_used('ENABLE_FTS5')", "probe FTS5");
  REQUIRE(option.step());
  CHECK(option.get_int64(0) == 1);
  db.exec("CREATE VIRTUAL TABLE t USING fts5(body); INSERT INTO t VALUES ('bank conflicts');",
          "create an FTS5 table");
  Statement match = db.prepare("SELECT count(*) FROM t WHERE t MATCH 'bank'", "search");
  REQUIRE(match.step());
  CHECK(match.get_int64(0) == 1);
}

TEST_CASE("statements bind by index and by name, read columns and null, and reset") {
  kiln_test::TempDir dir("kiln-worklog");
  Database db(dir / "bind.db");
  db.exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT)", "create a table");
  Statement insert = db.prepare("INSERT INTO t VALUES (:i, :r, :s)", "insert a row");
  insert.bind(":i", std::int64_t{1} << 40).bind(":r", 2.5).bind(":s", "text").run();
  CHECK(db.changes() == 1);
  CHECK(db.last_insert_rowid() == 1);
  insert.reset();
  insert.bind(1, 7).bind(2, std::optional<double>()).bind(3, std::optional<std::string>("x")).run();

  Statement select = db.prepare("SELECT i, r, s FROM t ORDER BY rowid", "read rows");
  REQUIRE(select.step());
  CHECK(select.column_count() == 3);
  CHECK(select.get_int64(0) == (std::int64_t{1} << 40));
  CHECK(select.get_double(1) == 2.5);
  CHECK(select.get_text(2) == "text");
  REQUIRE(select.step());
  CHECK(select.get_int64(0) == 7);
  CHECK(select.is_null(1));
  CHECK_FALSE(select.get_optional_double(1).has_value());
  CHECK(select.get_optional_text(2) == std::optional<std::string>("x"));
  CHECK_FALSE(select.step());

  // reset() also clears the bindings: the row holds nulls, not the previous values.
  insert.reset();
  insert.run();
  Statement last = db.prepare("SELECT i IS NULL AND s IS NULL FROM t WHERE rowid = 3", "read");
  REQUIRE(last.step());
  CHECK(last.get_int64(0) == 1);
}

TEST_CASE("errors name the file, the intent and SQLite's message") {
  kiln_test::TempDir dir("kiln-worklog");
  const std::string path = (dir / "errors.db").string();
  Database db(path);
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)", "create a table");

  REQUIRE_THROWS_WITH(db.prepare("SELEC 1", "read the answer"),
                      ContainsSubstring(path + ": cannot read the answer: near \"SELEC\": syntax error"));

  Statement insert = db.prepare("INSERT INTO t VALUES (?)", "insert key a");
  insert.bind(1, "a").run();
  insert.reset();
  insert.bind(1, "a");
  try {
    insert.run();
    FAIL("a duplicate key was accepted");
  } catch (const SqliteError& e) {
    CHECK_THAT(e.what(), ContainsSubstring(path + ": cannot insert key a: UNIQUE constraint failed: t.k"));
    CHECK(e.primary_code() == SQLITE_CONSTRAINT);
    CHECK(e.code() == SQLITE_CONSTRAINT_PRIMARYKEY);
    CHECK(e.detail() == "UNIQUE constraint failed: t.k");
  }

  REQUIRE_THROWS_WITH(insert.bind(":missing", 1), ContainsSubstring("no parameter named ':missing'"));
  REQUIRE_THROWS_WITH(db.exec("DROP TABLE nowhere", "drop the old table"),
                      ContainsSubstring(path + ": cannot drop the old table: no such table: nowhere"));
}

TEST_CASE("opening a missing file without create names the file") {
  kiln_test::TempDir dir("kiln-worklog");
  OpenOptions options;
  options.create = false;
  const std::string path = (dir / "absent.db").string();
  REQUIRE_THROWS_WITH(Database(path, options),
                      ContainsSubstring(path + ": cannot open the worklog: unable to open"));
}

TEST_CASE("a transaction commits, or rolls back when it goes out of scope") {
  kiln_test::TempDir dir("kiln-worklog");
  Database db(dir / "tx.db");
  db.exec("CREATE TABLE t (v INTEGER)", "create a table");
  {
    Transaction transaction(db, "insert 1");
    db.exec("INSERT INTO t VALUES (1)", "insert 1");
    transaction.commit();
  }
  try {
    Transaction transaction(db, "insert 2");
    db.exec("INSERT INTO t VALUES (2)", "insert 2");
    throw std::runtime_error("abandoned");
  } catch (const std::runtime_error&) {
  }
  Statement rows = db.prepare("SELECT group_concat(v) FROM t", "read");
  REQUIRE(rows.step());
  CHECK(rows.get_text(0) == "1");
}

TEST_CASE("a transaction takes the write lock at once, and a second writer waits then fails") {
  kiln_test::TempDir dir("kiln-worklog");
  Database first(dir / "lock.db");
  first.exec("CREATE TABLE t (v INTEGER)", "create a table");
  OpenOptions impatient;
  impatient.busy_timeout = std::chrono::milliseconds(20);
  Database second(dir / "lock.db", impatient);

  Transaction holding(first, "hold the lock");  // no statement yet: BEGIN IMMEDIATE alone locks
  REQUIRE_THROWS_WITH(Transaction(second, "insert a row"),
                      ContainsSubstring("cannot begin a write transaction to insert a row: database is locked"));
  holding.commit();
  Transaction now(second, "insert a row");
  second.exec("INSERT INTO t VALUES (1)", "insert a row");
  now.commit();
}
