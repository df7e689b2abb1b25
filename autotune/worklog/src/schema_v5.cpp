// Schema version 5: sanitizer passes. A variant whose checks ran clean under compute-sanitizer
// (memcheck and racecheck) in one context, from one source and with one set of problems and
// checks, stays clean: a fresh build directory or a resumed tuning takes the pass from here
// instead of running the sanitizer again (minutes for a record with many dispatched leaves).
// A sanitizer error is a variant failure (kind sanitizer) and is not kept here.
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

constexpr const char* version_5_sql = R"sql(
CREATE TABLE sanitizer_passes (
  context_key  TEXT NOT NULL,
  kernel       TEXT NOT NULL,
  variant      TEXT NOT NULL,
  variant_hash TEXT NOT NULL,
  problem_set  TEXT NOT NULL,
  tools        TEXT NOT NULL CHECK (tools <> ''),
  session_id   INTEGER REFERENCES sessions(id),
  created_at   TEXT NOT NULL,
  PRIMARY KEY (context_key, kernel, variant, variant_hash, problem_set)
) WITHOUT ROWID;
)sql";

}  // namespace

void create_version_5(const sqlite::Database& db) { db.exec(version_5_sql, "add the sanitizer passes table"); }

}  // namespace kiln::worklog::schema
