// Selective scan (the Mamba-1 forward recurrence), tuned at build time. For every batch b and
// channel d, with g = d / (channels / groups) the channel's group, over t = 0 .. length-1:
//
//   dt      = delta[b,d,t] (+ delta_bias[d]),  then softplus(dt) = log(1 + exp(dt)) if `softplus`
//   h[n]    = exp(dt * A[d,n]) * h[n] + dt * B[b,g,n,t] * u[b,d,t]      (h starts at 0)
//   y[b,d,t] = sum_n C[b,g,n,t] * h[n]  (+ D[d] * u[b,d,t])  (* silu(z[b,d,t]) when z is given)
//
// and, when `final_state` is given, final_state[b,d,n] = h[n] after the last step. The math is
// fp32; u, delta, z, B, C and y share the I/O dtype (fp32, bf16 or fp16; y rounded to nearest
// even); A, D, delta_bias and final_state are fp32. Layouts are contiguous, last index fastest:
//   u, delta, z, y: [batch, channels, length]    A: [channels, state]
//   B, C:           [batch, groups, state, length]   D, delta_bias: [channels]
//   final_state:    [batch, channels, state]
//
//   kiln::SelectiveScanParams p;
//   p.u = u; p.delta = delta; p.A = A; p.B = B; p.C = C; p.D = D; p.y = y;
//   p.z = z; p.delta_bias = delta_bias; p.softplus = true;   // optional, as in Mamba blocks
//   p.dtype = kiln::ScanDType::bf16;
//   p.batch = 1; p.channels = 5120; p.length = 8192; p.state = 16; p.groups = 1;
//   kiln::cpu::selective_scan(p);             // or kiln::cuda::selective_scan(p, stream)
//
// Sizes: batch, channels and length may be 0 (nothing to compute; with length 0 a given
// final_state is zeroed); state is 1 .. 256; groups >= 1 divides channels. A pointer may be null
// only when its tensor is optional (D, z, delta_bias, final_state) or empty. Every pointer is
// aligned to its element (2 bytes for bf16 and fp16, 4 for fp32). y and final_state must not
// overlap the inputs. Bad arguments throw SelectiveScanError naming the function, the argument
// and what is accepted; nothing is read or written then.
//
// The CPU function runs synchronously on every OpenMP thread. The CUDA function (declared when
// KILN_HAVE_CUDA is defined or when compiled by nvcc) takes device pointers, enqueues one kernel
// on `stream` (no allocation, no synchronisation) and throws std::runtime_error when CUDA refuses
// the launch.
#pragma once
#include <cstdint>
#include <stdexcept>

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace kiln {

enum class ScanDType { fp32, bf16, fp16 };

struct SelectiveScanParams {
  const void* u = nullptr;
  const void* delta = nullptr;
  const float* A = nullptr;
  const void* B = nullptr;
  const void* C = nullptr;
  const float* D = nullptr;           // optional: no skip term when null
  const void* z = nullptr;            // optional: no gate when null
  const float* delta_bias = nullptr;  // optional
  void* y = nullptr;
  float* final_state = nullptr;       // optional
  ScanDType dtype = ScanDType::fp32;
  std::int64_t batch = 0, channels = 0, length = 0, state = 0, groups = 1;
  bool softplus = false;
};

// The largest state size the kernels accept.
inline constexpr std::int64_t kMaxScanState = 256;

// Invalid arguments; the message names the function, the argument and what is accepted.
class SelectiveScanError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace cpu {
void selective_scan(const SelectiveScanParams& params);
}  // namespace cpu

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
namespace cuda {
void selective_scan(const SelectiveScanParams& params, cudaStream_t stream);
}  // namespace cuda
#endif

}  // namespace kiln
