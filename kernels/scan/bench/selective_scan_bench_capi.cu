// A C ABI over the tuned CUDA selective scan for kernels/scan/bench/bench_selective_scan.py
// (ctypes): the public function (kiln/selective_scan.hpp), dispatching through the generated
// header like any caller, and the variant that dispatch picks for a problem.
#include <cstdint>
#include <cstring>
#include <exception>

#include "kiln/selective_scan.hpp"
#include "kiln/tuned/selective_scan_cuda.hpp"

namespace {

kiln::ScanDType dtype_of(int dtype) {
  return dtype == 0 ? kiln::ScanDType::fp32 : dtype == 1 ? kiln::ScanDType::bf16 : kiln::ScanDType::fp16;
}

const char* kDtypeNames[] = {"fp32", "bf16", "fp16"};

}  // namespace

extern "C" {

// dtype 0: fp32, 1: bf16, 2: fp16. Optional pointers may be null. Returns 0, or 1 with the
// exception's message in `error` (at most error_bytes - 1 characters).
int kiln_selective_scan_bench_forward(int dtype, const void* u, const void* delta, const float* A, const void* B,
                                      const void* C, const float* D, const void* z, const float* delta_bias, void* y,
                                      float* final_state, std::int64_t batch, std::int64_t channels,
                                      std::int64_t length, std::int64_t state, std::int64_t groups, int softplus,
                                      void* stream, char* error, std::int64_t error_bytes) {
  kiln::SelectiveScanParams p;
  p.u = u;
  p.delta = delta;
  p.A = A;
  p.B = B;
  p.C = C;
  p.D = D;
  p.z = z;
  p.delta_bias = delta_bias;
  p.y = y;
  p.final_state = final_state;
  p.dtype = dtype_of(dtype);
  p.batch = batch;
  p.channels = channels;
  p.length = length;
  p.state = state;
  p.groups = groups;
  p.softplus = softplus != 0;
  try {
    kiln::cuda::selective_scan(p, static_cast<cudaStream_t>(stream));
  } catch (const std::exception& e) {
    if (error_bytes > 0) {
      std::strncpy(error, e.what(), static_cast<std::size_t>(error_bytes - 1));
      error[error_bytes - 1] = '\0';
    }
    return 1;
  }
  return 0;
}

const char* kiln_selective_scan_bench_dispatched(int dtype, std::int64_t batch, std::int64_t channels,
                                                 std::int64_t length, std::int64_t state, std::int64_t groups) {
  return kiln::tuned::selective_scan_cuda::provenance({batch, channels, length, state, groups, kiln::Choice{kDtypeNames[dtype]}})
      .variant;
}

}  // extern "C"
