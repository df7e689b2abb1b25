// Schema version 4: profiles. Per variant and problem (keyed like a measurement, without the
// phase), the shape of its kernel launches as the harness read it while timing (grid, block,
// shared memory, registers, CTAs per SM, with the device's SM count), and the Nsight Compute
// metrics `kiln profile` measured on it. Either half may be missing: a file from before this
// version, a variant that was never profiled, a run that could not be captured.
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

constexpr const char* version_4_sql = R"sql(
CREATE TABLE profiles (
  context_key  TEXT NOT NULL,
  kernel       TEXT NOT NULL,
  variant      TEXT NOT NULL,
  variant_hash TEXT NOT NULL,
  problem_key  TEXT NOT NULL,
  sm_count     INTEGER CHECK (sm_count IS NULL OR sm_count > 0),
  launches     TEXT CHECK (launches IS NULL OR (json_valid(launches) AND json_type(launches) = 'array')),
  session_id   INTEGER REFERENCES sessions(id),
  launches_at  TEXT,
  metrics      TEXT CHECK (metrics IS NULL OR (json_valid(metrics) AND json_type(metrics) = 'array')),
  tool         TEXT,
  profiled_at  TEXT,
  PRIMARY KEY (context_key, kernel, variant, variant_hash, problem_key)
) WITHOUT ROWID;
)sql";

}  // namespace

void create_version_4(const sqlite::Database& db) { db.exec(version_4_sql, "add the profiles table"); }

}  // namespace kiln::worklog::schema
