#include "device_spec.hpp"

#include <cctype>
#include <chrono>
#include <fstream>
#include <stdexcept>

#include "process.hpp"

namespace kiln::tuner {

Probe run_probe(const std::filesystem::path& probe_executable) {
  std::string output;
  ChildResult r = run_child({probe_executable.string()}, std::chrono::seconds(180),
                            [&](const std::string& line) { output += line; });
  if (r.exit_code == 77) throw std::runtime_error("no CUDA device found on this machine (" + probe_executable.string() + ")");
  if (!r.exited_cleanly()) {
    throw std::runtime_error("device probe " + probe_executable.string() + " failed (" + r.describe() + "): " + r.stderr_tail);
  }
  Probe p;
  try {
    p.raw = nlohmann::ordered_json::parse(output);
    p.backend = p.raw.at("backend").get<std::string>();
    p.name = p.raw.at("name").get<std::string>();
    p.compute_capability = p.raw.value("compute_capability", std::string{});
    p.driver = p.raw.value("driver", std::string{});
    p.cuda_runtime = p.raw.value("cuda_runtime", std::string{});
    const nlohmann::ordered_json measured_section = p.raw.value("measured", nlohmann::ordered_json::object());
    for (const auto& [key, value] : measured_section.items()) {
      p.measured[key] = value.get<double>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("device probe printed something unexpected: " + output + " (" + e.what() + ")");
  }
  return p;
}

std::optional<std::string> mismatch(const Device& spec, const Probe& probe) {
  if (spec.backend != probe.backend) {
    return "device file " + spec.name + " is for the " + spec.backend + " backend, the probe found " + probe.backend;
  }
  bool name_ok = spec.match_names.empty();
  for (const auto& n : spec.match_names) name_ok = name_ok || probe.name.find(n) != std::string::npos;
  bool cc_ok = spec.match_compute_capability.empty() || spec.match_compute_capability == probe.compute_capability;
  if (name_ok && cc_ok) return std::nullopt;
  std::string expected = spec.description;
  return "the " + spec.name + " preset tunes for " + expected + ", but this machine has " + probe.name +
         (probe.compute_capability.empty() ? "" : " (compute capability " + probe.compute_capability + ")") +
         ". Kiln never tunes one GPU for another: use the preset for this GPU (or native-tune).";
}

std::map<std::string, double> effective_rates(const Device& spec, const Probe& probe) {
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
