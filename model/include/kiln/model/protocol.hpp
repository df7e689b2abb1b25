// The protocol between the tuner and a variant process (autotune/harness): the plan file the tuner
// writes and the harness reads, the events the harness prints on its standard output (one JSON
// object a line), and what the probes print about the device. Each type has its one to_json and
// its one reader here, used by both sides. Reading is strict: an unknown key, a missing one or a
// value of the wrong type is an InputError naming the place, "<label>: /bench/0/median_s: ...".
//
// Included by the harness, which variant executables compile as C++17: this header stays C++17.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/problem.hpp"

namespace kiln::model {

class JsonNode;

// The timed work of one repetition, the tuner's default as the plan's. Its floor is the noise a
// decision can bear: three of softmax_cuda's finalists timed twice at its 128 coverage points on
// an H200 (2026-11-30) moved by 0.05 % (median) and 0.22 % (90th percentile) between two 20 ms
// runs and 0.06 % / 0.26 % from 20 ms to 5 ms, against a dispatch tolerance of 5 %, with no winner
// changed; 5 ms took 13.7-24.1 s a variant where 20 ms took 18.2-28.2 s.
inline constexpr double kDefaultRepetitionSeconds = 0.005;

// The work the tuner hands one variant process: which problems to validate, which to time, how.
struct Plan {
  std::uint64_t seed = 1;             // the timed inputs' random seed (plan_seed)
  // The checked inputs' seed: the run's seed alone, the same for every variant of a tuning, so that
  // what one variant's check proves about its inputs holds for the next one's
  // (kiln/reference_store.hpp). Each check mixes in its problem's key and its number.
  std::uint64_t check_seed = 1;
  std::vector<Problem> check;         // validated first; any failure stops the process
  std::vector<Problem> bench;         // then timed, in order
  int checks_per_problem = 1;         // fresh random inputs for each
  // Relative L2 per output dtype: the space's (every dtype present, space_parts.hpp).
  std::map<std::string, double> tolerance;
  int repetitions = 7;
  // Repetitions stop after min_repetitions when their range (max - min) is within settled_spread
  // of their median: more would not move the median past the noise, and a coverage of many
  // points costs repetitions times points. 0: always `repetitions`.
  int min_repetitions = 7;
  double settled_spread = 0;
  double repetition_seconds = kDefaultRepetitionSeconds;  // timed work per repetition
  std::uint64_t max_rotation_bytes = std::uint64_t{4} << 30;
  // Bench problem key -> seconds per call above which its timing stops at its first figure: the
  // tuner's bound for a variant that cannot be among the fastest there (a multiple of the best
  // time it holds for the problem). Problems without one are timed in full.
  std::map<std::string, double> stop_above_s;
};

// The one rule for a plan's seed: the run's seed mixed with the variant's name, so that variants
// are timed on different inputs and the same run sees the same ones again (FNV-1a, the same on every
// platform, unlike std::hash).
std::uint64_t plan_seed(std::uint64_t run_seed, const std::string& variant);

nlohmann::ordered_json to_json(const Plan& plan);
Plan plan_from_json(const JsonNode& node);
Plan read_plan(const std::filesystem::path& file);

// The plan's tolerance for an output of `dtype`; throws kiln::Error for a dtype it does not set.
double tolerance_for(const Plan& plan, const std::string& dtype);

// The machine a variant runs on: what a probe prints (kiln_probe_cpu, kiln_probe_cuda), stored
// with each tuning session, and what a variant process says about its device when it starts.
// Only `backend` and `name` are always there; the rest is what the backend can tell.
struct DeviceInfo {
  std::string backend;  // a backend's name (backend.hpp)
  std::string name;
  std::optional<std::string> compute_capability;  // "9.0"
  std::optional<std::string> driver;              // the NVIDIA driver, "580.159.04"
  std::optional<std::string> cuda_driver_api;     // "13.0"
  std::optional<std::string> cuda_runtime;        // "13.0"
  std::optional<std::int64_t> sm_count;
  std::optional<std::int64_t> threads;            // OpenMP threads
  std::optional<std::int64_t> cache_bytes;        // last-level cache
  std::optional<std::int64_t> max_smem_per_block;
  std::optional<std::int64_t> memory_bytes;
  std::optional<std::vector<std::int64_t>> cpus;  // the CPUs the process may run on
  std::optional<std::string> proc_bind;           // OpenMP's thread binding
  std::optional<std::int64_t> places;             // OpenMP places
  // CPU: the instruction-set extensions the host reports that change what `-march=native` builds
  // and how fast it runs ("avx avx2 fma"); two CPUs of one model name can differ in them (a
  // virtual machine's host), so they are part of a CPU tuning's context.
  std::optional<std::string> isa;
  // Ceilings the probe measured (a device file's rate names, device.hpp), in the probe's order.
  std::vector<std::pair<std::string, double>> measured;
};

nlohmann::ordered_json to_json(const DeviceInfo& device);
DeviceInfo device_info_from_json(const JsonNode& node);
// `text` as JSON (a probe's output, a session's stored device); `label` names it in messages.
DeviceInfo parse_device_info(const std::string& text, const std::string& label);

// `<variant> info`: what the executable is.
struct VariantInfo {
  std::string kernel;
  std::string variant;
  std::string backend;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();  // parameter name -> value
};

nlohmann::ordered_json to_json(const VariantInfo& info);
VariantInfo variant_info_from_json(const JsonNode& node);

// One kernel launch of a variant's run as the GPU harness reads it without running it.
struct LaunchShape {
  std::string kernel;  // demangled; empty when the runtime cannot name it
  std::array<std::int64_t, 3> grid{};
  std::array<std::int64_t, 3> block{};
  std::int64_t ctas = 0;
  std::int64_t threads_per_cta = 0;
  std::int64_t dynamic_shared_bytes = 0;
  // Where the runtime could read the kernel's attributes and occupancy.
  std::optional<std::int64_t> static_shared_bytes;
  std::optional<std::int64_t> registers;
  std::optional<std::int64_t> local_bytes;  // per thread: spills and local arrays
  std::optional<std::int64_t> ctas_per_sm;
};

nlohmann::ordered_json to_json(const LaunchShape& shape);
LaunchShape launch_shape_from_json(const JsonNode& node);
nlohmann::ordered_json to_json(const std::vector<LaunchShape>& shapes);
std::vector<LaunchShape> launch_shapes_from_json(const JsonNode& node);

// "start": the process is up and has its device.
struct StartEvent {
  std::string kernel;
  std::string variant;
  DeviceInfo device;
};

// "progress": the step `step` of problem `index` of stage `stage` ("check", "bench", "profile")
// is done, so that the tuner kills a variant for a lack of progress, not for being slow.
struct ProgressEvent {
  std::string stage;
  std::uint64_t index = 0;
  std::string step;
};

// One output of one check. rel_l2 and max_abs_err are absent when not finite.
struct OutputCheck {
  std::string output;
  std::string dtype;
  std::uint64_t elements = 0;
  std::uint64_t compared = 0;
  std::uint64_t unwritten = 0;
  std::uint64_t non_finite = 0;
  std::optional<double> rel_l2;
  std::optional<double> max_abs_err;
  double tolerance = 0;
  bool passed = false;
};

// "check": one validation of problem `index` of the plan's `check` on fresh inputs.
struct CheckEvent {
  std::uint64_t index = 0;
  Problem problem;
  std::uint64_t seed = 0;
  bool passed = false;
  double run_s = 0;        // the variant's run
  double reference_s = 0;  // the reference's check
  std::vector<OutputCheck> outputs;
  std::optional<std::string> reason;  // why it failed: which output, which element
};

// "bench": the timing of problem `index` of the plan's `bench`, seconds per launch.
struct BenchEvent {
  std::uint64_t index = 0;
  Problem problem;
  double median_s = 0;
  double q1_s = 0;
  double q3_s = 0;
  std::vector<double> samples_s;  // each repetition
  double mean_s = 0;
  double min_s = 0;
  double stddev_s = 0;
  std::uint64_t repetitions = 0;
  std::uint64_t iterations = 0;  // batches per repetition
  std::uint64_t batch = 0;       // launches per batch
  std::uint64_t rotation = 0;    // input sets the launches rotate through
  std::string method;            // how a batch is timed: "cuda-graph", "steady-clock"...
  std::optional<std::vector<LaunchShape>> launches;
  // Set: the timing stopped at its first figure (the calibration's single launches, or one
  // repetition) because that was above the plan's bound for the problem; fewer samples.
  std::optional<double> stopped_above_s;

