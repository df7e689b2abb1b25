// The CUDA kernel cases: a few configurations of each family's space, compiled for sm_89 and
// sm_90a, run through their workloads the way the harness runs them.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include "kernels_cuda_cases.hpp"
#include "kiln/cuda_support.hpp"
#include "nbody_cuda.cuh"
#include "problem_helpers.hpp"
#include "softmax_cuda.cuh"

namespace kiln_test::cuda_cases {
namespace {

// softmax_cuda.space.json corners: block per row (the default), warp per row with 8-byte
// accesses, four rows per block with a 1024-element cache, and the widest register cache.
struct SoftmaxBlockRow {
  static constexpr int THREADS = 256, ROW_WARPS = 8, CACHE = 32, VEC_BYTES = 16;
};
struct SoftmaxWarpRow {
  static constexpr int THREADS = 128, ROW_WARPS = 1, CACHE = 32, VEC_BYTES = 8;
};
struct SoftmaxFourRows {
  static constexpr int THREADS = 512, ROW_WARPS = 4, CACHE = 8, VEC_BYTES = 16;
};
struct SoftmaxWidest {
  static constexpr int THREADS = 1024, ROW_WARPS = 32, CACHE = 16, VEC_BYTES = 16;
};

// nbody_cuda.space.json corners: the default, the most register blocking, no blocking or split,
// and the widest split.
struct NbodyDefault {
  static constexpr int THREADS = 256, BODIES = 4, JSPLIT = 8, UNROLL = 4;
};
struct NbodyBlocked {
  static constexpr int THREADS = 512, BODIES = 8, JSPLIT = 16, UNROLL = 2;
};
struct NbodyPlain {
  static constexpr int THREADS = 128, BODIES = 1, JSPLIT = 1, UNROLL = 8;
};
struct NbodySplit {
  static constexpr int THREADS = 512, BODIES = 2, JSPLIT = 16, UNROLL = 8;
};

class Stream {
 public:
  Stream() { KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Enqueues `run` on a non-blocking stream, directly or through a captured graph, and waits.
void enqueue(Mode mode, const std::function<void(cudaStream_t)>& run) {
  Stream stream;
  if (mode == Mode::stream) {
    run(stream.get());
  } else {
    cudaGraph_t graph = nullptr;
    KILN_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    run(stream.get());
    KILN_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    KILN_CUDA_CHECK(instantiated);
    const cudaError_t launched = cudaGraphLaunch(exec, stream.get());
    const cudaError_t finished = cudaStreamSynchronize(stream.get());
    cudaGraphExecDestroy(exec);
    KILN_CUDA_CHECK(launched);
    KILN_CUDA_CHECK(finished);
  }
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

// Applies a tamper to element `c.element` of a device output whose elements are `bytes` wide
// (4: fp32, 2: bf16).
void tamper(void* out, int bytes, const Case& c) {
  if (c.tamper == Tamper::none) return;
  auto* at = static_cast<unsigned char*>(out) + c.element * bytes;
  if (bytes == 4) {
    float v;
    KILN_CUDA_CHECK(cudaMemcpy(&v, at, 4, cudaMemcpyDeviceToHost));
    if (c.tamper == Tamper::poison) v = kiln::float_of_bits(kiln::poison::f32);
    if (c.tamper == Tamper::nan) v = NAN;
    if (c.tamper == Tamper::offset) v += c.amount;
    KILN_CUDA_CHECK(cudaMemcpy(at, &v, 4, cudaMemcpyHostToDevice));
  } else {
    std::uint16_t h;
    KILN_CUDA_CHECK(cudaMemcpy(&h, at, 2, cudaMemcpyDeviceToHost));
    if (c.tamper == Tamper::poison) h = kiln::poison::bf16;
    if (c.tamper == Tamper::nan) h = kiln::bf16_from_float(NAN);
    if (c.tamper == Tamper::offset) h = kiln::bf16_from_float(kiln::float_from_bf16(h) + c.amount);
    KILN_CUDA_CHECK(cudaMemcpy(at, &h, 2, cudaMemcpyHostToDevice));
  }
}

template <class Config>
std::vector<kiln::CheckResult> run_softmax(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::softmax::CudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  tamper(w.output_device(), w.is_bf16() ? 2 : 4, c);
  return w.check();
}

template <class Config>
std::vector<kiln::CheckResult> run_nbody(const kiln::Problem& p, std::uint64_t seed, const Case& c) {
  kiln::nbody::CudaWorkload w(p, seed);
  w.poison();
  enqueue(c.mode, [&](cudaStream_t s) { w.run<Config>(s); });
  tamper(w.output_device(), 4, c);
  return w.check();
}

using SoftmaxRunner = std::vector<kiln::CheckResult> (*)(const kiln::Problem&, std::uint64_t, const Case&);
const std::map<std::string, SoftmaxRunner>& softmax_runners() {
  static const std::map<std::string, SoftmaxRunner> runners{
      {"THREADS256_ROW_WARPS8_CACHE32_VEC_BYTES16", &run_softmax<SoftmaxBlockRow>},
      {"THREADS128_ROW_WARPS1_CACHE32_VEC_BYTES8", &run_softmax<SoftmaxWarpRow>},
      {"THREADS512_ROW_WARPS4_CACHE8_VEC_BYTES16", &run_softmax<SoftmaxFourRows>},
      {"THREADS1024_ROW_WARPS32_CACHE16_VEC_BYTES16", &run_softmax<SoftmaxWidest>},
  };
  return runners;
}

const std::map<std::string, SoftmaxRunner>& nbody_runners() {
  static const std::map<std::string, SoftmaxRunner> runners{
      {"THREADS256_BODIES4_JSPLIT8_UNROLL4", &run_nbody<NbodyDefault>},
      {"THREADS512_BODIES8_JSPLIT16_UNROLL2", &run_nbody<NbodyBlocked>},
      {"THREADS128_BODIES1_JSPLIT1_UNROLL8", &run_nbody<NbodyPlain>},
      {"THREADS512_BODIES2_JSPLIT16_UNROLL8", &run_nbody<NbodySplit>},
  };
  return runners;
}

template <class Map>
std::vector<std::string> names_of(const Map& m) {
  std::vector<std::string> names;
  for (const auto& [name, runner] : m) names.push_back(name);
  return names;
}

template <class Map>
typename Map::mapped_type find_runner(const Map& m, const std::string& name) {
  const auto it = m.find(name);
  if (it == m.end()) throw std::invalid_argument("no CUDA test config named " + name);
  return it->second;
}

}  // namespace

bool device_available(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    return false;
  }
  if (count == 0) {
    why = "cudaGetDeviceCount reported 0 devices";
    return false;
  }
  return true;
}

std::vector<std::string> softmax_configs() { return names_of(softmax_runners()); }
std::vector<std::string> nbody_configs() { return names_of(nbody_runners()); }

std::vector<kiln::CheckResult> softmax_case(const std::string& config, std::int64_t rows, std::int64_t cols,
                                            const std::string& dtype, std::uint64_t seed, const Case& c) {
  return find_runner(softmax_runners(), config)(softmax_problem(rows, cols, dtype), seed, c);
}

std::vector<kiln::CheckResult> nbody_case(const std::string& config, std::int64_t n, std::uint64_t seed,
                                          const Case& c) {
  return find_runner(nbody_runners(), config)(nbody_problem(n), seed, c);
}

}  // namespace kiln_test::cuda_cases
