// main() of every variant executable.
//
//   <variant> info               one JSON object: kernel, variant, backend, parameters
//   <variant> run --plan FILE    validates then times the plan's problems; one JSON line per event
//   <variant> profile --plan FILE  runs each of the plan's bench problems once more inside a profiler
//                                  range (for `ncu --profile-from-start off`), after one warm-up run
//
// Events go to the original standard output; anything the kernel's code prints is redirected to
// standard error so it cannot corrupt the protocol. Between the results, "progress" events say
// which step of which problem the variant is in, so that the tuner kills a variant for a lack of
// progress, not for being slow. Exit codes: 0 all passed and timed,
// 1 a check failed (nothing is timed: a wrong variant never wins), 2 bad usage,
// 3 the device reported an error, 4 the variant's source did not compile, 5 the device could not
// be set up (nothing of the variant ran).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "device.hpp"
#include "kiln/counter_random.hpp"
#include "kiln/hash.hpp"
#include "kiln/model/protocol.hpp"
#include "kiln/quantile.hpp"
#include "kiln/variant.hpp"

// Linked in a kernel's template executable, which has no variant: the build compiles it only to
// capture the command lines every variant is then built with (cmake/Kiln.cmake).
__attribute__((weak)) const kiln::VariantEntry* kiln_variant_entry() { return nullptr; }

namespace kiln::harness {
namespace {

using model::Plan;

FILE* protocol = stdout;

void write_line(const nlohmann::ordered_json& object) {
  std::string line = object.dump();
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), protocol);
  std::fflush(protocol);
}

void emit(const model::Event& event) { write_line(model::to_json(event)); }

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A progress event: the stage ("check", "bench"), the problem's index in it, and the step
// finished. Steps that repeat quickly (timed batches) report at most every quarter second.
class ProgressReporter {
 public:
  void step(const char* stage, std::size_t index, const char* step, bool throttled = false) {
    if (throttled && seconds_since(last_) < 0.25) return;
    last_ = Clock::now();
    emit(model::ProgressEvent{stage, index, step});
  }

 private:
  Clock::time_point last_ = Clock::now();
};

ProgressReporter progress;

// Keeps the protocol stream for events and sends fd 1 to stderr for everything else.
void isolate_protocol_stream() {
  int fd = dup(STDOUT_FILENO);
  if (fd >= 0) {
    FILE* f = fdopen(fd, "w");
    if (f != nullptr) {
      protocol = f;
      std::fflush(stdout);
      dup2(STDERR_FILENO, STDOUT_FILENO);
    }
  }
}

// A seed from a plan's seed and two counters (the problem, the check or the input set).
std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  return random::mix64(seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full));
}

// Fresh inputs, poisoned outputs, one run, full check. Returns whether every output passed.
// The fastest check run of each problem is kept in `run_s` (by key) for its timing.
bool check_problem(const VariantEntry& entry, Device& device, const Plan& plan, const Problem& problem,
                   std::size_t index, std::map<std::string, double>& checked_run_s) {
  bool all_passed = true;
  // By the problem's key, not its place in this plan: another process checking it among other
  // problems makes the same inputs.
  const std::uint64_t problem_hash = Fnv1a64().field(problem.key()).value();
  for (int k = 0; k < plan.checks_per_problem; ++k) {
    std::uint64_t seed = mix(plan.check_seed, problem_hash, static_cast<std::uint64_t>(k));
    auto workload = entry.make(problem, seed);
    workload->poison();
    device.synchronize();
    progress.step("check", index, "inputs");
    auto run_start = Clock::now();
    entry.run(*workload, device.stream());
    device.check_launch();
    device.synchronize();
    double run_s = seconds_since(run_start);
    progress.step("check", index, "run");
    if (auto [it, added] = checked_run_s.try_emplace(problem.key(), run_s); !added) it->second = std::min(it->second, run_s);
    auto reference_start = Clock::now();
    std::vector<CheckResult> results = workload->check();
    double reference_s = seconds_since(reference_start);
    if (results.empty()) throw Error("the workload's check() compared no output");

    model::CheckEvent event;
    event.index = index;
    event.problem = problem;
    event.seed = seed;
    event.run_s = run_s;
    event.reference_s = reference_s;
    std::string reason;
    for (const auto& r : results) {
      double tol = model::tolerance_for(plan, r.dtype);
      bool passed = r.unwritten == 0 && r.non_finite == 0 && r.compared > 0 && std::isfinite(r.rel_l2) &&
                    r.rel_l2 <= tol;
      if (!passed && reason.empty()) {
        if (r.unwritten > 0) {
          reason = std::to_string(r.unwritten) + " of " + std::to_string(r.elements) + " elements of '" +
                   r.output + "' were never written (the first at element " + std::to_string(r.first_unwritten_at) + ")";
        } else if (r.non_finite > 0) {
          reason = std::to_string(r.non_finite) + " elements of '" + r.output + "' are NaN or infinite (the first at element " +
                   std::to_string(r.first_non_finite_at) + ")";
        } else if (r.compared == 0) {
          reason = "no element of '" + r.output + "' was compared with the reference";
        } else {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "relative L2 error of '%s' is %.3g, above the %s tolerance %.3g (largest error at element "
                        "%lld: %.6g where the reference is %.6g)",
                        r.output.c_str(), r.rel_l2, r.dtype.c_str(), tol, static_cast<long long>(r.worst_at),
                        r.worst_value, r.worst_reference);
          reason = buf;
        }
      }
      all_passed = all_passed && passed;
      model::OutputCheck o;
      o.output = r.output;
      o.dtype = r.dtype;
      o.elements = r.elements;
      o.compared = r.compared;
      o.unwritten = r.unwritten;
      o.non_finite = r.non_finite;
      if (std::isfinite(r.rel_l2)) o.rel_l2 = r.rel_l2;
      if (std::isfinite(r.max_abs_err)) o.max_abs_err = r.max_abs_err;
      o.tolerance = tol;
      o.passed = passed;
      event.outputs.push_back(o);
    }
    event.passed = reason.empty();
    if (!reason.empty()) event.reason = reason;
    emit(event);
    if (!reason.empty()) return false;
  }
  return all_passed;
}

