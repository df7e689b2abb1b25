// ALGO regs: one block per row, the whole row in registers, for many short and medium rows (up to
// kRegsPerThread x THREADS columns; wider rows run ALGO shared). The row is read from memory once,
// kRegsPerThread floats a thread (element j of thread t is column j THREADS + t: every load of a
// warp is one coalesced 128-byte span, at any row alignment), and every later step works on
// those registers and on shared memory:
//   1. a lower bound L for the k-th best key from a sample of THREADS elements spread over eight
//      regions of the row: the lower edge of the BITS-bit bucket of the sample's r-th best, r four
//      standard deviations (and 4) above the k-th best's expected rank in the sample;
//   2. digit 0 (the key's top 11 bits) of the elements at or above L: one float compare an element
//      (filter_detail::passes), a key and a shared-memory atomic only for those that pass (about
//      r / THREADS of the row). When fewer than k pass, the rest of the row is counted into the
//      same histogram, which is then the whole row's: L only ever saves work;
//   3. the candidates, every element at or above the chosen bucket, as packed entries into a
//      shared-memory buffer when they fit (otherwise the later steps read the registers again),
//      and a radix selection of the k-th best packed entry over them, 11 bits a digit, stopping
//      at the first digit whose chosen bucket is needed whole (ties rank lower column first, as
//      topk_order.hpp's entries do);
//   4. the k entries at or above the threshold are collected, sorted (block_sort) and written.
// The grid holds as many blocks as are resident, each taking rows gridDim.x apart; a block asks L2
// for its next row while it works on the current one. Every count is complete when a bucket is
// chosen (a barrier before), so one warp finds the bucket by two warp scans, of its lanes' sums
// and then of the chosen lane's bins, rather than one lane walking 64 bins (regs_detail::
// find_bucket; H100, 2026-11-25: 100000 x 100 at k 10 from 2.26 to 1.44 ms at 128 threads,
// 10000 x 4099 at k 1 from 326 to 244 us).
// Measured on an H100 (2026-11-25, direct launches, CUDA events, median of 7): faster than shared
// where rows are many and short (10000 x 4099 at k 1: 244 against 543 us at 128 threads;
// 100000 x 100 at k 10: 1.44 against 3.77 ms), slower at 1024 x 32768 (k 256: 171 against 151 us
// at 512 threads, one block an SM: its barriers are not hidden by another block; ALGO sample,
// several rows an SM, takes 83 us there). The tuner picks per problem.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>

#include "topk_cuda_filter.cuh"
#include "topk_cuda_kernels.cuh"
#include "topk_cuda_shared.cuh"
#include "topk_order.hpp"

