// The CUDA top-k launch for every ALGO of topk_cuda.space.json and the workspace it needs.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "topk_cuda_air.cuh"
#include "topk_cuda_kernels.cuh"
#include "topk_cuda_regs.cuh"
#include "topk_cuda_sample.cuh"
#include "topk_cuda_shared.cuh"
#include "topk_cuda_stream.cuh"

namespace kiln::topk {

// Workspace bytes of Config's launch: the split lists (none with one part), air's states,
// histograms, candidate buffers and results, stream's row states and candidate lists, or none
// (shared, regs, sample).
template <class Config>
std::size_t workspace_bytes(std::int64_t rows, std::int64_t n, std::int64_t k) {
  if constexpr (CudaTraits<Config>::kAir) {
    return air_workspace_bytes(Config::BITS, rows, n, k);
  } else if constexpr (CudaTraits<Config>::kStream) {
    return stream_workspace_bytes(rows, n, k);
  } else if constexpr (CudaTraits<Config>::kShared || CudaTraits<Config>::kRegs || CudaTraits<Config>::kSample) {
    return 0;
  } else {
    const int parts = parts_of(Config::SPLIT, rows, n);
    if (parts == 1) return 0;
    return static_cast<std::size_t>(rows) * parts * static_cast<std::size_t>(list_length(k)) * sizeof(std::uint64_t);
  }
}

// The most any variant of the space needs (the workload allocates it once, so that no run does).
inline std::size_t max_workspace_bytes(std::int64_t rows, std::int64_t n, std::int64_t k) {
  const int parts = parts_of(kMaxSplit, rows, n);
  const std::size_t split =
      parts == 1 ? 0 : static_cast<std::size_t>(rows) * parts * static_cast<std::size_t>(list_length(k)) * 8;
  return std::max({split, air_workspace_bytes(11, rows, n, k), stream_workspace_bytes(rows, n, k)});
}

// Enqueues the top-k of rows x n into values and indices (rows x k). Requires 1 <= k <= n,
// k <= kMaxList, n < 2^31 and workspace_bytes<Config>(rows, n, k) bytes at `workspace` (8-aligned).
template <class Config>
cudaError_t launch(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest, float* values,
                   std::int64_t* indices, void* workspace, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if constexpr (CudaTraits<Config>::kAir) {
    return launch_air<Config>(in, rows, n, k, smallest, values, indices, workspace, stream);
  } else if constexpr (CudaTraits<Config>::kShared) {
    return launch_shared<Config>(in, rows, n, k, smallest, values, indices, stream);
  } else if constexpr (CudaTraits<Config>::kRegs) {
    return launch_regs<Config>(in, rows, n, k, smallest, values, indices, stream);
  } else if constexpr (CudaTraits<Config>::kSample) {
    return launch_sample<Config>(in, rows, n, k, smallest, values, indices, stream);
  } else if constexpr (CudaTraits<Config>::kStream) {
    return launch_stream<Config>(in, rows, n, k, smallest, values, indices, workspace, stream);
  } else {
    auto* lists = static_cast<std::uint64_t*>(workspace);
    const int parts = parts_of(Config::SPLIT, rows, n);
    const auto blocks = static_cast<unsigned>(rows * parts);
    topk_kernel<Config><<<blocks, Config::THREADS, 0, stream>>>(in, n, static_cast<int>(k), smallest, parts, values,
                                                                indices, lists);
    if (parts > 1) {
      merge_kernel<Config><<<static_cast<unsigned>(rows), Config::THREADS, 0, stream>>>(
          in, n, static_cast<int>(k), parts, lists, values, indices);
    }
    return cudaGetLastError();
  }
}

}  // namespace kiln::topk
