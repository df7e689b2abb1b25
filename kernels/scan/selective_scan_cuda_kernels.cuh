// CUDA selective scan: a chunked parallel scan of the Mamba-1 recurrence, fp32 math.
//
// A block owns CHANNELS channels of one group of one batch and walks time in chunks of
// THREADS x ITEMS steps; each thread holds ITEMS consecutive steps of every channel in registers.
// Per chunk and per STATES states at a time (independent scans interleaved for latency):
//   1. each thread turns its steps into pairs (a_t, b_t) = (exp(dt A), dt u B) and folds them in
//      order into one pair, with the associative combine (a1, b1) o (a2, b2) = (a1 a2, a2 b1 + b2);
//   2. the block scans those pairs: a warp's by shuffles, the warps' totals through shared
//      memory; the state carried from the previous chunk enters as the first element, so each
//      thread gets the state before its first step;
//   3. each thread replays its steps from that state, h = a h + b, and accumulates y += C h.
// The block's channels share every B and C load (one group). The block's last thread ends each
// chunk with the chunk's final state, which it leaves in shared memory for the next chunk.
// LOAD: `direct` reads each thread's consecutive steps from global memory (the L1 merges the
// neighbours' reads); `staged` reads the chunk coalesced into shared memory and hands each thread
// its steps from there (one more barrier pair per tensor).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kiln/choice.hpp"
#include "kiln/selective_scan.hpp"
#include "selective_scan_args.hpp"

namespace kiln::scan {

template <class Config>
struct CudaTraits {
  static constexpr int kThreads = Config::THREADS;
  static constexpr int kItems = Config::ITEMS;        // consecutive steps per thread and chunk
  static constexpr int kChannels = Config::CHANNELS;  // channels per block, sharing B and C
  static constexpr int kStates = Config::STATES;      // states scanned together
  static constexpr bool kStaged = Config::LOAD == "staged";
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kChunk = kThreads * kItems;
  static constexpr int kStage = kChunk + kChunk / 32;  // one pad word per 32 against bank conflicts

  static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024, "THREADS: whole warps, up to 1024");
  static_assert(kItems >= 1 && kItems <= 32, "ITEMS must be 1..32");
  static_assert(kChannels >= 1 && kChannels <= 8, "CHANNELS must be 1..8");
  static_assert(kStates >= 1 && kStates <= 8, "STATES must be 1..8");
  static_assert(Config::LOAD == "direct" || Config::LOAD == "staged", "LOAD: direct or staged");
};

namespace cuda_detail {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

template <class T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else {
    return __float2half_rn(x);
  }
}

__device__ __forceinline__ int padded(int i) { return i + i / 32; }

// The thread's ITEMS consecutive steps of `row` from step t0 (0 beyond the row's end).
template <class Tr, class T>
__device__ __forceinline__ void load_steps(const T* row, std::int64_t t0, std::int64_t length, float (&v)[Tr::kItems],
                                           float* stage) {
  const int tid = static_cast<int>(threadIdx.x);
  if constexpr (Tr::kStaged) {
#pragma unroll
    for (int k = 0; k < Tr::kItems; ++k) {
      const int i = k * Tr::kThreads + tid;
      stage[padded(i)] = t0 + i < length ? to_float(row[t0 + i]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < Tr::kItems; ++k) v[k] = stage[padded(tid * Tr::kItems + k)];
    __syncthreads();
  } else {
#pragma unroll
    for (int k = 0; k < Tr::kItems; ++k) {
      const std::int64_t t = t0 + tid * Tr::kItems + k;
      v[k] = t < length ? to_float(row[t]) : 0.0f;
    }
  }
}

// Stores the thread's steps (those before the row's end); every thread of the block calls it.
template <class Tr, class T>
__device__ __forceinline__ void store_steps(T* row, std::int64_t t0, std::int64_t length, const float (&v)[Tr::kItems],
                                            float* stage, bool active) {
  const int tid = static_cast<int>(threadIdx.x);
  if constexpr (Tr::kStaged) {
#pragma unroll
    for (int k = 0; k < Tr::kItems; ++k) stage[padded(tid * Tr::kItems + k)] = v[k];
    __syncthreads();
    if (active) {
#pragma unroll
      for (int k = 0; k < Tr::kItems; ++k) {
        const int i = k * Tr::kThreads + tid;
        if (t0 + i < length) row[t0 + i] = from_float<T>(stage[padded(i)]);
      }
    }
    __syncthreads();
  } else if (active) {
#pragma unroll
    for (int k = 0; k < Tr::kItems; ++k) {
      const std::int64_t t = t0 + tid * Tr::kItems + k;
      if (t < length) row[t] = from_float<T>(v[k]);
    }
  }
}

}  // namespace cuda_detail

