// Row softmax, tuned at build time: out[r, :] = softmax(in[r, :]) over a rows x cols row-major
// matrix, computed in fp32 with the row max subtracted. Any rows >= 0 and cols >= 0 (zero does
// nothing) whose matrix's bytes fit 63 bits.
//
// Every function checks its arguments first and throws kiln::SoftmaxError (naming the function
// and the argument) for bad ones: a negative rows or cols, a matrix past 2^63 bytes, a null pointer
// with elements to read or write, a pointer not aligned to its element (4 bytes for fp32, 2 for
// bf16), and an out that overlaps in without being in itself. Nothing is read or written then.
// in == out computes in place on the CPU; the CUDA functions need in and out apart.
//
// CPU functions run synchronously on every OpenMP thread. The CUDA functions (declared when
// KILN_HAVE_CUDA is defined or when compiled by nvcc) take device pointers, enqueue one kernel on
// `stream` and return its launch status.
#pragma once
#include <cstdint>
#include <stdexcept>

#if defined(KILN_HAVE_CUDA) || defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#endif

namespace kiln {

// Invalid arguments; the message names the function, the argument and what is accepted.
class SoftmaxError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace kiln

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
