// CUDA selective scan, ALGO chunk: each warp walks its channels' whole sequence in chunks; within a
// chunk the steps are spread over the warp's lanes and joined by a warp scan, fp32 math. (ALGO
// chain, one thread per recurrence in time order, is selective_scan_cuda_chain.cuh; `launch` at
// the end picks between them.)
//
// A warp holds CHANNEL_LANES = 32 / LANES channels (one per lane group) and LANES time lanes:
// lane = time_lane * CHANNEL_LANES + channel_lane, so neighbouring lanes are channels of the same
// steps and read the same B and C. A thread owns ITEMS consecutive steps of one channel; a chunk
// is LANES x ITEMS steps. Per chunk the thread computes dt (bias, softplus), dt u and D u once per
// step, then for every state (STATES at a time, interleaved for latency):
//   1. fold: (a_k, b_k) = (exp(dt_k A), dt_k u_k B_k) for its steps, b folded in order
//      (b = a_k b + b_k) and a = exp(A sum dt) in one ex2; the a_k and b_k stay in registers;
//   2. the warp scans the folded pairs over the time lanes (shuffles, the combine
//      (a1, b1) o (a2, b2) = (a1 a2, a2 b1 + b2)), the state carried from the previous chunk
//      entering first, so each lane gets the state before its first step;
//   3. replay: h = a_k h + b_k, y_k += C_k h; the last time lane leaves h for the next chunk.
// So every (step, state) costs one ex2, two multiplies and three FMAs, and every (step, channel)
// its softplus and silu once. No barrier joins the scan: a warp's channels are its own. The block's
// WARPS warps hold channels of one group and share B and C: per chunk and group of staged states,
// the block copies B and C (converted to fp32) into shared memory once, and each thread reads its
// steps with 16-byte loads that neighbouring lanes share. u, delta, z and y move as 16-byte
// vectors where the rows allow (length a multiple of 16 bytes, aligned pointers).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kiln/choice.hpp"
#include "kiln/selective_scan.hpp"
#include "selective_scan_args.hpp"
#include "selective_scan_cuda_chain.cuh"
#include "selective_scan_cuda_common.cuh"

namespace kiln::scan {

template <class Config>
struct CudaTraits {
  static constexpr int kLanes = Config::LANES;         // time lanes per warp
  static constexpr int kItems = Config::ITEMS;         // consecutive steps per thread and chunk
  static constexpr int kWarps = Config::WARPS;         // warps per block
  static constexpr int kStates = Config::STATES;       // states folded, scanned and replayed together
  static constexpr int kChannelLanes = 32 / kLanes;    // channels per warp
  static constexpr int kChannels = kWarps * kChannelLanes;  // channels per block, sharing B and C
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kChunk = kLanes * kItems;
  // A thread's steps in shared memory are padded by 16 bytes per thread from 8 steps up, so that
  // the eight time lanes of a quarter warp read distinct banks.
  static constexpr int kPad = kItems >= 8 ? 4 : 0;
  static constexpr int kRow = kLanes * (kItems + kPad);  // floats of one staged state row
  // States staged at once: up to 5 KiB of B (and as much of C) per warp, 20 KiB per tensor at
  // most, and 16 at most (Mamba's state size: more only takes shared memory from other blocks),
  // a multiple of STATES.
  static constexpr int kStageFloats = kWarps * 1280 < 5120 ? kWarps * 1280 : 5120;
  static constexpr int kStageFit = kStageFloats / kRow < 16 ? kStageFloats / kRow : 16;
  static constexpr int kStageStates = kStageFit / kStates * kStates > kStates ? kStageFit / kStates * kStates : kStates;

