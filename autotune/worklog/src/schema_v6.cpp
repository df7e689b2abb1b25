// Schema version 6: the key version and Kiln's version of each session.
//
// The cache keys (context key, variant hash, problem-set fingerprints) were FNV-1a 64 up to this
// version and are XXH3-128 from it on: worklogs travel between machines now (kiln merge), and a
// 64-bit hash that no one checked for collisions should not decide whether two measurements are
// the same. A key cannot be re-hashed: what it was made from (sources, flags, the device) is not
// in the file. So rows keep the key they were written with and each session carries the version
// of the keys of its context (1: FNV-1a 64, 16 hex digits; 2: XXH3-128, 32 hex digits), and the
// tuner goes on under version 1 in a context a worklog started under it: a re-tune from an older
// worklog measures nothing again, and `kiln record` rebuilds its records as they were. The two
// forms cannot collide (their lengths differ). A session of an older file was of version 1, and
// which Kiln wrote it is unknown (null); `kiln merge` compares both.
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

constexpr const char* version_6_sql = R"sql(
ALTER TABLE sessions ADD COLUMN key_version INTEGER NOT NULL DEFAULT 1 CHECK (key_version IN (1, 2));
ALTER TABLE sessions ADD COLUMN kiln_version TEXT;
)sql";

}  // namespace

void create_version_6(const sqlite::Database& db) { db.exec(version_6_sql, "add the key and Kiln versions of sessions"); }

}  // namespace kiln::worklog::schema
