// CUDA row top-k, fp32, k <= 2048. Grid: rows x parts blocks (parts_of: SPLIT, or fewer); block
// (row, part) selects the best min(k, m) of its part's m columns (a contiguous 1/parts of the row)
// as packed entries (topk_order.hpp), sorted best first. With one part the block writes the
// row's result; otherwise
// it writes its list to the workspace and a second kernel, one block per row, merges the SPLIT
// lists (few long rows: one block per row would leave most SMs idle).
//
// The selections of one block per part (ALGO; `air`, the whole GPU on a row, is in
// topk_cuda_air.cuh, `shared`, one block per row filtering into shared memory, in
// topk_cuda_shared.cuh, `regs`, one block per row holding it in registers, in topk_cuda_regs.cuh,
// `sample`, one block per row filtering at a sampled threshold, in topk_cuda_sample.cuh, and the
// launch in topk_cuda_launch.cuh):
//   radix: radix select with filtering, after AIR top-k (SC'23). Keys are taken BITS bits at a
//     time from the top: a sweep over the live elements builds the histogram of the current digit
//     in shared memory, and the digit's bucket that holds the k-th best is chosen. The next sweep
//     classifies by that digit: elements above the bucket are results, those in it stay
//     candidates and are appended, in column order, to a shared-memory buffer (when they fit:
//     later sweeps then read the buffer, not global memory), and their next digit is counted.
//     After the last digit the candidates are the ties of the k-th key, taken lowest column
//     first. The k results are then bitonic-sorted.
//   warp: selection for small k after WarpSelect/GridSelect: every lane keeps a short queue of
//     entries better than its warp's threshold; when one fills, the warp sorts the queues
//     (bitonic), merges them into its sorted top list (max of the list and the reversed queue,
//     then a bitonic merge) and raises the threshold. The warps' lists are merged at the end. For
//     k above kWarpMaxList it runs the radix selection (its lists would not fit shared memory).
// Everything ranks by the packed 64-bit entry, a total order, so the result does not depend on
// the order in which elements arrive: any split and any algorithm give the same bits.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kiln/choice.hpp"
#include "topk_order.hpp"

