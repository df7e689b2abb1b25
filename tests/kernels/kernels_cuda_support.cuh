// Helpers the CUDA kernel cases of every family share (kernels_cuda_<family>.cu): a stream,
// enqueueing directly or through a graph, tampering with an output, and the config tables.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels_cuda_cases.hpp"
#include "kiln/cuda_support.hpp"
#include "problem_helpers.hpp"

namespace kiln_test::cuda_cases {


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
inline void enqueue(Mode mode, const std::function<void(cudaStream_t)>& run) {
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
inline void tamper(void* out, int bytes, const Case& c) {
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

// A family's cases by config name: the workload run, synchronised, tampered with and checked.
using Runner = std::vector<kiln::CheckResult> (*)(const kiln::Problem&, std::uint64_t, const Case&);

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

// Configs that split work over a thread-block cluster run only where the device launches them.
inline std::vector<std::string> runnable(const std::vector<std::string>& names, const std::string& unclustered) {
  int device = 0, clusters = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
  std::vector<std::string> kept;
  for (const std::string& name : names) {
    if (clusters || name.find(unclustered) != std::string::npos) kept.push_back(name);
  }
  return kept;
}

}  // namespace kiln_test::cuda_cases
