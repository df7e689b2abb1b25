// CUDA all-pairs N-body accelerations (fp32), shared-memory tiling with register blocking.
//
// A block of THREADS threads is split into JSPLIT groups of THREADS / JSPLIT threads. All groups
// work on the same BLOCK_BODIES = (THREADS / JSPLIT) * BODIES bodies i: each thread owns BODIES of
// them (positions and accelerations in registers). The bodies j stream through shared memory in
// tiles of THREADS bodies (one float4 per thread, double-buffered: the next tile's global load is
// in flight while the current tile is consumed); group g takes the g-th slice of each tile, so the
// j range is split JSPLIT ways. Every j read from shared memory (a broadcast: the whole warp reads
// the same address) feeds BODIES interactions. At the end the groups' partial sums are added up
// in shared memory by group 0, which writes the result.
//
// JSPLIT exists for parallelism: n = 65536 with BODIES = 4 and no split is 16384 threads, about
// one warp per SM scheduler on a 132-SM GPU; JSPLIT multiplies the threads without adding DRAM or
// L2 traffic (positions are 16 bytes per body and stay in L2).
// CLUSTER does the same across blocks, for small n: the CLUSTER blocks of a thread-block cluster
// (sm_90) share one set of bodies i and take consecutive ranges of the j tiles; rank 0 adds the
// other blocks' sums through distributed shared memory and writes the result (one launch, a fixed
// order of additions). n = 4096 with 128 bodies per block is 32 blocks on 132 SMs; CLUSTER 8 makes
// it 256.
//
// One interaction is 3 FADD (d), 3 FFMA (r^2 + eps^2), 1 MUFU.RSQ, 3 FMUL (m / r^3), 3 FFMA (a):
// 12 FP32 instructions, counted as the customary 20 flops.
#pragma once
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "nbody_softening.hpp"

namespace kiln::nbody {

template <class Config>
struct CudaTraits {
  static constexpr int kThreads = Config::THREADS;
  static constexpr int kBodies = Config::BODIES;   // bodies i per thread (register blocking)
  static constexpr int kJSplit = Config::JSPLIT;   // groups splitting the j range
  static constexpr int kUnroll = Config::UNROLL;   // unrolling of the j loop
  static constexpr int kCluster = Config::CLUSTER; // blocks splitting the j range (a cluster)
  static constexpr int kGroupThreads = kThreads / kJSplit;
  static constexpr int kBlockBodies = kGroupThreads * kBodies;
  static constexpr int kTile = kThreads;              // bodies j per shared-memory tile
  static constexpr int kGroupTile = kTile / kJSplit;  // bodies j per group and tile
  static constexpr int kReduceFloats = (kJSplit - 1) * kGroupThreads * 3;

  static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024, "THREADS: whole warps, at most 1024");
  static_assert(kJSplit >= 1 && kThreads % kJSplit == 0, "JSPLIT must divide THREADS");
  static_assert(kGroupThreads % 32 == 0, "groups of whole warps: a warp reads one j at a time (broadcast)");
  static_assert(kBodies >= 1 && kBodies <= 16, "BODIES: 1..16");
  static_assert(kUnroll >= 1 && kGroupTile % kUnroll == 0, "UNROLL must divide the group's tile slice");
  static_assert(kReduceFloats <= 2 * kTile * 4, "the reduction reuses the tile buffers");
  static_assert(2 * kTile * 16 <= 48 * 1024, "static shared memory is limited to 48 KB");
  static_assert(kCluster >= 1 && kCluster <= 8 && (kCluster & (kCluster - 1)) == 0, "CLUSTER: 1, 2, 4 or 8");
  static_assert(kGroupThreads * kBodies * 3 <= 2 * kTile * 4, "a block's sums fit the tile buffers");
};

