// The arguments every selective-scan kernel takes (CPU and CUDA), typed by the I/O element, and
// the host element types of the CPU kernels: fp32 as float, bf16 and fp16 as distinct 16-bit
// wrappers so that the two half-width formats cannot be confused.
#pragma once
#include <cstdint>

namespace kiln::scan {

struct Bf16 {
  std::uint16_t bits;
};
struct F16 {
  std::uint16_t bits;
};

// T is the I/O element: float, Bf16 or F16 on the host; float, __nv_bfloat16 or __half on the
// device. Sizes follow kiln/selective_scan.hpp; optional pointers are null when absent.
template <class T>
struct ScanArgs {
  const T* u = nullptr;
  const T* delta = nullptr;
  const float* A = nullptr;
  const T* B = nullptr;
  const T* C = nullptr;
  const float* D = nullptr;
  const T* z = nullptr;
  const float* delta_bias = nullptr;
  T* y = nullptr;
  float* final_state = nullptr;
  std::int64_t batch = 0, channels = 0, length = 0, state = 0, groups = 1;
  bool softplus = false;
};

}  // namespace kiln::scan
