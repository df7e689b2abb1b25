// The worklog's schema and its migrations.
//
// A worklog file carries `PRAGMA application_id` = kiln_application_id, so a Kiln file is told
// apart from any other SQLite file, and `PRAGMA user_version` = the schema version it holds.
// Migration N turns a version N-1 file into a version N file; each runs in its own transaction,
// which also sets user_version, so a file is always at one exact version. A new schema version is
// one more function appended to migrations().
#pragma once
#include <cstdint>
#include <span>

#include "kiln/worklog/sqlite.hpp"

namespace kiln::worklog::schema {

// "KILN" in ASCII.
inline constexpr std::int32_t kiln_application_id = 0x4B494C4E;

struct Migration {
  int version;              // the version the file has after this step
  const char* description;  // one line, for messages
  void (*apply)(const sqlite::Database& db);
};

// All migrations this Kiln knows, in order; the last one's version is latest_version().
std::span<const Migration> migrations();
int latest_version();

int user_version(const sqlite::Database& db);
std::int32_t application_id(const sqlite::Database& db);

// Makes `db` a worklog at the last version of `steps`: creates a new (empty) file, migrates an
// older Kiln file, and throws kiln::Error for a file that is not a Kiln worklog or whose version
// is newer than `steps` knows. A file that is refused is left as it was. Safe when several
// processes open the same new file at once: each step re-reads the version under the write lock.
void prepare(const sqlite::Database& db, std::span<const Migration> steps = migrations());

// For a connection that only reads: throws kiln::Error unless `db` is a Kiln worklog (an empty
// file, any other file, or a newer version are refused). Returns true when the file is an older
// version, which a reader migrates in a copy in memory (Worklog::open). Changes nothing.
bool check_readable(const sqlite::Database& db, std::span<const Migration> steps = migrations());

}  // namespace kiln::worklog::schema
