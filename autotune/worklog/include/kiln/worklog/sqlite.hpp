// A thin RAII layer over the SQLite C API: a connection, prepared statements and write
// transactions. Every failure becomes a SqliteError whose message names the file, what was being
// done and SQLite's own explanation, so that a message in a tuning log is enough to act on.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kiln/error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace kiln::worklog::sqlite {

class SqliteError : public kiln::Error {
 public:
  SqliteError(std::string message, std::string detail, int code)
      : kiln::Error(std::move(message)), detail_(std::move(detail)), code_(code) {}
  // SQLite's own words ("fts5: syntax error near \"AND\""), without the path and intent.
  const std::string& detail() const { return detail_; }
  // SQLite's extended result code (SQLITE_BUSY, SQLITE_CONSTRAINT_CHECK...).
  int code() const { return code_; }
  int primary_code() const { return code_ & 0xff; }

 private:
  std::string detail_;
  int code_;
};

struct OpenOptions {
  bool create = true;  // create the file when it does not exist
  // Another process holding the write lock makes us wait this long before failing with
  // "database is locked"; tuning runs write small transactions, so waits are short.
  std::chrono::milliseconds busy_timeout{10'000};
  // Switch the file to write-ahead logging (and synchronous=NORMAL) at open. Leave false to
  // inspect a file before changing it; set_wal_journal() does it later.
  bool wal = true;
  // Open for reading only, and write nothing at all: no schema, no journal mode, no `-wal` or
  // `-shm` file created. When the file has a `-wal` beside it (a writer is active, or one was
  // killed) SQLite reads it read-only (`mode=ro`, through the existing `-shm`); without one the
  // database file alone is complete and is opened `immutable=1`, which needs no lock file. A
  // writer that starts during such a read can make it fail; it never corrupts anything.
  // Ignores create and wal.
  bool read_only = false;
};

class Statement;

// One connection, with foreign keys enforced. In WAL mode with synchronous=NORMAL a commit
// survives a process crash; a power loss may drop the last commits but never corrupts the file.
class Database {
 public:
  explicit Database(const std::filesystem::path& path, OpenOptions options = {});
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }

  // Runs one or more statements that return no rows.
  void exec(std::string_view sql, std::string_view intent) const;
  // `intent` says what the statement is for ("insert attempt"); it appears in error messages.
  Statement prepare(std::string_view sql, std::string intent) const;

  std::int64_t last_insert_rowid() const;
  int changes() const;  // rows changed by the last INSERT, UPDATE or DELETE
  // A private in-memory database holding this one's content (SQLite's online backup); its
  // path() names the file it came from. Changes to it never reach the file.
  Database copy_in_memory() const;
  // journal_mode=WAL, then synchronous=NORMAL; throws when the file system cannot do WAL.
  void set_wal_journal() const;

  // Throws the SqliteError for `rc`, the connection's current message and `intent`.
  [[noreturn]] void fail(int rc, std::string_view intent) const;

  sqlite3* handle() const { return db_; }

 private:
  void close() noexcept;

  sqlite3* db_ = nullptr;
  std::string path_;
  std::chrono::milliseconds busy_timeout_;
  bool in_memory_ = false;  // a copy_in_memory(): no file, no journal to switch
};

// A prepared statement; finalized by the destructor. It must not outlive its Database.
class Statement {
 public:
  Statement(const Database& db, std::string_view sql, std::string intent);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQL; text is copied.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::nullptr_t);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, nullptr);
  }
  // Named parameters, with their prefix: bind(":kernel", "softmax_cuda").
  template <class T>
  Statement& bind(std::string_view name, const T& value) {
    return bind(parameter_index(name), value);
  }
  Statement& bind(std::string_view name, const char* value) {
    return bind(parameter_index(name), std::string_view(value));
  }
  int parameter_index(std::string_view name) const;

  // Advances to the next row: true when one is ready, false when the statement is done.
  bool step();
  // Runs a statement to completion, ignoring any rows.
  void run();
  // Makes the statement ready to run again, with no parameters bound.
  void reset();

  // Columns are numbered from 0, as in the C API.
  int column_count() const;
  bool is_null(int column) const;
  std::int64_t get_int64(int column) const;
  double get_double(int column) const;
  std::string get_text(int column) const;
  std::optional<std::int64_t> get_optional_int64(int column) const;
  std::optional<double> get_optional_double(int column) const;
  std::optional<std::string> get_optional_text(int column) const;

  const std::string& intent() const { return intent_; }

 private:
  void check_bind(int rc, int index);
  void finalize() noexcept;

  const Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string intent_;
};

// A write transaction: BEGIN IMMEDIATE takes the write lock up front, so two writers queue on the
// busy timeout instead of one failing when it upgrades a read lock. Rolled back by the destructor
// unless committed.
class Transaction {
 public:
  Transaction(const Database& db, std::string intent);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  const Database& db_;
  std::string intent_;
  bool done_ = false;
};

}  // namespace kiln::worklog::sqlite
