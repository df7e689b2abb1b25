// Schema version 7: where each session's wall time went, stage by stage.
//
// A tuning's cost is what decides whether a space can grow, and it is spent in stages that scale
// differently (compiles with cores, timings with GPUs, the sanitizer gate with the dispatch's
// variants). The tuner printed the compile time only; the rest could be read off the rows'
// timestamps at best, and the gate, which writes its rows at the end, not at all. A session now
// records its stages when it ends: a JSON object of stage name to seconds, in the order the
// stages ran. Null: a session of an older file, or one that did not end.
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

constexpr const char* version_7_sql = R"sql(
ALTER TABLE sessions ADD COLUMN stages TEXT
  CHECK (stages IS NULL OR (json_valid(stages) AND json_type(stages) = 'object'));
)sql";

}  // namespace

void create_version_7(const sqlite::Database& db) { db.exec(version_7_sql, "add the stage times of sessions"); }

}  // namespace kiln::worklog::schema
