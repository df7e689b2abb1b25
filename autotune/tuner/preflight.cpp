#include "preflight.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "contention.hpp"
#include "kiln/error.hpp"
#include "kiln/join.hpp"
#include "kiln/model/backend.hpp"
#include "numbers.hpp"
#include "tools.hpp"

namespace kiln::tuner {

const char* const kGpuQueryFields =
    "name,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,clocks_throttle_reasons.active,"
    "persistence_mode,ecc.mode.current,temperature.gpu,power.draw,power.limit,utilization.gpu";
const char* const kGpuQueryFieldsEvent =
    "name,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,clocks_event_reasons.active,"
    "persistence_mode,ecc.mode.current,temperature.gpu,power.draw,power.limit,utilization.gpu";

namespace {

using model::Processor;

constexpr std::size_t kGpuFieldCount = 13;

// Where the kernels of the backend named `backend` run.
Processor measured_on(const std::string& backend) { return model::backend_named(backend).processor; }

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(trim(field));
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

// "[N/A]", "[Not Supported]", "N/A" and the like: nvidia-smi has no value for this GPU.
bool no_value(const std::string& f) { return f.empty() || f.front() == '[' || f == "N/A"; }

std::optional<double> number_field(const std::string& f, const std::string& what) {
  if (no_value(f)) return std::nullopt;
  try {
    std::size_t used = 0;
    double v = std::stod(f, &used);
    if (trim(f.substr(used)).empty() || f.substr(used).find_first_not_of(" MiBWCMHz%") == std::string::npos) return v;
  } catch (const std::exception&) {
  }
  throw Error("nvidia-smi: " + what + " is not a number: '" + f + "'");
}

template <class T>
nlohmann::ordered_json or_null(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// Reasons that hold the clocks back for the measurement's sake; the others (idle, the
// application clocks or a lock the user set, sync boost, the display) are no fault of the machine.
constexpr std::uint64_t kSlowingReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

}  // namespace

GpuState parse_gpu_query(const std::string& line) {
  const std::vector<std::string> f = split_fields(line);
  if (f.size() != kGpuFieldCount) {
    throw Error("nvidia-smi: expected " + std::to_string(kGpuFieldCount) + " fields (" + kGpuQueryFields + "), got " +
                std::to_string(f.size()) + ": '" + line + "'");
  }
  GpuState g;
  g.name = f[0];
  g.compute_capability = no_value(f[1]) ? "" : f[1];
  g.sm_clock_mhz = number_field(f[2], "clocks.sm");
  g.sm_max_mhz = number_field(f[3], "clocks.max.sm");
  g.memory_clock_mhz = number_field(f[4], "clocks.mem");
  g.memory_max_mhz = number_field(f[5], "clocks.max.mem");
  if (!no_value(f[6])) {
    try {
      std::size_t used = 0;
      g.throttle_reasons = std::stoull(f[6], &used, 16);
      if (used != f[6].size()) throw Error("trailing text");
    } catch (const std::exception&) {
      throw Error("nvidia-smi: clocks_throttle_reasons.active is not a hexadecimal mask: '" + f[6] + "'");
    }
  }
  if (!no_value(f[7])) g.persistence = f[7] == "Enabled";
  g.ecc = no_value(f[8]) ? "" : f[8];
  g.temperature_c = number_field(f[9], "temperature.gpu");
  g.power_w = number_field(f[10], "power.draw");
  g.power_limit_w = number_field(f[11], "power.limit");
  g.utilization_pct = number_field(f[12], "utilization.gpu");
  return g;
}

std::vector<GpuProcess> parse_compute_apps(const std::vector<std::string>& lines) {
  std::vector<GpuProcess> out;
  for (const auto& raw : lines) {
    const std::string line = trim(raw);
    if (line.empty() || line.rfind("No running", 0) == 0) continue;
    // The name may hold commas: the pid is the first field and the memory the last.
    auto first = line.find(',');
    auto last = line.rfind(',');
    if (first == std::string::npos || first == last) throw Error("nvidia-smi: unexpected compute-apps line: '" + line + "'");
    GpuProcess p;
    try {
      p.pid = std::stol(trim(line.substr(0, first)));
    } catch (const std::exception&) {
      throw Error("nvidia-smi: compute-apps line without a pid: '" + line + "'");
    }
    p.name = trim(line.substr(first + 1, last - first - 1));
    p.used_mib = number_field(trim(line.substr(last + 1)), "used_memory");
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  static const std::pair<std::uint64_t, const char*> names[] = {
      {0x1, "gpu_idle"},           {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},        {0x10, "sync_boost"},                 {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"},  {0x100, "display_clock_setting"}};
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : names) {
    known |= bit;
    if (mask & bit) out.emplace_back(name);
  }
  if (mask & ~known) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "other_0x%llx", static_cast<unsigned long long>(mask & ~known));
    out.emplace_back(buf);
  }
  return out;
}

std::string to_string(Readiness v) {
  switch (v) {
    case Readiness::ready: return "ready";
    case Readiness::degraded: return "degraded";
    case Readiness::refuse: return "refuse";
  }
  return "unknown";
}

Readiness Preflight::verdict() const {
  Readiness worst = Readiness::ready;
  for (const auto& f : findings) worst = std::max(worst, f.level);
  return worst;
}

bool Preflight::refused_only_for_busy_gpu() const {
  bool busy = false;
  for (const auto& f : findings) {
    if (f.level != Readiness::refuse) continue;
    if (f.code != "gpu_busy") return false;
    busy = true;
  }
  return busy;
}

Preflight judge(const Observation& seen) {
  Preflight p;
  p.seen = seen;
  auto add = [&](Readiness level, std::string code, std::string text) {
    p.findings.push_back({level, std::move(code), std::move(text)});
  };
  const CpuState& cpu = seen.cpu;
  if (cpu.others_cores > seen.busy_cores) {
    add(Readiness::degraded, "cpu_busy",
        fixed(cpu.others_cores, 1) + " of " + std::to_string(cpu.cores) + " cores busy with other processes (load " +
            fixed(cpu.load_average, 1) + "): each measurement waits for quiet and records how busy it was");
  }
  std::vector<std::string> scaling;
  for (const auto& g : cpu.governors) {
    if (g != "performance") scaling.push_back(g);
  }
  if (!scaling.empty()) {
    const std::string names = join(scaling, ", ");
    add(measured_on(seen.backend) == Processor::host ? Readiness::degraded : Readiness::ready, "cpu_governor",
        "CPU frequency governor " + names + ": the clock follows the load, so timings include its ramp "
        "(the 'performance' governor holds it; cpupower frequency-set -g performance)");
  }

  const bool gpu_wanted = measured_on(seen.backend) == Processor::nvidia_gpu;
  if (!seen.gpu) {
    if (!seen.gpu_error.empty()) {
      add(gpu_wanted ? Readiness::degraded : Readiness::ready, "gpu_unobserved",
          "the GPU's state is unknown: " + seen.gpu_error);
    }
    return p;
  }
  const GpuState& g = *seen.gpu;
  if (seen.spec != nullptr && measured_on(seen.spec->backend) == Processor::nvidia_gpu) {
    bool named = seen.spec->match_names.empty();
    for (const auto& n : seen.spec->match_names) named = named || g.name.find(n) != std::string::npos;
    const std::string& cc = seen.spec->match_compute_capability;
    if (!named || (!cc.empty() && !g.compute_capability.empty() && g.compute_capability != cc)) {
      add(Readiness::refuse, "gpu_mismatch",
          "GPU " + seen.gpu_index + " is " + g.name + " (compute capability " + g.compute_capability +
              "), not the device file's " + seen.spec->name + " (" + seen.spec->description + ")");
    }
  }
  if (!seen.gpu_processes.empty()) {
    std::string who;
    for (const auto& proc : seen.gpu_processes) {
      if (!who.empty()) who += ", ";
      who += "pid " + std::to_string(proc.pid) + " (" + proc.name;
      if (proc.used_mib) who += ", " + fixed(*proc.used_mib, 0) + " MiB";
      who += ")";
    }
    add(Readiness::refuse, "gpu_busy",
        std::to_string(seen.gpu_processes.size()) + " other process" + (seen.gpu_processes.size() == 1 ? "" : "es") +
            " on the GPU: " + who + "; timings would measure them as much as the kernels");
  } else if (g.utilization_pct && *g.utilization_pct >= 50) {
    add(Readiness::refuse, "gpu_busy",
        "the GPU is " + fixed(*g.utilization_pct, 0) +
            "% utilised by processes not listed here (another container or VM?); timings would measure them too");
  } else if (g.utilization_pct && *g.utilization_pct >= 10) {
    add(Readiness::degraded, "gpu_utilised", "the GPU is " + fixed(*g.utilization_pct, 0) + "% utilised with no process listed");
  }
  if (g.throttle_reasons && (*g.throttle_reasons & kSlowingReasons)) {
    add(Readiness::degraded, "throttled",
        "the GPU's clocks are held back: " + join(throttle_reason_names(*g.throttle_reasons & kSlowingReasons), ", "));
  }
  if (g.temperature_c && *g.temperature_c >= 85) {
    add(Readiness::degraded, "hot", "the GPU is at " + fixed(*g.temperature_c, 0) + " C: it will slow down under load");
  }
  if (g.power_w && g.power_limit_w && *g.power_limit_w > 0 && *g.power_w >= 0.95 * *g.power_limit_w) {
    add(Readiness::degraded, "power", "the GPU draws " + fixed(*g.power_w, 0) + " W of its " + fixed(*g.power_limit_w, 0) +
                                        " W limit before tuning starts");
  }
  if (g.persistence && !*g.persistence) {
    add(Readiness::ready, "persistence_off",
        "persistence mode is off: the driver sets the GPU up for every process (slower starts, not slower kernels; "
        "nvidia-smi -pm 1)");
  }
  if (g.sm_clock_mhz && g.sm_max_mhz && *g.sm_clock_mhz < *g.sm_max_mhz &&
      !(g.throttle_reasons && (*g.throttle_reasons & kSlowingReasons))) {
    add(Readiness::ready, "clocks_below_max",
        "SM clock " + fixed(*g.sm_clock_mhz, 0) + " of " + fixed(*g.sm_max_mhz, 0) +
            " MHz now (an idle GPU lowers it; it rises under load unless held back)");
  }
  return p;
}

nlohmann::ordered_json Preflight::to_json() const {
  nlohmann::ordered_json j;
  j["verdict"] = to_string(verdict());
  j["backend"] = seen.backend;
  if (seen.spec != nullptr) j["device_file"] = seen.spec->name;
  j["findings"] = nlohmann::ordered_json::array();
  for (const auto& f : findings) j["findings"].push_back({{"level", to_string(f.level)}, {"code", f.code}, {"text", f.text}});
  j["cpu"] = {{"cores", seen.cpu.cores},
              {"load_average", seen.cpu.load_average},
              {"others_cores", seen.cpu.others_cores},
              {"governors", seen.cpu.governors}};
  if (seen.gpu) {
    const GpuState& g = *seen.gpu;
    nlohmann::ordered_json gj = {{"index", seen.gpu_index},
                                 {"name", g.name},
                                 {"compute_capability", g.compute_capability},
                                 {"sm_clock_mhz", or_null(g.sm_clock_mhz)},
                                 {"sm_max_mhz", or_null(g.sm_max_mhz)},
                                 {"memory_clock_mhz", or_null(g.memory_clock_mhz)},
                                 {"memory_max_mhz", or_null(g.memory_max_mhz)},
                                 {"throttle_reasons", g.throttle_reasons ? throttle_reason_names(*g.throttle_reasons)
                                                                         : std::vector<std::string>{}},
                                 {"persistence", or_null(g.persistence)},
                                 {"ecc", g.ecc},
                                 {"temperature_c", or_null(g.temperature_c)},
                                 {"power_w", or_null(g.power_w)},
                                 {"power_limit_w", or_null(g.power_limit_w)},
                                 {"utilization_pct", or_null(g.utilization_pct)},
                                 {"processes", nlohmann::ordered_json::array()}};
    for (const auto& proc : seen.gpu_processes) {
      gj["processes"].push_back({{"pid", proc.pid}, {"name", proc.name}, {"used_mib", or_null(proc.used_mib)}});
    }
    j["gpu"] = gj;
  } else if (!seen.gpu_error.empty()) {
    j["gpu_error"] = seen.gpu_error;
  }
  if (clocks_locked) j["clocks"] = {{"locked", *clocks_locked}, {"note", clocks_note}};
  return j;
}

std::string Preflight::text() const {
  std::ostringstream out;
  out << "kiln preflight: " << to_string(verdict()) << "\n";
  out << "  cpu: " << seen.cpu.cores << " cores, load " << fixed(seen.cpu.load_average, 2) << ", "
      << fixed(seen.cpu.others_cores, 2) << " cores busy with other processes, governor ";
  if (seen.cpu.governors.empty()) out << "not exposed";
  for (std::size_t i = 0; i < seen.cpu.governors.size(); ++i) out << (i ? "/" : "") << seen.cpu.governors[i];
  out << "\n";
  if (seen.gpu) {
    const GpuState& g = *seen.gpu;
    auto mhz = [](const std::optional<double>& now, const std::optional<double>& max) {
      return (now ? fixed(*now, 0) : "?") + "/" + (max ? fixed(*max, 0) : "?") + " MHz";
    };
    out << "  gpu " << seen.gpu_index << ": " << g.name << " (" << g.compute_capability << "), SM "
        << mhz(g.sm_clock_mhz, g.sm_max_mhz) << ", memory " << mhz(g.memory_clock_mhz, g.memory_max_mhz);
    if (g.temperature_c) out << ", " << fixed(*g.temperature_c, 0) << " C";
    if (g.power_w) out << ", " << fixed(*g.power_w, 0) << (g.power_limit_w ? "/" + fixed(*g.power_limit_w, 0) : "") << " W";
    if (g.utilization_pct) out << ", " << fixed(*g.utilization_pct, 0) << "% utilised";
    if (g.persistence) out << ", persistence " << (*g.persistence ? "on" : "off");
    if (!g.ecc.empty()) out << ", ECC " << g.ecc;
    if (g.throttle_reasons) {
      auto names = throttle_reason_names(*g.throttle_reasons);
      out << ", clock reasons " << (names.empty() ? std::string("none") : join(names, ","));
    }
    out << "\n  gpu processes: " << (seen.gpu_processes.empty() ? "none" : std::to_string(seen.gpu_processes.size())) << "\n";
  } else if (!seen.gpu_error.empty()) {
    out << "  gpu: not observed (" << seen.gpu_error << ")\n";
  }
  if (clocks_locked) out << "  clocks: " << (*clocks_locked ? "locked" : "not locked") << " (" << clocks_note << ")\n";
  for (const auto& f : findings) out << "  " << to_string(f.level) << ": " << f.text << "\n";
  return out.str();
}

namespace {

std::vector<std::string> cpu_governors() {
  std::set<std::string> seen;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || name.find_first_not_of("0123456789", 3) != std::string::npos) continue;
    std::ifstream in(entry.path() / "cpufreq" / "scaling_governor");
    std::string g;
    if (in >> g) seen.insert(g);
  }
  return {seen.begin(), seen.end()};
}

// The first GPU of CUDA_VISIBLE_DEVICES (an index or a UUID, as nvidia-smi -i takes them), or 0.
std::optional<std::string> visible_gpu(std::string& why_none) {
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (env == nullptr) return "0";
  std::string first = trim(std::string(env).substr(0, std::string(env).find(',')));
  if (first.empty() || first == "-1" || first == "none" || first == "NoDevFiles") {
    why_none = std::string("CUDA_VISIBLE_DEVICES='") + env + "' hides every GPU";
    return std::nullopt;
  }
  return first;
}

}  // namespace

