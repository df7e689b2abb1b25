// Facts about the host CPU shared by the CPU backend and the CPU probe.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <string>

namespace kiln::harness {

inline std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

// Size of the last-level cache. sysfs first: glibc's sysconf value is wrong on some virtual
// machines (seen reporting 320 MiB for a 32 MiB L3).
inline std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream type_in(dir + "type"), size_in(dir + "size");
    std::string type, size;
    if (!(type_in >> type) || !(size_in >> size) || type == "Instruction" || size.empty()) continue;
    std::size_t value = std::stoull(size);
    char unit = size.back();
    if (unit == 'K') value <<= 10;
    if (unit == 'M') value <<= 20;
    if (value > best) best = value;
  }
  if (best > 0) return best;
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return llc > 0 ? static_cast<std::size_t>(llc) : std::size_t{32} << 20;
}

}  // namespace kiln::harness
