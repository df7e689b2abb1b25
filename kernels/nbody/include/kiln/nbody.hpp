// N-body accelerations, tuned at build time, fp32:
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2),  eps = 0.01 (fixed)
// Bodies are (x, y, z, m), 16 bytes each; accelerations are (ax, ay, az), 12 bytes each. Any n
// from 0 (does nothing) to kNbodyMaxBodies.
//
// Two kinds of function:
//  - all-pairs (no tolerance): the sum above, in fp32 (relative L2 error about 1e-6);
//  - with a tolerance: accelerations within relative RMS error `tolerance` of the all-pairs sum,
//      sqrt(sum_i |a_i - a_i,all-pairs|^2 / sum_i |a_i,all-pairs|^2) <= tolerance,
//    as measured on the tuning problems (Plummer-sphere and uniform-cube bodies). The library
//    holds tuned buckets for 1e-2, 1e-3 and 1e-4; a tolerance is served by the loosest bucket
//    that is at least as strict (5e-3 by the 1e-3 bucket), one stricter than 1e-4 by all-pairs.
//    In each bucket the tuned dispatch over n chooses between all-pairs and a Barnes-Hut tree
//    (monopole and quadrupole moments, Morton-sorted radix tree), so the crossover n is measured.
//
// Every function checks its arguments first and throws kiln::NbodyError (naming the function and
// the argument) for bad ones: a negative n or one above kNbodyMaxBodies, a null pointer with
// n > 0, a misaligned pointer, a tolerance that is not a positive number, too small a workspace.
// Nothing is read or written then.
//
// The CPU functions run synchronously on every OpenMP thread. The CUDA functions (declared when
// KILN_HAVE_CUDA is defined or when compiled by nvcc) take device pointers, enqueue their kernels
// on `stream` and return the launch status.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace kiln {

inline constexpr std::int64_t kNbodyMaxBodies = std::int64_t{1} << 30;

// Invalid arguments; the message names the function, the argument and what is accepted.
class NbodyError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace kiln

namespace kiln::cpu {

// bodies: 4n floats (x, y, z, m per body); acc: 3n floats. All-pairs.
void nbody_accelerations(const float* bodies, float* acc, std::int64_t n);

// The same within relative RMS error `tolerance` (> 0) of all-pairs: all-pairs or the tree.
void nbody_accelerations(const float* bodies, float* acc, std::int64_t n, double tolerance);

}  // namespace kiln::cpu

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
namespace kiln::cuda {

// bodies: n float4 (x, y, z, m; 16-byte aligned); acc: 3n floats. All-pairs.
cudaError_t nbody_accelerations(const float4* bodies, float* acc, std::int64_t n, cudaStream_t stream);

// Device workspace the tree needs for n bodies (any tolerance; 256-byte aligned). Queries the
// current device (the sort's temporary storage).
std::size_t nbody_workspace_bytes(std::int64_t n);

// The same within relative RMS error `tolerance` (> 0) of all-pairs: all-pairs or the tree, whose
// build lives in `workspace` (at least nbody_workspace_bytes(n) bytes, 256-byte aligned; nothing
// is allocated). The workspace must not be shared with a call in flight on another stream.
cudaError_t nbody_accelerations(const float4* bodies, float* acc, std::int64_t n, double tolerance, void* workspace,
                                std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace kiln::cuda
#endif
