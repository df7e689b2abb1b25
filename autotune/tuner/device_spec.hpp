// Device files (presets/devices/*.json) and what the probe measured on the machine at hand.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/model/backend.hpp"
#include "kiln/model/device.hpp"
#include "kiln/model/protocol.hpp"
#include "kiln/worklog/worklog.hpp"
#include "process.hpp"

namespace kiln::tuner {

// Work kinds a space can declare and the rate each one is divided by.
struct Resource {
  const char* work;  // key in the space's problem.work
  const char* rate;  // key in a device file's rates
  const char* label; // how reports name the bound
};
inline constexpr Resource kResources[] = {
    {"bytes", "dram_bytes_per_s", "memory bandwidth"},
    {"tensor_flops", "tensor_flops_per_s", "tensor cores"},
    {"fp32_flops", "fp32_flops_per_s", "FP32"},
    {"sfu_ops", "sfu_ops_per_s", "special functions"},
    {"launches", "launch_s", "launch latency"},
};

// The device file: the model's one reader (model/device.hpp), which the generator uses too.
using model::Device;
using model::load_device;

// What a probe says about the machine at hand (the protocol's device info).
using model::DeviceInfo;

// Runs the probe executable of `backend` (kiln_probe_<backend>) and reads what it prints; with
// describe_only (the probe's --describe), what the device is without its measured rates.
DeviceInfo run_probe(const std::filesystem::path& probe_executable, const model::Backend& backend,
                     const Environment& environment = {}, bool describe_only = false);

// Why this machine must not be tuned with this device file, or nothing when it matches.
std::optional<std::string> mismatch(const Device& spec, const DeviceInfo& probed);

// The device of the first session of `context_key` tuning `kernel` in the worklog, or nothing when
// there is none: a context's floors use the rates measured when it was first tuned, so that a
// re-run that reuses every measurement reproduces the same record.
std::optional<DeviceInfo> context_device(const worklog::Worklog& log, const std::string& kernel,
                                         const std::string& context_key);

// Rates the floors use: the ones the probe measured (above zero), the device file's otherwise.
std::map<std::string, double> effective_rates(const Device& spec, const DeviceInfo& probed);

// A file-system-safe name for a device, e.g. "NVIDIA H200" -> "nvidia-h200".
std::string device_slug(const std::string& name);

}  // namespace kiln::tuner
