// Schema version 3: the failure kind `sanitizer` (a winner that compute-sanitizer found writing
// or reading out of bounds, or racing on shared memory). Only the CHECK constraints that list the
// kinds change; widening a list cannot invalidate a stored row, so the tables' definitions are
// edited in place, SQLite's documented way for constraint changes that leave the file's format
// alone, instead of copying attempts (with its full-text index and links) into a new table.
#include <string>

#include "kiln/error.hpp"
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

struct Edit {
  const char* table;
  const char* from;
  const char* to;
};

constexpr Edit kEdits[] = {
    {"attempts", "'timeout', 'runtime', 'correctness')", "'timeout', 'runtime', 'correctness', 'sanitizer')"},
    {"variant_failures", "kind IN ('compile', 'crash', 'timeout', 'runtime')",
     "kind IN ('compile', 'crash', 'timeout', 'runtime', 'sanitizer')"},
};

}  // namespace

void create_version_3(const sqlite::Database& db) {
  sqlite::Statement read = db.prepare("PRAGMA schema_version", "read the schema cookie");
  read.step();
  const std::int64_t cookie = read.get_int64(0);
  db.exec("PRAGMA writable_schema = ON", "allow editing the tables' definitions");
  for (const Edit& e : kEdits) {
    sqlite::Statement edit = db.prepare(
        "UPDATE sqlite_master SET sql = replace(sql, :from, :to) WHERE type = 'table' AND name = :table "
        "AND instr(sql, :from) > 0",
        std::string("add the failure kind sanitizer to ") + e.table);
    edit.bind(":from", std::string(e.from)).bind(":to", std::string(e.to)).bind(":table", std::string(e.table)).run();
    if (db.changes() != 1) {
      db.exec("PRAGMA writable_schema = OFF", "stop editing the tables' definitions");
      throw Error(db.path() + ": table " + e.table + " does not list the failure kinds as schema version 2 did");
    }
  }
  // A new cookie makes every connection read the edited definitions.
  db.exec("PRAGMA schema_version = " + std::to_string(cookie + 1), "bump the schema cookie");
  db.exec("PRAGMA writable_schema = OFF", "stop editing the tables' definitions");
}

}  // namespace kiln::worklog::schema
