// Kiln's all-pairs and tree N-body on Plummer-sphere bodies, n = 2^16 .. 2^20 (or the n given on
// the command line), in one process on one GPU, through the public functions (kiln/nbody.hpp) and
// their tuned dispatch:
//   - all-pairs: kiln::cuda::nbody_accelerations(bodies, acc, n, stream);
//   - tree: kiln::cuda::nbody_accelerations(bodies, acc, n, tolerance, workspace, bytes, stream)
//     for each tolerance of --tolerances (default 1e-2, 1e-3, 1e-4), with the variant its
//     dispatch picks.
// Each call is timed with CUDA events: 2 warm-up calls, then the median of 7 (all-pairs: of 3
// above 2^18, it takes seconds). Each result is compared with the fp64 all-pairs reference on
// 1024 bodies drawn from the seed: the relative RMS error of the accelerations.
//   nbody_bench [--tolerances 1e-2,1e-3] [n ...]
// Prints a markdown table. Exit status 1 when a result misses its tolerance, 2 for bad usage.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/nbody.hpp"
#include "kiln/tuned/nbody_tree_cuda.hpp"
#include "nbody_tree_check.hpp"

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "nbody_bench: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

template <class Call>
double median_ms(Call call, int repetitions) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int w = 0; w < 2; ++w) check(call(), "warm-up call");
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> ms;
  for (int r = 0; r < repetitions; ++r) {
    check(cudaEventRecord(start), "cudaEventRecord");
    check(call(), "timed call");
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double error_of(const float* d_acc, const std::vector<float>& bodies, std::int64_t n) {
  std::vector<float> acc(static_cast<std::size_t>(3 * n));
  check(cudaMemcpy(acc.data(), d_acc, acc.size() * sizeof(float), cudaMemcpyDeviceToHost), "download");
  const kiln::CheckResult r = kiln::nbody::compare_tree(acc.data(), bodies.data(), n,
                                                        kiln::nbody::bodies_to_compare(n, 1, kiln::nbody::kTreeSampleBodies));
  return r.unwritten == 0 && r.non_finite == 0 ? r.rel_l2 : INFINITY;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "nbody_bench: %s\nusage: nbody_bench [--tolerances T1,T2,...] [n ...]\n", why.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> tolerances = {1e-2, 1e-3, 1e-4};
  std::vector<std::int64_t> sizes;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--tolerances") {
      if (++a == argc) usage("--tolerances needs a value");
      tolerances.clear();
      std::string list = argv[a];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        char* end = nullptr;
        const std::string item = list.substr(at, comma - at);
        const double t = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !(t > 0)) usage("bad tolerance '" + item + "'");
        tolerances.push_back(t);
        at = comma + 1;
      }
    } else {
      char* end = nullptr;
      const long long n = std::strtoll(arg.c_str(), &end, 10);
      if (arg.empty() || *end != '\0' || n < 2 || n > kiln::kNbodyMaxBodies) usage("bad n '" + arg + "'");
      sizes.push_back(n);
    }
  }
  if (sizes.empty()) sizes = {1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20};

  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s; Plummer bodies; time: median of CUDA-event timings; error: relative RMS vs fp64 all-pairs\n\n",
              prop.name);
  std::printf("| n | method | tolerance | variant | time (ms) | relative RMS error | speed-up over all-pairs |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  bool missed = false;
  for (std::int64_t n : sizes) {
    const std::vector<float> bodies = kiln::nbody::make_bodies(kiln::nbody::Bodies::plummer, n, 1);
    float *d_bodies = nullptr, *d_acc = nullptr;
    void* workspace = nullptr;
    const std::size_t bytes = kiln::cuda::nbody_workspace_bytes(n);
    check(cudaMalloc(&d_bodies, bodies.size() * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_acc, 3 * n * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&workspace, bytes), "cudaMalloc");
    check(cudaMemcpy(d_bodies, bodies.data(), bodies.size() * sizeof(float), cudaMemcpyHostToDevice), "upload");
    const auto* b4 = reinterpret_cast<const float4*>(d_bodies);

    const double all_ms = median_ms([&] { return kiln::cuda::nbody_accelerations(b4, d_acc, n, nullptr); },
                                    n > (1 << 18) ? 3 : 7);
    const double all_err = error_of(d_acc, bodies, n);
    std::printf("| %lld | all-pairs | - | - | %.3f | %.2e | 1.0 |\n", static_cast<long long>(n), all_ms, all_err);
    for (double tolerance : tolerances) {
      const double ms = median_ms(
          [&] { return kiln::cuda::nbody_accelerations(b4, d_acc, n, tolerance, workspace, bytes, nullptr); }, 7);
      const double err = error_of(d_acc, bodies, n);
      const int digits = tolerance >= 1e-2 ? 2 : tolerance >= 1e-3 ? 3 : tolerance >= 1e-4 ? 4 : 0;
      const char* variant =
          digits ? kiln::tuned::nbody_tree_cuda::provenance(digits, {n, kiln::Choice{"plummer"}}).variant : "all-pairs";
      missed = missed || err > tolerance;
      std::printf("| %lld | with tolerance | %g | %s | %.3f | %.2e | %.1f |\n", static_cast<long long>(n), tolerance,
                  variant, ms, err, all_ms / ms);
    }
    cudaFree(d_bodies);
    cudaFree(d_acc);
    cudaFree(workspace);
  }
  return missed ? 1 : 0;
}