// Collects each repetition's seconds per launch from Google Benchmark.
class CollectingReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations <= 0) continue;
      seconds.push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
    }
  }
  std::vector<double> seconds;
};

// The timing of one problem from its samples (seconds per launch, one per repetition).
model::BenchEvent timing_event(std::size_t index, const Problem& problem, const std::vector<double>& s,
                               std::uint64_t iterations, std::uint64_t batch, std::uint64_t rotation,
                               const std::string& method, const std::optional<std::vector<model::LaunchShape>>& launches,
                               std::optional<double> stopped_above_s) {
  double mean = 0;
  for (double x : s) mean += x;
  mean /= static_cast<double>(s.size());
  double var = 0;
  for (double x : s) var += (x - mean) * (x - mean);
  model::BenchEvent event;
  event.index = index;
  event.problem = problem;
  event.median_s = quantile(s, 0.5);
  event.q1_s = quantile(s, 0.25);
  event.q3_s = quantile(s, 0.75);
  event.samples_s = s;
  event.mean_s = mean;
  event.min_s = *std::min_element(s.begin(), s.end());
  event.stddev_s = s.size() > 1 ? std::sqrt(var / static_cast<double>(s.size() - 1)) : 0.0;
  event.repetitions = s.size();
  event.iterations = iterations;
  event.batch = batch;
  event.rotation = rotation;
  event.method = method;
  event.launches = launches;
  event.stopped_above_s = stopped_above_s;
  return event;
}

// A check run this far over the tuner's bound, and this long, is the timing's one figure. A first
// run of a workload can be much slower than the runs after it (a module loaded, scratch allocated
// and its pages touched, threads started: topk_cpu's first launch of a 3 x 65537 problem took 3.2
// ms against 0.045 ms after it), so a warm-up is never taken as a figure; from a second up such
// costs are a small part of a run, and three times over a bound of three times the fastest time
// is nine times behind it.
constexpr double kFirstRunMargin = 3;
constexpr double kCheckRunAtLeast = 1.0;