std::string backend_here() {
  const model::Backend* host = nullptr;
  for (const model::Backend& b : model::backends()) {
    if (b.processor == Processor::nvidia_gpu && find_tool("nvidia-smi")) return std::string(b.name);
    if (b.processor == Processor::host && host == nullptr) host = &b;
  }
  if (host == nullptr) throw Error("the backends' table has no backend that runs on this machine's cores");
  return std::string(host->name);
}

Observation observe(const std::string& backend, const Device* spec, const std::optional<std::string>& gpu) {
  Observation seen;
  seen.backend = backend;
  seen.spec = spec;
  ContentionWatch watch;
  seen.busy_cores = watch.threshold();
  seen.cpu.cores = ContentionWatch::cores();
  seen.cpu.others_cores = watch.wait_for_quiet(0).others_cores;  // one half-second window
  seen.cpu.load_average = load_average();
  seen.cpu.governors = cpu_governors();
  if (measured_on(backend) != Processor::nvidia_gpu) return seen;

  auto smi = find_tool("nvidia-smi");
  if (!smi) {
    seen.gpu_error = "nvidia-smi not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)";
    return seen;
  }
  auto index = gpu ? gpu : visible_gpu(seen.gpu_error);
  if (!index) return seen;
  seen.gpu_index = *index;
  const double limit_s = 30;
  ToolOutput q = run_tool({smi->string(), "-i", *index, std::string("--query-gpu=") + kGpuQueryFields,
                           "--format=csv,noheader,nounits"}, limit_s);
  if (q.exit_code != 0) {
    // Drivers that know the reasons only as clock events.
    ToolOutput again = run_tool({smi->string(), "-i", *index, std::string("--query-gpu=") + kGpuQueryFieldsEvent,
                                 "--format=csv,noheader,nounits"}, limit_s);
    if (again.exit_code == 0) q = again;
  }
  if (q.exit_code != 0 || q.lines.empty()) {
    std::string said = q.lines.empty() ? "" : " " + q.lines.front();
    seen.gpu_error = "nvidia-smi -i " + *index + " --query-gpu failed (" + q.describe() + ")" + said;
    return seen;
  }
  seen.gpu = parse_gpu_query(q.lines.front());
  ToolOutput apps = run_tool({smi->string(), "-i", *index, "--query-compute-apps=pid,process_name,used_memory",
                              "--format=csv,noheader"}, limit_s);
  if (apps.exit_code != 0) {
    seen.gpu_error = "nvidia-smi --query-compute-apps failed (" + apps.describe() + ")";
    return seen;
  }
  const long self = static_cast<long>(getpid());
  for (auto& proc : parse_compute_apps(apps.lines)) {
    if (proc.pid != self) seen.gpu_processes.push_back(std::move(proc));
  }
  return seen;
}

ClockLock::ClockLock(const Observation& seen) : index_(seen.gpu_index) {
  auto smi = find_tool("nvidia-smi");
  if (!smi || !seen.gpu || !seen.gpu->sm_max_mhz) {
    note_ = !smi ? "nvidia-smi not found" : "the GPU's maximum SM clock is unknown";
    return;
  }
  smi_ = smi->string();
  const std::string max = std::to_string(static_cast<long>(*seen.gpu->sm_max_mhz));
  ToolOutput r = run_tool({smi_, "-i", index_, "-lgc", max + "," + max}, 30);
  locked_ = r.exit_code == 0;
  note_ = locked_ ? "SM clock locked at " + max + " MHz (nvidia-smi -lgc), reset at the end"
                  : "nvidia-smi -lgc " + max + "," + max + " refused (" + r.describe() + ")";
}

ClockLock::~ClockLock() {
  if (!locked_) return;
  try {
    run_tool({smi_, "-i", index_, "-rgc"}, 30);
  } catch (...) {
    // Nothing to do from a destructor: the next preflight shows the clocks as they are.
  }
}

}  // namespace kiln::tuner
