// `kiln tune`: one tuning session of one kernel, from the manifest to the record and the
// dispatch header, with every attempt in the worklog.
#pragma once
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "compile.hpp"
#include "kiln/model/protocol.hpp"
#include "search.hpp"
#include "shard.hpp"

namespace kiln::tuner {

struct TuneOptions {
  std::filesystem::path manifest;
  std::filesystem::path variants_dir;       // variant executables, named after the variants
  std::filesystem::path build_records_dir;  // the variants' build records (kiln compile)
  // Set: the variants are compiled here when the search first needs them (its variants_dir,
  // build_records_dir and `only` are ignored); unset: `kiln compile` built every one before.
  std::optional<CompileOptions> compile_on_demand;
  std::filesystem::path worklog;
  std::filesystem::path device_spec;        // presets/devices/<name>.json
  std::filesystem::path probe;              // the probe of the kernel's backend (kiln_probe_<backend>)
  std::filesystem::path record_out;
  std::filesystem::path header_out;
  std::vector<std::filesystem::path> record_copies;  // e.g. presets/records/<device>/ in the source tree
  std::vector<std::filesystem::path> sources;        // kernel sources: their content keys the cache
  // Where the sources' includes are looked for: what they include from there keys the cache too.
  std::vector<std::filesystem::path> include_dirs;
  std::optional<std::filesystem::path> flags_file;   // compiler and flags: their content keys the cache
  std::string strategy = "exhaustive";  // a registered search strategy (search.hpp)
  // false: `strategy` is the default, and the space's own search (tuning.search and its budget)
  // takes its place, except in a shard, which measures its share exhaustively.
  bool strategy_given = false;
  StrategyOptions strategy_options;     // checked against the strategy's options
  std::uint64_t seed = 0;      // 0: drawn from the clock, and written to the session
  int repetitions = 7;
  double settled_spread = 0.01;  // EvaluationContext::settled_spread
  double repetition_seconds = model::kDefaultRepetitionSeconds;  // EvaluationContext::repetition_seconds
  double stop_ratio = 3;         // EvaluationContext::stop_ratio
  int checks_per_problem = 1;
  std::optional<double> timeout_s;  // overrides the space's tuning.timeout_s
  bool progress = true;
  bool retry_failed = false;   // measure again every variant whose stored failure is transient
  double quiet_wait_s = 5;     // longest wait for a quiet machine before each measurement
  // With a problem domain: how many of the fastest variants of each listed problem (and by score)
  // are timed at the coverage points (time_coverage).
  std::size_t finalists = 4;
  int interleave_rounds = 2;   // turns each near-tie gets when re-measured A/B/A/B (0: none)
  bool allow_busy_gpu = false; // tune even while other processes use the GPU (preflight says so)
  double busy_gpu_wait_s = 60; // longest wait for other processes to leave the GPU before refusing
  bool sanitize = true;        // CUDA: compute-sanitizer on each bucket's winner before it is accepted
  bool sanitize_required = false;  // an error when compute-sanitizer is not found (kiln tune --sanitize)
  int sanitize_runners_up = 0; // also sanitize this many runners-up of each bucket
  std::optional<double> sanitize_timeout_s;  // EvaluationContext::sanitize_timeout_s
  // Gate runs at once on each GPU, the measuring pool's or the one (0: one; sanitizer_lanes says why).
  int sanitize_jobs = 0;
  bool lock_clocks = false;    // lock the GPU's SM clock at its maximum for the session (nvidia-smi -lgc)
  // CUDA: "all" or nvidia-smi indices ("0,2"): one measuring child per GPU (gpus.hpp); empty: the
  // first GPU of CUDA_VISIBLE_DEVICES, as without the option.
  std::string gpus;
  // Measure only this shard's share of the search and stop there: no record, no header (shard.hpp).
  std::optional<Shard> shard;
};

// Tunes: writes the record and the header, and says what it found on `out` (warnings on `err`).
// Throws RefusedError when the preflight refuses the machine (another process on the GPU, another
// GPU than the device file's), Interrupted when asked to stop (every finished measurement is in
// the worklog), kiln::Error and others for the rest.
void tune(const TuneOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kiln::tuner