  double spread_s() const { return q3_s - q1_s; }  // the interquartile range
};

// "profiled": problem `index` of the plan's `bench` ran once inside the profiler's range.
struct ProfiledEvent {
  std::uint64_t index = 0;
  Problem problem;
  std::optional<std::vector<LaunchShape>> launches;
};

// "error": the variant could not go on. `compile`: its source did not compile (the executable is
// the harness alone); `runtime`: the device or the workload failed in `stage` (on problem `index`);
// `device`: the device could not be set up, so nothing of the variant ran (a fault of the machine,
// never evidence against the variant).
enum class HarnessFailure { compile, runtime, device };
const char* to_string(HarnessFailure kind);

struct ErrorEvent {
  HarnessFailure kind = HarnessFailure::runtime;
  std::optional<std::string> stage;
  std::optional<std::uint64_t> index;
  std::string message;
};

// "done": every problem of the plan was checked and timed (or profiled).
struct DoneEvent {};

using Event = std::variant<StartEvent, ProgressEvent, CheckEvent, BenchEvent, ProfiledEvent, ErrorEvent, DoneEvent>;

nlohmann::ordered_json to_json(const Event& event);
Event event_from_json(const JsonNode& node);
// One line of a variant's standard output; `label` names it in messages.
Event parse_event(const std::string& line, const std::string& label);

}  // namespace kiln::model
