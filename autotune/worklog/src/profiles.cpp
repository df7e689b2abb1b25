// Profiles: the launch shapes the harness reads while timing, and the metrics kiln profile measures.
#include "kiln/error.hpp"
#include "kiln/worklog/worklog.hpp"
#include "values.hpp"

namespace kiln::worklog {

namespace {

constexpr const char* profile_columns =
    "context_key, kernel, variant, variant_hash, problem_key, sm_count, launches, session_id, launches_at, metrics, "
    "tool, profiled_at";

Profile read_profile(const sqlite::Statement& row) {
  Profile p;
  p.key.context_key = row.get_text(0);
  p.key.kernel = row.get_text(1);
  p.key.variant = row.get_text(2);
  p.key.variant_hash = row.get_text(3);
  p.key.problem_key = row.get_text(4);
  if (auto n = row.get_optional_int64(5)) p.sm_count = static_cast<int>(*n);
  p.launches = row.get_optional_text(6).value_or("");
  p.session_id = row.get_optional_int64(7);
  p.launches_at = row.get_optional_text(8).value_or("");
  p.metrics = row.get_optional_text(9).value_or("");
  p.tool = row.get_optional_text(10).value_or("");
  p.profiled_at = row.get_optional_text(11).value_or("");
  return p;
}

void check_key(const std::string& path, const ProfileKey& k) {
  if (k.kernel.empty() || k.variant.empty() || k.problem_key.empty()) {
    throw Error(path + ": cannot store a profile without a kernel, a variant and a problem");
  }
}

sqlite::Statement& bind_key(sqlite::Statement& s, const ProfileKey& k) {
  return s.bind(":context_key", k.context_key)
      .bind(":kernel", k.kernel)
      .bind(":variant", k.variant)
      .bind(":variant_hash", k.variant_hash)
      .bind(":problem_key", k.problem_key);
}

constexpr const char* key_values = "(:context_key, :kernel, :variant, :variant_hash, :problem_key";
constexpr const char* key_conflict = " ON CONFLICT (context_key, kernel, variant, variant_hash, problem_key) DO UPDATE SET ";

}  // namespace

void Worklog::put_launch_shapes(const ProfileKey& k, std::optional<int> sm_count, const std::string& launches,
                                std::optional<std::int64_t> session_id) {
  check_key(path(), k);
  sqlite::Transaction transaction(db_, "store launch shapes");
  sqlite::Statement upsert = db_.prepare(
      std::string("INSERT INTO profiles (context_key, kernel, variant, variant_hash, problem_key, sm_count, launches, "
                  "session_id, launches_at) VALUES ") +
          key_values + ", :sm_count, :launches, :session_id, " KILN_SQL_NOW ")" + key_conflict +
          "sm_count = excluded.sm_count, launches = excluded.launches, session_id = excluded.session_id, "
          "launches_at = excluded.launches_at",
      "store the launch shapes of " + k.variant + " on '" + k.problem_key + "'");
  std::optional<std::int64_t> sms;
  if (sm_count) sms = *sm_count;
  bind_key(upsert, k).bind(":sm_count", sms).bind(":launches", launches).bind(":session_id", session_id).run();
  transaction.commit();
}

void Worklog::put_profile_metrics(const ProfileKey& k, const std::string& metrics, const std::string& tool) {
  check_key(path(), k);
  sqlite::Transaction transaction(db_, "store profile metrics");
  sqlite::Statement upsert = db_.prepare(
      std::string("INSERT INTO profiles (context_key, kernel, variant, variant_hash, problem_key, metrics, tool, "
                  "profiled_at) VALUES ") +
          key_values + ", :metrics, :tool, " KILN_SQL_NOW ")" + key_conflict +
          "metrics = excluded.metrics, tool = excluded.tool, profiled_at = excluded.profiled_at",
      "store the profile of " + k.variant + " on '" + k.problem_key + "'");
  bind_key(upsert, k).bind(":metrics", metrics).bind(":tool", detail::null_if_empty(tool)).run();
  transaction.commit();
}

std::optional<Profile> Worklog::profile(const ProfileKey& k) const {
  sqlite::Statement select = db_.prepare(
      std::string("SELECT ") + profile_columns +
          " FROM profiles WHERE context_key = :context_key AND kernel = :kernel AND variant = :variant AND "
          "variant_hash = :variant_hash AND problem_key = :problem_key",
      "read the profile of " + k.variant + " on '" + k.problem_key + "'");
  bind_key(select, k);
  if (!select.step()) return std::nullopt;
  return read_profile(select);
}

std::vector<Profile> Worklog::profiles(std::string_view context_key, std::string_view kernel) const {
  sqlite::Statement select = db_.prepare(
      std::string("SELECT ") + profile_columns +
          " FROM profiles WHERE context_key = ? AND kernel = ? ORDER BY variant, variant_hash, problem_key",
      "read the profiles of " + std::string(kernel));
  select.bind(1, context_key).bind(2, kernel);
  std::vector<Profile> out;
  while (select.step()) out.push_back(read_profile(select));
  return out;
}

}  // namespace kiln::worklog
