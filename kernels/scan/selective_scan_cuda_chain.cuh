// CUDA selective scan, ALGO chain: every (channel, state) recurrence is walked in time order by
// one thread, with no scan at all; a channel's STATE_LANES lanes hold its states (STATES each) and
// sum their C h into y.
//
// The chunk kernel (selective_scan_cuda_kernels.cuh) spreads a channel's steps over time lanes and
// joins them by a warp scan: every (step, state) then costs a fold and a replay (two FMAs and the
// exps kept between them) and every state and chunk a scan of shuffle rounds. Here a step and state
// costs what the recurrence itself costs: dt A, one ex2, dt u B, h = a h + b, y += C h. The
// parallelism is channels x STATE_LANES threads (81 920 at 5120 channels and 16 lanes), enough for
// Mamba's wide layers; the chunk kernel keeps the narrow ones (few channels, long sequences).
//
// A block owns CHANNELS = WARPS x 32 / STATE_LANES channels of one group; lane = channel x
// STATE_LANES + state lane, so a channel's lanes are neighbours. Time goes in tiles of TILE steps:
//   A. each lane computes dt = softplus(delta + bias), dt u and D u of TILE / STATE_LANES steps of
//      its own channel (shared memory, fp32), and the block stages B and C of the pass's states as
//      fp32, a row per state, so that a lane reads 4 steps of a state with one 16-byte load that
//      every channel of the block shares;
//   B. each lane walks the tile's steps: for its states a = ex2(dt A log2 e), h = a h + dt u B,
//      p = sum C h; every STATE_LANES steps the channel's lanes sum their p by a transpose
//      reduction (each lane ends with one step's sum: log2(STATE_LANES) shuffle rounds, halving
//      the values each round) and add it to the tile's y in shared memory;
//   C. each lane applies silu(z) to its steps of A and stores y.
// The next tile's u, delta, z, B and C are loaded into registers (as stored) while a tile is
// computed. With more than STATE_LANES x STATES states, passes over the state groups repeat B per
// tile and keep the other groups' h in shared memory. Steps past the sequence's end are the
// identity (dt = 0: a = 1, b = 0), so the final state is the last step's.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "selective_scan_args.hpp"
#include "selective_scan_cuda_common.cuh"

