// kiln_probe_cuda: identifies the GPU (name, compute capability, driver and CUDA versions) and
// measures the ceilings the floors use: device-to-device copy bandwidth (bytes read + written,
// buffers many times the L2), FP32 FMA throughput, and one kernel's cost inside a CUDA graph.
// Exits 77 when there is no CUDA device.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/cuda_support.hpp"
#include "kiln/model/protocol.hpp"

namespace {

constexpr int kChains = 8;
constexpr int kIters = 4096;

__global__ void fma_chains(float* out, float mul, float add) {
  float acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = add * static_cast<float>(threadIdx.x + c);
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = fmaf(acc[c], mul, add);
  }
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += acc[c];
  if (sum == 12345.0f) out[blockIdx.x] = sum;  // keeps the chains alive; never true in practice
}

__global__ void empty_kernel() {}

// The driver's own version string ("580.159.04"), read through NVML when it is there.
std::string driver_version() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
  if (lib == nullptr) return "unknown";
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto version = reinterpret_cast<VersionFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  std::string result = "unknown";
  char buf[96] = {};
  if (init != nullptr && version != nullptr && init() == 0 && version(buf, sizeof buf) == 0) result = buf;
  dlclose(lib);
  return result;
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

template <class F>
double median_seconds(int reps, cudaStream_t s, F&& body) {
  cudaEvent_t a, b;
  KILN_CUDA_CHECK(cudaEventCreate(&a));
  KILN_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    KILN_CUDA_CHECK(cudaEventRecord(a, s));
    body();
    KILN_CUDA_CHECK(cudaEventRecord(b, s));
    KILN_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

// kiln_probe_cuda [--describe]: the first GPU and its measured rates, or with --describe what it
// is without measuring (the tuner's warm re-run takes the rates its worklog holds for the context).
int main(int argc, char** argv) {
  const bool describe = argc == 2 && std::strcmp(argv[1], "--describe") == 0;
  if (argc > 1 && !describe) {
    std::fprintf(stderr, "usage: %s [--describe]\n", argv[0]);
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "kiln_probe_cuda: no CUDA device found\n");
    return 77;
  }
  try {
    cudaDeviceProp p{};
    KILN_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    int driver_api = 0, runtime = 0;
    KILN_CUDA_CHECK(cudaDriverGetVersion(&driver_api));
    KILN_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    auto described = [&] {
      kiln::model::DeviceInfo d;
      d.backend = "cuda";
      d.name = p.name;
      d.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
      d.driver = driver_version();
      d.cuda_driver_api = version_text(driver_api);
      d.cuda_runtime = version_text(runtime);
      d.sm_count = p.multiProcessorCount;
      d.cache_bytes = p.l2CacheSize;
      d.max_smem_per_block = static_cast<std::int64_t>(p.sharedMemPerBlockOptin);
      d.memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
      return d;
    };
    if (describe) {
      std::printf("%s\n", kiln::model::to_json(described()).dump().c_str());
      return 0;
    }
    cudaStream_t s;
    KILN_CUDA_CHECK(cudaStreamCreate(&s));

    std::size_t bytes = std::max<std::size_t>(std::size_t{1} << 30, 16 * static_cast<std::size_t>(p.l2CacheSize));
    kiln::cuda::DeviceBuffer<char> src(bytes), dst(bytes);
    KILN_CUDA_CHECK(cudaMemsetAsync(src.get(), 1, bytes, s));
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
    double copy_s = median_seconds(9, s, [&] {
      KILN_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
    });

    kiln::cuda::DeviceBuffer<float> sink(4096);
    int blocks = p.multiProcessorCount * 4, threads = 512;
    fma_chains<<<blocks, threads, 0, s>>>(sink.get(), 0.9999f, 1e-3f);
    KILN_CUDA_CHECK(cudaGetLastError());
    double fma_s = median_seconds(7, s, [&] { fma_chains<<<blocks, threads, 0, s>>>(sink.get(), 0.9999f, 1e-3f); });
    double flops = 2.0 * kChains * kIters * static_cast<double>(blocks) * threads;

    constexpr int kNodes = 200;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    KILN_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kNodes; ++i) empty_kernel<<<1, 32, 0, s>>>();
    KILN_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    KILN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    KILN_CUDA_CHECK(cudaGraphLaunch(exec, s));
    double graph_s = median_seconds(9, s, [&] { KILN_CUDA_CHECK(cudaGraphLaunch(exec, s)); });
    KILN_CUDA_CHECK(cudaStreamSynchronize(s));

    kiln::model::DeviceInfo d = described();
    d.measured = {{"dram_bytes_per_s", 2.0 * static_cast<double>(bytes) / copy_s},
                  {"fp32_flops_per_s", flops / fma_s},
                  {"launch_s", graph_s / kNodes}};
    std::printf("%s\n", kiln::model::to_json(d).dump().c_str());
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_probe_cuda: %s\n", e.what());
    return 3;
  }
  return 0;
}
