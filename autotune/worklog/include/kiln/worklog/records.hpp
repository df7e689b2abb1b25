// The values stored in a worklog: tuning sessions, attempts and the links between them, and the
// measurement cache that lets an interrupted tuning run resume. Plain structs; std::optional
// marks the columns that may be null.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::worklog {

// What became of an attempt: kept (the new best), reverted (measured, not better), invalid
// (the measurement or the output cannot be trusted), failed (did not build or run).
enum class Verdict { keep, revert, invalid, failed };
// sanitizer: compute-sanitizer found an error in a winner (memcheck, racecheck) that the checks missed.
enum class FailureKind { constraint, compile, crash, timeout, runtime, correctness, sanitizer };
enum class Author { kiln, person };
enum class LinkKind { enables, blocks, similar, contradicts, supports, refines };
enum class Phase { check, bench };
enum class MeasurementStatus { ok, failed };

std::string_view to_string(Verdict value);
std::string_view to_string(FailureKind value);
std::string_view to_string(Author value);
std::string_view to_string(LinkKind value);
std::string_view to_string(Phase value);
std::string_view to_string(MeasurementStatus value);

// Each throws kiln::Error naming the accepted words: "unknown verdict 'kept' (expected keep,
// revert, invalid or failed)".
Verdict parse_verdict(std::string_view text);
FailureKind parse_failure_kind(std::string_view text);
Author parse_author(std::string_view text);
LinkKind parse_link_kind(std::string_view text);
Phase parse_phase(std::string_view text);
MeasurementStatus parse_measurement_status(std::string_view text);

// Tags are lower-case words of letters, digits and `_ - . : / +`, stored sorted and without
// duplicates. A comma-separated list ("Memory-Bound, smem") normalises to {"memory-bound",
// "smem"}; an empty entry is skipped, any other character throws kiln::Error. The worklog stores
// them comma-separated too: kiln::join(tags, ",") is "a,b".
std::vector<std::string> normalise_tags(std::string_view comma_separated);
std::vector<std::string> normalise_tags(const std::vector<std::string>& tags);

// The wall time of one stage of a tuning run (open, compile, search, near-ties, coverage, domain,
// gate, publish: autotune/tuner/stage_clock.hpp).
struct StageSeconds {
  std::string stage;
  double seconds = 0;
  bool operator==(const StageSeconds&) const = default;
};

// A run's wall time: its stages' sum.
inline double total_seconds(const std::vector<StageSeconds>& stages) {
  double total = 0;
  for (const StageSeconds& s : stages) total += s.seconds;
  return total;
}

// One tuning run of one kernel. Timestamps are UTC, ISO 8601 with milliseconds.
struct Session {
  std::int64_t id = 0;                  // assigned by start_session
  std::string started_at;               // now when left empty
  std::optional<std::string> ended_at;  // null while running, or when the run was killed
  std::string kernel;
  std::string strategy;
  // The probe's device info as JSON (kiln/model/protocol.hpp, DeviceInfo); "{}": not recorded.
  std::string device = "{}";
  std::string context_key;  // fingerprint of device, toolchain and sources the cache is valid for
  std::string note;
  // JSON object: the machine's state when the run began (`kiln preflight`); empty: not taken.
  std::string preflight;
  // How the context's keys were hashed (schema version 6): 1 FNV-1a 64, 2 XXH3-128; 1 for every
  // session of an older file.
  int key_version = 2;
  std::string kiln_version;  // the Kiln that ran the session; empty: not recorded (before version 6)
  // The key of the code it measured (schema version 8): the context key's fields with comments
  // and whitespace out of the sources, so that a later tuning whose sources differ from these in
  // comments only continues this context; empty: not recorded.
  std::string code_key;
  // Where the run's wall time went, in the order the stages ran (schema version 7), written when
  // the session ends; empty: not recorded (an older file, or a run that did not end).
  std::vector<StageSeconds> stages;
};

// One optimisation attempt, measured by the tuner or recorded by a person.
struct Attempt {
  std::int64_t id = 0;                     // assigned by add_attempt
  std::optional<std::int64_t> session_id;  // null for a person's attempt outside a tuning run
  std::string kernel;
  std::optional<std::string> variant;  // canonical variant name, when the attempt is one
  std::optional<std::string> problem;  // problem key the numbers are for; null: all problems
  Author author = Author::kiln;
  std::string hypothesis;  // why it should help
  std::string change;      // what was changed
  std::optional<double> baseline;  // the number to beat, in `unit`
  std::optional<double> result;    // the number measured, in `unit`
  std::string unit;                // "s" (lower is better) or a score's name
  // (result - baseline) / baseline * 100: for seconds, negative is faster. add_attempt computes
  // it when left empty and both numbers are present (baseline non-zero); a given value is kept.
  std::optional<double> delta_pct;
  Verdict verdict = Verdict::keep;
  // Required for `failed`, optional for `invalid`, absent for `keep` and `revert`.
  std::optional<FailureKind> failure_kind;
  std::string explanation;  // why it turned out the way it did
  std::string unlocks;      // what this makes possible next
  std::string blocks;       // what stands in the way
  std::vector<std::string> tags;  // normalised by add_attempt
  // The physical floor in `unit` (the time the bytes and flops need at peak rates), for headroom.
  std::optional<double> floor;
  std::string created_at;  // now when left empty
  // What the attempt reports, named once: the tuner's attempts name the measurement or failure
  // they come from, so two tuners sharing a worklog never write the same evidence twice.
  // add_attempt returns the existing attempt's id for evidence already written.
  std::optional<std::string> evidence;
};

