// The CUDA softmax entry points: each problem goes to the variant tuned for its bucket.
#include "kiln/softmax.hpp"
#include "kiln/tuned/softmax_cuda.hpp"
#include "softmax_args.hpp"
#include "softmax_cuda_kernels.cuh"

namespace kiln::cuda {

cudaError_t softmax(const float* in, float* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  ::kiln::softmax::require_arguments("kiln::cuda::softmax (fp32)", in, out, rows, cols, sizeof(float), false);
  return kiln::tuned::softmax_cuda::dispatch({rows, cols, kiln::Choice{"fp32"}}, [&](auto config) {
    return ::kiln::softmax::launch<decltype(config)>(in, out, rows, cols, stream);
  });
}

cudaError_t softmax(const __nv_bfloat16* in, __nv_bfloat16* out, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream) {
  ::kiln::softmax::require_arguments("kiln::cuda::softmax (bf16)", in, out, rows, cols, sizeof(__nv_bfloat16), false);
  return kiln::tuned::softmax_cuda::dispatch({rows, cols, kiln::Choice{"bf16"}}, [&](auto config) {
    return ::kiln::softmax::launch<decltype(config)>(in, out, rows, cols, stream);
  });
}

}  // namespace kiln::cuda
