// kiln_probe_cpu: describes the host CPU and measures the two ceilings the CPU floors use, with
// every core busy as the kernels' OpenMP loops are: copy bandwidth (bytes read + written) over
// arrays far larger than the last-level cache, and FP32 FMA throughput.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "host_cpu.hpp"
#include "kiln/model/protocol.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Splits [0, n) evenly over the team and copies each thread's part with one memcpy.
void memcpy_by_thread(float* dst, const float* src, std::size_t n) {
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    int nt = omp_get_num_threads();
    std::size_t chunk = (n + nt - 1) / nt;
    std::size_t begin = std::min(n, chunk * t);
    std::size_t end = std::min(n, begin + chunk);
    std::memcpy(dst + begin, src + begin, (end - begin) * sizeof(float));
  }
}

// The faster of two copies: glibc's memcpy (non-temporal stores on large blocks) and a plain
// vectorised loop (ordinary stores). Which one wins depends on the machine; the floor must not
// be slower than what a kernel can reach.
double copy_bandwidth(std::size_t llc) {
  // A copy's working set is both arrays. At twice the last-level cache each it is four times the
  // cache, the margin the harness rotates its inputs over: a pass streams through far more than
  // the cache holds, so the next pass finds its data in memory. The 256 MiB floor keeps passes on
  // small caches long enough to time. Larger arrays only add page faults: on a 2-core VM that
  // reports a 480 MiB L3, arrays of 2, 4 and 8 times the cache gave the same bandwidth within the
  // run-to-run noise, and the probe took 1.5 s instead of 9-19 s at 8 times.
  std::size_t bytes = std::max<std::size_t>(2 * llc, std::size_t{256} << 20);
  std::size_t n = bytes / sizeof(float);
  // Left uninitialised so that each page is faulted in once, by the thread that copies it, and
  // before the clock starts: a by the initialising loop, b by the untimed first copy.
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<float>(i % 1024);
  memcpy_by_thread(b.get(), a.get(), n);
  // Five timed passes of each copy: the median holds with two slow passes of five, and passes
  // here agree within a few percent apart from the odd interrupted one.
  std::vector<double> memcpy_times, loop_times;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    memcpy_by_thread(b.get(), a.get(), n);
    memcpy_times.push_back(seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    float* __restrict dst = b.get();
    const float* __restrict src = a.get();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
    loop_times.push_back(seconds_since(t0));
  }
  if (b[n / 2] != a[n / 2]) std::fprintf(stderr, "copy check failed\n");
  double best = std::min(median(memcpy_times), median(loop_times));
  return 2.0 * static_cast<double>(n * sizeof(float)) / best;
}

typedef float vec16 __attribute__((vector_size(64)));

double fp32_rate() {
  constexpr int kChains = 12;
  constexpr long kIters = 1L << 22;
  std::vector<double> times;
  float sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : sink)
    {
      vec16 acc[kChains];
      vec16 mul, add;
      for (int l = 0; l < 16; ++l) {
        mul[l] = 0.9999f;
        add[l] = 1e-3f * static_cast<float>(omp_get_thread_num() + 1);
      }
      for (int c = 0; c < kChains; ++c) acc[c] = add * static_cast<float>(c + 1);
      for (long i = 0; i < kIters; ++i) {
#pragma GCC unroll 12
        for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * mul + add;
      }
      for (int c = 0; c < kChains; ++c) sink += acc[c][0];
    }
    times.push_back(seconds_since(t0));
  }
  if (sink == 42.0f) std::fprintf(stderr, "unlikely\n");
  double flops = 2.0 * 16 * kChains * static_cast<double>(kIters) * omp_get_max_threads();
  return flops / median(times);
}

}  // namespace

// kiln_probe_cpu [--describe]: the CPU and its measured rates, or with --describe what it is
// without measuring (the tuner's warm re-run takes the rates its worklog holds for the context).
int main(int argc, char** argv) {
  const bool describe = argc == 2 && std::strcmp(argv[1], "--describe") == 0;
  if (argc > 1 && !describe) {
    std::fprintf(stderr, "usage: %s [--describe]\n", argv[0]);
    return 2;
  }
  std::size_t llc = kiln::harness::last_level_cache_bytes();
  kiln::model::DeviceInfo d;
  d.backend = "cpu";
  d.name = kiln::harness::cpu_model_name();
  d.isa = kiln::harness::cpu_isa();
  d.threads = omp_get_max_threads();
  d.cache_bytes = static_cast<std::int64_t>(llc);
  if (!describe) d.measured = {{"dram_bytes_per_s", copy_bandwidth(llc)}, {"fp32_flops_per_s", fp32_rate()}};
  std::printf("%s\n", kiln::model::to_json(d).dump().c_str());
  return 0;
}
