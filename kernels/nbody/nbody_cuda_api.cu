// The CUDA all-pairs N-body entry point: each problem goes to the variant tuned for its bucket.
#include "kiln/nbody.hpp"
#include "kiln/tuned/nbody_cuda.hpp"
#include "nbody_args.hpp"
#include "nbody_cuda_kernels.cuh"

namespace kiln::cuda {

cudaError_t nbody_accelerations(const float4* bodies, float* acc, std::int64_t n, cudaStream_t stream) {
  constexpr const char* kWho = "kiln::cuda::nbody_accelerations";
  ::kiln::nbody::require_count(kWho, n);
  ::kiln::nbody::require_pointer(kWho, "bodies", bodies, n, alignof(float4));
  ::kiln::nbody::require_pointer(kWho, "acc", acc, n, alignof(float));
  if (n == 0) return cudaSuccess;
  return kiln::tuned::nbody_cuda::dispatch({n}, [&](auto config) {
    return ::kiln::nbody::launch<decltype(config)>(bodies, acc, n, stream);
  });
}

}  // namespace kiln::cuda
