#include "evaluate.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "domain.hpp"
#include "kiln/error.hpp"
#include "kiln/model/json_reader.hpp"
#include "measurement_result.hpp"
#include "process.hpp"
#include "record.hpp"
#include "retry.hpp"
#include "version.hpp"

namespace kiln::tuner {
namespace {

using worklog::FailureKind;
using worklog::MeasurementKey;
using worklog::MeasurementStatus;
using worklog::Phase;

std::string first_lines(const std::string& text, std::size_t max_lines, std::size_t max_chars = 2000) {
  std::string out;
  std::size_t lines = 0;
  for (char c : text) {
    if (out.size() >= max_chars) break;
    out += c;
    if (c == '\n' && ++lines >= max_lines) break;
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

MeasurementKey key_for(const EvaluationContext& ctx, std::size_t index, const std::string& hash, const Problem& p,
                       Phase phase) {
  return {ctx.context_key, ctx.manifest->kernel, ctx.manifest->variants[index].name, hash, p.key(), phase};
}

void note_newest(VariantOutcome& out, const std::string& created_at) {
  if (created_at > out.newest_measurement) out.newest_measurement = created_at;
}

// Why the variant has no executable to run. `verdict`: a build record says its compile failed,
// which the same source, compiler and flags repeat, so it is kept as a compile failure; without
// one (its compiler was killed by a signal, or never ran) nothing about the source is known and
// nothing is kept.
struct BuildFailure {
  std::string detail;
  bool verdict = true;
};

std::optional<BuildFailure> build_failure(const EvaluationContext& ctx, const std::string& variant) {
  std::filesystem::path exe = ctx.variants_dir / variant;
  std::filesystem::path rec = ctx.build_records_dir / (variant + ".json");
  if (std::filesystem::exists(rec)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_text(rec));
    } catch (const nlohmann::json::exception& e) {
      return BuildFailure{"unreadable build record " + rec.string() + ": " + e.what(), true};
    }
    if (j.value("status", std::string{}) != "ok") {
      return BuildFailure{first_lines(failure_excerpt(j.value("log", std::string{}), 12), 12), true};
    }
  }
  if (!std::filesystem::exists(exe)) {
    return BuildFailure{"no executable at " + exe.string() + " (the variant was not built: no build record says why)",
                        false};
  }
  return std::nullopt;
}

}  // namespace

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

ChildResult run_plan(const std::filesystem::path& executable, const model::Plan& plan,
                     const std::filesystem::path& scratch_dir, double timeout_s, const EventHandler& on_event) {
  auto limit = [timeout_s] { return std::chrono::duration<double>(timeout_s); };
  return run_plan(executable, plan, scratch_dir, SilenceLimit(limit), on_event, {});
}

ChildResult run_plan(const std::filesystem::path& executable, const model::Plan& plan,
                     const std::filesystem::path& scratch_dir, const SilenceLimit& limit, const EventHandler& on_event,
                     const Environment& environment, const std::vector<std::string>& launcher,
                     const std::string& command) {
  std::filesystem::create_directories(scratch_dir);
  // One file a run: the same variant can run on several GPUs at once (a domain's points dealt out
  // over them, a variant tied in two buckets), each with its own plan.
  static std::atomic<std::uint64_t> runs{0};
  std::filesystem::path plan_file = scratch_dir / (executable.filename().string() + ".plan." + std::to_string(getpid()) +
                                                   "." + std::to_string(runs++) + ".json");
  write_if_changed(plan_file, model::to_json(plan).dump(2));
  std::size_t line_number = 0;
  auto on_line = [&](const std::string& line) {
    ++line_number;
    // The harness's events are objects, one a line; a launcher (ncu) prints its own lines too.
    if (line.empty() || line.front() != '{') return;
    model::Event event;
    try {
      event = model::parse_event(line, executable.filename().string() + " output line " + std::to_string(line_number));
    } catch (const model::InputError& e) {
      event = model::ErrorEvent{model::HarnessFailure::runtime, std::nullopt, std::nullopt,
                                std::string("the tuner cannot read the variant's event: ") + e.what()};
    }
    on_event(event);
  };
  ChildResult r;
  try {
    std::vector<std::string> argv = launcher;
    for (std::string a : {executable.string(), command, std::string("--plan"), plan_file.string()}) argv.push_back(a);
    r = run_child(argv, limit, on_line, environment);
  } catch (...) {
    std::filesystem::remove(plan_file);
    throw;
  }
  std::filesystem::remove(plan_file);
  return r;
}

Environment pinning_environment() {
  Environment env;
  if (std::getenv("OMP_PROC_BIND") == nullptr) env.emplace_back("OMP_PROC_BIND", "close");
  if (std::getenv("OMP_PLACES") == nullptr) env.emplace_back("OMP_PLACES", "cores");
  return env;
}

std::string problem_set_of(const Manifest& m, int checks_per_problem, KeyVersion version) {
  KeyHasher h(version);
  for (const auto& p : m.problems) h.field("problem").field(p.key());
  for (const auto& p : m.checks) h.field("check").field(p.key());
  // Only with a domain, so the fingerprints of spaces without one stay as they were.
  for (const auto& p : m.coverage) h.field("coverage").field(p.key());
  h.field(std::to_string(checks_per_problem));
  return h.hex();
}

std::string store_failure(const EvaluationContext& ctx, const worklog::VariantKey& key, worklog::FailureKind kind,
                          const std::string& detail, std::optional<double> limit_s, std::optional<double> others_cores) {
  worklog::VariantFailure f;
  f.key = key;
  f.kind = kind;
  f.detail = detail;
  f.session_id = ctx.session_id;
  f.limit_s = limit_s;
  f.others_cores = others_cores;
  f.problem_set = problem_set_of(*ctx.manifest, ctx.checks_per_problem, ctx.key_version);
  f.kiln_version = kiln_version;
  ctx.log->put_variant_failure(f);
  return "failure " + key.context_key + "/" + key.variant + "/" + key.variant_hash + " @" +
         ctx.log->variant_failure(key)->created_at;
}

worklog::MeasurementKey measurement_key(const EvaluationContext& ctx, std::size_t index, const std::string& hash,
                                        const Problem& p, worklog::Phase phase) {
  return key_for(ctx, index, hash, p, phase);
}

double median_of(const worklog::Measurement& m) {
  if (!m.median_s) {
    throw Error("the worklog's timing of " + m.key.variant + " on " + m.key.problem_key + " (context " +
                m.key.context_key + ") has no median_s");
  }
  return *m.median_s;
}

model::Plan plan_for(std::uint64_t run_seed, const Manifest& m, const std::string& variant,
                     const std::vector<Problem>& check, const std::vector<Problem>& bench) {
  model::Plan plan;
  plan.seed = model::plan_seed(run_seed, variant);
  plan.check_seed = run_seed;
  plan.check = check;
  plan.bench = bench;
  plan.tolerance = m.tolerance;
  return plan;
}

model::Plan plan_for(const EvaluationContext& ctx, const std::string& variant, const std::vector<Problem>& check,
                     const std::vector<Problem>& bench) {
  model::Plan plan = plan_for(ctx.seed, *ctx.manifest, variant, check, bench);
  plan.checks_per_problem = ctx.checks_per_problem;
  plan.repetitions = ctx.repetitions;
  plan.min_repetitions = std::min(ctx.repetitions, ctx.min_repetitions);
  plan.settled_spread = ctx.settled_spread;
  plan.repetition_seconds = ctx.repetition_seconds;
  return plan;
}

std::filesystem::path executable_of(const EvaluationContext& ctx, std::size_t index) {
  if (ctx.compiler != nullptr) ctx.compiler->compile({index});
  return ctx.variants_dir / ctx.manifest->variants[index].name;
}

bool needs_run(const EvaluationContext& ctx, std::size_t index) {
  EvaluationContext reading = ctx;
  reading.measure = false;
  const VariantOutcome held = evaluate_variant(reading, index);
  if (!held.complete) return true;
  // A variant that passed but lacks a probe point's time runs when measuring (evaluate_variant
  // adds the probes to its run): like any run, it is compiled with the others in one batch and
  // measured on the pool's GPUs, not one at a time on the tuner's thread.
  if (!ctx.measure || held.failure || !held.score) return false;
  const auto probes = probe_points(*ctx.manifest);
  return std::any_of(probes.begin(), probes.end(), [&](const Problem& p) { return held.median_s.count(p.key()) == 0; });
}

std::string variant_hash(const EvaluationContext& ctx, std::size_t index) {
  return key_hash(ctx.key_version, read_text(ctx.manifest->variants[index].source));
}

namespace {

// Where the variant is, from its events: the stage and the problem, for the silence limit.
struct Position {
  std::string stage;
  const Problem* problem = nullptr;
};

// The silence a step may take: the space's limit, or ten times what the step is expected to
// take (the problem's floor, the reference check seen on other variants, this variant's own
// check run), scaled by how busy the machine was when the run began.
double silence_limit(const EvaluationContext& ctx, const Position& at, const std::map<std::string, double>& run_s,
                     double others_cores) {
  double expected = 0;
  if (at.problem != nullptr) {
    const std::string key = at.problem->key();
    if (auto f = ctx.floor_s.find(key); f != ctx.floor_s.end()) expected = std::max(expected, f->second);
    if (ctx.reference_s != nullptr) {
      if (auto r = ctx.reference_s->find(key); r != ctx.reference_s->end()) expected = std::max(expected, r->second);
    }
    if (auto r = run_s.find(key); r != run_s.end()) expected = std::max(expected, r->second);
  }
  double limit = std::max(ctx.timeout_s, 10 * expected) * (1 + others_cores);
  return std::min(limit, kMaxTimeLimitSeconds);
}

// One child process over `check` then `bench`. Each result is stored the moment it arrives, with
// the quietness of the window it was measured in (measurement_result.hpp); a timing replaces a
// stored one only when it was measured on a quieter machine (the other is kept in it as superseded).
// " while checking rows=3 cols=7", or nothing when the child ended before its first step.
std::string located(const std::string& where) { return where.empty() ? std::string() : " " + where; }

struct RunReport {
  ChildResult child;
  std::optional<FailureKind> reported;
  std::string reported_detail;
  std::optional<std::string> device_fault;  // the device could not be set up: why
  Quietness quietness;                      // over the whole run
  std::vector<Problem> busy;                // timings taken while others were busy
  std::string where;                        // the step the child was in when it ended
};

}  // namespace

std::map<std::string, double> stop_bounds(const EvaluationContext& ctx, std::size_t index,
                                          const std::vector<Problem>& bench) {
  std::map<std::string, double> bounds;
  if (ctx.stop_ratio <= 0 || bench.empty()) return bounds;
  std::map<std::string, double> fastest;
  for (const auto& p : bench) fastest.emplace(p.key(), 0.0);
  const std::string& self = ctx.manifest->variants[index].name;
  // A variant's current source hash, once a variant: a stored timing of an older source of it
  // says nothing about the code that runs now.
  std::map<std::string, std::optional<std::string>> current;
  auto current_hash = [&](const std::string& variant) -> const std::optional<std::string>& {
    auto [it, inserted] = current.try_emplace(variant);
    if (inserted) {
      if (auto i = ctx.manifest->variant_index(variant)) it->second = variant_hash(ctx, *i);
    }
    return it->second;
  };
  for (const auto& t : ctx.log->timed_medians(ctx.context_key, ctx.manifest->kernel)) {
    if (t.variant == self) continue;
    auto f = fastest.find(t.problem_key);
    if (f == fastest.end() || (f->second > 0 && f->second <= t.median_s)) continue;
    const auto& hash = current_hash(t.variant);
    if (hash && *hash == t.variant_hash) f->second = t.median_s;
  }
  // Never within twice the space's regret tolerance: a variant inside it may serve a point of the
  // learned dispatch, and its time is then compared with others at that precision.
  const double ratio = std::max(ctx.stop_ratio, 2 * ctx.manifest->tuning.regret_tolerance);
  for (const auto& [key, seconds] : fastest) {
    if (seconds > 0) bounds[key] = ratio * seconds;
  }
  return bounds;
}

namespace {

RunReport run_once(const EvaluationContext& ctx, std::size_t index, const std::string& hash, VariantOutcome& out,
                   const std::vector<Problem>& check, const std::vector<Problem>& bench) {
  const std::string& name = ctx.manifest->variants[index].name;
  RunReport report;
  Quietness before = ctx.quiet_wait_s > 0 ? ctx.watch.wait_for_quiet(ctx.quiet_wait_s) : Quietness{};
  Position at;
  std::map<std::string, double> run_s;
  std::optional<model::DeviceInfo> device;  // as the variant's process reported it
  CpuReading window = ContentionWatch::read();
  std::size_t window_index = SIZE_MAX;
  auto locate = [&](const std::string& stage, std::size_t i) {
    const auto& list = stage == "check" ? check : bench;
    if ((stage == "check" || stage == "bench") && i < list.size()) at = {stage, &list[i]};
    if (stage == "bench" && i != window_index) {
      window = ContentionWatch::read();
      window_index = i;
    }
  };
  auto on_check = [&](const model::CheckEvent& e) {
    const std::string key = e.problem.key();
    worklog::Measurement meas;
    meas.key = key_for(ctx, index, hash, e.problem, Phase::check);
    meas.status = e.passed ? MeasurementStatus::ok : MeasurementStatus::failed;
    meas.result = model::to_json(e).dump();
    meas.session_id = ctx.session_id;
    run_s[key] = std::max(run_s[key], e.run_s);
    if (ctx.reference_s != nullptr) {
      double& seen = (*ctx.reference_s)[key];
      seen = std::max(seen, e.reference_s);
    }
    ctx.log->put_measurement(meas);
    if (!e.passed && !report.reported) {
      report.reported = FailureKind::correctness;
      report.reported_detail = key + ": " + e.reason.value_or("check failed");
    }
  };
  auto on_bench = [&](const model::BenchEvent& e) {
    const std::string key = e.problem.key();
    Quietness q = ctx.watch.between(window, ContentionWatch::read());
    window = ContentionWatch::read();
    StoredTiming stored{e, q.to_json(), device ? model::to_json(*device) : nlohmann::ordered_json::object(),
                        std::nullopt, {}, std::nullopt};
    worklog::Measurement meas;
    meas.key = key_for(ctx, index, hash, e.problem, Phase::bench);
    meas.status = MeasurementStatus::ok;
    meas.session_id = ctx.session_id;
    meas.median_s = e.median_s;
    meas.spread_s = e.spread_s();
    meas.others_cores = q.others_cores;
    auto previous = ctx.log->measurement(meas.key);
    bool quieter = !previous || !previous->others_cores || q.others_cores < *previous->others_cores;
    if (previous && quieter) stored.superseded = nlohmann::ordered_json::parse(previous->result);
    meas.result = to_json(stored).dump();
    if (quieter) {
      ctx.log->put_measurement(meas);
      out.median_s[key] = e.median_s;
      out.spread_s[key] = e.spread_s();
      out.others_cores[key] = q.others_cores;
    }
    if (!q.quiet) report.busy.push_back(e.problem);
    // The launch shape (grid, block, shared memory) beside the timing, with the SM count, so
    // that a report can flag too few CTAs or an idle last wave without a profiler.
    if (e.launches) {
      std::optional<int> sms;
      if (device && device->sm_count) sms = static_cast<int>(*device->sm_count);
      ctx.log->put_launch_shapes({ctx.context_key, ctx.manifest->kernel, name, hash, key}, sms,
                                 model::to_json(*e.launches).dump(), ctx.session_id);
    }
  };
  auto on_event = [&](const model::Event& event) {
    if (const auto* e = std::get_if<model::ProgressEvent>(&event)) {
      locate(e->stage, e->index);
    } else if (const auto* e = std::get_if<model::StartEvent>(&event)) {
      device = e->device;
    } else if (const auto* e = std::get_if<model::CheckEvent>(&event)) {
      locate("check", e->index);
      on_check(*e);
    } else if (const auto* e = std::get_if<model::BenchEvent>(&event)) {
      locate("bench", e->index);
      on_bench(*e);
    } else if (const auto* e = std::get_if<model::ErrorEvent>(&event); e != nullptr && e->kind == model::HarnessFailure::device) {
      report.device_fault = e->message;
    } else if (e != nullptr && !report.reported) {
      report.reported = e->kind == model::HarnessFailure::compile ? FailureKind::compile : FailureKind::runtime;
      report.reported_detail = e->message;
    }
  };
  auto limit = [&] { return std::chrono::duration<double>(silence_limit(ctx, at, run_s, before.others_cores)); };
  model::Plan plan = plan_for(ctx, name, check, bench);
  plan.stop_above_s = stop_bounds(ctx, index, bench);
  CpuReading start = ContentionWatch::read();
  report.child = run_plan(executable_of(ctx, index), plan, ctx.scratch_dir, SilenceLimit(limit), on_event, ctx.environment);
  report.quietness = ctx.watch.between(start, ContentionWatch::read());
  ctx.watch.note_run(report.quietness);
  report.quietness.others_cores = std::max(report.quietness.others_cores, before.others_cores);
  report.quietness.waited_s = before.waited_s;
  if (at.problem != nullptr) {
    report.where = std::string(at.stage == "check" ? "while checking " : "while timing ") + at.problem->key();
  }
  return report;
}

RunReport run_on_device(const EvaluationContext& ctx, std::size_t index, const std::string& hash, VariantOutcome& out,
                        const std::vector<Problem>& check, const std::vector<Problem>& bench) {
  RunReport run;
  retry_device_setup(ctx, ctx.manifest->variants[index].name, [&] {
    run = run_once(ctx, index, hash, out, check, bench);
    return run.device_fault;
  });
  return run;
}

}  // namespace

void retry_device_setup(const EvaluationContext& ctx, const std::string& what,
                        const std::function<std::optional<std::string>()>& run) {
  constexpr int kAttempts = 3;
  double pause_s = ctx.device_retry_pause_s;
  for (int attempt = 1;; ++attempt) {
    const std::optional<std::string> fault = run();
    if (!fault) return;
    if (attempt == kAttempts) {
      throw RefusedError(what + ": the device could not be set up in " + std::to_string(kAttempts) +
                         " runs of the variant (" + *fault +
                         "); a fault of the machine, not of the variant: nothing is recorded against it, and every "
                         "measurement finished before is in the worklog");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
    pause_s *= 2;
  }
}

std::vector<std::size_t> scored_buckets(const Manifest& m) {
  std::vector<bool> held(m.buckets.size(), false);
  for (const auto& p : m.problems) {
    if (const auto bucket = m.bucket_of(p)) held[*bucket] = true;
  }
  std::vector<std::size_t> buckets;
  for (std::size_t b = 0; b < held.size(); ++b) {
    if (held[b]) buckets.push_back(b);
  }
  return buckets;
}

std::vector<double> bucket_scores(const Manifest& m, const std::map<std::string, double>& median_s) {
  const std::vector<std::size_t> buckets = scored_buckets(m);
  if (buckets.size() < 2) return {};
  std::vector<double> parts;
  for (std::size_t b : buckets) {
    std::vector<double> times;
    for (const auto& p : m.problems) {
      if (m.bucket_of(p) != b) continue;
      const auto it = median_s.find(p.key());
      if (it == median_s.end()) return {};
      times.push_back(it->second);
    }
    parts.push_back(*geomean(times));
  }
  return parts;
}

VariantOutcome evaluate_variant(const EvaluationContext& ctx, std::size_t index) {
  const Manifest& m = *ctx.manifest;
  const std::string& name = m.variants[index].name;
  const std::string hash = variant_hash(ctx, index);
  worklog::VariantKey vkey{ctx.context_key, m.kernel, name, hash};
  const std::string variant_id = ctx.context_key + "/" + name + "/" + hash;
  VariantOutcome out;
  out.index = index;

  if (auto failure = ctx.log->variant_failure(vkey)) {
    RetryDecision decision{false, retry_policy(*failure, ctx.watch.threshold())};
    if (ctx.measure) {
      RunConditions now;
      now.limit_s = ctx.timeout_s;
      // Sampled only when it matters: the failure happened on a busy machine.
      if (failure->others_cores && *failure->others_cores > ctx.watch.threshold()) {
        now.others_cores = ctx.watch.wait_for_quiet(ctx.quiet_wait_s).others_cores;
      }
      now.problem_set = problem_set_of(m, ctx.checks_per_problem, ctx.key_version);
      now.kiln_version = kiln_version;
      now.retry_failed = ctx.retry_failed;
      now.busy_cores = ctx.watch.threshold();
      decision = retry_decision(*failure, now);
    }
    if (!decision.retry) {
      out.failure = failure->kind;
      out.detail = failure->detail;
      out.kept = decision.why;
      out.evidence = "failure " + variant_id + " @" + failure->created_at;
      return out;
    }
    out.retried = decision.why;
  }
  // Reading the worklog only (measure off): compile failures are in it as variant failures already.
  // Compiled on demand, a variant is built (and its build judged) only when it has to run, below.
  auto failed_build = [&]() -> bool {
    auto failed = build_failure(ctx, name);
    if (!failed) return false;
    out.failure = FailureKind::compile;
    out.detail = failed->detail;
    out.evidence = failed->verdict ? store_failure(ctx, vkey, FailureKind::compile, out.detail)
                                   : "not kept: no build record judged the source";
    return true;
  };
  if (ctx.measure && ctx.compiler == nullptr && failed_build()) return out;

  // What the worklog already holds for this context.
  std::vector<Problem> to_check, to_bench;
  std::vector<Problem> all_checks = m.problems;
  all_checks.insert(all_checks.end(), m.checks.begin(), m.checks.end());
  for (const auto& p : all_checks) {
    auto cached = ctx.log->measurement(key_for(ctx, index, hash, p, Phase::check));
    if (!cached) {
      to_check.push_back(p);
      continue;
    }
    note_newest(out, cached->created_at);
    if (cached->status == MeasurementStatus::failed) {
      out.failure = FailureKind::correctness;
      const std::optional<model::CheckEvent> check = stored_check(*cached);
      out.detail = check && check->reason ? *check->reason : "check failed";
      out.evidence = "check " + variant_id + " " + p.key() + " @" + cached->created_at;
      return out;
    }
  }
  // Validated on the problems and checks, timed on the problems (a domain's coverage points are
  // timed on the search's finalists: time_coverage).
  const std::vector<Problem>& bench = m.problems;
  for (const auto& p : bench) {
    auto cached = ctx.log->measurement(key_for(ctx, index, hash, p, Phase::bench));
    if (!cached) {
      to_bench.push_back(p);
      continue;
    }
    note_newest(out, cached->created_at);
    out.median_s[p.key()] = median_of(*cached);
    if (cached->spread_s) out.spread_s[p.key()] = *cached->spread_s;
    if (cached->others_cores) out.others_cores[p.key()] = *cached->others_cores;
  }

  // The domain's probe points (probe_points) are timed with the listed problems but are not part
  // of the score: a worklog without them is complete, and a tuning that measures adds them.
  std::vector<Problem> to_probe;
  for (const auto& p : probe_points(m)) {
    auto cached = ctx.log->measurement(key_for(ctx, index, hash, p, Phase::bench));
    if (!cached) {
      to_probe.push_back(p);
      continue;
    }
    out.median_s[p.key()] = median_of(*cached);
    if (cached->spread_s) out.spread_s[p.key()] = *cached->spread_s;
  }

  if ((!to_check.empty() || !to_bench.empty()) && !ctx.measure) {
    out.complete = false;
    return out;
  }
  if (ctx.measure) to_bench.insert(to_bench.end(), to_probe.begin(), to_probe.end());
  if (!to_check.empty() || !to_bench.empty()) {
    if (ctx.compiler != nullptr) {
      ctx.compiler->compile_for_run(index);
      if (failed_build()) return out;
    }
    out.ran = true;
    RunReport run = run_on_device(ctx, index, hash, out, to_check, to_bench);
    const ChildResult& r = run.child;
    if (r.timed_out) {
      out.failure = FailureKind::timeout;
      out.detail = r.describe() + located(run.where) + "; " + run.quietness.describe() + " during the run";
    } else if (r.signal != 0) {
      out.failure = FailureKind::crash;
      out.detail = r.describe() + located(run.where) + (r.stderr_tail.empty() ? "" : ": " + first_lines(r.stderr_tail, 6));
    } else if (run.reported) {
      out.failure = run.reported;
      out.detail = run.reported_detail;
    } else if (r.exit_code != 0) {
      out.failure = FailureKind::runtime;
      out.detail = r.describe() + located(run.where) + (r.stderr_tail.empty() ? "" : ": " + first_lines(r.stderr_tail, 6));
    }
    if (out.failure) {
      // A correctness failure is cached as a failed check; the others disqualify the variant,
      // with the conditions they happened under, so that a later run can judge a retry.
      if (*out.failure != FailureKind::correctness) {
        // The limit the user sets; the one in force for the step (scaled by its expected time and
        // the machine's load) is in the detail.
        out.evidence = store_failure(ctx, vkey, *out.failure, out.detail, ctx.timeout_s, run.quietness.others_cores);
      } else {
        out.evidence = "check " + variant_id + " in session " + std::to_string(ctx.session_id);
      }
      return out;
    }
    // Timings taken while other processes were busy are taken again, once the machine is quiet
    // or the wait is over; the quieter of the two is kept.
    for (int again = 0; again < ctx.busy_remeasures && !run.busy.empty(); ++again) {
      RunReport retry = run_once(ctx, index, hash, out, {}, run.busy);
      if (!retry.child.exited_cleanly()) break;
      run.busy = retry.busy;
    }
    if (!out.retried.empty()) ctx.log->remove_variant_failure(vkey);
  }

  std::vector<double> medians;
  for (const auto& p : bench) {
    auto it = out.median_s.find(p.key());
    if (it == out.median_s.end()) {
      out.failure = FailureKind::runtime;
      out.detail = "the variant exited without timing " + p.key();
      return out;
    }
    medians.push_back(it->second);
  }
  out.score = geomean(medians);
  std::string newest;
  for (const auto& p : bench) {
    auto meas = ctx.log->measurement(key_for(ctx, index, hash, p, Phase::bench));
    if (meas && meas->created_at > newest) newest = meas->created_at;
  }
  out.evidence = "timing " + variant_id + " @" + newest;
  return out;
}

PointTimes time_points(const EvaluationContext& ctx, std::size_t index, const std::vector<Problem>& points) {
  const std::string hash = variant_hash(ctx, index);
  PointTimes times;
  std::vector<Problem> missing;
  for (const auto& p : points) {
    if (auto cached = ctx.log->measurement(key_for(ctx, index, hash, p, Phase::bench))) {
      times.median_s[p.key()] = median_of(*cached);
    } else {
      missing.push_back(p);
    }
  }
  if (missing.empty() || !ctx.measure) return times;
  times.ran = true;
  VariantOutcome out;
  out.index = index;
  RunReport run = run_on_device(ctx, index, hash, out, {}, missing);
  for (const auto& [key, median] : out.median_s) times.median_s[key] = median;
  if (!run.child.exited_cleanly() || run.reported) {
    times.failure = run.reported ? run.reported_detail : run.child.describe() + located(run.where);
  }
  return times;
}

}  // namespace kiln::tuner
