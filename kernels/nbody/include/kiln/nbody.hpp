// All-pairs N-body accelerations, tuned at build time, fp32:
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2),  eps = 0.01 (fixed)
// Bodies are (x, y, z, m), 16 bytes each; accelerations are (ax, ay, az), 12 bytes each. Any n
// (zero does nothing; the CUDA path accepts n up to 2^30).
//
// The CPU function runs synchronously on every OpenMP thread. The CUDA function (declared when
// KILN_HAVE_CUDA is defined or when compiled by nvcc) takes device pointers, enqueues one kernel
// on `stream` and returns its launch status.
#pragma once
#include <cstdint>

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace kiln::cpu {

// bodies: 4n floats (x, y, z, m per body); acc: 3n floats.
void nbody_accelerations(const float* bodies, float* acc, std::int64_t n);

}  // namespace kiln::cpu

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
namespace kiln::cuda {

// bodies: n float4 (x, y, z, m); acc: 3n floats.
cudaError_t nbody_accelerations(const float4* bodies, float* acc, std::int64_t n, cudaStream_t stream);

}  // namespace kiln::cuda
#endif
