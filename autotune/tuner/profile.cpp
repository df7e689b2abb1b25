#include "profile.hpp"

#include <algorithm>
#include <fstream>
#include <ostream>

#include "bottleneck.hpp"
#include "evaluate.hpp"
#include "kiln/error.hpp"
#include "kiln/join.hpp"
#include "kiln/model/backend.hpp"
#include "kiln/hash.hpp"
#include "kiln/worklog/worklog.hpp"
#include "manifest.hpp"
#include "ncu.hpp"
#include "record.hpp"
#include "report.hpp"
#include "tools.hpp"

namespace kiln::tuner {
namespace {

namespace fs = std::filesystem;

// ncu's version line ("Version 2025.3.1.0 (build ...)") as "ncu 2025.3.1.0".
std::string ncu_version(const fs::path& ncu) {
  ToolOutput v = run_tool({ncu.string(), "--version"}, 60);
  for (const auto& line : v.lines) {
    auto at = line.find("Version ");
    if (at == std::string::npos) continue;
    std::string rest = line.substr(at + 8);
    return "ncu " + rest.substr(0, rest.find(' '));
  }
  return "ncu";
}

// The backends kiln profile measures, for messages: "CUDA".
std::string profiled_backends() {
  std::vector<std::string> titles;
  for (const model::Backend& b : model::backends()) {
    if (b.profiler) titles.emplace_back(b.title);
  }
  return join(titles, ", ");
}

struct Outcome {
  bool ok = false;
  std::string detail;
};

// One ncu run of one variant on one problem; its metrics (and its launch shapes) into the worklog.
Outcome profile_one(const EvaluationContext& ctx, std::size_t v, const Problem& problem, const fs::path& ncu,
                    const std::string& tool, double timeout_s) {
  const Manifest& m = *ctx.manifest;
  const std::string& name = m.variants[v].name;
  const std::string hash = variant_hash(ctx, v);
  const fs::path log_file = ctx.scratch_dir / (name + "." + fnv1a64_hex(problem.key()) + ".ncu.csv");
  fs::create_directories(ctx.scratch_dir);
  fs::remove(log_file);
  std::optional<std::vector<model::LaunchShape>> shapes;
  std::optional<int> sm_count;
  std::string reported;
  auto on_event = [&](const model::Event& event) {
    if (const auto* e = std::get_if<model::StartEvent>(&event)) {
      if (e->device.sm_count) sm_count = static_cast<int>(*e->device.sm_count);
    } else if (const auto* e = std::get_if<model::ProfiledEvent>(&event)) {
      if (e->launches) shapes = e->launches;
    } else if (const auto* e = std::get_if<model::ErrorEvent>(&event)) {
      reported = e->message;
    }
  };
  auto limit = [timeout_s] { return std::chrono::duration<double>(timeout_s); };
  ChildResult r = run_plan(executable_of(ctx, v), plan_for(ctx, name, {}, {problem}), ctx.scratch_dir, SilenceLimit(limit),
                           on_event, {}, ncu_command(ncu, log_file), "profile");
  const std::string log = fs::exists(log_file) ? read_text(log_file) : std::string();
  if (auto complaint = ncu_error(log, r.stderr_tail)) {
    if (complaint->find("ERR_NVGPUCTRPERM") != std::string::npos) throw Error(*complaint);
    return {false, *complaint};
  }
  if (!reported.empty()) return {false, "the variant failed: " + reported};
  if (!r.exited_cleanly()) return {false, "ncu " + r.describe()};
  std::vector<NcuLaunch> launches = parse_ncu_csv(log, log_file.string());
  if (launches.empty()) return {false, "ncu profiled no kernel of the run (" + log_file.string() + ")"};
  worklog::ProfileKey key{ctx.context_key, m.kernel, name, hash, problem.key()};
  ctx.log->put_profile_metrics(key, launches_to_json(launches).dump(), tool);
  if (shapes && (!ctx.log->profile(key) || ctx.log->profile(key)->launches.empty())) {
    ctx.log->put_launch_shapes(key, sm_count, model::to_json(*shapes).dump(), std::nullopt);
  }
  const std::vector<KernelMetrics> kernels = [&] {
    std::vector<KernelMetrics> k;
    for (const auto& l : launches) k.push_back(metrics_from_ncu(l));
    return k;
  }();
  const Bottleneck b = classify(kernels[dominant_launch(kernels)]);
  return {true, std::string(to_string(b.kind)) + ": " + b.reason};
}

}  // namespace

fs::path build_worklog(const fs::path& build_dir) {
  std::ifstream cache(build_dir / "CMakeCache.txt");
  std::string line;
  while (std::getline(cache, line)) {
    const std::string prefix = "KILN_WORKLOG:";
    if (line.rfind(prefix, 0) != 0) continue;
    auto eq = line.find('=');
    if (eq != std::string::npos && eq + 1 < line.size()) return line.substr(eq + 1);
  }
  return build_dir / "kiln" / "worklog.sqlite";
}

std::vector<TunedKernel> kernels_to_profile(const fs::path& build_dir, const std::vector<std::string>& only) {
  const fs::path kiln_dir = build_dir / "kiln";
  if (!fs::is_directory(kiln_dir)) {
    throw Error(build_dir.string() + ": not a build tree of Kiln kernels (no kiln/ folder)");
  }
  std::vector<TunedKernel> found;
  std::vector<std::string> untuned;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(kiln_dir)) {
    if (entry.is_directory() && fs::exists(entry.path() / "generated" / "manifest.json")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string();
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    Manifest m = load_manifest(dir / "generated" / "manifest.json");
    const model::Backend& backend = model::backend_named(m.backend);
    if (!backend.profiler) {
      if (!only.empty()) {
        throw Error(name + " is a " + std::string(backend.title) + " kernel; kiln profile measures the kernels of " +
                    profiled_backends());
      }
      continue;
    }
    const fs::path record = dir / (name + ".record.json");
    if (!fs::exists(record)) {
      untuned.push_back(name);
      continue;
    }
    found.push_back({name, dir / "generated" / "manifest.json", record, dir / "bin"});
  }
  for (const auto& name : only) {
    bool known = std::any_of(found.begin(), found.end(), [&](const TunedKernel& k) { return k.name == name; });
    if (!known && std::find(untuned.begin(), untuned.end(), name) == untuned.end()) {
      throw Error(build_dir.string() + ": no kernel " + name + " (no kiln/" + name + "/generated/manifest.json)");
    }
  }
  if (!untuned.empty() && (found.empty() || !only.empty())) {
    throw Error(build_dir.string() + ": " + join(untuned, ", ") + " not tuned in this build (no record; build with KILN_TUNE=ON first)");
  }
  if (found.empty()) {
    throw Error(build_dir.string() + ": no tuned kernel of " + profiled_backends() + " (build a *-tune preset first)");
  }
  return found;
}

void profile(const ProfileOptions& o, std::ostream& out) {
  const std::vector<TunedKernel> kernels = kernels_to_profile(o.build_dir, o.kernels);
  const fs::path worklog_path = o.worklog.value_or(build_worklog(o.build_dir));
  std::optional<fs::path> ncu = o.ncu;
  if (!ncu) ncu = find_tool("ncu");
  if (ncu && !fs::exists(*ncu)) throw Error(ncu->string() + ": no such file (--ncu)");
  if (!ncu) {
    // What the harness recorded while tuning still shows too few CTAs and idle last waves.
    auto log = worklog::Worklog::open(worklog_path, worklog::OpenMode::read_only);
    for (const auto& k : kernels) out << bottleneck_markdown(load_record(k.record), log, o.runners_up) << "\n";
    throw Error("ncu (Nsight Compute) not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin; or --ncu PATH): no metrics "
                "were measured; the table above has only the launch shapes recorded while tuning");
  }
  auto log = worklog::Worklog::open(worklog_path, worklog::OpenMode::existing);
  const std::string tool = ncu_version(*ncu);
  out << "kiln: profiling with " << tool << " (" << ncu->string() << "), worklog " << worklog_path.string() << "\n";
  std::size_t failed = 0, done = 0;
  for (const auto& k : kernels) {
    Manifest m = load_manifest(k.manifest);
    Record record = load_record(k.record);
    EvaluationContext ctx;
    ctx.manifest = &m;
    ctx.log = &log;
    ctx.context_key = record.context_key;
    ctx.key_version = context_key_version(log, record.context_key);
    ctx.variants_dir = k.variants_dir;
    ctx.scratch_dir = o.build_dir / "kiln" / k.name / "profile";
    for (const auto& b : record.buckets) {
      if (!b.winner) continue;
      std::vector<std::string> names = {*b.winner};
      for (std::size_t c = 0; c < b.contenders.size() && c < static_cast<std::size_t>(o.runners_up); ++c) {
        names.push_back(b.contenders[c].variant);
      }
      for (const auto& name : names) {
        auto v = m.variant_index(name);
        if (!v) throw Error(k.record.string() + ": variant " + name + " is not in " + k.manifest.string());
        for (const auto& p : b.problems) {
          Outcome oc = profile_one(ctx, *v, p.problem, *ncu, tool, o.timeout_s);
          out << "kiln: " << name << " on " << p.problem.key() << ": " << (oc.ok ? "" : "not profiled: ") << oc.detail << "\n";
          ++(oc.ok ? done : failed);
        }
      }
    }
    out << "\n" << bottleneck_markdown(record, log, o.runners_up) << "\n";
  }
  if (failed > 0) {
    throw Error(std::to_string(failed) + " of " + std::to_string(failed + done) + " runs could not be profiled (see above)");
  }
}

}  // namespace kiln::tuner