void bench_problem(const VariantEntry& entry, Device& device, const Plan& plan, const Problem& problem,
                   std::size_t index, const std::map<std::string, double>& checked_run_s) {
  const auto bound = plan.stop_above_s.find(problem.key());
  const std::optional<double> stop_above =
      bound == plan.stop_above_s.end() ? std::nullopt : std::optional<double>(bound->second);
  auto first_over_bound = [&](double seconds) { return stop_above && seconds > kFirstRunMargin * *stop_above; };
  // Its check, in this process, already took that long: the variant is no candidate here, and
  // nothing of it runs again (a single-block top-k over a 2^30-element row takes seconds a run).
  if (auto c = checked_run_s.find(problem.key());
      c != checked_run_s.end() && c->second >= kCheckRunAtLeast && first_over_bound(c->second)) {
    emit(timing_event(index, problem, {c->second}, 1, 1, 1, "check run", std::nullopt, stop_above));
    return;
  }
  // Rotate through enough input sets that together they exceed four times the last-level cache,
  // so each launch reads its inputs from memory as it would in a real program.
  std::vector<std::unique_ptr<Workload>> workloads;
  workloads.push_back(entry.make(problem, mix(plan.seed, 1000 + index, 0)));
  std::size_t footprint = std::max<std::size_t>(workloads[0]->footprint_bytes(), 1);
  std::size_t wanted = (4 * device.cache_bytes() + footprint - 1) / footprint;
  std::size_t affordable = std::max<std::size_t>(plan.max_rotation_bytes / footprint, 1);
  std::size_t rotation = std::clamp<std::size_t>(std::min(wanted, affordable), 1, 4096);

  auto launch = [&](int i) { entry.run(*workloads[static_cast<std::size_t>(i) % workloads.size()], device.stream()); };

  // Warm-up on the first input set: load the module, surface launch failures, then time one launch.
  launch(0);
  device.check_launch();
  device.synchronize();
  progress.step("bench", index, "warm-up", true);
  // How the variant launches (grid, block, shared memory), read from a capture that runs nothing.
  const std::optional<std::vector<model::LaunchShape>> launches = device.launch_shapes(launch);
  // A variant whose single launch is above the tuner's bound is no candidate here, and its
  // figure needs no more precision. Decided on single launches only from a millisecond up, where
  // the launch's own overhead is under a percent; they run on a warm cache, which can only make
  // them faster than the timed batches would be, so the warm cache never passes the bound.
  auto single_over_bound = [&](double seconds) { return stop_above && seconds > *stop_above && seconds >= 1e-3; };
  double single = 1e300;
  std::vector<double> singles;
  std::string single_method;
  {
    auto one = device.prepare_batch(launch, 1);
    single_method = one->method();
    // The fastest of three, or one launch when it takes over 10 ms (a 2^20-body N-body step
    // takes half a second: its launch noise is nothing, and a calibration needs no more).
    for (int k = 0; k < 3 && (k == 0 || (single <= 0.01 && !single_over_bound(single))); ++k) {
      singles.push_back(one->run_seconds());
      single = std::min(single, singles.back());
    }
  }
  single = std::max(single, 1e-7);
  if (single_over_bound(single)) {
    emit(timing_event(index, problem, singles, 1, 1, 1, single_method, launches, stop_above));
    return;
  }
  // Launches too long to cover every input set in a quarter second need no rotation to defeat the
  // cache: they move their inputs at under 1 GB/s (four caches' worth of sets take over a quarter
  // second), so where the inputs come from does not show. Making and touching the sets would cost
  // seconds per problem (280 sets of 38 ms for a CPU N-body of 16384 bodies), and a partial cover
  // would only multiply the timed work of every repetition.
  if (static_cast<double>(rotation) * single > 0.25) rotation = 1;
  for (std::size_t k = 1; k < rotation; ++k) {
    std::unique_ptr<Workload> set = workloads[0]->copy();
    workloads.push_back(set ? std::move(set) : entry.make(problem, mix(plan.seed, 1000 + index, k)));
    progress.step("bench", index, "inputs", true);
  }
  progress.step("bench", index, "inputs");
  // Touch every other input set once before timing.
  for (std::size_t k = 1; k < rotation; ++k) {
    launch(static_cast<int>(k));
    device.check_launch();
    progress.step("bench", index, "warm-up", true);
  }
  device.synchronize();
  progress.step("bench", index, "warm-up");
  // A batch long enough to time well and covering every input set, so that small problems are
  // read from memory rather than from a cache a single input set would fit in.
  int count = static_cast<int>(std::clamp(std::ceil(device.batch_target_seconds() / single), 1.0, 10000.0));
  count = std::max(count, static_cast<int>(rotation));
  auto batch = device.prepare_batch(launch, count);
  double batch_seconds = batch->run_seconds();
  device.synchronize();
  progress.step("bench", index, "calibrated");
  auto iterations = static_cast<benchmark::IterationCount>(
      std::clamp(std::ceil(plan.repetition_seconds / std::max(batch_seconds, 1e-9)), 1.0, 100000.0));

  // Repetitions in rounds: the first min_repetitions, then the rest only while they disagree.
  std::string failure;
  CollectingReporter reporter;
  auto repeat = [&](int repetitions) {
    benchmark::RegisterBenchmark(problem.key().c_str(),
                                 [&](benchmark::State& state) {
                                   for (auto _ : state) {
                                     try {
                                       state.SetIterationTime(batch->run_seconds() / count);
                                       progress.step("bench", index, "batch", true);
                                     } catch (const std::exception& e) {
                                       failure = e.what();
                                       state.SkipWithError("device error");
                                       break;
                                     }
                                   }
                                 })
        ->UseManualTime()
        ->Iterations(iterations)
        ->Repetitions(repetitions)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::ClearRegisteredBenchmarks();
    if (!failure.empty()) throw RuntimeError(failure);
  };
  // With a bound, the first repetition alone decides whether the rest are worth taking.
  bool stopped = false;
  if (stop_above) {
    repeat(1);
    stopped = !reporter.seconds.empty() && reporter.seconds.front() > *stop_above;
    if (!stopped && plan.min_repetitions > 1) repeat(plan.min_repetitions - 1);
  } else {
    repeat(plan.min_repetitions);
  }
  if (!stopped && plan.min_repetitions < plan.repetitions && !settled(reporter.seconds, plan.settled_spread)) {
    repeat(plan.repetitions - plan.min_repetitions);
  }
  device.synchronize();
  if (reporter.seconds.empty()) throw RuntimeError("Google Benchmark reported no repetition");
  emit(timing_event(index, problem, reporter.seconds, static_cast<std::uint64_t>(iterations),
                    static_cast<std::uint64_t>(count), rotation, batch->method(), launches,
                    stopped ? stop_above : std::nullopt));
}

