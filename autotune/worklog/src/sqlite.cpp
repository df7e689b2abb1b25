#include "kiln/worklog/sqlite.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <string>
#include <thread>

namespace kiln::worklog::sqlite {

namespace {

// "<path>: cannot <intent>: <SQLite's message>".
SqliteError error(const std::string& path, std::string_view intent, std::string detail, int code) {
  std::string message = path;
  message += ": cannot ";
  message += intent;
  message += ": ";
  message += detail;
  return SqliteError(std::move(message), std::move(detail), code);
}

// `file:<path>?mode=ro` or `file:<path>?immutable=1`, the path percent-encoded (a path may hold
// '?', '#' or '%').
std::string read_only_uri(const std::string& path, bool has_wal) {
  static const char* const hex = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' ||
                       c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      uri += c;
    } else {
      uri += '%';
      uri += hex[byte >> 4];
      uri += hex[byte & 0xf];
    }
  }
  return uri + (has_wal ? "?mode=ro" : "?immutable=1");
}

}  // namespace

Database::Database(const std::filesystem::path& path, OpenOptions options)
    : path_(path.string()), busy_timeout_(options.busy_timeout) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (options.create) flags |= SQLITE_OPEN_CREATE;
  std::string name = path_;
  if (options.read_only) {
    flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
    std::error_code ec;
    const bool has_wal = std::filesystem::exists(path_ + "-wal", ec);
    name = read_only_uri(path_, has_wal);
  }
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // The handle carries the message even when opening failed; it must still be closed.
    std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    close();
    throw error(path_, "open the worklog", detail, rc);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, static_cast<int>(options.busy_timeout.count()));
  try {
    // Settings that neither read nor write the file, so a file that is not a worklog can still
    // be inspected and refused untouched.
    exec("PRAGMA foreign_keys = ON", "enable foreign keys");
    if (options.wal && !options.read_only) set_wal_journal();
  } catch (...) {
    close();
    throw;
  }
}

Database::~Database() { close(); }

Database Database::copy_in_memory() const {
  OpenOptions options;
  options.wal = false;
  Database copy(":memory:", options);
  sqlite3_backup* backup = sqlite3_backup_init(copy.db_, "main", db_, "main");
  if (backup == nullptr) copy.fail(sqlite3_errcode(copy.db_), "copy the worklog into memory");
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) fail(rc, "copy the worklog into memory");
  copy.path_ = path_;
  copy.in_memory_ = true;
  return copy;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      busy_timeout_(other.busy_timeout_),
      in_memory_(other.in_memory_) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    busy_timeout_ = other.busy_timeout_;
    in_memory_ = other.in_memory_;
  }
  return *this;
}

void Database::close() noexcept {
  if (db_ != nullptr) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

void Database::exec(std::string_view sql, std::string_view intent) const {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string detail = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw error(path_, intent, detail, sqlite3_extended_errcode(db_));
  }
}

Statement Database::prepare(std::string_view sql, std::string intent) const {
  return Statement(*this, sql, std::move(intent));
}

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

int Database::changes() const { return sqlite3_changes(db_); }

void Database::set_wal_journal() const {
  if (in_memory_) return;
  // The switch needs the file to itself for a moment, and SQLite fails at once instead of calling
  // the busy handler when another connection is reading (two tuners opening a new file). So wait
  // here, within the same busy timeout.
  const auto deadline = std::chrono::steady_clock::now() + busy_timeout_;
  std::chrono::milliseconds pause{1};
  std::string mode;
  for (;;) {
    try {
      Statement pragma(*this, "PRAGMA journal_mode = WAL", "switch to the WAL journal");
      mode = pragma.step() ? pragma.get_text(0) : std::string();
      break;
    } catch (const SqliteError& e) {
      if (e.primary_code() != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds{50});
  }
  // SQLite answers with the mode in force; anything else means WAL is unavailable here (a file
  // system without shared memory, for instance), and concurrent tuners would not be safe.
  if (mode != "wal") {
    throw error(path_, "switch to the WAL journal", "the journal mode stayed '" + mode + "'",
                SQLITE_ERROR);
  }
  exec("PRAGMA synchronous = NORMAL", "set synchronous = NORMAL");
}

void Database::fail(int rc, std::string_view intent) const {
  const char* detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  throw error(path_, intent, detail, rc);
}

Statement::Statement(const Database& db, std::string_view sql, std::string intent)
    : db_(&db), intent_(std::move(intent)) {
  const int rc = sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_,
                                    nullptr);
  if (rc != SQLITE_OK) {
    finalize();
    db.fail(sqlite3_extended_errcode(db.handle()), intent_);
  }
}

Statement::~Statement() { finalize(); }

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), intent_(std::move(other.intent_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    finalize();
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    intent_ = std::move(other.intent_);
  }
  return *this;
}

void Statement::finalize() noexcept {
  if (stmt_ != nullptr) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) {
    db_->fail(rc, intent_ + " (binding parameter " + std::to_string(index) + ")");
  }
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  // An empty string_view may have no data pointer, which SQLite would store as NULL.
  const char* data = value.data() != nullptr ? value.data() : "";
  check_bind(sqlite3_bind_text64(stmt_, index, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
             index);
  return *this;
}

Statement& Statement::bind(int index, std::nullptr_t) {
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

int Statement::parameter_index(std::string_view name) const {
  const std::string text(name);
  const int index = sqlite3_bind_parameter_index(stmt_, text.c_str());
  if (index == 0) {
    throw error(db_->path(), intent_, "no parameter named '" + text + "'", SQLITE_RANGE);
  }
  return index;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Read the message before reset(), which would replace it.
  const std::string detail = sqlite3_errmsg(db_->handle());
  const int code = sqlite3_extended_errcode(db_->handle());
  sqlite3_reset(stmt_);
  throw error(db_->path(), intent_, detail, code);
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::get_int64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::get_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::get_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<std::int64_t> Statement::get_optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return get_int64(column);
}

std::optional<double> Statement::get_optional_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return get_double(column);
}

std::optional<std::string> Statement::get_optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return get_text(column);
}

Transaction::Transaction(const Database& db, std::string intent)
    : db_(db), intent_(std::move(intent)) {
  db_.exec("BEGIN IMMEDIATE", "begin a write transaction to " + intent_);
}

Transaction::~Transaction() {
  // SQLite rolls back by itself after some errors (disk full, I/O); a second ROLLBACK would fail.
  if (!done_ && sqlite3_get_autocommit(db_.handle()) == 0) {
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  db_.exec("COMMIT", "commit the transaction to " + intent_);
  done_ = true;
}

}  // namespace kiln::worklog::sqlite