namespace kiln::topk {

inline constexpr int kRegsPerThread = 64;  // floats of the row a thread holds
inline constexpr int kRegsSamples = 8;     // regions of the row the sample is spread over

// The widest row ALGO regs holds at THREADS threads (kRegsPerThread floats a thread).
__host__ __device__ constexpr std::int64_t regs_capacity(int threads) {
  return static_cast<std::int64_t>(threads) * kRegsPerThread;
}

namespace regs_detail {

struct Block {
  int chosen;           // the bucket of the need-th best, -1: fewer than need counted
  std::uint32_t above;  // entries above it
  std::uint32_t lower;  // L, the lower bound of the first histogram's keys
  std::uint32_t results;  // slots taken in the buffer, then in the list
};

inline constexpr int kBits = 11, kBins = 1 << kBits, kKeyShift = 32 - kBits;

// One warp: the bucket of the need-th best among the complete counts of h[0, bins), walking
// from the top; false when fewer than `need` are counted there. As filter_detail::find_bucket,
// but for counts no longer changing (after a barrier), and with no lane walking bins one after
// another (64 dependent shared-memory loads at 2048 bins, about a microsecond, for which the
// block's other warps wait at the barrier):
//   1. each lane sums a contiguous range of bins/32 bins (lane 0 the highest) with 16-byte loads,
//      lane l starting l vectors into its range (a rotation: the 8 lanes of a quarter warp then
//      read distinct banks, where ranges 256 bytes apart would all hit the same four);
//   2. a warp scan of the sums finds the range holding the need-th best;
//   3. the warp splits that range, one or two bins a lane, and a second scan finds the bin.
// bins: a multiple of 128, at most 2048; h: 16-byte aligned.
__device__ inline __noinline__ bool find_bucket(const unsigned* h, int bins, std::uint32_t need, int* bucket, std::uint32_t* above) {
  const int lane = threadIdx.x & 31;
  const int per = bins / 32, vectors = per / 4, base = bins - (lane + 1) * per;  // lane 0: the highest bins
  std::uint32_t sum = 0;
  for (int i = 0; i < vectors; ++i) {
    const int at = base + 4 * ((i + lane) % vectors);
    const uint4 u = *reinterpret_cast<const uint4*>(h + at);
    sum += u.x + u.y + u.z + u.w;
  }
  auto scan = [&](std::uint32_t v) {  // inclusive, from lane 0
    for (int o = 1; o < 32; o <<= 1) {
      const std::uint32_t y = __shfl_up_sync(0xFFFFFFFFu, v, o);
      if (lane >= o) v += y;
    }
    return v;
  };
  const std::uint32_t inclusive = scan(sum);
  const unsigned ranges = __ballot_sync(0xFFFFFFFFu, inclusive - sum < need && need <= inclusive);
  if (ranges == 0) return false;
  const int range = __ffs(ranges) - 1;
  const std::uint32_t before = __shfl_sync(0xFFFFFFFFu, inclusive - sum, range);  // counts above the range
  // The range's bins from its top: lane l takes bins top - 1 - m l and top - 2 - m l (m = 2), or
  // top - 1 - l (m = 1).
  const int top = bins - range * per, m = per > 32 ? 2 : 1;
  const int d0 = top - 1 - m * lane, d1 = d0 - 1;
  const std::uint32_t c0 = m * lane < per ? h[d0] : 0u;
  const std::uint32_t c1 = m == 2 ? h[d1] : 0u;
  const std::uint32_t within = scan(c0 + c1);
  const std::uint32_t at = before + within - (c0 + c1);  // counts above this lane's bins
  const unsigned lanes = __ballot_sync(0xFFFFFFFFu, at < need && need <= at + c0 + c1);
  const int owner = __ffs(lanes) - 1;  // one lane: the range's counts reach need
  const bool first = at + c0 >= need;
  *bucket = __shfl_sync(0xFFFFFFFFu, first ? d0 : d1, owner);
  *above = __shfl_sync(0xFFFFFFFFu, first ? at : at + c0, owner);
  return true;
}

// The bucket of the need-th best in h[0, bins) into sh (warp 0) while the other warps clear
// `clear` (kBins counters; nullptr: none); barriers before (h is complete) and after (sh is set,
// clear is clear). Called by every thread of the block.
template <int T>
__device__ void choose(const unsigned* h, int bins, std::uint32_t need, unsigned* clear, Block& sh) {
  const int t = threadIdx.x;
  __syncthreads();
  if (t < 32) {
    int b = 0;
    std::uint32_t a = 0;
    const bool ok = find_bucket(h, bins, need, &b, &a);
    if (t == 0) {
      sh.chosen = ok ? b : -1;
      sh.above = a;
    }
  } else if (clear != nullptr) {
    for (int i = t - 32; i < kBins; i += T - 32) clear[i] = 0;
  }
  __syncthreads();
}

// After digit 0: sh holds the bucket of the k-th best in h, the digit-0 histogram of the
// candidates `each` visits (every element at or above it among them; each(visit) calls visit on
// every candidate's packed entry, the block's candidates spread over its threads), and `other`
// (kBins counters) is clear. Later digits, 11 bits at a time over the 64-bit packed entry (ties
// rank lower column first), until the chosen bucket is needed whole (at the latest at the last
// bit, where a bucket is one entry; the prefix's entries are counted exactly, so a bucket is
// found); then the k entries at or above the threshold are collected into the list (list_length(k)
// entries, zeroed), sorted and written as row `row` of values and indices (x: the row). Ends with
// a barrier (the list is read before it is cleared again).
template <int T, class Each>
__device__ void finish(unsigned* h, unsigned* other, Block& sh, std::uint64_t* list, int len, int k, Each each,
                       const float* x, std::int64_t row, float* values, std::int64_t* indices) {
  const int t = threadIdx.x;
  // The k-th best packed entry's leading bits: prefix = entry >> shift; need: entries still
  // wanted from the prefix's bucket.
  const auto bucket0 = static_cast<std::uint32_t>(sh.chosen);
  int shift = 64 - kBits;
  std::uint64_t prefix = bucket0;
  auto need = static_cast<std::uint32_t>(k) - sh.above;
  bool whole = h[bucket0] == need;
  unsigned* counted = h;  // the last digit's histogram
  unsigned* next = other;  // clear
  while (!whole) {  // block-uniform
    const int width = shift < kBits ? shift : kBits, low = shift - width;
    const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
    each([&](std::uint64_t e) {
      if ((e >> shift) == prefix) atomicAdd(&next[static_cast<int>((e >> low) & mask)], 1u);
    });
    choose<T>(next, 1 << width, need, counted, sh);
    need -= sh.above;
    prefix = (prefix << width) | static_cast<std::uint64_t>(sh.chosen);
    shift = low;
    whole = next[sh.chosen] == need;
    unsigned* const swap = counted;
    counted = next;
    next = swap;
  }

  // The k entries at or above the threshold, into the list, sorted, written.
  if (t == 0) sh.results = 0;
  __syncthreads();
  const std::uint64_t threshold = prefix << shift;
  each([&](std::uint64_t e) {
    if (e >= threshold) list[atomicAdd(&sh.results, 1u)] = e;
  });
  __syncthreads();
  cuda_detail::block_sort<T>(list, len, t);
  for (int j = t; j < k; j += T) {
    const std::uint64_t e = list[j];
    if (e == 0) continue;  // fewer than k collected (cannot happen): the poison stays for the check to see
    const std::uint32_t column = packed_column(e);
    values[row * k + j] = x[column];
    indices[row * k + j] = column;
  }
  __syncthreads();
}

}  // namespace regs_detail

// Block b takes rows b, b + gridDim.x, ... Dynamic shared memory: list_length(k) entries of the
// list, then `cap` entries of the candidate buffer.
template <class Config, bool SMALLEST>
__global__ void __launch_bounds__(Config::THREADS, 512 / Config::THREADS > 0 ? 512 / Config::THREADS : 1)
    regs_kernel(const float* in, std::int64_t rows, int n, int k, int cap, float* values, std::int64_t* indices) {
  namespace d = regs_detail;
  namespace f = filter_detail;
  constexpr int T = Config::THREADS, E = kRegsPerThread, kRegion = E / kRegsSamples;
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ __align__(16) unsigned hist[2][d::kBins];
  __shared__ d::Block sh;
  const int len = list_length(k), t = threadIdx.x;
  auto* list = reinterpret_cast<std::uint64_t*>(dynamic);
  std::uint64_t* buffer = list + len;
  // Columns past the row hold the float that ranks last (largest: -inf; smallest: a NaN): as
  // entries (their columns above every real one) they rank below every element of the row
  // (k <= n), so they are never selected. Loops over a thread's elements stop at the first j
  // whose columns all lie past the row (j T >= n).
  const float worst = SMALLEST ? __int_as_float(0x7FFFFFFF) : -INFINITY;
  auto key = [&](float value) { return key_of(float_bits(value), SMALLEST); };

  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* x = in + row * n;
    for (int i = t; i < 2 * d::kBins; i += T) (&hist[0][0])[i] = 0;
    for (int i = t; i < len; i += T) list[i] = 0;
    if (t == 0) {
      sh.results = 0;
      const std::int64_t next = row + gridDim.x;
      if (next < rows) {  // a hint: the next row's aligned 16-byte vectors on their way to L2
        const auto at = reinterpret_cast<std::uintptr_t>(in + next * n);
        const std::uintptr_t first = (at + 15) & ~std::uintptr_t{15};
        const std::uintptr_t last = (at + 4 * static_cast<std::uintptr_t>(n)) & ~std::uintptr_t{15};
        if (last > first) f::prefetch_l2(reinterpret_cast<const float4*>(first), static_cast<std::uint32_t>((last - first) / 16));
      }
    }
    float v[E];
#pragma unroll
    for (int j = 0; j < E; ++j) {
      const int c = j * T + t;
      v[j] = c < n ? __ldcs(x + c) : worst;
    }
    __syncthreads();  // hist, list and sh are clear (the previous row's output is written)

    // 1. The sample: thread t's element in region t % 8 (selects, not an index: v stays in
    // registers).
    const int region = t % kRegsSamples;
    float s = v[0];
#pragma unroll
    for (int r = 1; r < kRegsSamples; ++r) s = region == r ? v[r * kRegion] : s;
    const bool sampled = region * kRegion * T + t < n;
    if (sampled) atomicAdd(&hist[0][key(s) >> d::kKeyShift], 1u);
    const int samples = __syncthreads_count(sampled);
    if (t < 32) {
      // The k-th best's expected rank in the sample, and 4 standard deviations (and 4) above it.
      const float mean = static_cast<float>(k) * static_cast<float>(samples) / static_cast<float>(n);
      const auto rank = static_cast<std::uint32_t>(ceilf(mean + 4.0f * sqrtf(mean) + 4.0f));
      int b = 0;
      std::uint32_t a = 0;
      const bool ok = rank <= static_cast<std::uint32_t>(samples) && d::find_bucket(hist[0], d::kBins, rank, &b, &a);
      if (t == 0) sh.lower = ok ? static_cast<std::uint32_t>(b) : 0u;
    }
    __syncthreads();
    const std::uint32_t lower = sh.lower;  // a bucket: keys at or above lower << 21
    const f::Limit at_lower = f::limit_of<d::kBits, SMALLEST>(lower);

    // 2. Digit 0 (the key's top 11 bits) of the elements at or above L, in hist[1]: a float
    // compare an element, a key and an atomic only for those that pass.
#pragma unroll
    for (int j = 0; j < E && j * T < n; ++j) {
      if (f::passes<SMALLEST>(v[j], at_lower)) atomicAdd(&hist[1][key(v[j]) >> d::kKeyShift], 1u);
    }
    d::choose<T>(hist[1], d::kBins, static_cast<std::uint32_t>(k), hist[0], sh);  // (bins below lower are empty)
    if (sh.chosen < 0) {  // fewer than k at or above L (rare): the rest of the row too
#pragma unroll
      for (int j = 0; j < E && j * T < n; ++j) {
        if (!f::passes<SMALLEST>(v[j], at_lower)) atomicAdd(&hist[1][key(v[j]) >> d::kKeyShift], 1u);
      }
      d::choose<T>(hist[1], d::kBins, static_cast<std::uint32_t>(k), nullptr, sh);
    }
    const auto bucket0 = static_cast<std::uint32_t>(sh.chosen);
    const std::uint32_t candidates = sh.above + hist[1][bucket0];  // entries at or above the bucket
    // 3. The candidates (every element at or above the chosen bucket) as packed entries into the
    // buffer, when they fit: the later digits and the collection read them there. Otherwise they
    // read the registers again.
    const bool buffered = candidates <= static_cast<std::uint32_t>(cap);  // block-uniform
    const f::Limit at_bucket = f::limit_of<d::kBits, SMALLEST>(bucket0);
    if (buffered) {
      int mine = 0;
#pragma unroll
      for (int j = 0; j < E && j * T < n; ++j) mine += f::passes<SMALLEST>(v[j], at_bucket) ? 1 : 0;
      std::uint32_t total = 0;
      std::uint32_t at = f::warp_slots(mine, &sh.results, &total);
      if (mine > 0) {
#pragma unroll
        for (int j = 0; j < E && j * T < n; ++j) {
          if (f::passes<SMALLEST>(v[j], at_bucket)) buffer[at++] = pack(key(v[j]), static_cast<std::uint32_t>(j * T + t));
        }
      }
      __syncthreads();  // the buffer is complete (and sh.results read)
    }
    // Every candidate entry, from the buffer or from the registers.
    auto each = [&](auto visit) {
      if (buffered) {
        for (std::uint32_t i = t; i < candidates; i += T) visit(buffer[i]);
      } else {
#pragma unroll
        for (int j = 0; j < E && j * T < n; ++j) {
          if (f::passes<SMALLEST>(v[j], at_bucket)) visit(pack(key(v[j]), static_cast<std::uint32_t>(j * T + t)));
        }
      }
    };
    // 4. Later digits over the candidates, then the k best collected, sorted and written.
    d::finish<T>(hist[1], hist[0], sh, list, len, k, each, x, row, values, indices);
  }
}

