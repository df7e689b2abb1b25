// Attempts, their full-text search, and the links between them.
#include <sqlite3.h>

#include <cmath>

#include "kiln/error.hpp"
#include "kiln/join.hpp"
#include "kiln/worklog/worklog.hpp"
#include "values.hpp"

namespace kiln::worklog {

namespace {

constexpr const char* attempt_columns =
    "id, session_id, kernel, variant, problem, author, hypothesis, change, baseline, result, unit, "
    "delta_pct, verdict, failure_kind, explanation, unlocks, blocks, tags, floor, created_at, evidence";

Attempt read_attempt(const sqlite::Statement& row) {
  Attempt a;
  a.id = row.get_int64(0);
  a.session_id = row.get_optional_int64(1);
  a.kernel = row.get_text(2);
  a.variant = row.get_optional_text(3);
  a.problem = row.get_optional_text(4);
  a.author = parse_author(row.get_text(5));
  a.hypothesis = row.get_text(6);
  a.change = row.get_text(7);
  a.baseline = row.get_optional_double(8);
  a.result = row.get_optional_double(9);
  a.unit = row.get_text(10);
  a.delta_pct = row.get_optional_double(11);
  a.verdict = parse_verdict(row.get_text(12));
  if (!row.is_null(13)) a.failure_kind = parse_failure_kind(row.get_text(13));
  a.explanation = row.get_text(14);
  a.unlocks = row.get_text(15);
  a.blocks = row.get_text(16);
  a.tags = normalise_tags(row.get_text(17));
  a.floor = row.get_optional_double(18);
  a.created_at = row.get_text(19);
  a.evidence = row.get_optional_text(20);
  return a;
}

// Throws unless the attempt holds together; the message says what to fix.
void validate(const std::string& path, const Attempt& a) {
  const auto refuse = [&](const std::string& why) {
    throw Error(path + ": cannot add attempt: " + why);
  };
  if (a.kernel.empty()) refuse("the kernel is empty");
  const std::string_view verdict = to_string(a.verdict);  // throws for an out-of-range value
  if (a.failure_kind) {
    to_string(*a.failure_kind);
    if (a.verdict == Verdict::keep || a.verdict == Verdict::revert) {
      refuse("verdict '" + std::string(verdict) + "' means the variant ran, so it takes no failure "
             "kind (got '" + std::string(to_string(*a.failure_kind)) + "')");
    }
  } else if (a.verdict == Verdict::failed) {
    refuse("a failed attempt needs a failure kind");
  }
  const auto check_number = [&](const std::optional<double>& value, const char* name) {
    if (value && !std::isfinite(*value)) refuse(std::string(name) + " is not a finite number");
  };
  check_number(a.baseline, "baseline");
  check_number(a.result, "result");
  check_number(a.delta_pct, "delta_pct");
  check_number(a.floor, "floor");
  if (a.floor && *a.floor <= 0) refuse("the floor must be positive");
  if ((a.baseline || a.result || a.floor) && a.unit.empty()) {
    refuse("baseline, result and floor need a unit");
  }
}

std::optional<double> delta_of(const Attempt& a) {
  if (a.delta_pct) return a.delta_pct;
  if (a.baseline && a.result && *a.baseline != 0) {
    return (*a.result - *a.baseline) / *a.baseline * 100.0;
  }
  return std::nullopt;
}

bool row_exists(const sqlite::Database& db, const char* sql, std::int64_t id,
                const std::string& intent) {
  sqlite::Statement lookup = db.prepare(sql, intent);
  lookup.bind(1, id);
  return lookup.step();
}

std::optional<std::string> optional_name(const std::optional<FailureKind>& kind) {
  if (!kind) return std::nullopt;
  return std::string(to_string(*kind));
}

}  // namespace

std::int64_t Worklog::add_attempt(const Attempt& attempt) {
  validate(path(), attempt);
  const std::string tags = join(normalise_tags(attempt.tags), ",");
  sqlite::Transaction transaction(db_, "add an attempt");
  if (attempt.session_id &&
      !row_exists(db_, "SELECT 1 FROM sessions WHERE id = ?", *attempt.session_id,
                  "look up session " + std::to_string(*attempt.session_id))) {
    throw Error(path() + ": cannot add attempt: no session " + std::to_string(*attempt.session_id));
  }
  sqlite::Statement insert = db_.prepare(
      "INSERT INTO attempts (session_id, kernel, variant, problem, author, hypothesis, change, "
      "baseline, result, unit, delta_pct, verdict, failure_kind, explanation, unlocks, blocks, "
      "tags, floor, created_at, evidence) VALUES (:session_id, :kernel, :variant, :problem, :author, "
      ":hypothesis, :change, :baseline, :result, :unit, :delta_pct, :verdict, :failure_kind, "
      ":explanation, :unlocks, :blocks, :tags, :floor, coalesce(:created_at, " KILN_SQL_NOW "), "
      ":evidence) ON CONFLICT (kernel, evidence) WHERE evidence IS NOT NULL DO NOTHING",
      "add an attempt of " + attempt.kernel);
  insert.bind(":session_id", attempt.session_id)
      .bind(":kernel", attempt.kernel)
      .bind(":variant", attempt.variant)
      .bind(":problem", attempt.problem)
      .bind(":author", to_string(attempt.author))
      .bind(":hypothesis", attempt.hypothesis)
      .bind(":change", attempt.change)
      .bind(":baseline", attempt.baseline)
      .bind(":result", attempt.result)
      .bind(":unit", attempt.unit)
      .bind(":delta_pct", delta_of(attempt))
      .bind(":verdict", to_string(attempt.verdict))
      .bind(":failure_kind", optional_name(attempt.failure_kind))
      .bind(":explanation", attempt.explanation)
      .bind(":unlocks", attempt.unlocks)
      .bind(":blocks", attempt.blocks)
      .bind(":tags", tags)
      .bind(":floor", attempt.floor)
      .bind(":created_at", detail::null_if_empty(attempt.created_at))
      .bind(":evidence", attempt.evidence)
      .run();
  if (db_.changes() == 0) {
    // Another writer reported this evidence first: its attempt stands for both.
    sqlite::Statement existing = db_.prepare("SELECT id FROM attempts WHERE kernel = ? AND evidence = ?",
                                             "find the attempt of evidence " + attempt.evidence.value_or(""));
    existing.bind(1, attempt.kernel).bind(2, *attempt.evidence);
    existing.step();
    const std::int64_t id = existing.get_int64(0);
    transaction.commit();
    return id;
  }
  const std::int64_t id = db_.last_insert_rowid();
  transaction.commit();
  return id;
}

std::optional<Attempt> Worklog::attempt(std::int64_t attempt_id) const {
  sqlite::Statement select =
      db_.prepare(std::string("SELECT ") + attempt_columns + " FROM attempts WHERE id = ?",
                  "read attempt " + std::to_string(attempt_id));
  select.bind(1, attempt_id);
  if (!select.step()) return std::nullopt;
  return read_attempt(select);
}

std::vector<Attempt> Worklog::attempts(const AttemptFilter& filter) const {
  std::optional<std::string> tag;
  if (filter.tag) {
    const std::vector<std::string> tags = normalise_tags(*filter.tag);
    if (tags.size() != 1) {
      throw Error(path() + ": the tag filter '" + *filter.tag + "' must name exactly one tag");
    }
    tag = tags.front();
  }
  // Only the conditions that are set enter the statement: every value is a bound parameter.
  std::string sql = std::string("SELECT ") + attempt_columns + " FROM attempts WHERE 1";
  if (filter.kernel) sql += " AND kernel = :kernel";
  if (filter.verdict) sql += " AND verdict = :verdict";
  if (tag) sql += " AND instr(',' || tags || ',', ',' || :tag || ',') > 0";
  if (filter.session_id) sql += " AND session_id = :session_id";
  if (filter.author) sql += " AND author = :author";
  if (filter.text) {
    sql += " AND id IN (SELECT rowid FROM attempts_fts WHERE attempts_fts MATCH :text)";
  }
  sql += " ORDER BY id";

  sqlite::Statement select = db_.prepare(sql, "search attempts");
  if (filter.kernel) select.bind(":kernel", *filter.kernel);
  if (filter.verdict) select.bind(":verdict", to_string(*filter.verdict));
  if (tag) select.bind(":tag", *tag);
  if (filter.session_id) select.bind(":session_id", *filter.session_id);
  if (filter.author) select.bind(":author", to_string(*filter.author));
  if (filter.text) select.bind(":text", *filter.text);

  std::vector<Attempt> out;
  try {
    while (select.step()) out.push_back(read_attempt(select));
  } catch (const sqlite::SqliteError& e) {
    // With everything else fixed, an SQL error here comes from the text the user typed.
    if (filter.text && e.primary_code() == SQLITE_ERROR) {
      throw Error(path() + ": malformed search query '" + *filter.text + "': " + e.detail() +
                  " (FTS5 syntax: words, \"phrases\", prefix*, AND, OR, NOT, parentheses)");
    }
    throw;
  }
  return out;
}

std::int64_t Worklog::add_link(std::int64_t from_attempt, std::int64_t to_attempt, LinkKind kind,
                               std::string_view note) {
  const std::string what = "cannot link attempt " + std::to_string(from_attempt) +
                           " to attempt " + std::to_string(to_attempt);
  const std::string kind_name(to_string(kind));  // throws for an out-of-range value
  if (from_attempt == to_attempt) throw Error(path() + ": " + what + ": it is the same attempt");
  sqlite::Transaction transaction(db_, "add a link");
  for (const std::int64_t id : {from_attempt, to_attempt}) {
    if (!row_exists(db_, "SELECT 1 FROM attempts WHERE id = ?", id,
                    "look up attempt " + std::to_string(id))) {
      throw Error(path() + ": " + what + ": no attempt " + std::to_string(id));
    }
  }
  sqlite::Statement duplicate = db_.prepare(
      "SELECT 1 FROM links WHERE from_attempt = ? AND to_attempt = ? AND kind = ?",
      "look up an existing link");
  duplicate.bind(1, from_attempt).bind(2, to_attempt).bind(3, kind_name);
  if (duplicate.step()) {
    throw Error(path() + ": " + what + ": the link '" + kind_name + "' exists already");
  }
  sqlite::Statement insert = db_.prepare(
      "INSERT INTO links (from_attempt, to_attempt, kind, note) VALUES (?, ?, ?, ?)", "add a link");
  insert.bind(1, from_attempt).bind(2, to_attempt).bind(3, kind_name).bind(4, note).run();
  const std::int64_t id = db_.last_insert_rowid();
  transaction.commit();
  return id;
}

std::vector<Link> Worklog::links_of(std::int64_t attempt_id) const {
  sqlite::Statement select = db_.prepare(
      "SELECT id, from_attempt, to_attempt, kind, note, created_at FROM links "
      "WHERE from_attempt = :id OR to_attempt = :id ORDER BY id",
      "read the links of attempt " + std::to_string(attempt_id));
  select.bind(":id", attempt_id);
  std::vector<Link> out;
  while (select.step()) {
    Link link;
    link.id = select.get_int64(0);
    link.from_attempt = select.get_int64(1);
    link.to_attempt = select.get_int64(2);
    link.kind = parse_link_kind(select.get_text(3));
    link.note = select.get_text(4);
    link.created_at = select.get_text(5);
    out.push_back(std::move(link));
  }
  return out;
}

}  // namespace kiln::worklog
