// The measurement cache and the variant failures: what a resumed tuning run need not redo.
#include "kiln/error.hpp"
#include "kiln/worklog/worklog.hpp"
#include "values.hpp"

namespace kiln::worklog {

namespace {

constexpr const char* measurement_columns =
    "context_key, kernel, variant, variant_hash, problem_key, phase, status, result, session_id, "
    "created_at, median_s, spread_s, others_cores";

Measurement read_measurement(const sqlite::Statement& row) {
  Measurement m;
  m.key.context_key = row.get_text(0);
  m.key.kernel = row.get_text(1);
  m.key.variant = row.get_text(2);
  m.key.variant_hash = row.get_text(3);
  m.key.problem_key = row.get_text(4);
  m.key.phase = parse_phase(row.get_text(5));
  m.status = parse_measurement_status(row.get_text(6));
  m.result = row.get_text(7);
  m.session_id = row.get_optional_int64(8);
  m.created_at = row.get_text(9);
  m.median_s = row.get_optional_double(10);
  m.spread_s = row.get_optional_double(11);
  m.others_cores = row.get_optional_double(12);
  return m;
}

constexpr const char* failure_columns =
    "context_key, kernel, variant, variant_hash, kind, detail, session_id, created_at, limit_s, "
    "others_cores, problem_set, kiln_version";

VariantFailure read_failure(const sqlite::Statement& row) {
  VariantFailure f;
  f.key.context_key = row.get_text(0);
  f.key.kernel = row.get_text(1);
  f.key.variant = row.get_text(2);
  f.key.variant_hash = row.get_text(3);
  f.kind = parse_failure_kind(row.get_text(4));
  f.detail = row.get_text(5);
  f.session_id = row.get_optional_int64(6);
  f.created_at = row.get_text(7);
  f.limit_s = row.get_optional_double(8);
  f.others_cores = row.get_optional_double(9);
  f.problem_set = row.get_optional_text(10).value_or("");
  f.kiln_version = row.get_optional_text(11).value_or("");
  return f;
}

bool disqualifies_variant(FailureKind kind) {
  return kind == FailureKind::compile || kind == FailureKind::crash ||
         kind == FailureKind::timeout || kind == FailureKind::runtime || kind == FailureKind::sanitizer;
}

}  // namespace

void Worklog::put_measurement(const Measurement& m) {
  const MeasurementKey& k = m.key;
  if (k.kernel.empty() || k.variant.empty()) {
    throw Error(path() + ": cannot store a measurement without a kernel and a variant");
  }
  sqlite::Transaction transaction(db_, "store a measurement");
  sqlite::Statement upsert = db_.prepare(
      "INSERT INTO measurements (context_key, kernel, variant, variant_hash, problem_key, phase, "
      "status, result, session_id, created_at, median_s, spread_s, others_cores) VALUES "
      "(:context_key, :kernel, :variant, :variant_hash, :problem_key, :phase, :status, :result, "
      ":session_id, coalesce(:created_at, " KILN_SQL_NOW "), :median_s, :spread_s, :others_cores) "
      "ON CONFLICT (context_key, kernel, variant, variant_hash, problem_key, phase) DO UPDATE SET "
      "status = excluded.status, result = excluded.result, session_id = excluded.session_id, "
      "created_at = excluded.created_at, median_s = excluded.median_s, "
      "spread_s = excluded.spread_s, others_cores = excluded.others_cores",
      "store the measurement of " + k.variant + " on '" + k.problem_key + "'");
  upsert.bind(":context_key", k.context_key)
      .bind(":kernel", k.kernel)
      .bind(":variant", k.variant)
      .bind(":variant_hash", k.variant_hash)
      .bind(":problem_key", k.problem_key)
      .bind(":phase", to_string(k.phase))
      .bind(":status", to_string(m.status))
      .bind(":result", m.result)
      .bind(":session_id", m.session_id)
      .bind(":created_at", detail::null_if_empty(m.created_at))
      .bind(":median_s", m.median_s)
      .bind(":spread_s", m.spread_s)
      .bind(":others_cores", m.others_cores)
      .run();
  transaction.commit();
}

std::optional<Measurement> Worklog::measurement(const MeasurementKey& k) const {
  sqlite::Statement select = db_.prepare(
      std::string("SELECT ") + measurement_columns +
          " FROM measurements WHERE context_key = ? AND kernel = ? AND variant = ? AND "
          "variant_hash = ? AND problem_key = ? AND phase = ?",
      "read the measurement of " + k.variant + " on '" + k.problem_key + "'");
  select.bind(1, k.context_key)
      .bind(2, k.kernel)
      .bind(3, k.variant)
      .bind(4, k.variant_hash)
      .bind(5, k.problem_key)
      .bind(6, to_string(k.phase));
  if (!select.step()) return std::nullopt;
  return read_measurement(select);
}

std::vector<Measurement> Worklog::measurements(std::string_view context_key,
                                               std::string_view kernel) const {
  sqlite::Statement select = db_.prepare(
      std::string("SELECT ") + measurement_columns +
          " FROM measurements WHERE context_key = ? AND kernel = ? "
          "ORDER BY variant, variant_hash, problem_key, phase",
      "read the measurements of " + std::string(kernel));
  select.bind(1, context_key).bind(2, kernel);
  std::vector<Measurement> out;
  while (select.step()) out.push_back(read_measurement(select));
  return out;
}

std::vector<TimedMedian> Worklog::timed_medians(std::string_view context_key, std::string_view kernel) const {
  sqlite::Statement select = db_.prepare(
      "SELECT variant, variant_hash, problem_key, median_s FROM measurements "
      "WHERE context_key = ? AND kernel = ? AND phase = 'bench' AND status = 'ok' AND median_s IS NOT NULL "
      "ORDER BY variant, variant_hash, problem_key",
      "read the timings of " + std::string(kernel));
  select.bind(1, context_key).bind(2, kernel);
  std::vector<TimedMedian> out;
  while (select.step()) {
    out.push_back({select.get_text(0), select.get_text(1), select.get_text(2), *select.get_optional_double(3)});
  }
  return out;
}

std::int64_t Worklog::count_measurements(std::string_view context_key) const {
  sqlite::Statement count = db_.prepare(
      "SELECT count(*) FROM measurements WHERE context_key = ?", "count measurements");
  count.bind(1, context_key);
  count.step();
  return count.get_int64(0);
}

void Worklog::put_variant_failure(const VariantFailure& f) {
  const VariantKey& k = f.key;
  if (k.kernel.empty() || k.variant.empty()) {
    throw Error(path() + ": cannot store a variant failure without a kernel and a variant");
  }
  if (!disqualifies_variant(f.kind)) {
    throw Error(path() + ": cannot store the failure of " + k.variant + ": a '" +
                std::string(to_string(f.kind)) +
                "' failure belongs to a problem, not to the variant (expected compile, crash, "
                "timeout, runtime or sanitizer)");
  }
  sqlite::Transaction transaction(db_, "store a variant failure");
  sqlite::Statement upsert = db_.prepare(
      "INSERT INTO variant_failures (context_key, kernel, variant, variant_hash, kind, detail, "
      "session_id, created_at, limit_s, others_cores, problem_set, kiln_version) VALUES "
      "(:context_key, :kernel, :variant, :variant_hash, :kind, :detail, :session_id, "
      "coalesce(:created_at, " KILN_SQL_NOW "), :limit_s, :others_cores, :problem_set, :kiln_version) "
      "ON CONFLICT (context_key, kernel, variant, variant_hash) DO UPDATE SET "
      "kind = excluded.kind, detail = excluded.detail, session_id = excluded.session_id, "
      "created_at = excluded.created_at, limit_s = excluded.limit_s, "
      "others_cores = excluded.others_cores, problem_set = excluded.problem_set, "
      "kiln_version = excluded.kiln_version",
      "store the failure of " + k.variant);
  upsert.bind(":context_key", k.context_key)
      .bind(":kernel", k.kernel)
      .bind(":variant", k.variant)
      .bind(":variant_hash", k.variant_hash)
      .bind(":kind", to_string(f.kind))
      .bind(":detail", f.detail)
      .bind(":session_id", f.session_id)
      .bind(":created_at", detail::null_if_empty(f.created_at))
      .bind(":limit_s", f.limit_s)
      .bind(":others_cores", f.others_cores)
      .bind(":problem_set", detail::null_if_empty(f.problem_set))
      .bind(":kiln_version", detail::null_if_empty(f.kiln_version))
      .run();
  transaction.commit();
}

void Worklog::remove_variant_failure(const VariantKey& k) {
  sqlite::Transaction transaction(db_, "remove a variant failure");
  sqlite::Statement remove = db_.prepare(
      "DELETE FROM variant_failures WHERE context_key = ? AND kernel = ? AND variant = ? AND "
      "variant_hash = ?",
      "remove the failure of " + k.variant);
  remove.bind(1, k.context_key).bind(2, k.kernel).bind(3, k.variant).bind(4, k.variant_hash).run();
  transaction.commit();
}

std::optional<VariantFailure> Worklog::variant_failure(const VariantKey& k) const {
  sqlite::Statement select = db_.prepare(
      std::string("SELECT ") + failure_columns +
          " FROM variant_failures WHERE context_key = ? AND kernel = ? AND variant = ? AND "
          "variant_hash = ?",
      "read the failure of " + k.variant);
  select.bind(1, k.context_key).bind(2, k.kernel).bind(3, k.variant).bind(4, k.variant_hash);
  if (!select.step()) return std::nullopt;
  return read_failure(select);
}

std::vector<VariantFailure> Worklog::variant_failures(std::string_view context_key,
                                                      std::string_view kernel) const {
  sqlite::Statement select = db_.prepare(
      std::string("SELECT ") + failure_columns +
          " FROM variant_failures WHERE context_key = ? AND kernel = ? "
          "ORDER BY variant, variant_hash",
      "read the variant failures of " + std::string(kernel));
  select.bind(1, context_key).bind(2, kernel);
  std::vector<VariantFailure> out;
  while (select.step()) out.push_back(read_failure(select));
  return out;
}

}  // namespace kiln::worklog

