// The worklog: one SQLite file per project holding every optimisation attempt (the tuner's and
// people's), the links between them, the tuning sessions, and the measurement cache that lets an
// interrupted tuning run resume. Several processes may open the same file at once; every write is
// one short transaction.
//
// A Worklog is one connection: use it from one thread at a time.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/worklog/records.hpp"
#include "kiln/worklog/sqlite.hpp"

namespace kiln::worklog {

enum class OpenMode {
  create_if_missing,  // the tuner: a new file becomes an empty worklog
  existing,           // writing to a worklog that must exist (links): a missing file is an error
  read_only,          // reports and queries: must exist, be a current Kiln worklog; nothing is
                      // written (sqlite::OpenOptions::read_only)
};

class Worklog {
 public:
  // Opens (or creates) and migrates the file; throws kiln::Error for a file that is not a Kiln
  // worklog or was written by a newer Kiln, naming the path, and, unless read_only, for a path on
  // a network file system (file_system.hpp).
  static Worklog open(const std::filesystem::path& path,
                      OpenMode mode = OpenMode::create_if_missing);

  const std::string& path() const { return db_.path(); }
  const sqlite::Database& database() const { return db_; }

  // Sessions. start_session assigns id (and started_at when empty) and ignores ended_at.
  std::int64_t start_session(const Session& session);
  // Throws for an unknown or already ended session; `stages` are the run's stage times (a stage
  // named twice, an empty name, or a negative or non-finite time throws, writing nothing).
  void end_session(std::int64_t session_id, const std::vector<StageSeconds>& stages = {});
  std::optional<Session> session(std::int64_t session_id) const;
  std::vector<Session> sessions() const;  // ordered by id

  // Attempts. add_attempt validates the attempt (see Attempt), normalises its tags, computes
  // delta_pct when it is empty and both numbers are present, and returns the new id.
  std::int64_t add_attempt(const Attempt& attempt);
  std::optional<Attempt> attempt(std::int64_t attempt_id) const;
  // Throws kiln::Error for a malformed full-text query.
  std::vector<Attempt> attempts(const AttemptFilter& filter = {}) const;

  // Links. Both attempts must exist, differ, and not be linked by the same kind already.
  std::int64_t add_link(std::int64_t from_attempt, std::int64_t to_attempt, LinkKind kind,
                        std::string_view note = {});
  // Links from or to the attempt, ordered by id.
  std::vector<Link> links_of(std::int64_t attempt_id) const;

  // The measurement cache. put_measurement replaces an entry with the same key.
  void put_measurement(const Measurement& measurement);
  std::optional<Measurement> measurement(const MeasurementKey& key) const;
  // Every entry of a kernel in a context, ordered by key.
  std::vector<Measurement> measurements(std::string_view context_key,
                                        std::string_view kernel) const;
  std::int64_t count_measurements(std::string_view context_key) const;
  // The medians of a kernel's ok timings in a context (phase bench), ordered by key.
  std::vector<TimedMedian> timed_medians(std::string_view context_key, std::string_view kernel) const;

  // Variant failures (compile, crash, timeout, runtime). put replaces an entry with the same key.
  void put_variant_failure(const VariantFailure& failure);
  std::optional<VariantFailure> variant_failure(const VariantKey& key) const;
  // A retried variant that now ran: its failure is history (its attempt keeps the story).
  void remove_variant_failure(const VariantKey& key);
  std::vector<VariantFailure> variant_failures(std::string_view context_key,
                                               std::string_view kernel) const;

  // Sanitizer passes (errors are variant failures). put replaces an entry with the same key.
  void put_sanitizer_pass(const SanitizerPass& pass);
  std::optional<SanitizerPass> sanitizer_pass(const VariantKey& key, std::string_view problem_set) const;

  // Profiles. put_launch_shapes and put_profile_metrics each write their half of the row and keep
  // the other; `launches` and `metrics` are JSON arrays (see Profile).
  void put_launch_shapes(const ProfileKey& key, std::optional<int> sm_count, const std::string& launches,
                         std::optional<std::int64_t> session_id);
  void put_profile_metrics(const ProfileKey& key, const std::string& metrics, const std::string& tool);
  std::optional<Profile> profile(const ProfileKey& key) const;
  // Every profile of a kernel in a context, ordered by key.
  std::vector<Profile> profiles(std::string_view context_key, std::string_view kernel) const;

  // SQLite's integrity check, foreign keys, and the full-text index against the attempts:
  // one line per problem found, empty for a sound file.
  std::vector<std::string> integrity_problems() const;

 private:
  explicit Worklog(sqlite::Database db) : db_(std::move(db)) {}

  sqlite::Database db_;
};

}  // namespace kiln::worklog
