#include "kiln/worklog/merge.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include "kiln/error.hpp"
#include "kiln/worklog/file_system.hpp"
#include "kiln/worklog/schema.hpp"
#include "kiln/worklog/worklog.hpp"

namespace kiln::worklog {
namespace {

namespace fs = std::filesystem;
using sqlite::Database;
using sqlite::Statement;

struct Input {
  fs::path path;
  std::optional<Worklog> log;
  std::vector<Session> sessions;
};

// The device a session ran on, as its identity: "" when the session did not record one.
std::string device_identity(const std::string& device_json) {
  const auto j = nlohmann::json::parse(device_json, nullptr, false);
  if (!j.is_object() || j.empty()) return "";
  auto text = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string id = text("name");
  std::vector<std::string> details;
  if (!text("backend").empty()) details.push_back(text("backend"));
  if (!text("compute_capability").empty()) details.push_back("compute capability " + text("compute_capability"));
  if (!text("driver").empty()) details.push_back("driver " + text("driver"));
  if (!text("cuda_runtime").empty()) details.push_back("CUDA " + text("cuda_runtime"));
  for (std::size_t i = 0; i < details.size(); ++i) id += (i == 0 ? " (" : ", ") + details[i];
  if (!details.empty()) id += ")";
  return id;
}

std::string key_version_text(int v) {
  return std::to_string(v) + (v == 1 ? " (FNV-1a 64)" : v == 2 ? " (XXH3-128)" : "");
}

Input open_input(const fs::path& path) {
  require_worklog_file(path);
  Input in;
  in.path = path;
  try {
    in.log = Worklog::open(path, OpenMode::read_only);
    Statement check = in.log->database().prepare("PRAGMA quick_check", "check the worklog");
    while (check.step()) {
      const std::string line = check.get_text(0);
      if (line != "ok") throw Error(path.string() + ": corrupt (" + line + "); nothing written");
    }
    in.sessions = in.log->sessions();
  } catch (const sqlite::SqliteError& e) {
    throw Error(path.string() + ": corrupt or unreadable (" + e.detail() + "); nothing written");
  }
  return in;
}

// One context is one device, in every file; and the newest sessions of a kernel (what kiln record
// reads) are of one context in every input given, the shards of one run. The existing output is
// history and may hold older contexts (another Kiln, the kernel before an edit): it takes part in
// the first check only.
void check_conflicts(const std::vector<Input>& inputs, std::size_t first_given) {
  std::map<std::string, std::pair<std::string, const Input*>> device_of_context;
  for (const auto& in : inputs) {
    for (const auto& s : in.sessions) {
      const std::string id = device_identity(s.device);
      if (id.empty()) continue;
      auto [it, fresh] = device_of_context.try_emplace(s.context_key, id, &in);
      if (!fresh && it->second.first != id) {
        throw Error(in.path.string() + ": context " + s.context_key + " is " + id + " there and " + it->second.first +
                    " in " + it->second.second->path.string() +
                    ": one context cannot be two devices (a damaged or altered worklog); nothing written");
      }
    }
  }
  std::map<std::string, std::vector<std::pair<const Input*, const Session*>>> newest;
  for (std::size_t i = first_given; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    std::map<std::string, const Session*> mine;
    for (const auto& s : in.sessions) {
      const Session*& n = mine[s.kernel];
      if (n == nullptr || std::tie(s.started_at, s.id) > std::tie(n->started_at, n->id)) n = &s;
    }
    for (const auto& [kernel, s] : mine) newest[kernel].emplace_back(&in, s);
  }
  for (const auto& [kernel, list] : newest) {
    const auto& [ref_in, ref] = list.front();
    for (const auto& [in, s] : list) {
      if (s->context_key == ref->context_key) continue;
      const std::string there = ref_in->path.string();
      const std::string a = device_identity(ref->device), b = device_identity(s->device);
      std::string why;
      if (!a.empty() && !b.empty() && a != b) {
        why = "tuned on " + b + " here and on " + a + " in " + there + ": worklogs of different devices do not merge";
      } else if (s->key_version != ref->key_version) {
        why = "its cache keys are of version " + key_version_text(s->key_version) + " here and " +
              key_version_text(ref->key_version) + " in " + there + ": worklogs of different Kiln versions do not merge";
      } else if (s->kiln_version != ref->kiln_version) {
        auto shown = [](const std::string& v) { return v.empty() ? std::string("an unrecorded version") : v; };
        why = "tuned by Kiln " + shown(s->kiln_version) + " here and by Kiln " + shown(ref->kiln_version) + " in " +
              there + ": worklogs of different Kiln versions do not merge";
      } else {
        why = "context " + s->context_key + " here and " + ref->context_key + " in " + there +
              " on the same device and Kiln: the kernel's sources, compiler or flags differ";
      }
      throw Error(in->path.string() + ": kernel " + kernel + ": " + why +
                  " (the newest sessions of the kernel, which kiln record reads); nothing written");
    }
  }
}

std::int64_t count(const Database& db, const std::string& sql) {
  Statement s = db.prepare(sql, "count rows to merge");
  return s.step() ? s.get_int64(0) : 0;
}

struct Column {
  std::string name;
  bool key = false;
};

std::vector<Column> columns(const Database& db, const std::string& table) {
  Statement info = db.prepare("SELECT name, pk FROM pragma_table_info('" + table + "', 'main') ORDER BY cid",
                              "read the columns of " + table);
  std::vector<Column> out;
  while (info.step()) out.push_back({info.get_text(0), info.get_int64(1) > 0});
  return out;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// A column of src row `s` as the output stores it: session ids through the session map.
std::string mapped(const std::string& column, const std::string& row = "s") {
  if (column == "session_id") return "(SELECT out_id FROM temp.session_map WHERE src_id = " + row + ".session_id)";
  return row + "." + column;
}

const std::set<std::string>& merged_tables() {
  static const std::set<std::string> tables = {"sessions",         "attempts", "links",           "measurements",
                                                "variant_failures", "profiles", "sanitizer_passes"};
  return tables;
}

// Every table of the schema is merged: a new table (a new schema version) must be added here.
void check_every_table_merged(const Database& db) {
  Statement tables = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'attempts_fts%' AND name NOT LIKE "
      "'sqlite_%'",
      "list the worklog's tables");
  while (tables.step()) {
    if (!merged_tables().count(tables.get_text(0))) {
      throw std::logic_error("kiln merge does not know the worklog table " + tables.get_text(0));
    }
  }
}

MergeCounts merge_sessions_and_attempts(const Database& db) {
  MergeCounts n;
  std::vector<std::string> cols, values;
  for (const auto& c : columns(db, "sessions")) {
    if (c.name == "id") continue;
    cols.push_back(c.name);
    values.push_back("s." + c.name);
  }
  const std::string same_session =
      "m.started_at = s.started_at AND m.kernel = s.kernel AND m.strategy = s.strategy AND "
      "m.context_key = s.context_key AND m.note = s.note AND m.device = s.device";
  db.exec("INSERT INTO main.sessions (" + join(cols, ", ") + ") SELECT " + join(values, ", ") +
              " FROM src.sessions s WHERE NOT EXISTS (SELECT 1 FROM main.sessions m WHERE " + same_session +
              ") ORDER BY s.started_at, s.id",
          "merge sessions");
  n.sessions = db.changes();
  // A copy taken while the session ran has no end; a later copy does.
  db.exec("UPDATE main.sessions AS m SET ended_at = (SELECT max(s.ended_at) FROM src.sessions s WHERE " + same_session +
              ") WHERE m.ended_at IS NULL",
          "merge the ends of sessions");
  db.exec("DELETE FROM temp.session_map", "reset the session map");
  db.exec("INSERT INTO temp.session_map SELECT s.id, (SELECT m.id FROM main.sessions m WHERE " + same_session +
              " ORDER BY m.id LIMIT 1) FROM src.sessions s",
          "map sessions");

  std::vector<std::string> acols, avalues, same_content;
  for (const auto& c : columns(db, "attempts")) {
    if (c.name == "id") continue;
    acols.push_back(c.name);
    avalues.push_back(mapped(c.name));
    same_content.push_back("m." + c.name + " IS " + mapped(c.name));
  }
  const std::string same_attempt = "(s.evidence IS NOT NULL AND m.kernel = s.kernel AND m.evidence = s.evidence) OR "
                                   "(s.evidence IS NULL AND " + join(same_content, " AND ") + ")";
  db.exec("INSERT INTO main.attempts (" + join(acols, ", ") + ") SELECT " + join(avalues, ", ") +
              " FROM src.attempts s WHERE NOT EXISTS (SELECT 1 FROM main.attempts m WHERE " + same_attempt +
              ") ORDER BY s.created_at, s.id",
          "merge attempts");
  n.attempts = db.changes();
  db.exec("DELETE FROM temp.attempt_map", "reset the attempt map");
  db.exec("INSERT INTO temp.attempt_map SELECT s.id, (SELECT m.id FROM main.attempts m WHERE " + same_attempt +
              " ORDER BY m.id LIMIT 1) FROM src.attempts s",
          "map attempts");
  db.exec("INSERT OR IGNORE INTO main.links (from_attempt, to_attempt, kind, note, created_at) SELECT "
          "(SELECT out_id FROM temp.attempt_map WHERE src_id = s.from_attempt), "
          "(SELECT out_id FROM temp.attempt_map WHERE src_id = s.to_attempt), s.kind, s.note, s.created_at "
          "FROM src.links s ORDER BY s.id",
          "merge links");
  n.links = db.changes();
  return n;
}

// A table keyed by its primary key: new keys are added; a key held with other content takes the
// newer row (by `time`, then by the content).
void merge_keyed(const Database& db, const std::string& table, const std::string& time, std::int64_t& added,
                 std::int64_t& replaced) {
  std::vector<std::string> cols, values, keys_equal, conflict, updates, content_s, content_m, content_x, content_t;
  for (const auto& c : columns(db, table)) {
    cols.push_back(c.name);
    values.push_back(mapped(c.name));
    if (c.key) {
      keys_equal.push_back("m." + c.name + " = s." + c.name);
      conflict.push_back(c.name);
      continue;
    }
    updates.push_back(c.name + " = excluded." + c.name);
    if (c.name == "session_id") continue;  // file-local: not content
    content_s.push_back("s." + c.name);
    content_m.push_back("m." + c.name);
    content_x.push_back("excluded." + c.name);
    content_t.push_back(table + "." + c.name);
  }
  const std::string on_key = join(keys_equal, " AND ");
  added += count(db, "SELECT count(*) FROM src." + table + " s WHERE NOT EXISTS (SELECT 1 FROM main." + table +
                         " m WHERE " + on_key + ")");
  replaced += count(db, "SELECT count(*) FROM src." + table + " s JOIN main." + table + " m ON " + on_key + " WHERE (s." +
                            time + ", json_array(" + join(content_s, ", ") + ")) > (m." + time + ", json_array(" +
                            join(content_m, ", ") + "))");
  db.exec("INSERT INTO main." + table + " (" + join(cols, ", ") + ") SELECT " + join(values, ", ") + " FROM src." +
              table + " s WHERE true ON CONFLICT (" + join(conflict, ", ") + ") DO UPDATE SET " + join(updates, ", ") +
              " WHERE (excluded." + time + ", json_array(" + join(content_x, ", ") + ")) > (" + table + "." + time +
              ", json_array(" + join(content_t, ", ") + "))",
          "merge " + table);
}

// Profiles are two halves written apart (launch shapes while timing, metrics by kiln profile):
// each half takes the newer of the two by its own time.
void merge_profiles(const Database& db, std::int64_t& added, std::int64_t& replaced) {
  std::vector<std::string> cols, values, keys_equal, conflict;
  const std::set<std::string> halves = {"sm_count", "launches", "session_id", "launches_at", "metrics", "tool",
                                        "profiled_at"};
  for (const auto& c : columns(db, "profiles")) {
    cols.push_back(c.name);
    values.push_back(mapped(c.name));
    if (c.key) {
      keys_equal.push_back("m." + c.name + " = s." + c.name);
      conflict.push_back(c.name);
    } else if (!halves.count(c.name)) {
      throw std::logic_error("kiln merge does not know the profiles column " + c.name);
    }
  }
  const std::string on_key = join(keys_equal, " AND ");
  added += count(db, "SELECT count(*) FROM src.profiles s WHERE NOT EXISTS (SELECT 1 FROM main.profiles m WHERE " +
                         on_key + ")");
  auto newer = [](const std::string& x, const std::string& t, const std::string& time, const std::string& a,
                  const std::string& b) {
    return "(" + x + "." + time + " IS NOT NULL AND (" + t + "." + time + " IS NULL OR (" + x + "." + time +
           ", json_array(" + x + "." + a + ", " + x + "." + b + ")) > (" + t + "." + time + ", json_array(" + t + "." +
           a + ", " + t + "." + b + "))))";
  };
  replaced += count(db, "SELECT count(*) FROM src.profiles s JOIN main.profiles m ON " + on_key + " WHERE " +
                            newer("s", "m", "launches_at", "sm_count", "launches") + " OR " +
                            newer("s", "m", "profiled_at", "metrics", "tool"));
  const std::string l = newer("excluded", "profiles", "launches_at", "sm_count", "launches");
  const std::string m = newer("excluded", "profiles", "profiled_at", "metrics", "tool");
  std::vector<std::string> updates;
  for (const char* c : {"sm_count", "launches", "session_id", "launches_at"}) {
    updates.push_back(std::string(c) + " = CASE WHEN " + l + " THEN excluded." + c + " ELSE profiles." + c + " END");
  }
  for (const char* c : {"metrics", "tool", "profiled_at"}) {
    updates.push_back(std::string(c) + " = CASE WHEN " + m + " THEN excluded." + c + " ELSE profiles." + c + " END");
  }
  db.exec("INSERT INTO main.profiles (" + join(cols, ", ") + ") SELECT " + join(values, ", ") +
              " FROM src.profiles s WHERE true ON CONFLICT (" + join(conflict, ", ") + ") DO UPDATE SET " +
              join(updates, ", "),
          "merge profiles");
}

MergeCounts merge_one(const Database& out, const Input& in) {
  out.exec("ATTACH DATABASE ':memory:' AS src", "attach " + in.path.string());
  struct Detach {
    const Database& db;
    ~Detach() {
      try {
        db.exec("DETACH DATABASE src", "detach an input");
      } catch (...) {
      }
    }
  } detach{out};
  // The input as read (an older schema migrated in memory), copied beside the output.
  sqlite3_backup* backup = sqlite3_backup_init(out.handle(), "src", in.log->database().handle(), "main");
  if (backup == nullptr) out.fail(sqlite3_errcode(out.handle()), "read " + in.path.string());
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) {
    throw Error(in.path.string() + ": corrupt or unreadable (" + sqlite3_errstr(rc) + "); nothing written");
  }
  sqlite::Transaction transaction(out, "merge " + in.path.string());
  MergeCounts n = merge_sessions_and_attempts(out);
  std::int64_t replaced = 0;
  merge_keyed(out, "measurements", "created_at", n.measurements, replaced);
  merge_keyed(out, "variant_failures", "created_at", n.failures, replaced);
  merge_keyed(out, "sanitizer_passes", "created_at", n.passes, replaced);
  merge_profiles(out, n.profiles, replaced);
  n.replaced = replaced;
  transaction.commit();
  return n;
}

void remove_database_files(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path.string() + suffix, ec);
}

}  // namespace

