// Schema version 2: measurements as evidence. A timing keeps its median and its spread as
// columns, and how busy the machine was while it ran; a variant failure keeps what it depended
// on (the time limit, the machine's quietness, the problems, Kiln's version), so that a later run
// can tell a failure worth retrying from one that would only repeat; a session keeps the
// preflight of the machine it ran on; an attempt the tuner writes names the evidence it reports,
// once.
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

constexpr const char* version_2_sql = R"sql(
ALTER TABLE measurements ADD COLUMN median_s REAL CHECK (median_s IS NULL OR median_s > 0);
ALTER TABLE measurements ADD COLUMN spread_s REAL CHECK (spread_s IS NULL OR spread_s >= 0);
ALTER TABLE measurements ADD COLUMN others_cores REAL CHECK (others_cores IS NULL OR others_cores >= 0);
-- Older timings keep their median; their spread was not recorded, so it stays unknown (null).
UPDATE measurements SET median_s = json_extract(result, '$.median_s')
 WHERE phase = 'bench' AND status = 'ok' AND json_type(result, '$.median_s') IN ('real', 'integer')
   AND json_extract(result, '$.median_s') > 0;

ALTER TABLE variant_failures ADD COLUMN limit_s REAL;
ALTER TABLE variant_failures ADD COLUMN others_cores REAL;
ALTER TABLE variant_failures ADD COLUMN problem_set TEXT;
ALTER TABLE variant_failures ADD COLUMN kiln_version TEXT;

ALTER TABLE sessions ADD COLUMN preflight TEXT
  CHECK (preflight IS NULL OR (json_valid(preflight) AND json_type(preflight) = 'object'));

ALTER TABLE attempts ADD COLUMN evidence TEXT;
CREATE UNIQUE INDEX attempts_by_evidence ON attempts(kernel, evidence) WHERE evidence IS NOT NULL;
)sql";

}  // namespace

void create_version_2(const sqlite::Database& db) { db.exec(version_2_sql, "add the evidence columns"); }

}  // namespace kiln::worklog::schema