namespace kiln::topk {

inline constexpr int kMaxList = 2048;       // the longest sorted list (k rounded up to a power of two)
inline constexpr int kWarpMaxList = 256;    // the longest list of the warp selection
inline constexpr int kCandidates = 2048;    // the radix selection's shared candidate buffer
inline constexpr int kItems = 4;            // consecutive elements per thread per radix tile
inline constexpr int kMaxSplit = 256;       // the most blocks on one row
inline constexpr std::int64_t kWantedBlocks = 1024;  // rows x parts beyond this add no parallelism
inline constexpr std::int64_t kMinPart = 1024;       // the fewest columns worth a block of their own

// The blocks a row gets: SPLIT, fewer when the rows alone fill the GPU (at most kWantedBlocks
// blocks in all from splitting) or when parts would be shorter than kMinPart columns.
__host__ __device__ inline int parts_of(int split, std::int64_t rows, std::int64_t n) {
  std::int64_t p = split;
  const std::int64_t by_rows = (kWantedBlocks + rows - 1) / rows, by_n = (n + kMinPart - 1) / kMinPart;
  if (p > by_rows) p = by_rows;
  if (p > by_n) p = by_n;
  return p < 1 ? 1 : static_cast<int>(p);
}

template <class Config>
struct CudaTraits {
  static constexpr int kThreads = Config::THREADS;
  static constexpr int kWarps = kThreads / 32;
  static constexpr bool kRadix = Config::ALGO == "radix";
  static constexpr bool kAir = Config::ALGO == "air";
  static constexpr bool kShared = Config::ALGO == "shared";
  static constexpr bool kRegs = Config::ALGO == "regs";
  static constexpr bool kSample = Config::ALGO == "sample";
  static constexpr bool kStream = Config::ALGO == "stream";
  static constexpr int kBits = Config::BITS;
  static constexpr int kSplit = Config::SPLIT;
  static constexpr int kPasses = (32 + kBits - 1) / kBits;
  static_assert(kThreads % 32 == 0 && kThreads >= 64 && kThreads <= 1024, "THREADS: a multiple of 32, 64..1024");
  static_assert(Config::ALGO == "radix" || Config::ALGO == "warp" || Config::ALGO == "air" || Config::ALGO == "shared" ||
                    Config::ALGO == "regs" || Config::ALGO == "sample" || Config::ALGO == "stream",
                "ALGO: radix, warp, air, shared, regs, sample or stream");
  static_assert(kBits >= 4 && kBits <= 11, "BITS: 4..11 (a histogram of 2^BITS counters)");
  static_assert(kSplit >= 1 && kSplit <= kMaxSplit, "SPLIT: 1..kMaxSplit");
};

// The length of the sorted lists for k: a power of two, at least a warp's width.
__host__ __device__ inline int list_length(std::int64_t k) {
  int l = 32;
  while (l < k) l *= 2;
  return l;
}

namespace cuda_detail {

inline constexpr int kCachedDevices = 64;  // devices whose launch figures are kept (others: computed each call)

// A launch figure of the current device (an occupancy, a shared-memory limit), computed once per
// device by compute(device, &value) and kept in `cache` (value + 1; 0: not computed yet).
template <class Compute>
cudaError_t per_device(std::atomic<std::int64_t> (&cache)[kCachedDevices], Compute compute, std::int64_t* value) {
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  std::int64_t v = (device < kCachedDevices ? cache[device].load(std::memory_order_relaxed) : 0) - 1;
  if (v < 0) {
    status = compute(device, &v);
    if (status != cudaSuccess) return status;
    if (device < kCachedDevices) cache[device].store(v + 1, std::memory_order_relaxed);
  }
  *value = v;
  return cudaSuccess;
}

template <int THREADS>
struct RadixShared {
  unsigned hist[1 << 11];
  std::uint64_t result[kMaxList];
  std::uint64_t candidates[kCandidates];
  int warp_sums[THREADS / 32];
  int result_count, candidate_count, chosen, above;
};

// LIST: kWarpMaxList for warp variants, 1 for radix ones (which never use it).
template <int THREADS, int LIST>
struct WarpShared {
  std::uint64_t list[THREADS / 32][LIST];
  std::uint64_t queue[THREADS / 32][LIST];
};

template <int THREADS, bool RADIX>
union Shared {
  RadixShared<THREADS> radix;
  WarpShared<THREADS, RADIX ? 1 : kWarpMaxList> warp;
};

// Sorts a[0, n) best first (n a power of two) with `count` cooperating threads, thread `t`. Each
// step's n / 2 compare-exchanges are spread over the threads (comparator c works on i, the c-th
// index with bit j clear, and i + j), so that no thread idles while another takes two.
// One step (merge `size`, distance j) of it, without the barrier that follows.
__device__ inline void bitonic_step(std::uint64_t* a, int n, int t, int count, int size, int j) {
  for (int c = t; c < n / 2; c += count) {
    const int i = (c << 1) - (c & (j - 1));
    const int l = i + j;
    const std::uint64_t x = a[i], y = a[l];
    const bool descending = (i & size) == 0;
    if (descending ? x < y : x > y) {
      a[i] = y;
      a[l] = x;
    }
  }
}

template <class Sync>
__device__ void bitonic_sort(std::uint64_t* a, int n, int t, int count, Sync sync) {
  for (int size = 2; size <= n; size <<= 1) {
    for (int j = size >> 1; j > 0; j >>= 1) {
      bitonic_step(a, n, t, count, size, j);
      sync();
    }
  }
}

namespace block_sort_detail {

// Thread t holds a[t E, t E + E) in registers. A compare-exchange at distance j is within the
// thread (j < E), between lanes of one warp (j < 32 E: a shuffle with lane t ^ (j / E), each
// thread keeping the larger or smaller of its element and the partner's), or through shared
// memory with a barrier (j >= 32 E: log2(n / (32 E)) steps of each merge). Direction as
// bitonic_sort's: the pair (i, i + j) is descending when bit `size` of i is clear.
template <int E>
__device__ void sort(std::uint64_t* a, int n, int t) {
  const bool active = t * E < n;  // whole warps: n and E * 32 are multiples of 32 E
  std::uint64_t x[E];
  if (active) {
#pragma unroll
    for (int b = 0; b < E; ++b) x[b] = a[t * E + b];
  }
  const int warp_span = 32 * E;
  for (int size = 2; size <= n; size <<= 1) {
    int j = size >> 1;
    if (j >= warp_span) {
      __syncthreads();  // a holds every thread's elements (the initial load, or the store below)
      if (active) {
#pragma unroll
        for (int b = 0; b < E; ++b) a[t * E + b] = x[b];
      }
      __syncthreads();
      for (; j >= warp_span; j >>= 1) {
        bitonic_step(a, n, t, static_cast<int>(blockDim.x), size, j);
        __syncthreads();
      }
      if (active) {
#pragma unroll
        for (int b = 0; b < E; ++b) x[b] = a[t * E + b];
      }
    }
    if (!active) continue;
    for (; j >= E; j >>= 1) {
      const int lanes = j / E;
#pragma unroll
      for (int b = 0; b < E; ++b) {
        const int e = t * E + b;
        const std::uint64_t y = __shfl_xor_sync(0xFFFFFFFFu, x[b], lanes);
        const bool keep_larger = ((e & j) == 0) == ((e & size) == 0);
        x[b] = keep_larger ? (x[b] > y ? x[b] : y) : (x[b] < y ? x[b] : y);
      }
    }
    // Within the thread: the distances are unrolled (registers need indices known at compile
    // time; a runtime index would put x in local memory).
#pragma unroll
    for (int d = E / 2; d > 0; d >>= 1) {
      if (d > j) continue;
#pragma unroll
      for (int b = 0; b < E; ++b) {
        if ((b & d) != 0) continue;
        const bool descending = ((t * E + b) & size) == 0;
        const std::uint64_t u = x[b], v = x[b + d];
        if (descending ? u < v : u > v) {
          x[b] = v;
          x[b + d] = u;
        }
      }
    }
  }
  __syncthreads();  // every thread is done reading a
  if (active) {
#pragma unroll
    for (int b = 0; b < E; ++b) a[t * E + b] = x[b];
  }
  __syncthreads();
}

}  // namespace block_sort_detail

// Sorts a[0, n) (shared memory, n a power of two, 32 <= n <= kMaxList) best first with the whole
// block of THREADS threads (every thread calls it); the same order as bitonic_sort, most steps in
// registers: each thread takes max(1, n / THREADS) consecutive entries (up to 4; more go the
// shared-memory way of bitonic_sort), and only the steps of a merge at distances beyond a warp's
// entries go through shared memory and a barrier (at n = 1024 and 512 threads, 10 of the 55
// steps; bitonic_sort takes a barrier at every step).
template <int THREADS>
__device__ void block_sort(std::uint64_t* a, int n, int t) {
  const int e = n / THREADS;
  if (e <= 1) {
    block_sort_detail::sort<1>(a, n, t);
  } else if (e == 2) {
    block_sort_detail::sort<2>(a, n, t);
  } else if (e == 4) {
    block_sort_detail::sort<4>(a, n, t);
  } else {  // 8 or 16 entries a thread would take 32 registers or more: through shared memory
    bitonic_sort(a, n, t, THREADS, [] { __syncthreads(); });
  }
}

// a (sorted best first) becomes the best n of a and b (both sorted best first, length n): the
// elementwise max of a and reversed b is bitonic and holds them; a bitonic merge sorts it.
template <class Sync>
__device__ void merge_best(std::uint64_t* a, const std::uint64_t* b, int n, int t, int count, Sync sync) {
  for (int i = t; i < n; i += count) {
    const std::uint64_t y = b[n - 1 - i];
    if (y > a[i]) a[i] = y;
  }
  sync();
  for (int j = n >> 1; j > 0; j >>= 1) {
    for (int i = t; i < n; i += count) {
      const int l = i ^ j;
      if (l > i && a[i] < a[l]) {
        const std::uint64_t x = a[i];
        a[i] = a[l];
        a[l] = x;
      }
    }
    sync();
  }
}

// Exclusive prefix sum of v over the block; *total gets the sum. Ends with a barrier.
template <int THREADS>
__device__ int block_exclusive_scan(int v, int* warp_sums, int* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int x = v;
  for (int d = 1; d < 32; d <<= 1) {
    const int y = __shfl_up_sync(0xFFFFFFFFu, x, d);
    if (lane >= d) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  int before = 0, sum = 0;
  for (int w = 0; w < THREADS / 32; ++w) {
    const int s = warp_sums[w];
    if (w < warp) before += s;
    sum += s;
  }
  *total = sum;
  __syncthreads();
  return before + x - v;
}

// Radix selection of the best kk entries of x[begin, end) into sh.result[0, kk), unordered.
template <class Tr>
__device__ void radix_select(const float* x, std::uint32_t begin, std::uint32_t end, int kk, bool smallest,
                             RadixShared<Tr::kThreads>& sh) {
  constexpr int T = Tr::kThreads, B = Tr::kBits, P = Tr::kPasses;
  constexpr int kTile = T * kItems;
  const int t = threadIdx.x;
  if (t == 0) sh.result_count = 0;
  std::uint32_t live_mask = 0, live_prefix = 0;  // digits before the classified one
  int cls_shift = 0;                             // the classified digit (sweeps s >= 1)
  std::uint32_t cls_mask = 0, cls_bucket = 0;
  int need = kk;
  bool from_buffer = false;
  int buffered = 0;
  for (int s = 0; s <= P; ++s) {
    const int cur_shift = s < P ? (32 - (s + 1) * B > 0 ? 32 - (s + 1) * B : 0) : 0;
    const int cur_width = s < P ? (32 - s * B) - cur_shift : 0;
    const std::uint32_t cur_mask = s < P ? ((1u << cur_width) - 1u) : 0u;
    if (s < P)
      for (int i = t; i < (1 << B); i += T) sh.hist[i] = 0;
    if (t == 0) sh.candidate_count = 0;
    __syncthreads();
    const std::uint32_t count = from_buffer ? static_cast<std::uint32_t>(buffered) : end - begin;
    int taken_ties = 0;  // ties taken so far (last sweep)
    for (std::uint32_t base = 0; base < count; base += kTile) {
      std::uint64_t item[kItems];
      int flags = 0;
      for (int i = 0; i < kItems; ++i) {
        const std::uint32_t at = base + static_cast<std::uint32_t>(t * kItems + i);
        item[i] = 0;
        if (at >= count) continue;
        std::uint64_t p;
        if (from_buffer) {
          p = sh.candidates[at];
        } else {
          const std::uint32_t column = begin + at;
          p = pack(key_of(float_bits(x[column]), smallest), column);
        }
        const std::uint32_t key = packed_key(p);
        if (!from_buffer && (key & live_mask) != live_prefix) continue;
        if (s > 0) {
          const std::uint32_t d = (key >> cls_shift) & cls_mask;
          if (d > cls_bucket) {
            sh.result[atomicAdd(&sh.result_count, 1)] = p;
            continue;
          }
          if (d < cls_bucket) continue;
        }
        if (s < P) atomicAdd(&sh.hist[(key >> cur_shift) & cur_mask], 1u);
        item[i] = p;
        flags |= 1 << i;
      }
      if (s == 0) continue;  // every element is a candidate: nothing to buffer
      int total;
      const int mine = __popc(flags);
      __syncthreads();  // the tile is read before the buffer is written in place
      int at = block_exclusive_scan<T>(mine, sh.warp_sums, &total);
      for (int i = 0; i < kItems; ++i) {
        if (!(flags & (1 << i))) continue;
        if (s == P) {
          if (taken_ties + at < need) sh.result[atomicAdd(&sh.result_count, 1)] = item[i];
        } else {
          const int slot = sh.candidate_count + at;
          if (slot < kCandidates) sh.candidates[slot] = item[i];
        }
        ++at;
      }
      taken_ties += total;
      __syncthreads();
      if (t == 0) sh.candidate_count += total;
      __syncthreads();
    }
    __syncthreads();
    if (s == P) break;
    // The bucket of the need-th best among the live elements: one warp walks the histogram from
    // the top digit down, each lane a contiguous range.
    if (t < 32) {
      constexpr int kPerLane = ((1 << B) + 31) / 32;
      const int digits = 1 << cur_width;
      int sum = 0;
      for (int i = 0; i < kPerLane; ++i) {
        const int d = digits - 1 - (t * kPerLane + i);
        if (d >= 0) sum += static_cast<int>(sh.hist[d]);
      }
      int inclusive = sum;
      for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xFFFFFFFFu, inclusive, o);
        if (t >= o) inclusive += y;
      }
      const int exclusive = inclusive - sum;
      if (exclusive < need && need <= inclusive) {
        int above = exclusive;
        for (int i = 0; i < kPerLane; ++i) {
          const int d = digits - 1 - (t * kPerLane + i);
          if (d < 0) break;
          const int h = static_cast<int>(sh.hist[d]);
          if (above + h >= need) {
            sh.chosen = d;
            sh.above = above;
            break;
          }
          above += h;
        }
      }
    }
    __syncthreads();
    const int candidates = sh.candidate_count;
    if (s > 0) {
      live_mask |= cls_mask << cls_shift;
      live_prefix |= cls_bucket << cls_shift;
      from_buffer = candidates <= kCandidates;
      buffered = candidates;
    }
    cls_shift = cur_shift;
    cls_mask = cur_mask;
    cls_bucket = static_cast<std::uint32_t>(sh.chosen);
    need -= sh.above;
    __syncthreads();
  }
}

// Warp selection of the best entries of x[begin, end) into sh.list[0][0, len), sorted.
template <class Tr>
__device__ void warp_select(const float* x, std::uint32_t begin, std::uint32_t end, int kk, int len, bool smallest,
                            WarpShared<Tr::kThreads, kWarpMaxList>& sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  std::uint64_t* list = sh.list[warp];
  std::uint64_t* queue = sh.queue[warp];
  const int per_lane = len / 32;
  for (int i = lane; i < len; i += 32) list[i] = 0;
  __syncwarp();
  std::uint64_t threshold = 0;
  int queued = 0;
  auto sync_warp = [] { __syncwarp(); };
  auto flush = [&] {
    for (int i = queued; i < per_lane; ++i) queue[lane * per_lane + i] = 0;
    __syncwarp();
    bitonic_sort(queue, len, lane, 32, sync_warp);
    merge_best(list, queue, len, lane, 32, sync_warp);
    threshold = list[kk - 1];
    queued = 0;
  };
  const std::uint32_t stride = 32u * Tr::kWarps;
  for (std::uint32_t base = begin + 32u * warp; base < end; base += stride) {
    const std::uint32_t column = base + lane;
    if (column < end) {
      const std::uint64_t p = pack(key_of(float_bits(x[column]), smallest), column);
      if (p > threshold) queue[lane * per_lane + queued++] = p;
    }
    if (__any_sync(0xFFFFFFFFu, queued == per_lane)) flush();
  }
  if (__any_sync(0xFFFFFFFFu, queued > 0)) flush();
  __syncthreads();
  // The warps' lists into warp 0's, one after another.
  if (warp == 0) {
    for (int w = 1; w < Tr::kWarps; ++w) merge_best(sh.list[0], sh.list[w], len, lane, 32, sync_warp);
  }
  __syncthreads();
}

}  // namespace cuda_detail

