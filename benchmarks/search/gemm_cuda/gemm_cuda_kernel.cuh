// y = x · wᵀ in bf16 with fp32 accumulation (x [M, K], w [N, K], y [M, N], all row-major: the
// product of a linear layer), on mma.sync tensor cores: a multistage cp.async pipeline into
// XOR-swizzled shared memory, ldmatrix into registers, m16n8k16 products. The knobs are template
// parameters of one traits struct; everything else is derived and checked at compile time.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention_ptx.cuh"  // the same few PTX instructions: cp.async, ldmatrix, mma m16n8k16

namespace kiln::gemm {

namespace ptx = ::kiln::attention::ptx;

template <class Config>
struct GemmTraits {
  static constexpr int kBlockM = Config::BM;
  static constexpr int kBlockN = Config::BN;
  static constexpr int kBlockK = Config::BK;
  static constexpr int kWarpsM = Config::WARPS_M;
  static constexpr int kWarpsN = Config::WARPS_N;
  static constexpr int kStages = Config::STAGES;
  static constexpr int kGroupM = Config::GROUP_M;

  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWarpM = kBlockM / kWarpsM;  // a warp's rows of the block's tile
  static constexpr int kWarpN = kBlockN / kWarpsN;  // and its columns
  static constexpr int kTilesM = kWarpM / 16;       // m16 tiles per warp
  static constexpr int kTilesN = kWarpN / 8;        // n8 tiles per warp
  static constexpr int kChunks = kBlockK / 8;       // 16-byte chunks per row of a k tile
  // Rows that share one 128-byte line of shared memory: the swizzle spreads the 8 rows one
  // ldmatrix phase reads over all 32 banks.
  static constexpr int kRowsPerLine = kChunks >= 8 ? 1 : 8 / kChunks;
  static constexpr int kStageElements = (kBlockM + kBlockN) * kBlockK;
  static constexpr int kSmemBytes = kStages * kStageElements * 2;

  static_assert(kBlockM % kWarpsM == 0 && kBlockN % kWarpsN == 0, "warps tile the block");
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "a warp's tile is whole m16 tiles and n16 ldmatrix pairs");
  static_assert(kBlockK % 16 == 0 && (kChunks == 2 || kChunks == 4 || kChunks == 8), "k tiles of 16, 32 or 64");
  static_assert(kStages >= 2, "the pipeline loads one stage while the tensor cores read another");
  static_assert(kThreads <= 1024, "one block");
};

// Shared-memory element offset of (row, 16-byte chunk) in a tile with kChunks chunks per row.
template <class T>
__device__ __forceinline__ int swizzled(int row, int chunk) {
  const int line = (row / T::kRowsPerLine) % T::kChunks;
  return (row * T::kChunks + (chunk ^ line)) * 8;
}

// One k tile of `rows` rows of a row-major [rows_total, K] matrix into shared memory; chunks past
// the matrix's rows or K are zero-filled (they contribute nothing to the product).
template <class T, int kRows>
__device__ __forceinline__ void load_tile(__nv_bfloat16* smem, const __nv_bfloat16* g, int row0, int rows_total, int k0,
                                          int K) {
  for (int id = threadIdx.x; id < kRows * T::kChunks; id += T::kThreads) {
    const int r = id / T::kChunks;
    const int c = id % T::kChunks;
    const int gr = row0 + r;
    const int gk = k0 + c * 8;
    const bool valid = gr < rows_total && gk < K;
    const __nv_bfloat16* src = valid ? g + static_cast<std::int64_t>(gr) * K + gk : g;
    ptx::cp_async_16(ptx::smem_address(smem + swizzled<T>(r, c)), src, valid);
  }
}