  static_assert(kLanes == 8 || kLanes == 16 || kLanes == 32, "LANES must be 8, 16 or 32");
  static_assert(kItems == 4 || kItems == 8 || kItems == 16, "ITEMS must be 4, 8 or 16");
  static_assert(kWarps >= 1 && kWarps <= 8, "WARPS must be 1..8");
  static_assert(kStates >= 1 && kStates <= 4, "STATES must be 1..4");
  static_assert(kChannels <= 8, "at most 8 channels per block (their carried states share 8 KiB)");
  static_assert(kStageStates * kRow <= 5120, "a staged tensor takes at most 20 KiB");
};

namespace cuda_detail {

// Copies rows n0 .. n0+kStageStates-1 of B or C (`bc`, [state][length]) over the chunk's steps
// t0 .. t0+kChunk-1 into `stage` as fp32, [row][padded step]; 0 for rows past `state` and steps
// past `length`. Every thread of the block takes part.
template <class Tr, class T>
__device__ __forceinline__ void stage_rows(const T* bc, std::int64_t n0, std::int64_t state, std::int64_t t0,
                                           std::int64_t length, bool vec, float* stage) {
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte load
  constexpr int kPerRow = Tr::kChunk / kVec;
  const int tid = static_cast<int>(threadIdx.x);
  if (vec) {
    for (int i = tid; i < Tr::kStageStates * kPerRow; i += Tr::kThreads) {
      const int r = i / kPerRow, p = i % kPerRow * kVec;
      alignas(16) T e[kVec];
      float f[kVec];
      if (n0 + r < state && t0 + p < length) {
        *reinterpret_cast<uint4*>(e) = __ldg(reinterpret_cast<const uint4*>(bc + (n0 + r) * length + t0 + p));
#pragma unroll
        for (int k = 0; k < kVec; ++k) f[k] = to_float(e[k]);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) f[k] = 0.0f;
      }
      // kVec steps never cross a thread's segment: kVec divides ITEMS wherever the pad is used.
      float* dst = stage + r * Tr::kRow + p + p / Tr::kItems * Tr::kPad;
#pragma unroll
      for (int k = 0; k < kVec; k += 4) *reinterpret_cast<float4*>(dst + k) = make_float4(f[k], f[k + 1], f[k + 2], f[k + 3]);
    }
  } else {
    for (int i = tid; i < Tr::kStageStates * Tr::kChunk; i += Tr::kThreads) {
      const int r = i / Tr::kChunk, p = i % Tr::kChunk;
      const bool in = n0 + r < state && t0 + p < length;
      stage[r * Tr::kRow + p + p / Tr::kItems * Tr::kPad] = in ? to_float(bc[(n0 + r) * length + t0 + p]) : 0.0f;
    }
  }
}

}  // namespace cuda_detail

