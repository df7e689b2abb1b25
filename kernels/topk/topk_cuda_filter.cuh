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
//     final sort rank by the entry alone. A warp takes its slots with one atomicAdd per step on
//     a counter in shared memory (air with several blocks on a row: of the block's own region).
//   - A warp reads the block's tau only in a step where one of its elements passes its own,
//     older tau: an element that fails the older one fails every later one.
// The first step is the exception: every element of it is counted (tau is 0), then a barrier, a
// threshold from the whole block's first counts and another barrier, so that the first step
// appends only what passes it (otherwise the whole first step, 16 x THREADS elements, would be
// appended).
//
// With several blocks on a row (air), a warp that recomputes tau first moves the block's counts
// at and above tau into the row's histogram and takes the bucket from the row's counts
// (Filter::row_bucket): the argument above holds for any subset of the row's elements, so every
// block's threshold follows the row's k-th bucket instead of its own.
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

// Blocks of `threads` per SM that the kernels running the filter ask for (__launch_bounds__): at
// most `regs` registers a thread (REGS of topk_cuda.space.json; 48: 5 blocks of 256 on an SM's
// 64 K registers, 64: 4), so that many warps keep their loads in flight; a step's loads are not
// held across the previous step.
__host__ __device__ constexpr int filter_min_blocks(int threads, int regs) {
  return 65536 / (regs * threads) > 0 ? 65536 / (regs * threads) : 1;
}

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
__device__ inline std::uint32_t warp_slots(int count, std::uint32_t* counter, std::uint32_t* total) {
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
  return base + static_cast<std::uint32_t>(inclusive - count);
}

// The warp's threshold as a float compare (topk_order.hpp, float_at_most): an element passes
// digit tau (its key's top BITS bits >= tau) when `all`, or (largest) !(x <= limit) or
// (smallest) x <= limit. Exact for every float (NaN and -0.0 included), one compare an element.
struct Limit {
  float limit;
  bool all;  // tau 0: every element passes
};

template <int BITS, bool SMALLEST>
__device__ __forceinline__ Limit limit_of(std::uint32_t tau) {
  const std::uint32_t threshold = tau << (32 - BITS);
  return {__uint_as_float(float_at_most(SMALLEST ? ~threshold : threshold - 1u)), tau == 0};
}

// The compares are written in PTX without .ftz, so that subnormals compare as themselves
// whatever the compiler's flush-to-zero setting.
template <bool SMALLEST>
__device__ __forceinline__ bool passes(float x, const Limit& l) {
  unsigned r;
  if constexpr (SMALLEST) {
    asm("{\n\t.reg .pred p;\n\tsetp.le.f32 p, %1, %2;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(r) : "f"(x), "f"(l.limit));
  } else {
    asm("{\n\t.reg .pred p;\n\tsetp.gtu.f32 p, %1, %2;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(r) : "f"(x), "f"(l.limit));
  }
  return l.all || r != 0;
}

// Whether any of the 16 elements passes: one predicate accumulated by compare-and-or.
template <bool SMALLEST>
__device__ __forceinline__ bool any_passes(const float4 (&f)[kLoads], const Limit& l) {
  static_assert(kLoads == 4, "the compare chain takes 16 elements");
  unsigned r;
#define KILN_TOPK_CHAIN(OP)                                                                                           \
  asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t"                                                               \
      "setp." OP ".or.f32 p, %2, %18, p;\n\tsetp." OP ".or.f32 p, %3, %18, p;\n\t"                                      \
      "setp." OP ".or.f32 p, %4, %18, p;\n\tsetp." OP ".or.f32 p, %5, %18, p;\n\t"                                      \
      "setp." OP ".or.f32 p, %6, %18, p;\n\tsetp." OP ".or.f32 p, %7, %18, p;\n\t"                                      \
      "setp." OP ".or.f32 p, %8, %18, p;\n\tsetp." OP ".or.f32 p, %9, %18, p;\n\t"                                      \
      "setp." OP ".or.f32 p, %10, %18, p;\n\tsetp." OP ".or.f32 p, %11, %18, p;\n\t"                                    \
      "setp." OP ".or.f32 p, %12, %18, p;\n\tsetp." OP ".or.f32 p, %13, %18, p;\n\t"                                    \
      "setp." OP ".or.f32 p, %14, %18, p;\n\tsetp." OP ".or.f32 p, %15, %18, p;\n\t"                                    \
      "setp." OP ".or.f32 p, %16, %18, p;\n\tsetp." OP ".or.f32 p, %17, %18, p;\n\t"                                    \
      "selp.u32 %0, 1, 0, p;\n\t}"                                                                                    \
      : "=r"(r)                                                                                                       \
      : "r"(static_cast<unsigned>(l.all)), "f"(f[0].x), "f"(f[0].y), "f"(f[0].z), "f"(f[0].w), "f"(f[1].x),          \
        "f"(f[1].y), "f"(f[1].z), "f"(f[1].w), "f"(f[2].x), "f"(f[2].y), "f"(f[2].z), "f"(f[2].w), "f"(f[3].x),      \
        "f"(f[3].y), "f"(f[3].z), "f"(f[3].w), "f"(l.limit))
  if constexpr (SMALLEST) {
    KILN_TOPK_CHAIN("le");
  } else {
    KILN_TOPK_CHAIN("gtu");
  }
#undef KILN_TOPK_CHAIN
  return r != 0;
}

// Asks for `vectors` 16-byte vectors from `p` on in L2 (sm_90: one bulk prefetch; a hint, no
// effect on results; nothing on older devices).
__device__ __forceinline__ void prefetch_l2(const float4* p, std::uint32_t vectors) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(vectors * 16u) : "memory");
#else
  (void)p;
  (void)vectors;