// One warm-up run (it loads the module and touches the inputs), then one run inside the profiler
// range: a profiler attached with --profile-from-start off measures the variant's kernels alone,
// not the ones that filled its inputs.
void profile_problem(const VariantEntry& entry, Device& device, const Plan& plan, const Problem& problem,
                     std::size_t index) {
  auto workload = entry.make(problem, mix(plan.seed, 2000 + index, 0));
  device.synchronize();
  progress.step("profile", index, "inputs");
  auto launch = [&](int) { entry.run(*workload, device.stream()); };
  launch(0);
  device.check_launch();
  device.synchronize();
  progress.step("profile", index, "warm-up");
  const std::optional<std::vector<model::LaunchShape>> launches = device.launch_shapes(launch);
  device.profile_range(true);
  launch(0);
  device.check_launch();
  device.profile_range(false);
  emit(model::ProfiledEvent{index, problem, launches});
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s info | run --plan FILE | profile --plan FILE\n", argv0);
  return 2;
}

int run(int argc, char** argv) {
  const VariantEntry* entry = kiln_variant_entry();
  if (argc < 2) return usage(argv[0]);
  std::string command = argv[1];
  if (entry == nullptr) {
    emit(model::ErrorEvent{model::HarnessFailure::compile, std::nullopt, std::nullopt,
                           "this variant's source did not compile; its build record has the compiler's output"});
    return 4;
  }
  if (command == "info") {
    const model::VariantInfo info{entry->kernel, entry->name, entry->backend,
                                  nlohmann::ordered_json::parse(entry->params_json)};
    write_line(model::to_json(info));
    return 0;
  }
  if ((command != "run" && command != "profile") || argc != 4 || std::strcmp(argv[2], "--plan") != 0) {
    return usage(argv[0]);
  }

  Plan plan;
  try {
    plan = model::read_plan(argv[3]);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  std::string stage = "device setup";
  std::size_t index = 0;
  try {
    auto device = make_device();
    emit(model::StartEvent{entry->kernel, entry->name, device->describe()});
    if (command == "profile") {
      stage = "profile";
      for (index = 0; index < plan.bench.size(); ++index) profile_problem(*entry, *device, plan, plan.bench[index], index);
      emit(model::DoneEvent{});
      return 0;
    }
    stage = "check";
    std::map<std::string, double> checked_run_s;
    for (index = 0; index < plan.check.size(); ++index) {
      if (!check_problem(*entry, *device, plan, plan.check[index], index, checked_run_s)) return 1;
    }
    stage = "bench";
    for (index = 0; index < plan.bench.size(); ++index) {
      bench_problem(*entry, *device, plan, plan.bench[index], index, checked_run_s);
    }
  } catch (const std::exception& e) {
    // Before the device is set up nothing of the variant has run: the fault is the machine's.
    if (stage == "device setup") {
      emit(model::ErrorEvent{model::HarnessFailure::device, stage, std::nullopt, e.what()});
      return 5;
    }
    emit(model::ErrorEvent{model::HarnessFailure::runtime, stage, index, e.what()});
    return 3;
  }
  emit(model::DoneEvent{});
  return 0;
}

}  // namespace
}  // namespace kiln::harness

int main(int argc, char** argv) {
  kiln::harness::isolate_protocol_stream();
  return kiln::harness::run(argc, argv);
}
