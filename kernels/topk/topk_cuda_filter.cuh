// The one-read threshold filter of a row: air's pass 0 (topk_cuda_air.cuh) and ALGO shared
// (topk_cuda_shared.cuh). A block streams its share of a row with 16-byte loads, counts the top
// digit (BITS bits) of every element at or above its threshold digit `tau` in a shared-memory
// histogram and appends those elements, as packed entries (topk_order.hpp), to a buffer.
//
// Why it needs no barrier after its first step:
//   - Counts only grow. A warp that reads the histogram while others add to it sees, bin by bin,
//     at most the true counts, so the bucket of the need-th best in what it reads is at most the
//     bucket of the need-th best of the elements counted so far, which is at most that of the
//     block's whole share, which is at most the row's k-th bucket b_0 (the share is a subset of
//     the row, need = k). Any warp may therefore recompute tau at any time from a racy read and
//     raise the shared tau with atomicMax; the others pick it up whenever they read it.
//   - Every element with digit >= b_0 is >= every tau ever set, so it is always counted and
//     appended: the histogram is exact at and above b_0 (the walk from the top that picks b_0
//     reads nothing else) and the buffer holds every element of digit >= b_0 (when it does not
//     overflow), so the row's k best are the buffer's. Elements below b_0 that were counted or
//     appended earlier only make the histogram's low bins and the buffer larger; later passes
//     drop them by their digit.
//   - Appends need no order: an entry is unique (it holds its column) and the later passes and the
//     final sort rank by the entry alone. A warp takes its slots with one atomicAdd per step.
// The first step is the exception: every element of it is counted (tau is 0), then a barrier, a
// threshold from the whole block's first counts and another barrier, so that the first step
// appends only what passes it (otherwise the whole first step, 16 x THREADS elements, would be
// appended).
//
// A warp recomputes tau when it has counted at least max(32, need / warps) elements since its
// last recompute. Early, when most elements pass, that is every step; once tau has risen few
// elements pass and recomputes become rare. Block-wide the threshold is re-derived each time
// about need / warps more elements were counted, so it follows the block's k-th bucket closely
// while costing each warp about (counted / need) walks of the histogram's bins above tau.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "topk_order.hpp"