std::vector<MergedInput> merge_worklogs(const std::vector<fs::path>& inputs, const fs::path& out) {
  if (inputs.empty()) throw Error("no worklogs to merge");
  require_local_file_system(out);
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(out.string() + ": no such folder " + dir.string());

  std::vector<Input> all;
  const bool into_existing = fs::exists(out, ec);
  if (into_existing) all.push_back(open_input(out));  // merged into, so read like an input
  for (const auto& p : inputs) all.push_back(open_input(p));
  check_conflicts(all, into_existing ? 1 : 0);

  const fs::path temporary = dir / ("." + out.filename().string() + ".merging-" + std::to_string(::getpid()));
  remove_database_files(temporary);
  std::vector<MergedInput> report;
  try {
    {
      Worklog merged = Worklog::open(temporary, OpenMode::create_if_missing);
      const Database& db = merged.database();
      check_every_table_merged(db);
      db.exec("CREATE TEMP TABLE session_map (src_id INTEGER PRIMARY KEY, out_id INTEGER);"
              "CREATE TEMP TABLE attempt_map (src_id INTEGER PRIMARY KEY, out_id INTEGER)",
              "create the id maps");
      for (const auto& in : all) report.push_back({in.path.string(), merge_one(db, in), report.empty() && into_existing});
      const std::vector<std::string> problems = merged.integrity_problems();
      if (!problems.empty()) throw Error(out.string() + ": the merged worklog fails its check (" + problems.front() + ")");
    }
    fs::rename(temporary, out);
  } catch (...) {
    remove_database_files(temporary);
    throw;
  }
  remove_database_files(temporary);
  return report;
}

}  // namespace kiln::worklog
