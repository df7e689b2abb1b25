// Facts about the host CPU shared by the CPU backend and the CPU probe.
#pragma once
#include <sched.h>
#include <unistd.h>

#include <algorithm>
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

// The instruction-set extensions of the host that change what `-march=native` builds and how fast
// it runs, those present of a fixed list, in its order, space-separated ("avx avx2 fma"): x86's
// /proc/cpuinfo "flags", Arm's "Features". Empty when it says none of them.
inline std::string cpu_isa() {
  static const char* const known[] = {"sse4_2",   "avx",         "avx2",        "fma",        "avx512f",
                                      "avx512bw", "avx512vl",    "avx512_vnni", "avx512_bf16", "avx512_fp16",
                                      "amx_tile", "asimd",       "asimdhp",     "sve",        "sve2"};
  std::ifstream in("/proc/cpuinfo");
  std::string line, words;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) words = " " + line.substr(colon + 1) + " ";
      break;
    }
  }
  std::string isa;
  for (const char* k : known) {
    if (words.find(" " + std::string(k) + " ") != std::string::npos) isa += (isa.empty() ? "" : " ") + std::string(k);
  }
  return isa;
}

// Most last-level cache one core can have to itself: the largest share any CPU gives a core is
// 48 MiB (AMD's frequency-optimised stacked-cache EPYCs, such as the 9184X: 768 MiB over 16 cores,
// two cores sharing a 96 MiB L3).
inline constexpr std::size_t kMaxCachePerCore = std::size_t{48} << 20;

// Size of the last-level cache a process here can fill. sysfs first: glibc's sysconf value is
// wrong on some virtual machines (seen reporting 320 MiB for a 32 MiB L3, and the host's 508 MiB
// on a 2-core EPYC machine without sysfs cache entries). Either way at most kMaxCachePerCore per
// core this process may run on: the benchmark rotates through input sets four times this size,
// and the 508 MiB made a CPU variant's run build 1.4 GB of copies of a 12 MB problem (7.9 s of
// a run that takes 1.8 s with the cap).
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
  if (best == 0) {
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    best = llc > 0 ? static_cast<std::size_t>(llc) : std::size_t{32} << 20;
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int cores = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 0;
  if (cores > 0) best = std::min(best, static_cast<std::size_t>(cores) * kMaxCachePerCore);
  return best;
}

}  // namespace kiln::harness
