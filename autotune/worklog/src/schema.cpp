#include "kiln/worklog/schema.hpp"

#include <sqlite3.h>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kiln/error.hpp"
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

constexpr std::array<Migration, 8> all_migrations{{
    {1, "sessions, attempts, links, full-text search, measurement cache", &create_version_1},
    {2, "medians, spreads and quietness of measurements; conditions of failures; preflight; evidence", &create_version_2},
    {3, "the failure kind sanitizer", &create_version_3},
    {4, "profiles: launch shapes and Nsight Compute metrics per variant and problem", &create_version_4},
    {5, "sanitizer passes: variants whose checks ran clean under compute-sanitizer", &create_version_5},
    {6, "the key version (FNV-1a 64 or XXH3-128) and Kiln's version of each session", &create_version_6},
    {7, "the stage times of each session", &create_version_7},
    {8, "the code key of each session", &create_version_8},
}};

// What the file says about itself before we touch it.
struct FileState {
  std::int32_t application_id = 0;
  int user_version = 0;
  std::int64_t schema_objects = 0;
};

std::int64_t read_integer(const sqlite::Database& db, const char* sql, const char* intent) {
  sqlite::Statement statement = db.prepare(sql, intent);
  return statement.step() ? statement.get_int64(0) : 0;
}

FileState read_state(const sqlite::Database& db) {
  // One statement, so one snapshot: read apart, another process's migration could commit in
  // between and the file would look half made.
  try {
    sqlite::Statement statement = db.prepare(
        "SELECT (SELECT application_id FROM pragma_application_id()), "
        "(SELECT user_version FROM pragma_user_version()), (SELECT count(*) FROM sqlite_master)",
        "read the schema version");
    statement.step();
    FileState state;
    state.application_id = static_cast<std::int32_t>(statement.get_int64(0));
    state.user_version = static_cast<int>(statement.get_int64(1));
    state.schema_objects = statement.get_int64(2);
    return state;
  } catch (const sqlite::SqliteError& e) {
    if (e.primary_code() == SQLITE_NOTADB) {
      throw Error(db.path() + ": not a Kiln worklog (the file is not an SQLite database)");
    }
    throw;
  }
}

bool is_new(const FileState& state) {
  return state.schema_objects == 0 && state.user_version == 0 &&
         (state.application_id == 0 || state.application_id == kiln_application_id);
}

// Throws unless the file is new, or a Kiln worklog at a version we can read.
void check_recognised(const sqlite::Database& db, const FileState& state, int latest) {
  if (is_new(state)) return;
  if (state.application_id != kiln_application_id || state.user_version < 1) {
    char id[16];
    std::snprintf(id, sizeof id, "0x%08x", static_cast<unsigned>(state.application_id));
    throw Error(db.path() + ": not a Kiln worklog (an SQLite database with application_id " + id +
                ", schema version " + std::to_string(state.user_version) + " and " +
                std::to_string(state.schema_objects) + " schema objects)");
  }
  if (state.user_version > latest) {
    throw Error(db.path() + ": worklog schema version " + std::to_string(state.user_version) +
                " is newer than this Kiln (" + std::to_string(latest) + "); upgrade Kiln");
  }
}

void check_sequence(std::span<const Migration> steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].version != static_cast<int>(i) + 1) {
      throw std::logic_error("worklog migration " + std::to_string(i) + " has version " +
                             std::to_string(steps[i].version) + ", expected " +
                             std::to_string(i + 1));
    }
  }
}

}  // namespace

bool check_readable(const sqlite::Database& db, std::span<const Migration> steps) {
  check_sequence(steps);
  const int latest = static_cast<int>(steps.size());
  const FileState state = read_state(db);
  if (is_new(state)) {
    throw Error(db.path() + ": not a Kiln worklog (" +
                (state.application_id == 0 ? "an empty file or an empty SQLite database" : "a worklog without its schema") +
                "); reading commands do not create one");
  }
  check_recognised(db, state, latest);
  return state.user_version < latest;
}

std::span<const Migration> migrations() { return all_migrations; }

int latest_version() { return all_migrations.back().version; }

int user_version(const sqlite::Database& db) {
  return static_cast<int>(read_integer(db, "PRAGMA user_version", "read the schema version"));
}

std::int32_t application_id(const sqlite::Database& db) {
  return static_cast<std::int32_t>(
      read_integer(db, "PRAGMA application_id", "read the application id"));
}

void prepare(const sqlite::Database& db, std::span<const Migration> steps) {
  check_sequence(steps);
  const int latest = static_cast<int>(steps.size());
  const FileState state = read_state(db);
  check_recognised(db, state, latest);
  db.set_wal_journal();
  for (const Migration& step : steps) {
    if (step.version <= state.user_version) continue;
    const std::string version = std::to_string(step.version);
    sqlite::Transaction transaction(db, "migrate to worklog schema version " + version);
    // Another process may have migrated the file while we waited for the write lock.
    const FileState locked = read_state(db);
    check_recognised(db, locked, latest);
    if (locked.user_version >= step.version) continue;
    step.apply(db);
    db.exec("PRAGMA application_id = " + std::to_string(kiln_application_id) +
                "; PRAGMA user_version = " + version,
            "set the worklog schema version to " + version);
    transaction.commit();
  }
}

}  // namespace kiln::worklog::schema