#endif
}

__device__ __forceinline__ float element(const float4 (&f)[kLoads], int j) {
  const float4& v = f[j / 4];
  return j % 4 == 0 ? v.x : j % 4 == 1 ? v.y : j % 4 == 2 ? v.z : v.w;
}

// The filter of one block's share: the threshold state of one warp and the step's code.
template <int THREADS, int BITS, bool SMALLEST>
struct Filter {
  static constexpr int kWarps = THREADS / 32, kShift = 32 - BITS, kBins = 1 << BITS, kElements = 4 * kLoads;
  unsigned* hist;
  unsigned* tau_shared;
  std::uint32_t* counter;
  std::uint64_t* buffer;
  std::uint32_t cap, need, recompute;
  // Several blocks on a row (air): the row's histogram and its highest flushed bin in global
  // memory, shared by its blocks; nullptr with one block.
  unsigned* row_hist;
  unsigned* row_top;

  std::uint32_t tau = 0, since = 0;
  Limit limit{0.0f, true};

  __device__ void set_tau(std::uint32_t t) {  // warp-uniform
    if (t != tau) {
      tau = t;
      limit = limit_of<BITS, SMALLEST>(t);
    }
  }
  // The block's threshold, read by lane 0 for the whole warp (find_bucket's ranges must agree
  // across lanes).
  __device__ void refresh() {
    set_tau(__shfl_sync(0xFFFFFFFFu, *static_cast<const volatile unsigned*>(tau_shared), 0));
  }

  // Several blocks on the row: the block's counts at and above tau move to the row's histogram
  // (each count is taken out of shared memory by an atomic exchange, so it reaches the row's
  // histogram exactly once; what stays behind is added at the end of the pass), and the bucket
  // of the need-th best is found in the row's counts, those of every block that flushed: the
  // bucket of the need-th best of a subset of the row's elements, at most b_0 like a block's own,
  // and far higher than one block's once the row's blocks together counted many times k. Without
  // it each of hundreds of blocks follows its own k-th best and appends about k (1 + ln steps) c
  // entries. The walk reads the row's counts 32 bins at a time (one coalesced load per lane),
  // from the highest bin any block flushed down: float keys put few bins between the largest
  // values and the k-th (3 between 2.0 and 3.5 at 11 bits), so it is usually one load.
  __device__ bool row_bucket(int* bucket, std::uint32_t* above) {
    const int lane = threadIdx.x & 31;
    // Read first, so that its latency overlaps the flush (nothing below waits on an atomic's
    // reply: one round trip to L2 a walk, the walk's load).
    const unsigned seen = lane == 0 ? *static_cast<const volatile unsigned*>(row_top) : 0u;
    int top = -1;
    for (int d = static_cast<int>(tau) + lane; d < kBins; d += 32) {
      if (*static_cast<volatile unsigned*>(hist + d) != 0) {
        const unsigned c = atomicExch(hist + d, 0u);
        if (c != 0) {
          atomicAdd(row_hist + d, c);
          top = d;
        }
      }
    }
    top = __reduce_max_sync(0xFFFFFFFFu, top);
    if (lane == 0 && top > static_cast<int>(seen)) atomicMax(row_top, static_cast<unsigned>(top));
    int hi = __shfl_sync(0xFFFFFFFFu, static_cast<int>(seen), 0);
    hi = hi > top ? hi : top;
    std::uint32_t running = 0;
    for (; hi >= static_cast<int>(tau); hi -= 32) {
      const int d = hi - lane;  // lane 0 the highest bin
      const std::uint32_t h = d >= static_cast<int>(tau) ? *static_cast<const volatile unsigned*>(row_hist + d) : 0u;
      std::uint32_t inclusive = h;
      for (int o = 1; o < 32; o <<= 1) {
        const std::uint32_t y = __shfl_up_sync(0xFFFFFFFFu, inclusive, o);
        if (lane >= o) inclusive += y;
      }
      const unsigned reached = __ballot_sync(0xFFFFFFFFu, running + inclusive >= need);
      if (reached != 0) {
        const int owner = __ffs(reached) - 1;
        *bucket = hi - owner;
        *above = running + __shfl_sync(0xFFFFFFFFu, inclusive - h, owner);
        return true;
      }
      running += __shfl_sync(0xFFFFFFFFu, inclusive, 31);
    }
    return false;
  }