namespace kiln::scan {

template <class Config>
struct ChainTraits {
  static constexpr int kStateLanes = Config::STATE_LANES;  // lanes per channel
  static constexpr int kStates = Config::STATES;           // states per lane and pass
  static constexpr int kWarps = Config::WARPS;
  static constexpr int kTile = Config::TILE;               // steps per staged tile
  static constexpr int kChannelLanes = 32 / kStateLanes;   // channels per warp
  static constexpr int kChannels = kWarps * kChannelLanes;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kPassStates = kStateLanes * kStates;
  // Rows of shared memory, each padded by 4 floats: 16-byte aligned, and rows read by the lanes of
  // a quarter warp (channels for dt, states for B and C) start on different banks.
  static constexpr int kRow = kTile + 4;  // (dt), (dt u), B and C rows: one channel's or state's steps
  static constexpr int kYRow = kTile + kStateLanes;  // y rows: the lanes adding to y write distinct banks
  // Phases A and C: lane `sl` of channel `cb` handles steps sl x kSteps .. of its own channel.
  static constexpr int kSteps = kTile / kStateLanes;
  // One state a lane needs few registers: asking ptxas for 24 resident warps an SM (85 registers
  // at most) let the default run 500 us instead of 552 at the target shape (H200, 2026-11-27,
  // selective_scan_variants_bench); with 2 or 4 states a lane the same bound spilled hundreds of
  // bytes, so they keep ptxas's choice.
  static constexpr int kMinBlocks = kStates == 1 && 24 / kWarps > 1 ? 24 / kWarps : 1;
  static_assert(kStateLanes == 4 || kStateLanes == 8 || kStateLanes == 16 || kStateLanes == 32,
                "STATE_LANES must be a power of two, 4..32 (a lane reads 4 steps at a time)");
  static_assert(kStates == 1 || kStates == 2 || kStates == 4, "STATES must be 1, 2 or 4");
  static_assert(kWarps >= 1 && kWarps <= 8, "WARPS must be 1..8");
  static_assert(kTile % kStateLanes == 0 && kSteps >= 2 && kTile <= 128, "TILE: 2 steps per lane at least, 128 at most");
  static_assert(kChannels <= 32, "at most 32 channels per block");
};

// Dynamic shared memory of a chain launch: dt, dt u, staged B and C, y, and with several passes
// the carried h of every state.
template <class Config>
std::size_t chain_shared_bytes(std::int64_t state) {
  using Tr = ChainTraits<Config>;
  const std::int64_t passes = (state + Tr::kPassStates - 1) / Tr::kPassStates;
  const std::int64_t floats = 2 * Tr::kChannels * Tr::kRow + 2 * Tr::kPassStates * Tr::kRow +
                              Tr::kChannels * Tr::kYRow + (passes > 1 ? Tr::kChannels * state : 0);
  return static_cast<std::size_t>(floats) * sizeof(float);
}

namespace cuda_detail {

// The elements p[0 .. E) of which the first `valid` exist, as they are in memory (converted when
// used, so that the loads of the next tile stay in flight while this one is computed); 0 past
// `valid`. VEC: p is aligned to min(16, E x size) bytes and `valid` is a multiple of that vector.
template <int E, bool VEC, class T>
__device__ __forceinline__ void fetch(const T* p, std::int64_t valid, T (&raw)[E]) {
  if constexpr (VEC) {
    constexpr int kBytes = E * static_cast<int>(sizeof(T)) < 16 ? E * static_cast<int>(sizeof(T)) : 16;
    constexpr int kPer = kBytes / static_cast<int>(sizeof(T));
    using V = std::conditional_t<kBytes == 16, uint4, std::conditional_t<kBytes == 8, uint2, unsigned>>;
#pragma unroll
    for (int q = 0; q < E; q += kPer) {
      V v{};
      if (q < valid) v = __ldg(reinterpret_cast<const V*>(p + q));
      *reinterpret_cast<V*>(raw + q) = v;
    }
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) raw[e] = e < valid ? p[e] : from_float<T>(0.0f);
  }
}

// v[0..SL) of each of a channel's SL lanes (neighbours in the warp) -> v[0] of lane `sl` holds the
// sum over the lanes of their v[sl]. Each round a lane keeps the half of its values whose index
// has the round's bit (W) equal to its own and adds its partner's copy of that half. Written as a
// recursion on W so that every index is a constant (a loop whose bound halves was not unrolled by
// nvcc 13, which put the array in local memory).
template <int W, int SL>
__device__ __forceinline__ void transpose_reduce_round(float (&v)[SL], int sl) {
  if constexpr (W >= 1) {
    const bool upper = (sl & W) != 0;
#pragma unroll
    for (int i = 0; i < W; ++i) {
      const float send = upper ? v[i] : v[i + W];
      const float keep = upper ? v[i + W] : v[i];
      v[i] = keep + __shfl_xor_sync(0xffffffffu, send, W);
    }
    transpose_reduce_round<W / 2>(v, sl);
  }
}

template <int SL>
__device__ __forceinline__ void transpose_reduce(float (&v)[SL], int sl) {
  transpose_reduce_round<SL / 2>(v, sl);
}

}  // namespace cuda_detail

