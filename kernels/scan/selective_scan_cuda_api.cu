// The CUDA selective-scan entry point: argument checks, then the variant tuned for the problem.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>

#include "kiln/selective_scan.hpp"
#include "kiln/tuned/selective_scan_cuda.hpp"
#include "selective_scan_cuda_kernels.cuh"
#include "selective_scan_params.hpp"

namespace kiln::cuda {

void selective_scan(const SelectiveScanParams& params, cudaStream_t stream) {
  constexpr const char* kFunction = "kiln::cuda::selective_scan";
  ::kiln::scan::validate(params, kFunction);
  // One block per channel at most: the grid's x dimension holds below 2^31 blocks.
  if (params.batch * params.channels >= (std::int64_t{1} << 31)) {
    throw SelectiveScanError(std::string(kFunction) + ": batch x channels must be below 2^31, got " +
                             std::to_string(params.batch * params.channels));
  }
  const kiln::tuned::selective_scan_cuda::Problem problem{params.batch, params.channels, params.length, params.state,
                                                          params.groups, kiln::Choice{::kiln::scan::dtype_name(params.dtype)}};
  const cudaError_t status = kiln::tuned::selective_scan_cuda::dispatch(problem, [&](auto config) {
    using Config = decltype(config);
    switch (params.dtype) {
      case ScanDType::bf16: return ::kiln::scan::launch<Config>(::kiln::scan::args_for<__nv_bfloat16>(params), stream);
      case ScanDType::fp16: return ::kiln::scan::launch<Config>(::kiln::scan::args_for<__half>(params), stream);
      case ScanDType::fp32: break;
    }
    return ::kiln::scan::launch<Config>(::kiln::scan::args_for<float>(params), stream);
  });
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(kFunction) + ": launch failed: " + cudaGetErrorName(status) + " (" +
                             cudaGetErrorString(status) + ")");
  }
}

}  // namespace kiln::cuda
