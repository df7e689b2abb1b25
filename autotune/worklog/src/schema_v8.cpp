// Schema version 8: the code key of each session.
//
// A context key hashes the kernel's sources byte for byte, so that no measurement outlives the
// code it measured. It also outlived nothing else: a reworded comment in a header the space
// lists made every measurement of the space unreachable, and a GPU tuning of twenty minutes had
// to be run again for nothing. A session now records the key of its code as well, the same fields
// with comments and whitespace taken out of the C, C++ and CUDA sources (kiln tune's code_text);
// a tuning whose context key the worklog does not hold continues the latest context whose
// sessions recorded its code key. Null: a session of an older file, found by its context key only.
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

constexpr const char* version_8_sql = R"sql(
ALTER TABLE sessions ADD COLUMN code_key TEXT CHECK (code_key IS NULL OR code_key <> '');
)sql";

}  // namespace

void create_version_8(const sqlite::Database& db) { db.exec(version_8_sql, "add the code key of sessions"); }

}  // namespace kiln::worklog::schema