// FAST: every row moves as vectors and the states fit one pass (h stays in registers); the general
// kernel takes any length, alignment and state count.
template <class Config, class T, bool FAST>
__global__ void __launch_bounds__(ChainTraits<Config>::kThreads, ChainTraits<Config>::kMinBlocks)
    selective_scan_chain_kernel(ScanArgs<T> a, std::int64_t per_group_blocks) {
  constexpr bool VEC = FAST, ONE_PASS = FAST;
  using Tr = ChainTraits<Config>;
  using namespace cuda_detail;
  constexpr int SL = Tr::kStateLanes, S = Tr::kStates, TT = Tr::kTile, CH = Tr::kChannels, GS = Tr::kPassStates;
  constexpr int E = Tr::kSteps;  // steps of a lane in phases A and C
  // Staging: B and C of the pass move in pieces of Q steps (one 16-byte vector), NQ a thread.
  constexpr int Q = 16 / static_cast<int>(sizeof(T)) < TT ? 16 / static_cast<int>(sizeof(T)) : TT;
  constexpr int kPieces = GS * TT / Q;
  constexpr int NQ = (kPieces + Tr::kThreads - 1) / Tr::kThreads;
  constexpr float kLog2e = 1.4426950408889634f;
  extern __shared__ float4 smem4[];
  float* const sDt = reinterpret_cast<float*>(smem4);  // [CH][kRow] dt
  float* const sDu = sDt + CH * Tr::kRow;              // [CH][kRow] dt u
  float* const sB = sDu + CH * Tr::kRow;               // [GS][kRow] the pass's states
  float* const sC = sB + GS * Tr::kRow;                // [GS][kRow]
  float* const sY = sC + GS * Tr::kRow;                // [CH][kYRow]
  float* const sH = sY + CH * Tr::kYRow;               // [CH][state], several passes

  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32;
  const int sl = lane % SL;  // state lane
  const int cb = tid / SL;   // channel within the block
  const std::int64_t L = a.length, N = a.state;
  const BlockChannels<T> blk = block_channels(a, per_group_blocks, CH);
  const std::int64_t b = blk.b, d0 = blk.d0, group_end = blk.group_end;
  const T* Bg = blk.B;
  const T* Cg = blk.C;
  // A channel past the group's end computes on the group's last channel and stores nothing.
  const bool valid = d0 + cb < group_end;
  const std::int64_t d = valid ? d0 + cb : group_end - 1;
  const float Dd = a.D ? a.D[d] : 0.0f;
  const float bias = a.delta_bias ? a.delta_bias[d] : 0.0f;
  // This lane's steps of its channel in phases A and C: row + t0 + first.
  const int first = sl * E;
  const std::int64_t row = (b * a.channels + d) * L + first;
  float* const dt_row = sDt + cb * Tr::kRow;
  float* const du_row = sDu + cb * Tr::kRow;
  float* const y_row = sY + cb * Tr::kYRow;

  // Several passes (the general kernel with more than GS states) carry h in shared memory.
  const bool carry = !ONE_PASS && N > GS;
  if (carry) {
    for (std::int64_t i = tid; i < CH * N; i += Tr::kThreads) sH[i] = 0.0f;
  }
  float h[S];
#pragma unroll
  for (int s = 0; s < S; ++s) h[s] = 0.0f;
  float A2[S];
  auto load_A = [&](std::int64_t n0) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const std::int64_t n = n0 + sl * S + s;
      // A state past N has A = 0 and B = C = 0: a = 1, b = 0, h stays 0 and adds nothing.
      A2[s] = n < N ? a.A[d * N + n] * kLog2e : 0.0f;
    }
  };
  if (!carry) load_A(0);

  // The raw inputs of the tile at t0: this lane's u, delta and z, and its pieces of the first
  // pass's B and C rows.
  alignas(16) T ru[E], rd[E], rz[E], rB[NQ][Q], rC[NQ][Q];
  auto fetch_tile = [&](std::int64_t t0) {
    fetch<E, VEC>(a.u + row + t0, L - t0 - first, ru);
    fetch<E, VEC>(a.delta + row + t0, L - t0 - first, rd);
    if (a.z) fetch<E, VEC>(a.z + row + t0, L - t0 - first, rz);
#pragma unroll
    for (int j = 0; j < NQ; ++j) {
      const int i = tid + j * Tr::kThreads;
      const int s = i / (TT / Q), k = i % (TT / Q) * Q;
      const std::int64_t left = i < kPieces && s < N ? L - t0 - k : 0;
      fetch<Q, VEC>(Bg + s * L + t0 + k, left, rB[j]);
      fetch<Q, VEC>(Cg + s * L + t0 + k, left, rC[j]);
    }
  };
  fetch_tile(0);
  __syncthreads();  // the carried states are zeroed

  for (std::int64_t t0 = 0; t0 < L; t0 += TT) {
    const std::int64_t steps = L - t0 < TT ? L - t0 : TT;
    // A. dt, dt u and D u of this lane's steps.
    {
      float dt[E], du[E], y0[E];
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float u = to_float(ru[e]);
        float x = to_float(rd[e]) + bias;
        if (a.softplus) x = softplus(x);
        x = first + e < steps ? x : 0.0f;  // past the end: the identity
        dt[e] = x;
        du[e] = x * u;
        y0[e] = Dd * u;
      }
#pragma unroll
      for (int e = 0; e < E; e += 2) {
        *reinterpret_cast<float2*>(dt_row + first + e) = make_float2(dt[e], dt[e + 1]);
        *reinterpret_cast<float2*>(du_row + first + e) = make_float2(du[e], du[e + 1]);
        *reinterpret_cast<float2*>(y_row + first + e) = make_float2(y0[e], y0[e + 1]);
      }
    }
    float zc[E];