namespace cuda_detail {

// rsqrt.approx (2 ulp; the argument is at least eps^2, never subnormal, so flushing is harmless).
// Written out because rsqrtf() without -ftz adds denormal handling around MUFU.RSQ.
__device__ __forceinline__ float rsqrt_approx(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <class Tr>
union SharedStorage {
  float4 tile[2][Tr::kTile];
  float reduce[Tr::kReduceFloats > 0 ? Tr::kReduceFloats : 1];
};

template <class Tr>
__global__ void __launch_bounds__(Tr::kThreads)
    nbody_kernel(const float4* __restrict__ bodies, float* __restrict__ acc, int n, float eps2) {
  constexpr int B = Tr::kBodies;
  __shared__ SharedStorage<Tr> smem;
  const int tid = threadIdx.x;
  const int group = tid / Tr::kGroupThreads;
  const int lane = tid % Tr::kGroupThreads;
  const int rank = static_cast<int>(blockIdx.x % Tr::kCluster);  // this block's share of the j tiles
  const int i_block = static_cast<int>(blockIdx.x / Tr::kCluster);
  const int first = i_block * Tr::kBlockBodies + lane;  // body k of this thread: first + k * kGroupThreads

  // Bodies past n sit at the origin; their results are not written.
  float px[B], py[B], pz[B], ax[B], ay[B], az[B];
#pragma unroll
  for (int k = 0; k < B; ++k) {
    const int i = first + k * Tr::kGroupThreads;
    const float4 p = i < n ? bodies[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    px[k] = p.x;
    py[k] = p.y;
    pz[k] = p.z;
    ax[k] = ay[k] = az[k] = 0.0f;
  }

  // Tiles past n are padded with massless bodies at the origin: they add exactly zero
  // (the distance is softened, so nothing divides by zero). A block of a cluster takes tiles
  // [t_begin, t_end); with more blocks than tiles some take none.
  const int all_tiles = (n + Tr::kTile - 1) / Tr::kTile;
  const int t_begin = static_cast<int>(static_cast<std::int64_t>(all_tiles) * rank / Tr::kCluster);
  const int t_end = static_cast<int>(static_cast<std::int64_t>(all_tiles) * (rank + 1) / Tr::kCluster);
  const int j0 = t_begin * Tr::kTile + tid;
  float4 staged = t_begin < t_end && j0 < n ? bodies[j0] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  smem.tile[t_begin & 1][tid] = staged;
  __syncthreads();
  for (int t = t_begin; t < t_end; ++t) {
    const bool more = t + 1 < t_end;
    if (more) {
      const int j = (t + 1) * Tr::kTile + tid;
      staged = j < n ? __ldg(bodies + j) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    const float4* slice = smem.tile[t & 1] + group * Tr::kGroupTile;
#pragma unroll Tr::kUnroll
    for (int jj = 0; jj < Tr::kGroupTile; ++jj) {
      const float4 b = slice[jj];
#pragma unroll
      for (int k = 0; k < B; ++k) {
        const float dx = b.x - px[k];
        const float dy = b.y - py[k];
        const float dz = b.z - pz[k];
        const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
        const float inv = rsqrt_approx(r2);
        const float s = b.w * inv * (inv * inv);
        ax[k] = fmaf(dx, s, ax[k]);
        ay[k] = fmaf(dy, s, ay[k]);
        az[k] = fmaf(dz, s, az[k]);
      }
    }
    // The other buffer was last read in iteration t - 1, before the barrier that ended it.
    if (more) smem.tile[(t + 1) & 1][tid] = staged;
    __syncthreads();
  }

  // The loop ended with a barrier, so the tile buffers are free for the reduction; one body per
  // thread at a time keeps it within them. Stride-3 slots are free of bank conflicts.
  if constexpr (Tr::kJSplit > 1) {
#pragma unroll
    for (int k = 0; k < B; ++k) {
      if (group > 0) {
        float* slot = smem.reduce + ((group - 1) * Tr::kGroupThreads + lane) * 3;
        slot[0] = ax[k];
        slot[1] = ay[k];
        slot[2] = az[k];
      }
      __syncthreads();
      if (group == 0) {
#pragma unroll
        for (int g = 1; g < Tr::kJSplit; ++g) {
          const float* slot = smem.reduce + ((g - 1) * Tr::kGroupThreads + lane) * 3;
          ax[k] += slot[0];
          ay[k] += slot[1];
          az[k] += slot[2];
        }
      }
      __syncthreads();
    }
  }
  if constexpr (Tr::kCluster > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Group 0 of every block leaves its sums in its tile buffers (free after the last barrier);
    // rank 0 adds the others' in rank order. The second cluster barrier keeps every block's shared
    // memory alive until rank 0 has read it.
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    float* sums = smem.reduce;
    if (group == 0) {
#pragma unroll
      for (int k = 0; k < B; ++k) {
        float* slot = sums + (k * Tr::kGroupThreads + lane) * 3;
        slot[0] = ax[k];
        slot[1] = ay[k];
        slot[2] = az[k];
      }
    }
    cluster.sync();
    if (rank == 0 && group == 0) {
      for (int r = 1; r < Tr::kCluster; ++r) {
        const float* other = cluster.map_shared_rank(sums, r);
#pragma unroll
        for (int k = 0; k < B; ++k) {
          const float* slot = other + (k * Tr::kGroupThreads + lane) * 3;
          ax[k] += slot[0];
          ay[k] += slot[1];
          az[k] += slot[2];
        }
      }
    }
    cluster.sync();
#else
    __trap();  // clusters need sm_90; the space allows CLUSTER > 1 only where max_cluster_size does
#endif
  }
  if (group == 0 && rank == 0) {
#pragma unroll
    for (int k = 0; k < B; ++k) {
      const int i = first + k * Tr::kGroupThreads;
      if (i < n) {
        float* out = acc + 3 * static_cast<std::int64_t>(i);
        out[0] = ax[k];
        out[1] = ay[k];
        out[2] = az[k];
      }
    }
  }
}

}  // namespace cuda_detail

// Largest n the kernel indexes without overflow (int indices plus one tile of padding).
inline constexpr std::int64_t kMaxCudaBodies = std::int64_t{1} << 30;

// Enqueues the accelerations of n bodies on `stream`: bodies holds (x, y, z, m) per body, acc
// receives ax, ay, az per body (3n floats); device pointers; softening kSoftening. Returns the
// launch status.
template <class Config>
cudaError_t launch(const float4* bodies, float* acc, std::int64_t n, cudaStream_t stream) {
  using Tr = CudaTraits<Config>;
  if (n < 0 || n > kMaxCudaBodies) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>((n + Tr::kBlockBodies - 1) / Tr::kBlockBodies);
  if constexpr (Tr::kCluster == 1) {
    cuda_detail::nbody_kernel<Tr><<<blocks, Tr::kThreads, 0, stream>>>(bodies, acc, static_cast<int>(n), kSoftening2);
    return cudaGetLastError();
  } else {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks * Tr::kCluster);
    config.blockDim = dim3(Tr::kThreads);
    config.stream = stream;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = Tr::kCluster;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, cuda_detail::nbody_kernel<Tr>, bodies, acc, static_cast<int>(n), kSoftening2);
  }
}

}  // namespace kiln::nbody