template <class Config>
__global__ void __launch_bounds__(GemmTraits<Config>::kThreads)
    gemm_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y,
                int M, int N, int K) {
  using T = GemmTraits<Config>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  auto* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);

  // Grouped rasterisation: kGroupM block rows walk the columns together, so the w tiles they
  // share stay in L2.
  const int tiles_m = (M + T::kBlockM - 1) / T::kBlockM;
  const int tiles_n = (N + T::kBlockN - 1) / T::kBlockN;
  const int pid = blockIdx.x;
  const int in_group = T::kGroupM * tiles_n;
  const int first_m = (pid / in_group) * T::kGroupM;
  const int group_rows = min(tiles_m - first_m, T::kGroupM);
  const int bm = first_m + (pid % in_group) % group_rows;
  const int bn = (pid % in_group) / group_rows;
  const int m0 = bm * T::kBlockM;
  const int n0 = bn * T::kBlockN;

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warp_m = (warp / T::kWarpsN) * T::kWarpM;
  const int warp_n = (warp % T::kWarpsN) * T::kWarpN;

  float acc[T::kTilesM][T::kTilesN][4] = {};
  const int k_tiles = (K + T::kBlockK - 1) / T::kBlockK;

  auto stage_a = [&](int s) { return smem + s * T::kStageElements; };
  auto stage_b = [&](int s) { return smem + s * T::kStageElements + T::kBlockM * T::kBlockK; };
  auto load_stage = [&](int s, int kt) {
    load_tile<T, T::kBlockM>(stage_a(s), x, m0, M, kt * T::kBlockK, K);
    load_tile<T, T::kBlockN>(stage_b(s), w, n0, N, kt * T::kBlockK, K);
  };

#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    ptx::cp_async_wait<T::kStages - 2>();
    __syncthreads();  // tile kt is in shared memory, and every warp is done with tile kt - 1
    const int next = kt + T::kStages - 1;
    if (next < k_tiles) load_stage(next % T::kStages, next);
    ptx::cp_async_commit();  // possibly empty: the group count stays in step with the tiles

    const __nv_bfloat16* a = stage_a(kt % T::kStages);
    const __nv_bfloat16* b = stage_b(kt % T::kStages);
#pragma unroll
    for (int kk = 0; kk < T::kBlockK / 16; ++kk) {
      std::uint32_t af[T::kTilesM][4];
      std::uint32_t bf[T::kTilesN][2];
#pragma unroll
      for (int i = 0; i < T::kTilesM; ++i) {
        const int row = warp_m + i * 16 + lane % 16;
        ptx::ldmatrix_x4(af[i], ptx::smem_address(a + swizzled<T>(row, kk * 2 + lane / 16)));
      }
#pragma unroll
      for (int j = 0; j < T::kTilesN / 2; ++j) {
        // Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
        const int row = warp_n + j * 16 + lane % 8 + (lane / 16) * 8;
        std::uint32_t r[4];
        ptx::ldmatrix_x4(r, ptx::smem_address(b + swizzled<T>(row, kk * 2 + (lane / 8) % 2)));
        bf[2 * j][0] = r[0];
        bf[2 * j][1] = r[1];
        bf[2 * j + 1][0] = r[2];
        bf[2 * j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < T::kTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < T::kTilesN; ++j) ptx::mma_16816<__nv_bfloat16>(acc[i][j], af[i], bf[j][0], bf[j][1]);
      }
    }
  }
  ptx::cp_async_wait<0>();

  // Each lane holds (row lane/4 and lane/4 + 8, columns 2(lane%4) and +1) of every m16n8 tile.
#pragma unroll
  for (int i = 0; i < T::kTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < T::kTilesN; ++j) {
      const int col = n0 + warp_n + j * 8 + 2 * (lane % 4);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_m + i * 16 + lane / 4 + half * 8;
        if (row >= M || col >= N) continue;  // N is even: a pair is in or out as a whole
        *reinterpret_cast<__nv_bfloat162*>(y + static_cast<std::int64_t>(row) * N + col) =
            __floats2bfloat162_rn(acc[i][j][2 * half], acc[i][j][2 * half + 1]);
      }
    }
  }
}

// Launches y = x · wᵀ; K and N must be multiples of 8 (16-byte rows of x and w, pairs of y).
template <class Config>
cudaError_t launch(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int M, int N, int K,
                   cudaStream_t stream) {
  using T = GemmTraits<Config>;
  if (M <= 0 || N <= 0 || K <= 0 || K % 8 != 0 || N % 8 != 0) return cudaErrorInvalidValue;
  if (T::kSmemBytes > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(gemm_kernel<Config>, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
    if (e != cudaSuccess) return e;
  }
  const int tiles = ((M + T::kBlockM - 1) / T::kBlockM) * ((N + T::kBlockN - 1) / T::kBlockN);
  gemm_kernel<Config><<<tiles, T::kThreads, T::kSmemBytes, stream>>>(x, w, y, M, N, K);
  return cudaGetLastError();
}

}  // namespace kiln::gemm