// Block (row, part) of `parts` per row: the best of its columns. One part: writes values and
// indices of the row; otherwise the part's list (list_length(k) entries, best first, 0-padded)
// to `lists`.
template <class Config>
__global__ void __launch_bounds__(Config::THREADS) topk_kernel(const float* in, std::int64_t n, int k, bool smallest,
                                                               int parts, float* values, std::int64_t* indices,
                                                               std::uint64_t* lists) {
  using Tr = CudaTraits<Config>;
  __shared__ cuda_detail::Shared<Tr::kThreads, Tr::kRadix> sh;
  const std::int64_t row = blockIdx.x / parts;
  const int part = static_cast<int>(blockIdx.x % parts);
  const float* x = in + row * n;
  const std::int64_t span = (n + parts - 1) / parts;
  const auto begin = static_cast<std::uint32_t>(span * part < n ? span * part : n);
  const auto end = static_cast<std::uint32_t>(span * (part + 1) < n ? span * (part + 1) : n);
  const int kk = static_cast<int>(end - begin < static_cast<std::uint32_t>(k) ? end - begin : k);
  const int len = list_length(k);
  const int t = threadIdx.x;
  auto sync_block = [] { __syncthreads(); };
  const std::uint64_t* best = nullptr;
  bool done = kk == 0;
  if constexpr (!Tr::kRadix) {
    if (!done && len <= kWarpMaxList) {
      cuda_detail::warp_select<Tr>(x, begin, end, kk, len, smallest, sh.warp);
      best = sh.warp.list[0];
      done = true;
    }
  }
  if (!done) {
    cuda_detail::radix_select<Tr>(x, begin, end, kk, smallest, sh.radix);
    for (int i = kk + t; i < len; i += Tr::kThreads) sh.radix.result[i] = 0;
    __syncthreads();
    cuda_detail::block_sort<Tr::kThreads>(sh.radix.result, len, t);
    best = sh.radix.result;
  }
  if (parts == 1) {
    for (int j = t; j < k; j += Tr::kThreads) {
      const std::uint32_t column = packed_column(best[j]);
      values[row * k + j] = x[column];
      indices[row * k + j] = column;
    }
  } else {
    std::uint64_t* out = lists + static_cast<std::int64_t>(blockIdx.x) * len;
    for (int j = t; j < len; j += Tr::kThreads) out[j] = (best != nullptr && j < kk) ? best[j] : 0;
  }
}

// One block per row: merges the row's lists and writes its values and indices.
template <class Config>
__global__ void __launch_bounds__(Config::THREADS) merge_kernel(const float* in, std::int64_t n, int k, int parts,
                                                                const std::uint64_t* lists, float* values,
                                                                std::int64_t* indices) {
  using Tr = CudaTraits<Config>;
  __shared__ std::uint64_t best[kMaxList];
  const int len = list_length(k), t = threadIdx.x;
  const std::int64_t row = blockIdx.x;
  const std::uint64_t* mine = lists + row * parts * len;
  auto sync_block = [] { __syncthreads(); };
  for (int i = t; i < len; i += Tr::kThreads) best[i] = mine[i];
  __syncthreads();
  for (int s = 1; s < parts; ++s) cuda_detail::merge_best(best, mine + s * len, len, t, Tr::kThreads, sync_block);
  for (int j = t; j < k; j += Tr::kThreads) {
    const std::uint32_t column = packed_column(best[j]);
    values[row * k + j] = in[row * n + column];
    indices[row * k + j] = column;
  }
}

}  // namespace kiln::topk