// Dynamic shared memory of a block: the list (at most 16 KiB) and the candidate buffer, sized so
// that the blocks an SM holds at THREADS (1, 2 or 4 by the register budget) fit its shared memory.
// topk_cuda.space.json keeps these sizes (and the 16 KiB of histograms) within a device's
// max_smem_per_block: at 512 threads the L4 has no variant.
__host__ __device__ constexpr std::size_t regs_dynamic_bytes(int threads) {
  return threads >= 512 ? 98304 : threads >= 256 ? 81920 : 32768;
}

namespace regs_detail {

// The blocks of a persistent kernel (its largest and smallest instances, which take the same
// resources) resident on the current device at `threads` threads and `bytes` of dynamic shared
// memory, found once per device into `cache` (which also lets the kernels take `opt_in` bytes, at
// least `bytes`: a kernel launched with two sizes keeps one cache for each, and its largest
// size must stay allowed whichever cache is filled last).
inline cudaError_t resident(std::atomic<std::int64_t> (&cache)[cuda_detail::kCachedDevices], const void* largest,
                            const void* smallest, int threads, int bytes, int* blocks, int opt_in = 0) {
  std::int64_t b = 0;
  const cudaError_t status = cuda_detail::per_device(
      cache,
      [&](int device, std::int64_t* value) {
        cudaError_t s = cudaSuccess;
        for (const void* kernel : {largest, smallest}) {
          if (s == cudaSuccess) {
            s = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, opt_in > bytes ? opt_in : bytes);
          }
        }
        int sms = 0, per_sm = 0;
        if (s == cudaSuccess) s = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        if (s == cudaSuccess) {
          s = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, largest, threads, static_cast<std::size_t>(bytes));
        }
        *value = static_cast<std::int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
        return s;
      },
      &b);
  *blocks = static_cast<int>(b);
  return status;
}

