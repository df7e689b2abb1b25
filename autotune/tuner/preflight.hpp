// `kiln preflight`: is this machine fit to measure on? The GPU the tuner will use (found against
// the device file, other processes on it, clocks against their maximum and why they are held
// back, persistence, ECC, temperature, power, utilisation) and the CPU (frequency governor, load,
// cores, other processes' CPU time), judged ready, degraded or refuse with the reasons.
// `kiln tune` takes one at its start and stores it with the session.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device_spec.hpp"

namespace kiln::tuner {

// One row of `nvidia-smi --query-gpu=<kGpuQueryFields> --format=csv,noheader,nounits`. A field
// nvidia-smi reports as "[N/A]" or "[Not Supported]" is left empty.
struct GpuState {
  std::string name;
  std::string compute_capability;
  std::optional<double> sm_clock_mhz, sm_max_mhz, memory_clock_mhz, memory_max_mhz;
  std::optional<std::uint64_t> throttle_reasons;  // bit mask of NVML's clock event reasons
  std::optional<bool> persistence;
  std::string ecc;                                // "Enabled", "Disabled", or empty
  std::optional<double> temperature_c, power_w, power_limit_w, utilization_pct;
};

// The fields asked of nvidia-smi, in the order parse_gpu_query reads them. Drivers from 535 on
// also name the throttle reasons clocks_event_reasons; kGpuQueryFieldsEvent uses that name.
extern const char* const kGpuQueryFields;
extern const char* const kGpuQueryFieldsEvent;

// Throws kiln::Error on a line without the expected fields.
GpuState parse_gpu_query(const std::string& line);

// A process with a compute context on the GPU: `nvidia-smi --query-compute-apps=pid,process_name,
// used_memory --format=csv,noheader` (used_memory with its unit, "1234 MiB").
struct GpuProcess {
  long pid = 0;
  std::string name;
  std::optional<double> used_mib;
};
std::vector<GpuProcess> parse_compute_apps(const std::vector<std::string>& lines);

// The names of the reasons set in NVML's mask ("gpu_idle", "sw_power_cap", "hw_thermal_slowdown"...).
std::vector<std::string> throttle_reason_names(std::uint64_t mask);

struct CpuState {
  int cores = 0;
  double load_average = 0;
  double others_cores = 0;          // cores other processes kept busy over a short window
  std::vector<std::string> governors;  // distinct scaling governors of the cores; empty: not exposed
};

// What was seen; each part may be missing, with the reason.
struct Observation {
  std::string backend;                      // the backend whose kernels will be measured
  CpuState cpu;
  std::optional<GpuState> gpu;
  std::vector<GpuProcess> gpu_processes;
  std::string gpu_index;                    // as given to nvidia-smi -i
  std::string gpu_error;                    // why the GPU could not be observed
  const Device* spec = nullptr;         // the device file, when one was named
  double busy_cores = 0.25;                 // others' cores above this make the CPU busy
};

enum class Readiness { ready, degraded, refuse };
std::string to_string(Readiness v);

struct Finding {
  Readiness level = Readiness::ready;  // ready: informative only
  std::string code;                // stable name: "gpu_busy", "gpu_mismatch", "throttled"...
  std::string text;
};

struct Preflight {
  Observation seen;
  std::vector<Finding> findings;
  // Clocks locked for the session (kiln tune --lock-clocks); nothing: not asked.
  std::optional<bool> clocks_locked;
  std::string clocks_note;

  Readiness verdict() const;  // the worst finding's level
  // A refusal that only --allow-busy-gpu would lift.
  bool refused_only_for_busy_gpu() const;
  nlohmann::ordered_json to_json() const;
  std::string text() const;  // several lines, for people
};

// Judges what was seen. Pure: the unit tests feed it captured output.
Preflight judge(const Observation& seen);

// The backend to look at when no device file names one: the first in the backends' table whose
// processor this machine shows (an NVIDIA GPU when nvidia-smi is there to ask), else the one that
// runs on this machine's cores.
std::string backend_here();

// Looks at this machine: the CPU always; the GPU when the backend's kernels run on an NVIDIA GPU
// (kiln/model/backend.hpp). The GPU is `gpu` (nvidia-smi's index) when given, else the first of
// CUDA_VISIBLE_DEVICES, else 0 (nvidia-smi's order, the PCI bus order).
Observation observe(const std::string& backend, const Device* spec, const std::optional<std::string>& gpu = std::nullopt);

// Locks the GPU's clocks at their maximum (nvidia-smi -lgc) and gives them back when destroyed
// (-rgc). Needs root or the driver's permission; when refused, locked() is false and note() says why.
class ClockLock {
 public:
  ClockLock(const Observation& seen);
  ~ClockLock();
  ClockLock(const ClockLock&) = delete;
  ClockLock& operator=(const ClockLock&) = delete;
  bool locked() const { return locked_; }
  const std::string& note() const { return note_; }

 private:
  std::string smi_, index_;
  bool locked_ = false;
  std::string note_;
};

}  // namespace kiln::tuner
