// Opening a worklog, tuning sessions, and the file's health check.
#include "kiln/worklog/worklog.hpp"

#include <cmath>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "kiln/error.hpp"
#include "kiln/worklog/file_system.hpp"
#include "kiln/worklog/schema.hpp"
#include "values.hpp"

namespace kiln::worklog {

Worklog Worklog::open(const std::filesystem::path& path, OpenMode mode) {
  if (mode != OpenMode::create_if_missing) {
    require_worklog_file(path);
  }
  sqlite::OpenOptions options;
  if (mode == OpenMode::read_only) {
    options.read_only = true;
    sqlite::Database db(path, options);
    if (schema::check_readable(db)) {
      // An older worklog (a committed one, say) is read through a migrated copy in memory: the
      // file itself is never written by a reading command.
      sqlite::Database copy = db.copy_in_memory();
      schema::prepare(copy);
      return Worklog(std::move(copy));
    }
    return Worklog(std::move(db));
  }
  require_local_file_system(path);
  options.create = mode == OpenMode::create_if_missing;
  options.wal = false;  // schema::prepare switches to WAL once it knows the file is ours
  sqlite::Database db(path, options);
  schema::prepare(db);
  return Worklog(std::move(db));
}

namespace {

constexpr const char* session_columns =
    "id, started_at, ended_at, kernel, strategy, device, context_key, note, preflight, key_version, kiln_version, "
    "stages, code_key";

// Stage times as the column holds them: a JSON object of stage name to seconds, in order.
std::string stages_json(const std::vector<StageSeconds>& stages) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const StageSeconds& s : stages) object[s.stage] = s.seconds;
  return object.dump();
}

// The column read back; the schema's CHECK makes it an object, a file written by something else
// may still hold values that are no times.
std::vector<StageSeconds> parse_stages(const std::string& text, const std::string& path, std::int64_t id) {
  const auto object = nlohmann::ordered_json::parse(text, nullptr, false);
  const std::string where = path + ": session " + std::to_string(id) + ": stages: ";
  if (!object.is_object()) throw Error(where + "not a JSON object");
  std::vector<StageSeconds> stages;
  for (const auto& [name, value] : object.items()) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      throw Error(where + "\"" + name + "\" is " + value.dump() + ", not a number of seconds >= 0");
    }
    stages.push_back({name, value.get<double>()});
  }
  return stages;
}

Session read_session(const sqlite::Statement& row, const std::string& path) {
  Session s;
  s.id = row.get_int64(0);
  s.started_at = row.get_text(1);
  s.ended_at = row.get_optional_text(2);
  s.kernel = row.get_text(3);
  s.strategy = row.get_text(4);
  s.device = row.get_text(5);
  s.context_key = row.get_text(6);
  s.note = row.get_text(7);
  s.preflight = row.get_optional_text(8).value_or("");
  s.key_version = static_cast<int>(row.get_int64(9));
  s.kiln_version = row.get_optional_text(10).value_or("");
  if (auto stages = row.get_optional_text(11)) s.stages = parse_stages(*stages, path, s.id);
  s.code_key = row.get_optional_text(12).value_or("");
  return s;
}

}  // namespace

std::int64_t Worklog::start_session(const Session& session) {
  if (session.kernel.empty()) throw Error(path() + ": a session needs a kernel");
  sqlite::Transaction transaction(db_, "start a session");
  sqlite::Statement insert = db_.prepare(
      "INSERT INTO sessions (started_at, kernel, strategy, device, context_key, note, preflight, key_version, "
      "kiln_version, code_key) VALUES (coalesce(:started_at, " KILN_SQL_NOW "), :kernel, :strategy, :device, "
      ":context_key, :note, :preflight, :key_version, :kiln_version, :code_key)",
      "start a session of " + session.kernel);
  insert.bind(":started_at", detail::null_if_empty(session.started_at))
      .bind(":kernel", session.kernel)
      .bind(":strategy", session.strategy)
      .bind(":device", session.device)
      .bind(":context_key", session.context_key)
      .bind(":note", session.note)
      .bind(":preflight", detail::null_if_empty(session.preflight))
      .bind(":key_version", static_cast<std::int64_t>(session.key_version))
      .bind(":kiln_version", detail::null_if_empty(session.kiln_version))
      .bind(":code_key", detail::null_if_empty(session.code_key))
      .run();
  const std::int64_t id = db_.last_insert_rowid();
  transaction.commit();
  return id;
}

void Worklog::end_session(std::int64_t session_id, const std::vector<StageSeconds>& stages) {
  const std::string which = "session " + std::to_string(session_id);
  std::set<std::string> named;
  for (const StageSeconds& s : stages) {
    if (s.stage.empty() || !named.insert(s.stage).second || !std::isfinite(s.seconds) || s.seconds < 0) {
      throw Error(path() + ": " + which + ": stage \"" + s.stage + "\" of " + std::to_string(s.seconds) +
                  " s: a stage needs a name of its own and a time >= 0");
    }
  }
  sqlite::Transaction transaction(db_, "end " + which);
  sqlite::Statement lookup =
      db_.prepare("SELECT ended_at FROM sessions WHERE id = ?", "look up " + which);
  lookup.bind(1, session_id);
  if (!lookup.step()) throw Error(path() + ": no " + which);
  if (!lookup.is_null(0)) {
    throw Error(path() + ": " + which + " already ended at " + lookup.get_text(0));
  }
  sqlite::Statement update =
      db_.prepare("UPDATE sessions SET ended_at = " KILN_SQL_NOW ", stages = ? WHERE id = ?", "end " + which);
  update.bind(1, stages.empty() ? std::optional<std::string>() : std::optional<std::string>(stages_json(stages)))
      .bind(2, session_id)
      .run();
  transaction.commit();
}

std::optional<Session> Worklog::session(std::int64_t session_id) const {
  sqlite::Statement select =
      db_.prepare(std::string("SELECT ") + session_columns + " FROM sessions WHERE id = ?",
                  "read session " + std::to_string(session_id));
  select.bind(1, session_id);
  if (!select.step()) return std::nullopt;
  return read_session(select, path());
}

std::vector<Session> Worklog::sessions() const {
  sqlite::Statement select = db_.prepare(
      std::string("SELECT ") + session_columns + " FROM sessions ORDER BY id", "list sessions");
  std::vector<Session> out;
  while (select.step()) out.push_back(read_session(select, path()));
  return out;
}

std::vector<std::string> Worklog::integrity_problems() const {
  std::vector<std::string> problems;
  sqlite::Statement integrity = db_.prepare("PRAGMA integrity_check", "check integrity");
  while (integrity.step()) {
    std::string line = integrity.get_text(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  sqlite::Statement foreign = db_.prepare("PRAGMA foreign_key_check", "check foreign keys");
  while (foreign.step()) {
    problems.push_back(foreign.get_text(0) + " row " + foreign.get_text(1) +
                       " refers to a missing row of " + foreign.get_text(2));
  }
  try {
    // rank = 1 also compares the index with the attempts table it is built from.
    db_.exec("INSERT INTO attempts_fts (attempts_fts, rank) VALUES ('integrity-check', 1)",
             "check the full-text index");
  } catch (const sqlite::SqliteError& e) {
    problems.push_back("the full-text index does not match the attempts table (" + e.detail() +
                       ")");
  }
  return problems;
}

}  // namespace kiln::worklog