namespace kiln::worklog {

void Worklog::put_sanitizer_pass(const SanitizerPass& p) {
  const VariantKey& k = p.key;
  if (k.kernel.empty() || k.variant.empty() || p.tools.empty()) {
    throw Error(path() + ": cannot store a sanitizer pass without a kernel, a variant and its tools");
  }
  sqlite::Transaction transaction(db_, "store a sanitizer pass");
  sqlite::Statement upsert = db_.prepare(
      "INSERT INTO sanitizer_passes (context_key, kernel, variant, variant_hash, problem_set, tools, "
      "session_id, created_at) VALUES (:context_key, :kernel, :variant, :variant_hash, :problem_set, "
      ":tools, :session_id, coalesce(:created_at, " KILN_SQL_NOW ")) "
      "ON CONFLICT (context_key, kernel, variant, variant_hash, problem_set) DO UPDATE SET "
      "tools = excluded.tools, session_id = excluded.session_id, created_at = excluded.created_at",
      "store the sanitizer pass of " + k.variant);
  upsert.bind(":context_key", k.context_key)
      .bind(":kernel", k.kernel)
      .bind(":variant", k.variant)
      .bind(":variant_hash", k.variant_hash)
      .bind(":problem_set", p.problem_set)
      .bind(":tools", p.tools)
      .bind(":session_id", p.session_id)
      .bind(":created_at", detail::null_if_empty(p.created_at))
      .run();
  transaction.commit();
}

std::optional<SanitizerPass> Worklog::sanitizer_pass(const VariantKey& k, std::string_view problem_set) const {
  sqlite::Statement select = db_.prepare(
      "SELECT tools, session_id, created_at FROM sanitizer_passes WHERE context_key = ? AND kernel = ? AND "
      "variant = ? AND variant_hash = ? AND problem_set = ?",
      "read the sanitizer pass of " + k.variant);
  select.bind(1, k.context_key).bind(2, k.kernel).bind(3, k.variant).bind(4, k.variant_hash).bind(5, problem_set);
  if (!select.step()) return std::nullopt;
  SanitizerPass p;
  p.key = k;
  p.problem_set = std::string(problem_set);
  p.tools = select.get_text(0);
  p.session_id = select.get_optional_int64(1);
  p.created_at = select.get_text(2);
  return p;
}

}  // namespace kiln::worklog
