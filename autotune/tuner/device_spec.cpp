#include "device_spec.hpp"

#include <cctype>
#include <chrono>
#include <fstream>
#include <vector>

#include "kiln/error.hpp"
#include "process.hpp"

namespace kiln::tuner {

DeviceInfo run_probe(const std::filesystem::path& probe_executable, const model::Backend& backend,
                     const Environment& environment, bool describe_only) {
  std::string output;
  std::vector<std::string> argv = {probe_executable.string()};
  if (describe_only) argv.push_back("--describe");
  ChildResult r = run_child(argv, SilenceLimit([] { return std::chrono::seconds(180); }),
                            [&](const std::string& line) { output += line; }, environment);
  // A probe of a backend added outside Kiln may not know --describe (usage, exit code 2): it
  // describes the device while measuring it.
  if (describe_only && r.exit_code == 2) return run_probe(probe_executable, backend, environment, false);
  if (r.exit_code == 77) {
    throw Error("no " + std::string(backend.title) + " device found on this machine (" + probe_executable.string() + ")");
  }
  if (!r.exited_cleanly()) {
    throw Error("device probe " + probe_executable.string() + " failed (" + r.describe() + "): " + r.stderr_tail);
  }
  return model::parse_device_info(output, "the output of " + probe_executable.string());
}

std::optional<std::string> mismatch(const Device& spec, const DeviceInfo& probe) {
  if (spec.backend != probe.backend) {
    return "device file " + spec.name + " is for the " + spec.backend + " backend, the probe found " + probe.backend;
  }
  bool name_ok = spec.match_names.empty();
  for (const auto& n : spec.match_names) name_ok = name_ok || probe.name.find(n) != std::string::npos;
  const std::string cc = probe.compute_capability.value_or("");
  bool cc_ok = spec.match_compute_capability.empty() || spec.match_compute_capability == cc;
  if (name_ok && cc_ok) return std::nullopt;
  std::string expected = spec.description;
  return "the " + spec.name + " preset tunes for " + expected + ", but this machine has " + probe.name +
         (cc.empty() ? "" : " (compute capability " + cc + ")") +
         ". Kiln never tunes one GPU for another: use the preset for this GPU (or native-tune).";
}

std::optional<DeviceInfo> context_device(const worklog::Worklog& log, const std::string& kernel,
                                         const std::string& context_key) {
  // The earliest by its start, not by its id: a merged worklog's ids follow the order of its inputs.
  std::optional<worklog::Session> first;
  for (const auto& s : log.sessions()) {
    if (s.context_key != context_key || s.kernel != kernel) continue;
    if (!first || s.started_at < first->started_at) first = s;
  }
  if (!first) return std::nullopt;
  return model::parse_device_info(first->device, "the device of session " + std::to_string(first->id) + " in the worklog");
}

std::map<std::string, double> effective_rates(const Device& spec, const DeviceInfo& probe) {
  std::map<std::string, double> rates = spec.rates;
  for (const auto& [key, value] : probe.measured) {
    if (value > 0) rates[key] = value;
  }
  return rates;
}

std::string device_slug(const std::string& name) {
  std::string slug;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "device" : slug;
}

}  // namespace kiln::tuner