template <class Config, class T>
__global__ void __launch_bounds__(Config::THREADS) selective_scan_kernel(ScanArgs<T> a, std::int64_t blocks_per_group) {
  using Tr = CudaTraits<Config>;
  using namespace cuda_detail;
  constexpr int I = Tr::kItems, CH = Tr::kChannels, S = Tr::kStates, W = Tr::kWarps;
  constexpr float kLog2e = 1.4426950408889634f;
  __shared__ float stage[Tr::kStaged ? Tr::kStage : 1];
  __shared__ float warp_a[2][S][CH][W], warp_b[2][S][CH][W];
  __shared__ float carry[2][CH][kMaxScanState];  // the state entering a chunk, by chunk parity

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const std::int64_t L = a.length, N = a.state;
  const std::int64_t per_group = a.channels / a.groups;
  const std::int64_t unit = blockIdx.x;
  const std::int64_t b = unit / (a.groups * blocks_per_group);
  const std::int64_t g = unit / blocks_per_group % a.groups;
  const std::int64_t d0 = g * per_group + unit % blocks_per_group * CH;
  const std::int64_t group_end = g * per_group + per_group;
  const T* Bg = a.B + (b * a.groups + g) * N * L;
  const T* Cg = a.C + (b * a.groups + g) * N * L;

  // Channels past the group's end compute on the last valid channel and store nothing.
  std::int64_t d[CH];
  bool valid[CH];
  float Dd[CH], bias[CH];
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    valid[c] = d0 + c < group_end;
    d[c] = valid[c] ? d0 + c : group_end - 1;
    Dd[c] = a.D ? a.D[d[c]] : 0.0f;
    bias[c] = a.delta_bias ? a.delta_bias[d[c]] : 0.0f;
  }
  for (int i = tid; i < CH * N; i += Tr::kThreads) carry[0][i / N][i % N] = 0.0f;
  __syncthreads();

  int parity = 0;
  int q = 0;  // warp-total buffer, alternating per state group (one barrier per group)
  for (std::int64_t t0 = 0; t0 < L; t0 += Tr::kChunk, parity ^= 1) {
    float u[CH][I], dt[CH][I], y[CH][I];
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      const std::int64_t row = (b * a.channels + d[c]) * L;
      load_steps<Tr>(a.u + row, t0, L, u[c], stage);
      load_steps<Tr>(a.delta + row, t0, L, dt[c], stage);
#pragma unroll
      for (int k = 0; k < I; ++k) {
        float x = dt[c][k] + bias[c];
        if (a.softplus) x = x <= 20.0f ? log1pf(__expf(x)) : x;
        // Steps past the end are the identity (a, b) = (1, 0): the last thread's state stays final.
        dt[c][k] = t0 + tid * I + k < L ? x : 0.0f;
        y[c][k] = 0.0f;
      }
    }
    for (std::int64_t n0 = 0; n0 < N; n0 += S, q ^= 1) {
      float Bv[S][I], Cv[S][I];
#pragma unroll
      for (int s = 0; s < S; ++s) {
        const std::int64_t n = n0 + s < N ? n0 + s : N - 1;
        load_steps<Tr>(Bg + n * L, t0, L, Bv[s], stage);
        load_steps<Tr>(Cg + n * L, t0, L, Cv[s], stage);
        if (n0 + s >= N) {
#pragma unroll
          for (int k = 0; k < I; ++k) Bv[s][k] = Cv[s][k] = 0.0f;  // a padded state stays 0
        }
      }
      float da[CH][S][I];  // exp(dt A) of every step, kept for the replay
      float agg_a[CH][S], agg_b[CH][S];
#pragma unroll
      for (int c = 0; c < CH; ++c) {
#pragma unroll
        for (int s = 0; s < S; ++s) {
          const float A2 = n0 + s < N ? a.A[d[c] * N + n0 + s] * kLog2e : 0.0f;
          float pa = 1.0f, pb = 0.0f;
#pragma unroll
          for (int k = 0; k < I; ++k) {
            da[c][s][k] = exp2f(dt[c][k] * A2);
            pa *= da[c][s][k];
            pb = da[c][s][k] * pb + dt[c][k] * u[c][k] * Bv[s][k];
          }
          // Inclusive scan of the warp's pairs: combine with the pair `offset` lanes below.
#pragma unroll
          for (int offset = 1; offset < 32; offset *= 2) {
            const float qa = __shfl_up_sync(0xffffffffu, pa, offset);
            const float qb = __shfl_up_sync(0xffffffffu, pb, offset);
            if (lane >= offset) {
              pb = pa * qb + pb;
              pa = qa * pa;
            }
          }
          if (lane == 31) {
            warp_a[q][s][c][warp] = pa;
            warp_b[q][s][c][warp] = pb;
          }
          // Exclusive: the pair of the lanes below this one (the identity for lane 0).
          const float ea = __shfl_up_sync(0xffffffffu, pa, 1);
          const float eb = __shfl_up_sync(0xffffffffu, pb, 1);
          agg_a[c][s] = lane == 0 ? 1.0f : ea;
          agg_b[c][s] = lane == 0 ? 0.0f : eb;
        }
      }
      __syncthreads();
#pragma unroll
      for (int c = 0; c < CH; ++c) {
#pragma unroll
        for (int s = 0; s < S; ++s) {
          const std::int64_t n = n0 + s < N ? n0 + s : N - 1;
          float h = carry[parity][c][n];
          for (int w = 0; w < warp; ++w) h = warp_a[q][s][c][w] * h + warp_b[q][s][c][w];
          h = agg_a[c][s] * h + agg_b[c][s];
#pragma unroll
          for (int k = 0; k < I; ++k) {
            h = da[c][s][k] * h + dt[c][k] * u[c][k] * Bv[s][k];
            y[c][k] += Cv[s][k] * h;
          }
          if (tid == Tr::kThreads - 1 && n0 + s < N) carry[parity ^ 1][c][n] = h;
        }
      }
    }
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      const std::int64_t row = (b * a.channels + d[c]) * L;
      float z[I];
      if (a.z) load_steps<Tr>(a.z + row, t0, L, z, stage);
