// A C ABI over the tuned CUDA softmax for kernels/softmax/bench/bench_softmax.py (ctypes): the
// public API (kiln/softmax.hpp), dispatching through the generated header like any caller, and the
// variant that dispatch picks for a problem.
#include <cstdint>

#include "kiln/softmax.hpp"
#include "kiln/tuned/softmax_cuda.hpp"

extern "C" {

// dtype 0: fp32, 1: bf16. Returns the cudaError_t of the launch.
int kiln_softmax_bench_forward(int dtype, const void* in, void* out, std::int64_t rows, std::int64_t cols,
                               void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (dtype == 0) return kiln::cuda::softmax(static_cast<const float*>(in), static_cast<float*>(out), rows, cols, s);
  return kiln::cuda::softmax(static_cast<const __nv_bfloat16*>(in), static_cast<__nv_bfloat16*>(out), rows, cols, s);
}

const char* kiln_softmax_bench_dispatched(int dtype, std::int64_t rows, std::int64_t cols) {
  return kiln::tuned::softmax_cuda::provenance({rows, cols, kiln::Choice{dtype == 0 ? "fp32" : "bf16"}}).variant;
}

}  // extern "C"
