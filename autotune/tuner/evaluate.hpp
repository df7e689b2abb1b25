// Measuring one variant: from the worklog's cache when this context already has it, otherwise in
// a child process (validation first, then timing), storing each result the moment it arrives so
// that an interrupted run resumes where it stopped.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "cache_key.hpp"
#include "compile.hpp"
#include "contention.hpp"
#include "kiln/model/protocol.hpp"
#include "kiln/worklog/worklog.hpp"
#include "manifest.hpp"
#include "process.hpp"

namespace kiln::tuner {

class MeasuringPool;

struct EvaluationContext {
  const Manifest* manifest = nullptr;
  worklog::Worklog* log = nullptr;
  std::int64_t session_id = 0;
  std::string context_key;
  KeyVersion key_version = current_key_version;  // how context_key and the variant hashes are made
  std::filesystem::path variants_dir;       // executables, named after the variants
  std::filesystem::path build_records_dir;  // kiln compile's <variant>.json
  // Set: variants are compiled when first run (kiln tune --compile-on-demand); unset: `kiln
  // compile` built them all before.
  OnDemandCompiler* compiler = nullptr;
  // Set: measurements are spread over several GPUs (kiln tune --gpus) by the search and the
  // coverage timing; the stages that compare variants side by side (near-ties, the sanitizer)
  // run on the first GPU through this context's environment.
  MeasuringPool* pool = nullptr;
  std::filesystem::path scratch_dir;        // plan files
  std::uint64_t seed = 1;
  int repetitions = 7;
  // A timing stops after min_repetitions whose range is within settled_spread of their median
  // (the harness's plan): the variants the search rejects are not worth seven.
  int min_repetitions = 3;
  double settled_spread = 0.01;
  // The timed work of one repetition (the harness's plan; model::kDefaultRepetitionSeconds says
  // why its default is what it is).
  double repetition_seconds = model::kDefaultRepetitionSeconds;
  // A timing stops at its first figure when that is over stop_ratio times the fastest time the
  // worklog holds for the problem in this context (stop_bounds): a variant that far behind is no
  // candidate there, and its precise time would not change a choice. 0: every timing in full.
  double stop_ratio = 3;
  int checks_per_problem = 1;
  // The least silence a step may take before the variant is killed as hung; a step expected to
  // take longer (its problem's floor, the reference check's time seen on other variants, the
  // variant's own check run) gets ten times that, and a busy machine proportionally more.
  double timeout_s = 120;
  // The longest silence of one compute-sanitizer run of the gate; 0: 100 times timeout_s, at most
  // kDefaultSanitizeSilenceSeconds (sanitize.hpp, sanitizer_silence_s). A run stopped at it is no
  // pass and no failure: the variant is taken unsanitized, and the next tuning asks again.
  double sanitize_timeout_s = 0;
  // Off: only what the worklog holds; a variant with anything missing comes back incomplete.
  bool measure = true;
  bool retry_failed = false;   // retry every transient failure (kiln tune --retry-failed)
  double quiet_wait_s = 5;     // longest wait for a quiet machine before each run
  int busy_remeasures = 1;     // timings taken on a busy machine are taken again this often
  // A variant process whose device could not be set up ran nothing of the variant; it is run
  // again after this pause (doubled the second time), and a third such run stops the tuning.
  double device_retry_pause_s = 2;
  ContentionWatch watch;
  Environment environment;     // for the variant processes: thread pinning
  std::map<std::string, double> floor_s;  // problem key -> floor
  // Problem key -> the longest reference check and kernel run seen, for the silence limit.
  std::map<std::string, double>* reference_s = nullptr;
};

// The environment that pins a CPU variant's threads: one per core, bound close, unless the user
// set OMP_PROC_BIND, OMP_PLACES or OMP_NUM_THREADS already.
Environment pinning_environment();

// Fingerprint of what a variant is validated and timed on: problems, checks, checks per problem.
std::string problem_set_of(const Manifest& m, int checks_per_problem, KeyVersion version);

// Stores a failure of a variant in this context with what it depended on (the problem set and
// this Kiln, plus the limit and the machine's load where they played a part), so that a later run
// can judge a retry; returns its evidence, "failure <context>/<variant>/<hash> @<time>".
std::string store_failure(const EvaluationContext& ctx, const worklog::VariantKey& key, worklog::FailureKind kind,
                          const std::string& detail, std::optional<double> limit_s = std::nullopt,
                          std::optional<double> others_cores = std::nullopt);

struct VariantOutcome {
  std::size_t index = 0;
  std::optional<worklog::FailureKind> failure;
  std::string detail;                        // why it failed
  std::map<std::string, double> median_s;    // problem key -> median seconds per call
  std::map<std::string, double> spread_s;    // problem key -> interquartile range, where recorded
  std::map<std::string, double> others_cores;  // problem key -> cores others kept busy while timed
  std::optional<double> score;               // geometric mean over the space's problems
  std::string newest_measurement;            // created_at of the newest result used
  bool ran = false;                          // a child process ran (not all from the worklog)
  bool complete = true;                      // false: not measured (and measuring was off)
  std::string retried;                       // why a stored failure was measured again
  std::string kept;                          // why a stored failure was not
  std::string evidence;                      // names what the outcome rests on, for its attempt
};

std::string variant_hash(const EvaluationContext& ctx, std::size_t index);

// The variant's executable, compiled first when variants are compiled on demand. Every place that
// runs a variant goes through this, so that none runs one that was never built.
std::filesystem::path executable_of(const EvaluationContext& ctx, std::size_t index);

// Whether measuring the variant would run it: something its checks or timings need is not in the
// worklog, and no stored failure is kept for it; or, with ctx.measure, it passed and a probe point
// of the domain (probe_points) has no time. Reads the worklog only.
bool needs_run(const EvaluationContext& ctx, std::size_t index);

// A whole file as bytes (sources for the cache keys, build records); throws when it cannot be read.
std::string read_text(const std::filesystem::path& file);

using EventHandler = std::function<void(const model::Event&)>;

// Runs one variant executable on a plan (kiln/model/protocol.hpp), handing each event the harness
// prints to on_event as it arrives; `launcher` goes before it (compute-sanitizer, ncu), and
// `command` is the harness's ("run": validate and time; "profile": one run in the profiler's range).
// The plan file lives in scratch_dir while it runs. A line that starts like an event but cannot be
// read as one arrives as a runtime ErrorEvent saying why; other lines (a launcher's) are skipped.
ChildResult run_plan(const std::filesystem::path& executable, const model::Plan& plan,
                     const std::filesystem::path& scratch_dir, double timeout_s, const EventHandler& on_event);
ChildResult run_plan(const std::filesystem::path& executable, const model::Plan& plan,
                     const std::filesystem::path& scratch_dir, const SilenceLimit& limit, const EventHandler& on_event,
                     const Environment& environment, const std::vector<std::string>& launcher = {},
                     const std::string& command = "run");

// The plan a variant runs: validate `check`, then time `bench`, with the space's tolerances and
// the seed of `run_seed` for this variant (model::plan_seed); repetitions as the Plan's defaults.
model::Plan plan_for(std::uint64_t run_seed, const Manifest& m, const std::string& variant,
                     const std::vector<Problem>& check, const std::vector<Problem>& bench);
// The same with the context's seed, repetitions, settled spread and checks per problem.
model::Plan plan_for(const EvaluationContext& ctx, const std::string& variant, const std::vector<Problem>& check,
                     const std::vector<Problem>& bench);

// Problem key -> the bound above which the variant's timing of that bench problem stops at its
// first figure (model::Plan::stop_above_s): stop_ratio (at least twice the space's regret
// tolerance) times the fastest median the worklog holds for the problem in this context from
// another variant's current source. Problems nobody has timed yet get none, nor does any with
// stop_ratio 0.
std::map<std::string, double> stop_bounds(const EvaluationContext& ctx, std::size_t index,
                                          const std::vector<Problem>& bench);

worklog::MeasurementKey measurement_key(const EvaluationContext& ctx, std::size_t index, const std::string& hash,
                                        const Problem& p, worklog::Phase phase);

// A timing's median, from its column. Every ok timing has one (the version 2 migration filled it
// in for older ones); a row without it is an error naming the row.
double median_of(const worklog::Measurement& m);

VariantOutcome evaluate_variant(const EvaluationContext& ctx, std::size_t index);

// The buckets that hold listed problems, in the manifest's order: the buckets bucket_scores scores.
std::vector<std::size_t> scored_buckets(const Manifest& m);

// The score of each of scored_buckets (the geometric mean of `median_s` over its problems): a
// search's Evaluation::parts. Nothing unless two or more buckets hold problems, or when a problem
// has no time.
std::vector<double> bucket_scores(const Manifest& m, const std::map<std::string, double>& median_s);

// Times `points` on a variant that passed its checks (a domain's held-out points): what the
// worklog holds is read, the rest is measured in one process when ctx.measure is on. Returns
// median seconds per point key; a point the variant did not time is absent (`failure` says why).
struct PointTimes {
  std::map<std::string, double> median_s;
  std::string failure;
  bool ran = false;
};
PointTimes time_points(const EvaluationContext& ctx, std::size_t index, const std::vector<Problem>& points);

// Runs `run` (one run of the variant `name`; it returns the device-setup error the harness reported,
// if any) until it reports none: a run whose device could not be set up ran nothing of the
// variant, so it says nothing about it. It is repeated after ctx.device_retry_pause_s, then twice
// that (a GPU seen failing to initialise one process among many came back for the next), and a
// third such run throws RefusedError naming `what`: the machine's fault is never recorded against
// the variant.
void retry_device_setup(const EvaluationContext& ctx, const std::string& what,
                        const std::function<std::optional<std::string>()>& run);

// Geometric mean; nothing for an empty list.
std::optional<double> geomean(const std::vector<double>& values);

}  // namespace kiln::tuner
