// 2D convolution, fp32: out[y][x] = Σ in[y + i][x + j] · filter[i][j] over a 15×15 filter, the input
// padded by the caller ((H + 14) × (W + 14)). A block computes a (BLOCK_Y·TILE_Y) × (BLOCK_X·TILE_X)
// output tile from its input tile (plus the halo) in shared memory, each thread TILE_Y × TILE_X
// outputs strided by the block's size; the filter is read from constant memory or staged in
// shared memory; the shared rows are optionally padded by one word against bank conflicts.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::conv2d {

constexpr int kFilter = 15;  // filter height and width

// The filter, for the variants that read it from constant memory (each variant executable has
// its own copy; the workload uploads it).
__constant__ float filter_constant[kFilter * kFilter];

template <class Config>
struct ConvTraits {
  static constexpr int kBlockX = Config::BLOCK_X;
  static constexpr int kBlockY = Config::BLOCK_Y;
  static constexpr int kTileX = Config::TILE_X;
  static constexpr int kTileY = Config::TILE_Y;
  static constexpr int kPad = Config::PADDING;
  static constexpr bool kFilterShared = Config::FILTER_SMEM != 0;
  static constexpr int kThreads = kBlockX * kBlockY;
  static constexpr int kOutX = kBlockX * kTileX;  // output columns of a block
  static constexpr int kOutY = kBlockY * kTileY;
  static constexpr int kInX = kOutX + kFilter - 1;  // with the halo
  static constexpr int kInY = kOutY + kFilter - 1;
  static constexpr int kRow = kInX + kPad;
  static constexpr int kSmemBytes = 4 * (kInY * kRow + (kFilterShared ? kFilter * kFilter : 0));
  static_assert(kThreads >= 32 && kThreads <= 1024, "one block of whole warps");
  static_assert(kSmemBytes <= 48 * 1024, "within a block's default shared memory");
};

template <class Config>
__global__ void __launch_bounds__(ConvTraits<Config>::kThreads)
    conv2d_kernel(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ filter, int W, int H) {
  using T = ConvTraits<Config>;
  __shared__ float tile[T::kInY][T::kRow];
  __shared__ float filter_shared[T::kFilterShared ? kFilter * kFilter : 1];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int t = ty * T::kBlockX + tx;
  const int x0 = blockIdx.x * T::kOutX;
  const int y0 = blockIdx.y * T::kOutY;
  const int in_w = W + kFilter - 1;
  const int in_h = H + kFilter - 1;
  for (int i = ty; i < T::kInY; i += T::kBlockY) {
    for (int j = tx; j < T::kInX; j += T::kBlockX) {
      const int y = y0 + i;
      const int x = x0 + j;
      tile[i][j] = y < in_h && x < in_w ? in[static_cast<std::int64_t>(y) * in_w + x] : 0.0f;
    }
  }
  if constexpr (T::kFilterShared) {
    for (int k = t; k < kFilter * kFilter; k += T::kThreads) filter_shared[k] = filter[k];
  }
  __syncthreads();

  float sum[T::kTileY][T::kTileX] = {};
  // The filter's rows stay a loop: unrolled as well, the largest tiles would be thousands of
  // instructions and a minute of compile each.
#pragma unroll 1
  for (int i = 0; i < kFilter; ++i) {
#pragma unroll
    for (int j = 0; j < kFilter; ++j) {
      const float f = T::kFilterShared ? filter_shared[i * kFilter + j] : filter_constant[i * kFilter + j];
#pragma unroll
      for (int a = 0; a < T::kTileY; ++a) {
#pragma unroll
        for (int b = 0; b < T::kTileX; ++b) sum[a][b] += tile[ty + a * T::kBlockY + i][tx + b * T::kBlockX + j] * f;
      }
    }
  }
#pragma unroll
  for (int a = 0; a < T::kTileY; ++a) {
#pragma unroll
    for (int b = 0; b < T::kTileX; ++b) {
      const int y = y0 + ty + a * T::kBlockY;
      const int x = x0 + tx + b * T::kBlockX;
      if (y < H && x < W) out[static_cast<std::int64_t>(y) * W + x] = sum[a][b];
    }
  }
}

// Launches the convolution of the padded input `in` ((H + 14) × (W + 14)) into `out` (H × W);
// `filter` is the device copy (the constant copy must hold the same values).
template <class Config>
cudaError_t launch(float* out, const float* in, const float* filter, int W, int H, cudaStream_t stream) {
  using T = ConvTraits<Config>;
  if (W <= 0 || H <= 0) return cudaErrorInvalidValue;
  const dim3 grid((W + T::kOutX - 1) / T::kOutX, (H + T::kOutY - 1) / T::kOutY);
  conv2d_kernel<Config><<<grid, dim3(T::kBlockX, T::kBlockY), 0, stream>>>(out, in, filter, W, H);
  return cudaGetLastError();
}

}  // namespace kiln::conv2d