namespace kiln::topk::filter_detail {

inline constexpr int kLoads = 4;  // 16-byte loads per thread per step (16 elements)

// One warp: the bucket of the need-th best among the counts of hist[low, bins), walking from the
// top (each lane a contiguous range). Returns false when fewer than `need` are counted there. The
// counts may grow while they are read: every value read is at most the count when the walk ends,
// so a bucket found holds the need-th best of a subset of the counted elements and is at most the
// bucket of the need-th best of all of them.
__device__ inline bool find_bucket(const volatile unsigned* hist, int low, int bins, std::uint32_t need, int* bucket,
                                   std::uint32_t* above) {
  const int lane = threadIdx.x & 31;
  const int per = (bins - low + 31) / 32;
  std::uint32_t sum = 0;
  for (int i = 0; i < per; ++i) {
    const int d = bins - 1 - (lane * per + i);
    if (d >= low) sum += hist[d];
  }
  std::uint32_t inclusive = sum;
  for (int o = 1; o < 32; o <<= 1) {
    const std::uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  const std::uint32_t exclusive = inclusive - sum;
  const bool mine = exclusive < need && need <= inclusive;  // one lane at most: inclusive grows
  int b = low;
  std::uint32_t a = exclusive;
  if (mine) {
    for (int i = 0; i < per; ++i) {
      const int d = bins - 1 - (lane * per + i);
      if (d < low) break;
      const std::uint32_t h = hist[d];
      b = d;  // (racy reads only grow, so the walk reaches need in the lane's range)
      if (a + h >= need) break;
      a += h;
    }
  }
  const unsigned owners = __ballot_sync(0xFFFFFFFFu, mine);
  if (owners == 0) return false;
  const int owner = __ffs(owners) - 1;
  *bucket = __shfl_sync(0xFFFFFFFFu, b, owner);
  *above = __shfl_sync(0xFFFFFFFFu, a, owner);
  return true;
}

// Lane `lane` holds `count` entries to append: the warp's slots from one atomicAdd on *counter;
// returns the lane's first slot and sets *total to the warp's count. Called by the whole warp.
__device__ inline std::int64_t warp_slots(int count, std::uint32_t* counter, std::uint32_t* total) {
  const int lane = threadIdx.x & 31;
  int inclusive = count;
  for (int o = 1; o < 32; o <<= 1) {
    const int y = __shfl_up_sync(0xFFFFFFFFu, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  const auto sum = static_cast<std::uint32_t>(__shfl_sync(0xFFFFFFFFu, inclusive, 31));
  std::uint32_t base = 0;
  if (lane == 0) base = atomicAdd(counter, sum);
  base = __shfl_sync(0xFFFFFFFFu, base, 0);
  *total = sum;
  return static_cast<std::int64_t>(base) + inclusive - count;
}

// Block `block` of `blocks` filters its share of x[0, n) (a contiguous range of the row's 16-byte
// vectors; the last block also takes the scalar head before the first 16-byte boundary and the
// tail) into hist (2^BITS counters, zeroed), *counter and buffer[0, cap) (entries past cap are
// counted in *counter, not stored). *tau_shared starts at 0. Every thread of the block calls it;
// it ends without a barrier.
template <int THREADS, int BITS>
__device__ void filter_row(const float* x, std::int64_t n, bool smallest, int blocks, int block, std::uint32_t need,
                           unsigned* hist, unsigned* tau_shared, std::uint32_t* counter, std::uint64_t* buffer,
                           std::int64_t cap) {
  constexpr int kWarps = THREADS / 32, kShift = 32 - BITS, kBins = 1 << BITS, kElements = 4 * kLoads;
  constexpr std::int64_t kStep = static_cast<std::int64_t>(THREADS) * kLoads;  // vectors per block step
  const int t = threadIdx.x, lane = t & 31;
  const volatile unsigned* shared_tau = tau_shared;
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  std::int64_t head = static_cast<std::int64_t>(((16 - address % 16) % 16) / 4);
  if (head > n) head = n;
  const std::int64_t vectors = (n - head) / 4;
  const std::int64_t tail = head + 4 * vectors;
  const auto* x4 = reinterpret_cast<const float4*>(x + head);
  const std::int64_t per = (vectors + blocks - 1) / blocks;
  const std::int64_t u0 = per * block < vectors ? per * block : vectors;
  const std::int64_t u1 = per * (block + 1) < vectors ? per * (block + 1) : vectors;
  const std::int64_t steps = (u1 - u0 + kStep - 1) / kStep;
  const std::uint32_t recompute = need / kWarps > 32 ? need / kWarps : 32;
  std::uint32_t tau = 0, since = 0;

  // The next step's loads are issued before the current step is classified.
  float4 next[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    const std::int64_t v = u0 + u * THREADS + t;
    next[u] = v < u1 ? __ldcs(x4 + v) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  for (std::int64_t s = 0; s < steps; ++s) {
    const std::int64_t ub = u0 + s * kStep;
    std::uint32_t key[kElements];
    unsigned mask = 0;
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const float4 f = next[u];
      const std::int64_t v = ub + u * THREADS + t;
      const std::int64_t w = v + kStep;
      if (w < u1) next[u] = __ldcs(x4 + w);
      key[4 * u + 0] = key_of(float_bits(f.x), smallest);
      key[4 * u + 1] = key_of(float_bits(f.y), smallest);
      key[4 * u + 2] = key_of(float_bits(f.z), smallest);
      key[4 * u + 3] = key_of(float_bits(f.w), smallest);
      if (v < u1) mask |= 0xFu << (4 * u);
    }
#pragma unroll
    for (int j = 0; j < kElements; ++j) {
      if (!(mask & (1u << j))) continue;
      const std::uint32_t d = key[j] >> kShift;
      if (d < tau) {
        mask &= ~(1u << j);
        continue;
      }
      atomicAdd(&hist[d], 1u);
    }
    if (s == 0) {  // block-uniform: the first threshold from the whole first step
      __syncthreads();
      if (t < 32) {
        int b = 0;
        std::uint32_t a = 0;
        if (find_bucket(hist, 0, kBins, need, &b, &a) && lane == 0) atomicMax(tau_shared, static_cast<unsigned>(b));
      }
      __syncthreads();
      tau = __shfl_sync(0xFFFFFFFFu, *shared_tau, 0);
#pragma unroll
      for (int j = 0; j < kElements; ++j) {
        if ((mask & (1u << j)) && (key[j] >> kShift) < tau) mask &= ~(1u << j);
      }
    }
    if (__any_sync(0xFFFFFFFFu, mask != 0)) {
      std::uint32_t total = 0;
      std::int64_t at = warp_slots(__popc(mask), counter, &total);
#pragma unroll
      for (int j = 0; j < kElements; ++j) {
        if (!(mask & (1u << j))) continue;
        const std::int64_t column = head + 4 * (ub + (j / 4) * THREADS + t) + (j % 4);
        if (at < cap) buffer[at] = pack(key[j], static_cast<std::uint32_t>(column));
        ++at;
      }
      since += total;  // warp-uniform
      if (since >= recompute) {
        since = 0;
        int b = 0;
        std::uint32_t a = 0;
        if (find_bucket(hist, static_cast<int>(tau), kBins, need, &b, &a) && lane == 0)
          atomicMax(tau_shared, static_cast<unsigned>(b));
      }
    }
    // Only grows. Lane 0's read for the whole warp: find_bucket's ranges must agree across lanes.
    tau = __shfl_sync(0xFFFFFFFFu, *shared_tau, 0);
  }

  // The head and the tail (at most 6 elements), by the last block's first warp.
  if (block == blocks - 1 && t < 32) {
    const std::int64_t extra = head + (n - tail);
    std::uint32_t key = 0, column = 0;
    bool take = false;
    if (lane < extra) {
      column = static_cast<std::uint32_t>(lane < head ? lane : tail + (lane - head));
      key = key_of(float_bits(x[column]), smallest);
      const std::uint32_t d = key >> kShift;
      take = d >= *shared_tau;
      if (take) atomicAdd(&hist[d], 1u);
    }
    if (__any_sync(0xFFFFFFFFu, take)) {
      std::uint32_t total = 0;
      const std::int64_t at = warp_slots(take ? 1 : 0, counter, &total);
      if (take && at < cap) buffer[at] = pack(key, column);
    }
  }
}

}  // namespace kiln::topk::filter_detail