#pragma unroll
    for (int e = 0; e < E; ++e) zc[e] = a.z ? to_float(rz[e]) : 0.0f;
    const std::int64_t n_end = ONE_PASS ? 1 : N;  // one pass: n0 = 0 only
    for (std::int64_t n0 = 0; n0 < n_end; n0 += GS) {
      // The staged rows of the previous pass are read (the barrier after B).
#pragma unroll
      for (int j = 0; j < NQ; ++j) {
        const int i = tid + j * Tr::kThreads;
        if (i >= kPieces) break;
        const int s = i / (TT / Q), k = i % (TT / Q) * Q;
        auto put = [&](const T(&xb)[Q], const T(&xc)[Q]) {
#pragma unroll
          for (int e = 0; e < Q; e += 2) {
            *reinterpret_cast<float2*>(sB + s * Tr::kRow + k + e) = make_float2(to_float(xb[e]), to_float(xb[e + 1]));
            *reinterpret_cast<float2*>(sC + s * Tr::kRow + k + e) = make_float2(to_float(xc[e]), to_float(xc[e + 1]));
          }
        };
        if (ONE_PASS || n0 == 0) {
          put(rB[j], rC[j]);  // fetched with the tile
        } else {
          // The later passes' rows are loaded here: rB and rC hold the next tile's first rows.
          alignas(16) T pb[Q], pc[Q];
          const std::int64_t left = n0 + s < N ? L - t0 - k : 0;
          fetch<Q, VEC>(Bg + (n0 + s) * L + t0 + k, left, pb);
          fetch<Q, VEC>(Cg + (n0 + s) * L + t0 + k, left, pc);
          put(pb, pc);
        }
      }
      if (n0 == 0 && t0 + TT < L) fetch_tile(t0 + TT);  // in flight while this tile is computed
      if (carry) {
        load_A(n0);
#pragma unroll
        for (int s = 0; s < S; ++s) {
          const std::int64_t n = n0 + sl * S + s;
          h[s] = n < N ? sH[cb * N + n] : 0.0f;
        }
      }
      __syncthreads();
      // B. the recurrence over the tile, STATE_LANES steps per reduction, 4 steps per vector read.
      const float* Bs = sB + sl * S * Tr::kRow;
      const float* Cs = sC + sl * S * Tr::kRow;
#pragma unroll 2
      for (int k0 = 0; k0 < TT; k0 += SL) {
        float p[SL];
#pragma unroll
        for (int r0 = 0; r0 < SL; r0 += 4) {
          const float4 dt4 = *reinterpret_cast<const float4*>(dt_row + k0 + r0);
          const float4 du4 = *reinterpret_cast<const float4*>(du_row + k0 + r0);
          const float dt[4] = {dt4.x, dt4.y, dt4.z, dt4.w};
          const float du[4] = {du4.x, du4.y, du4.z, du4.w};
          float Bv[S][4], Cv[S][4];
#pragma unroll
          for (int s = 0; s < S; ++s) {
            const float4 b4 = *reinterpret_cast<const float4*>(Bs + s * Tr::kRow + k0 + r0);
            const float4 c4 = *reinterpret_cast<const float4*>(Cs + s * Tr::kRow + k0 + r0);
            Bv[s][0] = b4.x, Bv[s][1] = b4.y, Bv[s][2] = b4.z, Bv[s][3] = b4.w;
            Cv[s][0] = c4.x, Cv[s][1] = c4.y, Cv[s][2] = c4.z, Cv[s][3] = c4.w;
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            float acc = 0.0f;
#pragma unroll
            for (int s = 0; s < S; ++s) {
              h[s] = ex2(dt[e] * A2[s]) * h[s] + du[e] * Bv[s][e];
              acc = Cv[s][e] * h[s] + acc;
            }
            p[r0 + e] = acc;
          }
        }
        transpose_reduce<SL>(p, sl);
        y_row[k0 + sl] += p[0];
      }
      if (carry) {
#pragma unroll
        for (int s = 0; s < S; ++s) {
          const std::int64_t n = n0 + sl * S + s;
          if (n < N) sH[cb * N + n] = h[s];
        }
      }
      __syncthreads();
    }
    // C. silu(z) and the store of this lane's steps; the same lane writes their dt, dt u and y of
    // the next tile, so no barrier separates C from the next A.
    if (valid && first < steps) {
      float y[E];
#pragma unroll
      for (int e = 0; e < E; e += 2) {
        const float2 v = *reinterpret_cast<const float2*>(y_row + first + e);
        y[e] = v.x, y[e + 1] = v.y;
      }
      if (a.z) {
#pragma unroll
        for (int e = 0; e < E; ++e) y[e] *= __fdividef(zc[e], 1.0f + __expf(-zc[e]));
      }
      store_items<E>(a.y + row, t0, L - first, VEC, y);
    }
  }
  if (a.final_state && valid) {
    float* out = a.final_state + (b * a.channels + d) * N;
    if (!carry) {
#pragma unroll
      for (int s = 0; s < S; ++s) {
        if (sl * S + s < N) out[sl * S + s] = h[s];
      }
    } else {
      for (std::int64_t n = sl; n < N; n += SL) out[n] = sH[cb * N + n];
    }
  }
}

