// A C ABI over the tuned CUDA top-k for kernels/topk/bench/bench_topk.py (ctypes): the public API
// (kiln/topk.hpp), dispatching through the generated header like any caller, the streaming path
// over device chunks, and the variant the dispatch picks for a problem.
#include <cstdint>
#include <exception>
#include <cstdio>

#include "kiln/topk.hpp"
#include "kiln/tuned/topk_cuda.hpp"

extern "C" {

std::size_t kiln_topk_bench_workspace(std::int64_t rows, std::int64_t n, std::int64_t k) {
  return kiln::cuda::topk_workspace_bytes(rows, n, k, kiln::TopkMode::largest);
}

// Returns the cudaError_t of the launch, or -1 when the arguments were refused (printed).
int kiln_topk_bench_forward(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, float* values,
                            std::int64_t* indices, void* workspace, std::size_t workspace_bytes, void* stream) {
  try {
    return kiln::cuda::topk(in, rows, n, k, kiln::TopkMode::largest, values, indices, workspace, workspace_bytes,
                            static_cast<cudaStream_t>(stream));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return -1;
  }
}

// The streaming path: `chunks` column chunks of a device matrix whose rows are `n` apart, each
// copied to a contiguous device buffer `scratch` (rows x chunk) and fed with topk_feed; results
// to host arrays values and indices (rows x k). Returns 0, a cudaError_t, or -1 (printed).
int kiln_topk_bench_streamed(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, int chunks,
                             float* scratch, float* values, std::int64_t* indices, void* stream) {
  try {
    auto s = static_cast<cudaStream_t>(stream);
    kiln::TopkState state(rows, k, kiln::TopkMode::largest);
    const std::int64_t step = (n + chunks - 1) / chunks;
    for (std::int64_t c = 0; c < n; c += step) {
      const std::int64_t width = c + step < n ? step : n - c;
      cudaError_t status = cudaMemcpy2DAsync(scratch, width * sizeof(float), in + c, n * sizeof(float),
                                             width * sizeof(float), rows, cudaMemcpyDeviceToDevice, s);
      if (status == cudaSuccess) status = kiln::cuda::topk_feed(state, scratch, width, c, s);
      if (status != cudaSuccess) return status;
    }
    state.finalize(values, indices);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return -1;
  }
}

const char* kiln_topk_bench_dispatched(std::int64_t rows, std::int64_t n, std::int64_t k) {
  return kiln::tuned::topk_cuda::provenance({rows, n, k, kiln::Choice{"largest"}, kiln::Choice{"normal"}}).variant;
}

}  // extern "C"
