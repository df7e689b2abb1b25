// The CUDA top-k entry points: each problem goes to the variant tuned for its bucket.
#include <vector>

#include "kiln/topk.hpp"
#include "kiln/tuned/topk_cuda.hpp"
#include "topk_args.hpp"
#include "topk_cuda_launch.cuh"

namespace kiln::cuda {

namespace {

kiln::tuned::topk_cuda::Problem problem_of(std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode) {
  return {rows, n, k, kiln::Choice{mode == TopkMode::smallest ? "smallest" : "largest"}, kiln::Choice{"normal"}};
}

void require_problem(const char* who, std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode) {
  ::kiln::topk::require_sizes(who, rows, n, k, kTopkMaxK);
  ::kiln::topk::require_mode(who, mode);
}

}  // namespace

std::size_t topk_workspace_bytes(std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode) {
  require_problem("kiln::cuda::topk_workspace_bytes", rows, n, k, mode);
  if (rows == 0) return 0;
  return kiln::tuned::topk_cuda::dispatch(problem_of(rows, n, k, mode), [&](auto config) {
    return ::kiln::topk::workspace_bytes<decltype(config)>(rows, n, k);
  });
}

cudaError_t topk(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, TopkMode mode, float* values,
                 std::int64_t* indices, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  constexpr const char* kWho = "kiln::cuda::topk";
  require_problem(kWho, rows, n, k, mode);
  ::kiln::topk::require_pointer(kWho, "in", in, rows * n);
  ::kiln::topk::require_pointer(kWho, "values", values, rows * k);
  ::kiln::topk::require_pointer(kWho, "indices", indices, rows * k);
  ::kiln::topk::require_aligned(kWho, "in", in, alignof(float));
  ::kiln::topk::require_aligned(kWho, "values", values, alignof(float));
  ::kiln::topk::require_aligned(kWho, "indices", indices, alignof(std::int64_t));
  ::kiln::topk::require_aligned(kWho, "workspace", workspace, alignof(std::uint64_t));
  if (rows == 0) return cudaSuccess;
  const bool smallest = mode == TopkMode::smallest;
  return kiln::tuned::topk_cuda::dispatch(problem_of(rows, n, k, mode), [&](auto config) {
    using Config = decltype(config);
    const std::size_t need = ::kiln::topk::workspace_bytes<Config>(rows, n, k);
    if (workspace_bytes < need || (need > 0 && workspace == nullptr))
      ::kiln::topk::reject(kWho, "workspace must hold " + std::to_string(need) + " bytes (topk_workspace_bytes), got " +
                                     std::to_string(workspace == nullptr ? 0 : workspace_bytes));
    return ::kiln::topk::launch<Config>(in, rows, n, k, smallest, values, indices, workspace, stream);
  });
}

cudaError_t topk_feed(TopkState& state, const float* chunk, std::int64_t chunk_n, std::int64_t offset,
                      cudaStream_t stream) {
  constexpr const char* kWho = "kiln::cuda::topk_feed";
  const std::int64_t rows = state.rows();
  if (chunk_n < 0) ::kiln::topk::reject(kWho, "chunk_n must be >= 0, got " + std::to_string(chunk_n));
  if (offset < 0) ::kiln::topk::reject(kWho, "offset must be >= 0, got " + std::to_string(offset));
  if (offset > INT64_MAX - chunk_n) ::kiln::topk::reject(kWho, "offset + chunk_n overflows 64 bits");
  if (chunk_n == 0 || rows == 0) {
    // Nothing to select; the state still counts the columns.
    state.feed_selected(nullptr, nullptr, std::min(state.k(), chunk_n), chunk_n);
    return cudaSuccess;
  }
  const std::int64_t count = std::min(state.k(), chunk_n);
  require_problem(kWho, rows, chunk_n, count, state.mode());
  ::kiln::topk::require_pointer(kWho, "chunk", chunk, rows * chunk_n);
  ::kiln::topk::require_aligned(kWho, "chunk", chunk, alignof(float));
  const std::size_t ws = topk_workspace_bytes(rows, chunk_n, count, state.mode());
  const std::size_t out_bytes = static_cast<std::size_t>(rows * count) * (sizeof(float) + sizeof(std::int64_t));
  void* buffer = nullptr;
  const std::size_t ws_at = (out_bytes + 7) / 8 * 8;  // indices first, then values, then the 8-aligned workspace
  cudaError_t status = cudaMallocAsync(&buffer, ws_at + ws, stream);
  if (status != cudaSuccess) return status;
  auto* indices = static_cast<std::int64_t*>(buffer);
  auto* values = reinterpret_cast<float*>(indices + rows * count);
  void* workspace = ws > 0 ? static_cast<void*>(static_cast<char*>(buffer) + ws_at) : nullptr;
  std::vector<float> host_values(static_cast<std::size_t>(rows * count));
  std::vector<std::int64_t> host_indices(host_values.size());
  status = topk(chunk, rows, chunk_n, count, state.mode(), values, indices, workspace, ws, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(host_values.data(), values, host_values.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(host_indices.data(), indices, host_indices.size() * sizeof(std::int64_t),
                             cudaMemcpyDeviceToHost, stream);
  const cudaError_t freed = cudaFreeAsync(buffer, stream);
  const cudaError_t synced = cudaStreamSynchronize(stream);
  if (status == cudaSuccess) status = freed != cudaSuccess ? freed : synced;
  if (status != cudaSuccess) return status;
  for (auto& i : host_indices) i += offset;
  state.feed_selected(host_values.data(), host_indices.data(), count, chunk_n);
  return cudaSuccess;
}

}  // namespace kiln::cuda