// A persistent one-block-per-row kernel (regs_kernel, sample_kernel): in, rows, n, k, the buffer's
// entries, values, indices.
using PersistentKernel = void (*)(const float*, std::int64_t, int, int, int, float*, std::int64_t*);

// Launches `largest` or `smallest` (the two instances of one kernel) on as many blocks of `threads`
// as are resident (at most rows), with `smem` bytes of dynamic shared memory: the list of k, then
// the candidate buffer; `opt_in`: the largest size the kernel is ever launched with (resident).
inline cudaError_t launch_persistent(std::atomic<std::int64_t> (&cache)[cuda_detail::kCachedDevices],
                                     PersistentKernel largest, PersistentKernel smallest, int threads, std::size_t smem,
                                     const float* in, std::int64_t rows, std::int64_t n, std::int64_t k,
                                     bool smallest_mode, float* values, std::int64_t* indices, cudaStream_t stream,
                                     std::size_t opt_in = 0) {
  const int cap = static_cast<int>((smem - static_cast<std::size_t>(list_length(k)) * 8) / 8);
  int blocks = 0;
  const cudaError_t status =
      resident(cache, reinterpret_cast<const void*>(largest), reinterpret_cast<const void*>(smallest), threads,
               static_cast<int>(smem), &blocks, static_cast<int>(opt_in));
  if (status != cudaSuccess) return status;
  const auto grid = static_cast<unsigned>(rows < blocks ? rows : blocks);
  const PersistentKernel kernel = smallest_mode ? smallest : largest;
  kernel<<<grid, static_cast<unsigned>(threads), smem, stream>>>(in, rows, static_cast<int>(n), static_cast<int>(k), cap,
                                                                 values, indices);
  return cudaGetLastError();
}

}  // namespace regs_detail

template <class Config>
cudaError_t launch_regs(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest,
                        float* values, std::int64_t* indices, cudaStream_t stream) {
  if (n > regs_capacity(Config::THREADS)) return launch_shared<Config>(in, rows, n, k, smallest, values, indices, stream);
  static std::atomic<std::int64_t> cached[cuda_detail::kCachedDevices];
  return regs_detail::launch_persistent(cached, regs_kernel<Config, false>, regs_kernel<Config, true>, Config::THREADS,
                                        regs_dynamic_bytes(Config::THREADS), in, rows, n, k, smallest, values, indices,
                                        stream);
}

}  // namespace kiln::topk