struct Link {
  std::int64_t id = 0;
  std::int64_t from_attempt = 0;
  std::int64_t to_attempt = 0;
  LinkKind kind = LinkKind::supports;
  std::string note;
  std::string created_at;
};

// Selects attempts; every field that is set must match. Results are ordered by id.
struct AttemptFilter {
  std::optional<std::string> kernel;
  std::optional<Verdict> verdict;
  std::optional<std::string> tag;  // normalised like a stored tag
  std::optional<std::int64_t> session_id;
  std::optional<Author> author;
  // FTS5 query over hypothesis, change, explanation, tags and variant: `smem AND bank`,
  // `"shared memory"`, `vector*`. Variant names split at `_`, so `VEC8` finds every VEC8 variant.
  std::optional<std::string> text;
};

// Identifies one cached measurement: a variant (by name and source fingerprint) on one problem,
// in one context (device, toolchain, flags), for one phase of the run.
struct MeasurementKey {
  std::string context_key;
  std::string kernel;
  std::string variant;
  std::string variant_hash;
  std::string problem_key;  // kiln::Problem::key(): "rows=16384 cols=8192 dtype=bf16"
  Phase phase = Phase::bench;
};

struct Measurement {
  MeasurementKey key;
  MeasurementStatus status = MeasurementStatus::ok;
  std::string result = "{}";  // JSON text as the harness reported it
  std::optional<std::int64_t> session_id;
  std::string created_at;  // now when left empty
  // Timings (phase bench): seconds per call, the median over the repetitions and their
  // interquartile range (null: not recorded, as in worklogs older than schema version 2), and
  // the cores other processes kept busy while it ran.
  std::optional<double> median_s;
  std::optional<double> spread_s;
  std::optional<double> others_cores;
};

// One ok timing's median without the rest of its row: what bounds on a problem's time are drawn
// from (Worklog::timed_medians).
struct TimedMedian {
  std::string variant;
  std::string variant_hash;
  std::string problem_key;
  double median_s = 0;
};

struct VariantKey {
  std::string context_key;
  std::string kernel;
  std::string variant;
  std::string variant_hash;
};

// A failure that disqualifies a whole variant in one context: compile, crash, timeout, runtime.
struct VariantFailure {
  VariantKey key;
  FailureKind kind = FailureKind::compile;
  std::string detail;  // compiler output, signal, or the device's message
  std::optional<std::int64_t> session_id;
  std::string created_at;  // now when left empty
  // What the failure depended on (null or empty: not recorded): the silence limit in force, the
  // cores other processes kept busy, a fingerprint of the problems and checks, Kiln's version.
  std::optional<double> limit_s;
  std::optional<double> others_cores;
  std::string problem_set;
  std::string kiln_version;
};

// A variant whose checks ran clean under compute-sanitizer: for its source (the key's hash) and the
// problems the sanitizer ran (problem_set: a fingerprint of them, not of everything the space times).
struct SanitizerPass {
  VariantKey key;
  std::string problem_set;
  std::string tools;  // the sanitizer tools that ran, e.g. "memcheck,racecheck"
  std::optional<std::int64_t> session_id;
  std::string created_at;  // now when left empty
};

// Identifies one profile: a variant (by name and source fingerprint) on one problem, in one context.
struct ProfileKey {
  std::string context_key;
  std::string kernel;
  std::string variant;
  std::string variant_hash;
  std::string problem_key;
};

// What is known of how a variant runs on one problem beyond its time. Two halves, written apart:
// the launch shapes the harness read while timing, and the metrics `kiln profile` measured.
struct Profile {
  ProfileKey key;
  std::optional<int> sm_count;  // the device's SM count, as the harness saw it
  // JSON array, one object per kernel launch of one run (autotune/harness/launch_shapes.hpp);
  // empty: not recorded.
  std::string launches;
  std::optional<std::int64_t> session_id;  // the session that timed it
  std::string launches_at;
  // JSON array, one object per profiled kernel launch: {"kernel", "metrics": {name: {"value",
  // "unit"}}}, in launch order; empty: not profiled.
  std::string metrics;
  std::string tool;         // the profiler and its version ("ncu 2025.3.1.0")
  std::string profiled_at;
};

}  // namespace kiln::worklog