  // Appends the lane's elements of `mask` (vector v's element c is column first + 4 v + c, v the
  // step's j / 4-th vector of this thread); `count`: whether to count them in the histogram too.
  __device__ void append(const float4 (&f)[kLoads], unsigned mask, std::uint32_t first, bool count) {
    std::uint32_t total = 0;
    std::uint32_t at = warp_slots(__popc(mask), counter, &total);
#pragma unroll
    for (int j = 0; j < kElements; ++j) {
      if (!(mask & (1u << j))) continue;
      const std::uint32_t key = key_of(float_bits(element(f, j)), SMALLEST);
      if (count) atomicAdd(&hist[key >> kShift], 1u);
      const std::uint32_t column = first + 4u * static_cast<std::uint32_t>((j / 4) * THREADS) + (j % 4);
      if (at < cap) buffer[at] = pack(key, column);
      ++at;
    }
    since += total;  // warp-uniform
  }

  // A step with at least one passing element in the warp: the lanes' passing elements are counted
  // and appended; the warp re-derives the threshold once it counted `recompute` more elements.
  __device__ void slow_step(const float4 (&f)[kLoads], unsigned valid, std::uint32_t first) {
    refresh();
    unsigned mask = 0;
#pragma unroll
    for (int j = 0; j < kElements; ++j) mask |= (passes<SMALLEST>(element(f, j), limit) ? 1u : 0u) << j;
    mask &= valid;
    if (!__any_sync(0xFFFFFFFFu, mask != 0)) return;
    append(f, mask, first, true);
    if (since >= recompute) {
      since = 0;
      int b = 0;
      std::uint32_t a = 0;
      const bool found =
          row_hist != nullptr ? row_bucket(&b, &a) : find_bucket(hist, static_cast<int>(tau), kBins, need, &b, &a);
      if (found) {
        if ((threadIdx.x & 31) == 0) atomicMax(tau_shared, static_cast<unsigned>(b));
        set_tau(static_cast<std::uint32_t>(b) > tau ? static_cast<std::uint32_t>(b) : tau);
      }
    }
  }

