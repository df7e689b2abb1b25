// Row softmax, tuned at build time: out[r, :] = softmax(in[r, :]) over a rows x cols row-major
// matrix, computed in fp32 with the row max subtracted. Any rows and cols (zero does nothing).
//
// CPU functions run synchronously on every OpenMP thread. The CUDA functions (declared when
// KILN_HAVE_CUDA is defined or when compiled by nvcc) take device pointers, enqueue one kernel on
// `stream` and return its launch status; in and out must not overlap.
#pragma once
#include <cstdint>

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#endif

namespace kiln::cpu {

void softmax(const float* in, float* out, std::int64_t rows, std::int64_t cols);

// bf16 elements as raw bit patterns (the upper half of an fp32); rounded to nearest even.
void softmax_bf16(const std::uint16_t* in, std::uint16_t* out, std::int64_t rows, std::int64_t cols);

}  // namespace kiln::cpu

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
namespace kiln::cuda {

cudaError_t softmax(const float* in, float* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream);
cudaError_t softmax(const __nv_bfloat16* in, __nv_bfloat16* out, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream);

}  // namespace kiln::cuda
#endif
