// The CUDA N-body entry points with a tolerance: the tolerance picks the family member (its
// bucket), the member's tuned dispatch over n picks all-pairs or the tree and its configuration.
#include <stdexcept>
#include <string>

#include "kiln/nbody.hpp"
#include "kiln/tuned/nbody_tree_cuda.hpp"
#include "nbody_args.hpp"
#include "nbody_tree_cuda_kernels.cuh"

namespace kiln::cuda {

std::size_t nbody_workspace_bytes(std::int64_t n) {
  constexpr const char* kWho = "kiln::cuda::nbody_workspace_bytes";
  ::kiln::nbody::require_count(kWho, n);
  if (n <= 1) return 0;  // no tree below two bodies
  std::size_t bytes = 0;
  const cudaError_t status = ::kiln::nbody::tree_workspace_bytes(n, bytes);
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(kWho) + ": the sort's storage query failed: " + cudaGetErrorString(status));
  return bytes;
}

cudaError_t nbody_accelerations(const float4* bodies, float* acc, std::int64_t n, double tolerance, void* workspace,
                                std::size_t workspace_bytes, cudaStream_t stream) {
  constexpr const char* kWho = "kiln::cuda::nbody_accelerations";
  ::kiln::nbody::require_count(kWho, n);
  ::kiln::nbody::require_pointer(kWho, "bodies", bodies, n, alignof(float4));
  ::kiln::nbody::require_pointer(kWho, "acc", acc, n, alignof(float));
  ::kiln::nbody::require_pointer(kWho, "workspace", workspace, 0, 256);
  const int digits = ::kiln::nbody::tolerance_digits(kWho, tolerance);
  // Every tree configuration needs the same workspace; all-pairs needs none, but the size asked for
  // does not depend on which one the dispatch picks, so a caller's buffer is right or wrong
  // whatever the tolerance and the record.
  const std::size_t need = nbody_workspace_bytes(n);
  if (workspace_bytes < need || (need > 0 && workspace == nullptr))
    ::kiln::nbody::reject(kWho, "workspace must hold " + std::to_string(need) + " bytes (nbody_workspace_bytes), got " +
                                    std::to_string(workspace == nullptr ? 0 : workspace_bytes));
  if (n == 0) return cudaSuccess;
  if (digits == 0) return nbody_accelerations(bodies, acc, n, stream);  // stricter than every tuned bucket
  return kiln::tuned::nbody_tree_cuda::dispatch(digits, {n, kiln::Choice{"plummer"}}, [&](auto config) {
    return ::kiln::nbody::tree_launch<decltype(config)>(bodies, acc, n, workspace, workspace_bytes, stream);
  });
}

}  // namespace kiln::cuda