template <class Config, class T>
__global__ void __launch_bounds__(CudaTraits<Config>::kThreads)
    selective_scan_kernel(ScanArgs<T> a, std::int64_t per_group_blocks) {
  using Tr = CudaTraits<Config>;
  using namespace cuda_detail;
  constexpr int I = Tr::kItems, S = Tr::kStates, TL = Tr::kLanes, CL = Tr::kChannelLanes;
  constexpr float kLog2e = 1.4426950408889634f;
  // [B rows][C rows][carried state of each block channel and state]
  extern __shared__ float4 smem4[];
  float* const sB = reinterpret_cast<float*>(smem4);
  float* const sC = sB + Tr::kStageStates * Tr::kRow;
  float* const carry = sC + Tr::kStageStates * Tr::kRow;

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32;
  const int j = lane / CL;                                   // time lane
  const int cb = tid / 32 * CL + lane % CL;                  // channel within the block
  const std::int64_t L = a.length, N = a.state;
  const BlockChannels<T> blk = block_channels(a, per_group_blocks, Tr::kChannels);
  const std::int64_t b = blk.b, d0 = blk.d0, group_end = blk.group_end;
  const T* Bg = blk.B;
  const T* Cg = blk.C;

  // A channel past the group's end computes on the group's last channel and stores nothing.
  const bool valid = d0 + cb < group_end;
  const std::int64_t d = valid ? d0 + cb : group_end - 1;
  const float Dd = a.D ? a.D[d] : 0.0f;
  const float bias = a.delta_bias ? a.delta_bias[d] : 0.0f;
  const std::int64_t row = (b * a.channels + d) * L;
  const float* Ad = a.A + d * N;
  float* const my_carry = carry + cb * N;
  const bool vec = L % (16 / static_cast<int>(sizeof(T))) == 0 && aligned16(a.u) && aligned16(a.delta) &&
                   (a.z == nullptr || aligned16(a.z)) && aligned16(a.y) && aligned16(a.B) && aligned16(a.C);

  for (int i = tid; i < Tr::kChannels * N; i += Tr::kThreads) carry[i] = 0.0f;

  for (std::int64_t t0 = 0; t0 < L; t0 += Tr::kChunk) {
    const std::int64_t t = t0 + j * I;  // the thread's first step
    const bool tail = t0 + Tr::kChunk > L;  // the chunk passes the sequence's end
    float dt[I], dtu[I], y[I];
    float sum_dt = 0.0f;
    {
      float u[I];
      load_items<I>(a.u + row, t, L, vec, u);
      load_items<I>(a.delta + row, t, L, vec, dt);
#pragma unroll
      for (int k = 0; k < I; ++k) {
        float x = dt[k] + bias;
        if (a.softplus) x = softplus(x);
        // Steps past the end are the identity (a, b) = (1, 0): the carried state stays final.
        if (tail) x = t + k < L ? x : 0.0f;
        dt[k] = x;
        dtu[k] = x * u[k];
        y[k] = Dd * u[k];
        sum_dt += x;
      }
    }
    for (std::int64_t n0 = 0; n0 < N; n0 += Tr::kStageStates) {
      __syncthreads();  // the previous group's rows are read (and, first, the carried states zeroed)
      stage_rows<Tr>(Bg, n0, N, t0, L, vec, sB);
      stage_rows<Tr>(Cg, n0, N, t0, L, vec, sC);
      __syncthreads();
      const std::int64_t rows = N - n0 < Tr::kStageStates ? N - n0 : Tr::kStageStates;
      for (int r0 = 0; r0 < rows; r0 += S) {
        const float* Bs = sB + r0 * Tr::kRow + j * (I + Tr::kPad);
        const float* Cs = sC + r0 * Tr::kRow + j * (I + Tr::kPad);
        float A2[S], pa[S], pb[S], da[S][I], db[S][I];
#pragma unroll
        for (int s = 0; s < S; ++s) {
          // A state past N (a padded group) has A = 0 and B = C = 0: a = 1, b = 0, h stays 0.
          A2[s] = r0 + s < rows ? Ad[n0 + r0 + s] * kLog2e : 0.0f;
          pb[s] = 0.0f;
        }
        // 1. the fold
#pragma unroll
        for (int k = 0; k < I; k += 4) {
#pragma unroll
          for (int s = 0; s < S; ++s) {
            const float4 Bv = *reinterpret_cast<const float4*>(Bs + s * Tr::kRow + k);
            const float Bk[4] = {Bv.x, Bv.y, Bv.z, Bv.w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              da[s][k + e] = ex2(dt[k + e] * A2[s]);
              db[s][k + e] = dtu[k + e] * Bk[e];
              pb[s] = da[s][k + e] * pb[s] + db[s][k + e];
            }
          }
        }
#pragma unroll
        for (int s = 0; s < S; ++s) pa[s] = ex2(A2[s] * sum_dt);
        // 2. the scan over the time lanes: inclusive, the lane `o` time lanes below combined first
#pragma unroll
        for (int o = 1; o < TL; o *= 2) {
#pragma unroll
          for (int s = 0; s < S; ++s) {
            const float qa = __shfl_up_sync(0xffffffffu, pa[s], o * CL);
            const float qb = __shfl_up_sync(0xffffffffu, pb[s], o * CL);
            if (j >= o) {
              pb[s] = pa[s] * qb + pb[s];
              pa[s] = pa[s] * qa;
            }
          }
        }
        float h[S];
#pragma unroll
        for (int s = 0; s < S; ++s) {
          const float h0 = r0 + s < rows ? my_carry[n0 + r0 + s] : 0.0f;
          // The state after this lane's steps; the lane above starts from it.
          const float up = __shfl_up_sync(0xffffffffu, pa[s] * h0 + pb[s], CL);
          h[s] = j == 0 ? h0 : up;
        }
        // 3. the replay
#pragma unroll
        for (int k = 0; k < I; k += 4) {
#pragma unroll
          for (int s = 0; s < S; ++s) {
            const float4 Cv = *reinterpret_cast<const float4*>(Cs + s * Tr::kRow + k);
            const float Ck[4] = {Cv.x, Cv.y, Cv.z, Cv.w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              h[s] = da[s][k + e] * h[s] + db[s][k + e];
              y[k + e] += Ck[e] * h[s];
            }
          }
        }
        if (j == TL - 1) {
#pragma unroll
          for (int s = 0; s < S; ++s) {
            if (r0 + s < rows) my_carry[n0 + r0 + s] = h[s];
          }
        }
      }
    }
    if (a.z) {
      float z[I];
      load_items<I>(a.z + row, t, L, vec, z);
#pragma unroll
      for (int k = 0; k < I; ++k) y[k] *= __fdividef(z[k], 1.0f + __expf(-z[k]));
    }
    if (valid) store_items<I>(a.y + row, t, L, vec, y);
  }
  if (a.final_state) {
    __syncthreads();
    for (int i = tid; i < Tr::kChannels * N; i += Tr::kThreads) {
      const std::int64_t c = i / N;
      if (d0 + c < group_end) a.final_state[(b * a.channels + d0 + c) * N + i % N] = carry[i];
    }
  }
}