  // The block's first step: every valid element is counted, the block derives its first threshold
  // from them (two barriers), and only what passes it is appended.
  __device__ void first_step(const float4 (&f)[kLoads], unsigned valid, std::uint32_t first) {
#pragma unroll
    for (int j = 0; j < kElements; ++j) {
      if (valid & (1u << j)) atomicAdd(&hist[key_of(float_bits(element(f, j)), SMALLEST) >> kShift], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      int b = 0;
      std::uint32_t a = 0;
      if (find_bucket(hist, 0, kBins, need, &b, &a) && threadIdx.x == 0) atomicMax(tau_shared, static_cast<unsigned>(b));
    }
    __syncthreads();
    refresh();
    unsigned mask = 0;
#pragma unroll
    for (int j = 0; j < kElements; ++j) mask |= (passes<SMALLEST>(element(f, j), limit) ? 1u : 0u) << j;
    mask &= valid;
    if (__any_sync(0xFFFFFFFFu, mask != 0)) append(f, mask, first, false);
  }
};

// Block `block` of `blocks` filters its share of x[0, n) (a contiguous range of the row's 16-byte
// vectors; the last block also takes the scalar head before the first 16-byte boundary and the
// tail) into hist (2^BITS counters, zeroed), *counter (shared memory, zeroed) and buffer[0, cap)
// (entries past cap are counted in *counter, not stored). *tau_shared starts at 0. Every thread
// of the block calls it; it ends without a barrier.
//
// A step is 4 16-byte streaming loads a thread (16 elements), issued together. A warp none of
// whose elements passes its threshold does nothing else: 16 compares folded into one predicate
// and one vote (static count, sm_90a, 256 threads: 43 PTX instructions a step besides the loaded
// vectors' renames, about 2.5 an element; the same path took 357 SASS instructions, 22 an
// element, with a key per element). Only a warp with a passing element reads the block's
// threshold, computes keys, counts and appends.
// Offsets within the share are 32-bit (a row has fewer than 2^31 columns).
template <int THREADS, int BITS, bool SMALLEST>
__device__ void filter_share(const float* x, std::uint32_t n, int blocks, int block, std::uint32_t need, unsigned* hist,
                             unsigned* tau_shared, std::uint32_t* counter, std::uint64_t* buffer, std::uint32_t cap,
                             unsigned* row_hist, unsigned* row_top) {
  constexpr std::uint32_t kStep = static_cast<std::uint32_t>(THREADS) * kLoads;  // vectors per block step
  using F = Filter<THREADS, BITS, SMALLEST>;
  const std::uint32_t t = threadIdx.x, lane = t & 31;
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  std::uint32_t head = static_cast<std::uint32_t>(((16 - address % 16) % 16) / 4);
  if (head > n) head = n;
  const std::uint32_t vectors = (n - head) / 4;
  const std::uint32_t tail = head + 4 * vectors;
  const auto* x4 = reinterpret_cast<const float4*>(x + head);
  const std::uint32_t per = (vectors + static_cast<std::uint32_t>(blocks) - 1) / static_cast<std::uint32_t>(blocks);
  const std::uint64_t b0 = static_cast<std::uint64_t>(per) * static_cast<std::uint32_t>(block);
  const std::uint32_t u0 = b0 < vectors ? static_cast<std::uint32_t>(b0) : vectors;
  const std::uint32_t u1 = b0 + per < vectors ? static_cast<std::uint32_t>(b0 + per) : vectors;
  const std::uint32_t full = (u1 - u0) / kStep;
  const bool partial = (u1 - u0) % kStep != 0;
  F filter{hist, tau_shared, counter, buffer, cap, need, need / F::kWarps > 32 ? need / F::kWarps : 32,
           row_hist, row_top};

  // No L2 prefetch of the steps ahead: a bulk prefetch two steps ahead by one thread (as this
  // filter had until 2026-11-30) made a plain read of 1 GiB 245 -> 327 us on the H200 and this
  // pass 0 about 60 us slower (README, "Pass 0 without the L2 prefetch").
  const float4* p = x4 + u0 + t;
  // The column of this thread's first element of a step.
  std::uint32_t first = head + 4 * (u0 + t);
  float4 f[kLoads];
  for (std::uint32_t s = 0; s < full; ++s) {
#pragma unroll
    for (int u = 0; u < kLoads; ++u) f[u] = __ldcs(p + u * THREADS);
    if (s == 0) {  // block-uniform
      filter.first_step(f, 0xFFFFu, first);
    } else if (__any_sync(0xFFFFFFFFu, any_passes<SMALLEST>(f, filter.limit))) {
      filter.slow_step(f, 0xFFFFu, first);
    }
    p += kStep;
    first += 4 * kStep;
  }
  if (partial) {  // block-uniform: the share's last, partial step
    const std::uint32_t ub = u0 + full * kStep;
    unsigned valid = 0;
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const bool in = ub + u * THREADS + t < u1;
      f[u] = in ? __ldcs(p + u * THREADS) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (in) valid |= 0xFu << (4 * u);
    }
    if (full == 0) {
      filter.first_step(f, valid, first);
    } else {
      filter.slow_step(f, valid, first);
    }
  }

  // The head and the tail (at most 6 elements), by the last block's first warp.
  if (block == blocks - 1 && t < 32) {
    const std::uint32_t extra = head + (n - tail);
    std::uint32_t key = 0, column = 0;
    bool take = false;
    if (lane < extra) {
      column = lane < head ? lane : tail + (lane - head);
      key = key_of(float_bits(x[column]), SMALLEST);
      const std::uint32_t d = key >> (32 - BITS);
      take = d >= *static_cast<const volatile unsigned*>(tau_shared);
      if (take) atomicAdd(&hist[d], 1u);
    }
    if (__any_sync(0xFFFFFFFFu, take)) {
      std::uint32_t total = 0;
      const std::uint32_t at = warp_slots(take ? 1 : 0, counter, &total);
      if (take && at < cap) buffer[at] = pack(key, column);
    }
  }
}

// row_hist, row_top: the row's histogram and highest flushed bin in global memory when several
// blocks share the row (zeroed before the launch), nullptr with one block.
template <int THREADS, int BITS>
__device__ void filter_row(const float* x, std::int64_t n, bool smallest, int blocks, int block, std::uint32_t need,
                           unsigned* hist, unsigned* tau_shared, std::uint32_t* counter, std::uint64_t* buffer,
                           std::uint32_t cap, unsigned* row_hist, unsigned* row_top) {
  if (smallest) {
    filter_share<THREADS, BITS, true>(x, static_cast<std::uint32_t>(n), blocks, block, need, hist, tau_shared, counter,
                                      buffer, cap, row_hist, row_top);
  } else {
    filter_share<THREADS, BITS, false>(x, static_cast<std::uint32_t>(n), blocks, block, need, hist, tau_shared,
                                       counter, buffer, cap, row_hist, row_top);
  }
}

}  // namespace kiln::topk::filter_detail
