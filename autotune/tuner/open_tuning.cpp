#include "open_tuning.hpp"

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <optional>
#include <set>
#include <ostream>
#include <thread>
#include <vector>

#include "cache_key.hpp"
#include "code_text.hpp"
#include "kiln/error.hpp"
#include "kiln/model/backend.hpp"
#include "kiln/reference_store.hpp"
#include "measuring_pool.hpp"
#include "numbers.hpp"
#include "process.hpp"
#include "source_closure.hpp"
#include "version.hpp"

namespace kiln::tuner {
namespace {

// The machine's state before measuring. While other processes use the GPU, waits up to
// busy_gpu_wait_s for them to leave; with allow_busy_gpu their presence only degrades the verdict.
Preflight take_preflight(const TuneOptions& o, const std::string& backend, const Device& spec, std::ostream& out,
                         const std::optional<std::string>& gpu = std::nullopt) {
  Preflight pf = judge(observe(backend, &spec, gpu));
  auto start = std::chrono::steady_clock::now();
  bool told = false;
  while (!o.allow_busy_gpu && pf.refused_only_for_busy_gpu() &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < o.busy_gpu_wait_s) {
    if (!told) out << "kiln: other processes use the GPU; waiting up to " << o.busy_gpu_wait_s << " s for them to leave\n";
    told = true;
    std::this_thread::sleep_for(std::chrono::seconds(2));
    if (interrupted()) throw Interrupted(SIGINT);
    pf = judge(observe(backend, &spec, gpu));
  }
  if (o.allow_busy_gpu) {
    for (auto& f : pf.findings) {
      if (f.code != "gpu_busy") continue;
      f.level = Readiness::degraded;
      f.text += " (tuning anyway: --allow-busy-gpu)";
    }
  }
  return pf;
}

// Throws RefusedError with the findings that refuse the machine.
void require_ready(const Preflight& preflight, const std::string& kernel) {
  if (preflight.verdict() != Readiness::refuse) return;
  std::string why = "the preflight refuses to tune " + kernel + " on this machine";
  for (const auto& f : preflight.findings) {
    if (f.level == Readiness::refuse) why += "; " + f.text;
  }
  if (preflight.refused_only_for_busy_gpu()) why += " (wait for them to finish, or pass --allow-busy-gpu)";
  throw RefusedError(why);
}

// The GPUs of kiln tune --gpus, each judged by the preflight like the one GPU of a plain tuning:
// the first GPU's preflight is the session's, and what the others' say of their GPU is added to
// it, each finding naming its GPU.
void take_gpu_preflights(Tuning& t, const TuneOptions& o, std::ostream& out) {
  const Manifest& m = t.target.manifest;
  t.preflight = take_preflight(o, m.backend, t.target.spec, out, t.gpus.front().index);
  out << t.preflight.text();
  require_ready(t.preflight, m.kernel);
  for (std::size_t i = 1; i < t.gpus.size(); ++i) {
    Preflight other = take_preflight(o, m.backend, t.target.spec, out, t.gpus[i].index);
    out << other.text();
    require_ready(other, m.kernel);
    t.other_gpus_seen.push_back(other.seen);
    for (const auto& f : other.findings) {
      if (f.code.rfind("cpu_", 0) == 0) continue;  // the same machine's CPU, said once
      Finding named = f;
      named.text = describe(t.gpus[i]) + ": " + f.text;
      t.preflight.findings.push_back(std::move(named));
    }
  }
}

// Clocks held for the whole session, given back when it ends however it ends.
void hold_clocks(Tuning& t, bool lock, std::ostream& out) {
  if (model::backend_named(t.target.manifest.backend).processor != model::Processor::nvidia_gpu) return;
  if (!lock) {
    t.preflight.clocks_locked = false;
    t.preflight.clocks_note = "not asked (kiln tune --lock-clocks)";
    return;
  }
  t.clock_lock.emplace(t.preflight.seen);
  t.preflight.clocks_locked = t.clock_lock->locked();
  t.preflight.clocks_note = t.clock_lock->note();
  out << "kiln: clocks " << (t.clock_lock->locked() ? "locked" : "not locked") << ": " << t.clock_lock->note() << "\n";
  // The other GPUs of --gpus: locked too, or the session says which were not.
  for (const auto& seen : t.other_gpus_seen) {
    const ClockLock& lock = *t.other_clock_locks.emplace_back(std::make_unique<ClockLock>(seen));
    out << "kiln: GPU " << seen.gpu_index << " clocks " << (lock.locked() ? "locked" : "not locked") << ": " << lock.note()
        << "\n";
    if (!lock.locked()) {
      t.preflight.clocks_locked = false;
      t.preflight.clocks_note += "; GPU " + seen.gpu_index + ": " + lock.note();
    }
  }
}

}  // namespace

namespace {

// The sources as a key reads them (the listed ones and what they include from the kernel's
// folders, source_closure.hpp): each file's name and bytes, and its code_text when it is C, C++ or
// CUDA (read once for the keys a tuning compares).
struct SourceText {
  std::string name, bytes, code;
};

std::vector<SourceText> read_sources(const TuneOptions& o) {
  std::vector<SourceText> texts;
  for (const auto& source : source_closure(o.sources, o.include_dirs)) {
    SourceText t{source.filename().string(), read_text(source), ""};
    t.code = is_c_family_source(source) ? code_text(t.bytes) : t.bytes;
    texts.push_back(std::move(t));
  }
  return texts;
}

// The context's fields; `code` hashes the code_text of C-family sources (and says so first, so
// that a code key is never a context key) where the context key hashes every source's bytes.
std::string hash_context(KeyVersion version, const Manifest& m, const DeviceInfo& probe, const TuneOptions& o,
                         const std::vector<SourceText>& sources, bool code) {
  KeyHasher h(version);
  if (code) h.field("code key");
  h.field(m.kernel).field(m.backend).field(probe.name).field(probe.compute_capability.value_or(""));
  h.field(probe.driver.value_or("")).field(probe.cuda_runtime.value_or("")).field(kiln_version);
  for (const SourceText& source : sources) h.field(source.name).field(code ? source.code : source.bytes);
  if (o.flags_file) h.field(read_text(*o.flags_file));
  // Appended, and only where the probe reports it (CPUs): a GPU's key is the one it always was.
  if (probe.isa) h.field("isa").field(*probe.isa);
  return h.hex();
}

}  // namespace

std::string context_key(KeyVersion version, const Manifest& m, const DeviceInfo& probe, const TuneOptions& o) {
  return hash_context(version, m, probe, o, read_sources(o), false);
}

std::string code_key(const Manifest& m, const DeviceInfo& probe, const TuneOptions& o) {
  return hash_context(current_key_version, m, probe, o, read_sources(o), true);
}

ContextKey choose_context_key(const worklog::Worklog& log, const Manifest& m, const DeviceInfo& probe,
                              const TuneOptions& o) {
  const std::vector<SourceText> sources = read_sources(o);
  const std::string current = hash_context(current_key_version, m, probe, o, sources, false);
  const std::string old = hash_context(KeyVersion::fnv1a64, m, probe, o, sources, false);
  const std::string code = hash_context(current_key_version, m, probe, o, sources, true);
  bool has_old = false, has_current = false;
  // The context of the newest session that measured this code, found by the sources' bytes or by
  // its code key: sources whose comments went back and forth leave two contexts of one code, and
  // the newest holds the tuning to continue (attention_decode_d64, 2026-11-30: an early session of
  // these bytes with four variants measured was taken over the complete context of the same code,
  // and all 44 variants were measured again).
  std::optional<ContextKey> newest;
  for (const auto& s : log.sessions()) {
    if (s.kernel != m.kernel) continue;
    if (s.context_key == current) {
      has_current = true;
      newest = ContextKey{current, current_key_version, code, false};
    } else if (s.code_key == code) {
      newest = ContextKey{s.context_key, key_version_from(s.key_version), code, true};
    }
    if (s.context_key == old && s.key_version == static_cast<int>(KeyVersion::fnv1a64)) has_old = true;
  }
  if (!has_current && has_old) return {old, KeyVersion::fnv1a64, code, false};
  if (newest) return *newest;
  return {current, current_key_version, code, false};
}

KernelTarget load_target(const std::filesystem::path& manifest, const std::filesystem::path& device_file) {
  KernelTarget t{load_manifest(manifest), load_device(device_file)};
  if (t.spec.backend != t.manifest.backend) {
    throw Error(device_file.string() + " is a " + t.spec.backend + " device file; kernel " + t.manifest.kernel + " is a " +
                t.manifest.backend + " kernel");
  }
  return t;
}

DeviceInfo probe_matching(const Device& spec, const std::filesystem::path& probe, const Environment& environment,
                          bool describe_only) {
  DeviceInfo found = run_probe(probe, model::backend_named(spec.backend), environment, describe_only);
  if (auto why = mismatch(spec, found)) throw Error(*why);
  return found;
}

ContextRates context_rates(const worklog::Worklog& log, const Manifest& m, const Device& spec,
                           const std::string& context_key, const std::optional<DeviceInfo>& probed) {
  std::optional<DeviceInfo> device = context_device(log, m.kernel, context_key);
  if (!device) device = probed;
  if (!device) throw Error("the worklog has no session of context " + context_key + " tuning " + m.kernel);
  return {*device, effective_rates(spec, *device)};
}

std::unique_ptr<Tuning> open_tuning(const TuneOptions& o, std::ostream& out) {
  auto t = std::make_unique<Tuning>();
  t->target = load_target(o.manifest, o.device_spec);
  const Manifest& m = t->target.manifest;
  const Device& spec = t->target.spec;
  Environment first_gpu;
  if (!o.gpus.empty()) {
    if (model::backend_named(m.backend).processor != model::Processor::nvidia_gpu) {
      throw Error("--gpus " + o.gpus + ": " + m.kernel + " is a " + m.backend + " kernel; --gpus chooses the GPUs of CUDA kernels");
    }
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    t->gpus = select_gpus(parse_gpu_request(o.gpus), gpus_here(),
                          visible != nullptr ? std::optional<std::string>(visible) : std::nullopt);
    pin_to_gpu(first_gpu, t->gpus.front());
  }
  // What the device is decides the context; its rates are measured only for a context the
  // worklog has no session of (context_rates takes the first session's), so a warm re-run
  // measures nothing, not even the machine.
  t->probed = probe_matching(spec, o.probe, first_gpu, true);

  if (t->gpus.empty()) {
    t->preflight = take_preflight(o, m.backend, spec, out);
    out << t->preflight.text();
    require_ready(t->preflight, m.kernel);
  } else {
    take_gpu_preflights(*t, o, out);
  }
  hold_clocks(*t, o.lock_clocks, out);

  t->log = worklog::Worklog::open(o.worklog);
  const ContextKey chosen = choose_context_key(*t->log, m, t->probed, o);
  const std::string& ctx_key = chosen.key;
  if (chosen.by_code) {
    out << "kiln: " << m.kernel << ": the sources differ from those of context " << ctx_key
        << " in comments and whitespace only: its measurements stand\n";
  }
  if (!context_device(*t->log, m.kernel, ctx_key)) {
    t->probed = probe_matching(spec, o.probe, first_gpu);
    // Say when the worklog's earlier measurements of the kernel do not count here, and how many
    // files the sources' key read: a forgotten header, an edit or another compiler all look alike
    // from the outside, as a tuning that measures everything again.
    std::set<std::string> earlier;
    for (const auto& s : t->log->sessions()) {
      if (s.kernel == m.kernel) earlier.insert(s.context_key);
    }
    if (!earlier.empty()) {
      out << "kiln: " << m.kernel << ": a new context " << ctx_key << " (" << source_closure(o.sources, o.include_dirs).size()
          << " source files keyed): the sources, compiler, flags, device or Kiln differ from the " << earlier.size()
          << " context" << (earlier.size() == 1 ? "" : "s") << " of " << m.kernel
          << " the worklog holds, so every variant is measured afresh\n";
    }
  }
  t->context = context_rates(*t->log, m, spec, ctx_key, t->probed);

  t->seed = o.seed != 0 ? o.seed : static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  t->space = SearchSpace::from(m);
  // The space's own search unless the command line named one; a budget given there still applies.
  std::string strategy = o.strategy;
  StrategyOptions options = o.strategy_options;
  if (!o.strategy_given && !o.shard && !m.tuning.search.empty()) {
    strategy = m.tuning.search;
    if (!m.tuning.budget.empty() && options.values().count("budget") == 0) options.set("budget", m.tuning.budget);
    for (const auto& [key, value] : m.tuning.search_options) {
      if (options.values().count(key) == 0) options.set(key, value);
    }
  }
  t->searcher = make_searcher(strategy, t->space, options, t->seed);
  if (o.shard) t->searcher = shard_searcher(std::move(t->searcher), m, *o.shard);

  worklog::Session session;
  session.kernel = m.kernel;
  session.strategy = t->searcher->name();
  session.device = model::to_json(t->context.device).dump();
  session.context_key = ctx_key;
  session.key_version = static_cast<int>(chosen.version);
  session.code_key = chosen.code;
  session.kiln_version = kiln_version;
  session.note = "device file " + spec.name + ", seed " + std::to_string(t->seed);
  // How far behind a timing stops at its first figure: it decides how many samples a slow
  // variant's timing holds, so the session says it.
  session.note += o.stop_ratio > 0 ? ", stop ratio " + fixed(o.stop_ratio, 2) : ", every timing in full";
  if (o.shard) session.note += ", shard " + o.shard->text();
  session.preflight = t->preflight.to_json().dump();
  t->session_id = t->log->start_session(session);

  // A variant's score is over the listed problems; a domain's coverage points are timed on the
  // finalists after the search (time_coverage).
  for (const auto& p : m.problems) t->floors.push_back(floor_of(m.work_of(p), t->context.rates));

  EvaluationContext& ctx = t->ctx;
  ctx.manifest = &m;
  ctx.log = &*t->log;
  ctx.session_id = t->session_id;
  ctx.context_key = ctx_key;
  ctx.key_version = chosen.version;
  ctx.variants_dir = o.variants_dir;
  ctx.build_records_dir = o.build_records_dir;
  if (o.compile_on_demand) {
    CompileOptions c = *o.compile_on_demand;
    c.variants_dir = o.variants_dir;
    c.build_records_dir = o.build_records_dir;
    c.only.clear();
    t->compiler = std::make_unique<OnDemandCompiler>(m, std::move(c));
    ctx.compiler = t->compiler.get();
  }
  ctx.scratch_dir = (o.shard ? o.worklog : o.record_out).parent_path() / "plans";
  ctx.seed = t->seed;
  ctx.repetitions = o.repetitions;
  ctx.settled_spread = o.settled_spread;
  ctx.repetition_seconds = o.repetition_seconds;
  ctx.stop_ratio = o.stop_ratio;
  ctx.checks_per_problem = o.checks_per_problem;
  ctx.timeout_s = checked_time_limit(o.timeout_s.value_or(m.tuning.timeout_s), "the silence limit (--timeout)");
  if (o.sanitize_timeout_s) ctx.sanitize_timeout_s = checked_time_limit(*o.sanitize_timeout_s, "--sanitize-timeout");
  ctx.retry_failed = o.retry_failed;
  ctx.quiet_wait_s = o.quiet_wait_s;
  if (model::backend_named(m.backend).processor == model::Processor::host) ctx.environment = pinning_environment();
  // What a variant's check proves about the inputs is kept for the next variant of this context
  // (kiln/reference_store.hpp): the context's key covers the sources that make the inputs.
  ctx.environment.emplace_back(reference_store::kDirectoryVariable,
                               (ctx.scratch_dir / "references" / ctx_key).string());
  ctx.reference_s = &t->reference_s;
  for (std::size_t i = 0; i < m.problems.size(); ++i) ctx.floor_s[m.problems[i].key()] = t->floors[i].seconds;
  for (const auto& p : m.held_out) ctx.floor_s[p.key()] = floor_of(m.work_of(p), t->context.rates).seconds;
  if (!t->gpus.empty()) {
    // What is not spread over the GPUs (near-ties, the sanitizer, profiles) runs on the first.
    pin_to_gpu(ctx.environment, t->gpus.front());
    t->pool = std::make_unique<MeasuringPool>(ctx, o.worklog, t->gpus);
    ctx.pool = t->pool.get();
    out << "kiln: measuring on " << t->gpus.size() << " GPU" << (t->gpus.size() == 1 ? "" : "s") << ":";
    for (const auto& g : t->gpus) out << " " << describe(g);
    out << "\n";
  }
  return t;
}

}  // namespace kiln::tuner
