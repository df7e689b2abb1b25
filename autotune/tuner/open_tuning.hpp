// The first stage of `kiln tune`: everything a search needs before it measures anything. The
// kernel's manifest and device file (shared with `kiln record` and `kiln verify`), the device the
// probe finds (shared with `kiln verify`), the preflight and the clocks, the context and the rates
// its floors use (shared with `kiln record`), and the session in the worklog.
#pragma once
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_spec.hpp"
#include "evaluate.hpp"
#include "floors.hpp"
#include "gpus.hpp"
#include "measuring_pool.hpp"
#include "kiln/worklog/worklog.hpp"
#include "manifest.hpp"
#include "preflight.hpp"
#include "search.hpp"
#include "tune.hpp"

namespace kiln::tuner {

// A kernel's manifest and the device file it is tuned for; throws kiln::Error when the device
// file is for another backend than the kernel.
struct KernelTarget {
  Manifest manifest;
  Device spec;
};
KernelTarget load_target(const std::filesystem::path& manifest, const std::filesystem::path& device_file);

// The device the probe finds, when it is the device file's; throws kiln::Error otherwise. With
// describe_only, without its measured rates.
DeviceInfo probe_matching(const Device& spec, const std::filesystem::path& probe, const Environment& environment = {},
                          bool describe_only = false);

// The device a context's floors are computed for, and their rates: the device of the context's
// first session when the worklog has one (a re-run reproduces its record), else `probed`.
struct ContextRates {
  DeviceInfo device;
  std::map<std::string, double> rates;
};
ContextRates context_rates(const worklog::Worklog& log, const Manifest& m, const Device& spec,
                           const std::string& context_key, const std::optional<DeviceInfo>& probed);

// An open tuning session: measured in by the search, chosen from, published. Its clocks stay
// locked (with --lock-clocks) until it is destroyed.
struct Tuning {
  KernelTarget target;
  DeviceInfo probed;
  Preflight preflight;
  std::optional<ClockLock> clock_lock;
  std::vector<Observation> other_gpus_seen;  // the GPUs of --gpus after the first
  std::vector<std::unique_ptr<ClockLock>> other_clock_locks;
  std::optional<worklog::Worklog> log;
  std::int64_t session_id = 0;
  ContextRates context;
  std::uint64_t seed = 0;
  // The grid the searcher walks. The grid strategies (anneal, genetic, forest) keep a reference to
  // it, so it lives here, declared before the searcher, which is destroyed first.
  SearchSpace space;
  std::unique_ptr<Searcher> searcher;
  std::vector<Floor> floors;              // of the listed problems, in order
  std::map<std::string, double> reference_s;  // the silence limit's memory of reference checks
  std::unique_ptr<OnDemandCompiler> compiler;  // with --compile-on-demand
  EvaluationContext ctx;
  std::vector<Gpu> gpus;                  // kiln tune --gpus; empty: the one GPU as before
  // With --gpus; declared last, so that its workers stop before the rest goes.
  std::unique_ptr<MeasuringPool> pool;

  Tuning() = default;
  Tuning(const Tuning&) = delete;
  Tuning& operator=(const Tuning&) = delete;
};

// Identifies what cached measurements stay valid for: the device and its software, the kernel's
// sources, the compiler and its flags, and this version of Kiln's harness; hashed as `version`.
std::string context_key(KeyVersion version, const Manifest& m, const DeviceInfo& probe, const TuneOptions& o);

// The key of the code a context measured: the context key's fields with the C-family sources
// taken as code_text (comments and whitespace out). A session records it, so that a later tuning
// whose sources differ only in comments and layout finds the context it measured.
std::string code_key(const Manifest& m, const DeviceInfo& probe, const TuneOptions& o);

// The context's key and its version: a context the worklog already holds under the current key
// version, else one it holds under version 1 (FNV-1a 64: a worklog from before schema version 6,
// whose rows are found only by their old keys), else the latest context whose sessions recorded
// this code key (the same code, the comments or whitespace changed since), else a new one under
// the current version.
struct ContextKey {
  std::string key;
  KeyVersion version;
  std::string code;      // the code key, for the session to record
  bool by_code = false;  // found by its code key: the sources' bytes differ from the context's
};
ContextKey choose_context_key(const worklog::Worklog& log, const Manifest& m, const DeviceInfo& probe,
                              const TuneOptions& o);

// Opens the tuning: loads, probes, takes the preflight (throws RefusedError when it refuses),
// locks the clocks when asked, and starts the session with the searcher `o.strategy`.
std::unique_ptr<Tuning> open_tuning(const TuneOptions& o, std::ostream& out);

}  // namespace kiln::tuner