// Dynamic shared memory of a launch: the staged B and C rows and the carried states.
template <class Config>
std::size_t scan_shared_bytes(std::int64_t state) {
  using Tr = CudaTraits<Config>;
  return (2 * static_cast<std::size_t>(Tr::kStageStates * Tr::kRow) + static_cast<std::size_t>(Tr::kChannels * state)) *
         sizeof(float);
}

// Enqueues the chunk kernel; the caller has handled empty problems.
template <class Config, class T>
cudaError_t launch_chunk(const ScanArgs<T>& a, cudaStream_t stream) {
  const std::int64_t per_group_blocks = cuda_detail::blocks_per_group(a.channels, a.groups, CudaTraits<Config>::kChannels);
  selective_scan_kernel<Config, T><<<static_cast<unsigned>(a.batch * a.groups * per_group_blocks),
                                     CudaTraits<Config>::kThreads, scan_shared_bytes<Config>(a.state), stream>>>(
      a, per_group_blocks);
  return cudaGetLastError();
}

// Enqueues the scan on `stream`, by the configuration's ALGO (chunk: this file's kernel; chain:
// selective_scan_cuda_chain.cuh); T is float, __nv_bfloat16 or __half. The arguments are checked
// by the caller (kiln/selective_scan.hpp), including the grid size (below 2^31 blocks).
template <class Config, class T>
cudaError_t launch(const ScanArgs<T>& a, cudaStream_t stream) {
  static_assert(Config::ALGO == "chunk" || Config::ALGO == "chain", "ALGO: chunk or chain");
  if (a.batch <= 0 || a.channels <= 0) return cudaSuccess;
  if (a.length == 0) {
    if (a.final_state == nullptr) return cudaSuccess;
    return cudaMemsetAsync(a.final_state, 0, static_cast<std::size_t>(a.batch * a.channels * a.state) * sizeof(float),
                           stream);
  }
  if constexpr (Config::ALGO == "chain") {
    return launch_chain<Config>(a, stream);
  } else {
    return launch_chunk<Config>(a, stream);
  }
}

}  // namespace kiln::scan