#pragma unroll
      for (int k = 0; k < I; ++k) {
        float v = y[c][k] + Dd[c] * u[c][k];
        if (a.z) v *= z[k] / (1.0f + __expf(-z[k]));
        y[c][k] = v;
      }
      store_steps<Tr>(a.y + row, t0, L, y[c], stage, valid[c]);
    }
  }
  if (a.final_state) {
    __syncthreads();
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      if (!valid[c]) continue;
      float* out = a.final_state + (b * a.channels + d[c]) * N;
      for (std::int64_t n = tid; n < N; n += Tr::kThreads) out[n] = carry[parity][c][n];
    }
  }
}

// Blocks of one launch: CHANNELS channels of one group of one batch each.
template <class Config>
std::int64_t scan_blocks(std::int64_t batch, std::int64_t channels, std::int64_t groups) {
  const std::int64_t per_group = channels / groups;
  return batch * groups * ((per_group + Config::CHANNELS - 1) / Config::CHANNELS);
}

// Enqueues the scan on `stream`; T is float, __nv_bfloat16 or __half. The arguments are checked
// by the caller (kiln/selective_scan.hpp), including the grid size (scan_blocks below 2^31).
template <class Config, class T>
cudaError_t launch(const ScanArgs<T>& a, cudaStream_t stream) {
  if (a.batch <= 0 || a.channels <= 0) return cudaSuccess;
  if (a.length == 0) {
    if (a.final_state == nullptr) return cudaSuccess;
    return cudaMemsetAsync(a.final_state, 0, static_cast<std::size_t>(a.batch * a.channels * a.state) * sizeof(float),
                           stream);
  }
  const std::int64_t per_group = a.channels / a.groups;
  const std::int64_t blocks_per_group = (per_group + Config::CHANNELS - 1) / Config::CHANNELS;
  const std::int64_t blocks = scan_blocks<Config>(a.batch, a.channels, a.groups);
  selective_scan_kernel<Config, T><<<static_cast<unsigned>(blocks), Config::THREADS, 0, stream>>>(a, blocks_per_group);
  return cudaGetLastError();
}

}  // namespace kiln::scan
