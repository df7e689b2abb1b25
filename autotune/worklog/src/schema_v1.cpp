// Schema version 1: sessions, attempts (with full-text search), links, and the measurement cache.
#include "migrations.hpp"

namespace kiln::worklog::schema {

namespace {

// Timestamps are UTC, ISO 8601 with milliseconds: they sort as text and need no time zone.
constexpr const char* version_1_sql = R"sql(
CREATE TABLE sessions (
  id          INTEGER PRIMARY KEY,
  started_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ended_at    TEXT,
  kernel      TEXT NOT NULL CHECK (kernel <> ''),
  strategy    TEXT NOT NULL,
  device      TEXT NOT NULL DEFAULT '{}'
              CHECK (json_valid(device) AND json_type(device) = 'object'),
  context_key TEXT NOT NULL,
  note        TEXT NOT NULL DEFAULT ''
);

CREATE TABLE attempts (
  id           INTEGER PRIMARY KEY,
  session_id   INTEGER REFERENCES sessions(id),
  kernel       TEXT NOT NULL CHECK (kernel <> ''),
  variant      TEXT,
  problem      TEXT,
  author       TEXT NOT NULL CHECK (author IN ('kiln', 'person')),
  hypothesis   TEXT NOT NULL DEFAULT '',
  change       TEXT NOT NULL DEFAULT '',
  baseline     REAL,
  result       REAL,
  unit         TEXT NOT NULL DEFAULT '',
  delta_pct    REAL,
  verdict      TEXT NOT NULL CHECK (verdict IN ('keep', 'revert', 'invalid', 'failed')),
  failure_kind TEXT CHECK (failure_kind IS NULL OR failure_kind IN
                 ('constraint', 'compile', 'crash', 'timeout', 'runtime', 'correctness')),
  explanation  TEXT NOT NULL DEFAULT '',
  unlocks      TEXT NOT NULL DEFAULT '',
  blocks       TEXT NOT NULL DEFAULT '',
  tags         TEXT NOT NULL DEFAULT '',
  floor        REAL,
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- A failure has a kind; a kept or reverted attempt ran, so it has none.
  CHECK ((verdict = 'failed' AND failure_kind IS NOT NULL)
      OR (verdict IN ('keep', 'revert') AND failure_kind IS NULL)
      OR verdict = 'invalid')
);
CREATE INDEX attempts_by_session ON attempts(session_id);
CREATE INDEX attempts_by_kernel ON attempts(kernel);

-- External content: the text lives once, in attempts; the triggers keep the index in step.
CREATE VIRTUAL TABLE attempts_fts USING fts5(
  hypothesis, change, explanation, tags, variant,
  content = 'attempts', content_rowid = 'id'
);
CREATE TRIGGER attempts_fts_after_insert AFTER INSERT ON attempts BEGIN
  INSERT INTO attempts_fts(rowid, hypothesis, change, explanation, tags, variant)
  VALUES (new.id, new.hypothesis, new.change, new.explanation, new.tags, new.variant);
END;
CREATE TRIGGER attempts_fts_after_delete AFTER DELETE ON attempts BEGIN
  INSERT INTO attempts_fts(attempts_fts, rowid, hypothesis, change, explanation, tags, variant)
  VALUES ('delete', old.id, old.hypothesis, old.change, old.explanation, old.tags, old.variant);
END;
CREATE TRIGGER attempts_fts_after_update AFTER UPDATE ON attempts BEGIN
  INSERT INTO attempts_fts(attempts_fts, rowid, hypothesis, change, explanation, tags, variant)
  VALUES ('delete', old.id, old.hypothesis, old.change, old.explanation, old.tags, old.variant);
  INSERT INTO attempts_fts(rowid, hypothesis, change, explanation, tags, variant)
  VALUES (new.id, new.hypothesis, new.change, new.explanation, new.tags, new.variant);
END;

CREATE TABLE links (
  id           INTEGER PRIMARY KEY,
  from_attempt INTEGER NOT NULL REFERENCES attempts(id),
  to_attempt   INTEGER NOT NULL REFERENCES attempts(id),
  kind         TEXT NOT NULL
               CHECK (kind IN ('enables', 'blocks', 'similar', 'contradicts', 'supports', 'refines')),
  note         TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  CHECK (from_attempt <> to_attempt),
  UNIQUE (from_attempt, to_attempt, kind)
);
CREATE INDEX links_by_target ON links(to_attempt);

-- The resume cache: what a variant measured on a problem in a context, so that a restarted run
-- measures only what is missing.
CREATE TABLE measurements (
  context_key  TEXT NOT NULL,
  kernel       TEXT NOT NULL,
  variant      TEXT NOT NULL,
  variant_hash TEXT NOT NULL,
  problem_key  TEXT NOT NULL,
  phase        TEXT NOT NULL CHECK (phase IN ('check', 'bench')),
  status       TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
  result       TEXT NOT NULL CHECK (json_valid(result)),
  session_id   INTEGER REFERENCES sessions(id),
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (context_key, kernel, variant, variant_hash, problem_key, phase)
) WITHOUT ROWID;

-- Failures that rule out a whole variant in a context, whatever the problem.
CREATE TABLE variant_failures (
  context_key  TEXT NOT NULL,
  kernel       TEXT NOT NULL,
  variant      TEXT NOT NULL,
  variant_hash TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('compile', 'crash', 'timeout', 'runtime')),
  detail       TEXT NOT NULL DEFAULT '',
  session_id   INTEGER REFERENCES sessions(id),
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (context_key, kernel, variant, variant_hash)
) WITHOUT ROWID;
)sql";

}  // namespace

void create_version_1(const sqlite::Database& db) { db.exec(version_1_sql, "create the schema"); }

}  // namespace kiln::worklog::schema