template <class Config, class T, bool FAST>
cudaError_t launch_chain_as(const ScanArgs<T>& a, cudaStream_t stream) {
  const std::int64_t per_group_blocks = cuda_detail::blocks_per_group(a.channels, a.groups, ChainTraits<Config>::kChannels);
  const std::size_t bytes = chain_shared_bytes<Config>(a.state);
  if (bytes > 48 * 1024) {
    // Large states over several passes carry every state's h in shared memory (up to 32 KiB).
    const cudaError_t status = cudaFuncSetAttribute(selective_scan_chain_kernel<Config, T, FAST>,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (status != cudaSuccess) return status;
  }
  selective_scan_chain_kernel<Config, T, FAST><<<static_cast<unsigned>(a.batch * a.groups * per_group_blocks),
                                                ChainTraits<Config>::kThreads, bytes, stream>>>(a, per_group_blocks);
  return cudaGetLastError();
}

// Enqueues the chain kernel; the caller has handled empty problems. The fast kernel serves rows
// that move as vectors (the length a multiple of 16 bytes, every tensor 16-byte aligned) with at
// most STATE_LANES x STATES states; the general one the rest (odd lengths, larger states).
template <class Config, class T>
cudaError_t launch_chain(const ScanArgs<T>& a, cudaStream_t stream) {
  auto aligned = [](const void* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool vec = a.length % (16 / static_cast<std::int64_t>(sizeof(T))) == 0 && aligned(a.u) && aligned(a.delta) &&
                   aligned(a.z) && aligned(a.y) && aligned(a.B) && aligned(a.C);
  const bool fast = vec && a.state <= ChainTraits<Config>::kPassStates;
  return fast ? launch_chain_as<Config, T, true>(a, stream) : launch_chain_as<Config, T, false>(a, stream);
}

}  // namespace kiln::scan
