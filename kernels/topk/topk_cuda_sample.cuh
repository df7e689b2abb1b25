// ALGO sample: one block per row, several rows in flight on an SM, for many rows of any width (the
// regs kernel holds one row of 32768 columns per SM at most, and shared's running threshold lets
// through about 1 200 elements of a 32768-column row at k 256, nearly every warp step then taking
// its slow path). The row is read from memory once, streamed, not held:
//   1. a threshold L from a sample of 4 x THREADS elements (32-element runs spread evenly over
//      the row, so that sorted or blocked rows are sampled at every quantile; the whole row when
//      it is shorter): the 22-bit key prefix of the sample's r-th best, r four standard deviations
//      (and 4) above the k-th best's expected rank in the sample, found by two 11-bit digits over
//      the sample;
//   2. the row streamed with 16-byte loads, one float compare an element; the elements at or above
//      L (about r n / samples) are appended as packed entries to a shared-memory buffer and their
//      digit 0 (the key's top 11 bits) counted;
//   3. regs' selection over the buffer (regs_detail::finish): later digits until the chosen bucket
//      is needed whole, then the k best collected, sorted and written.
// When fewer than k pass L (a sample far from the row's distribution) the rest of the row is
// counted too and the selection reads the row again. When more pass than the buffer holds (one
// 1024 x 32768 input in 16 has such a row for the 128-thread small buffer at k 16), the row is
// streamed once more into the buffer with the limit digit 0's chosen bucket gives, if what that
// keeps fits; otherwise the selection reads the row again: slower, equally exact.
// Measured on an H200 (2026-11-25, direct launches, CUDA events, median of 7), 1024 x 32768 at
// 256 threads: 55 / 58 / 74.5 us at k 16 / 64 / 256, against 117 / 130 / 147 us for shared (the read
// floor is 33 us); README.md has the steps that got it there and the H100 figures at other shapes.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "topk_cuda_filter.cuh"
#include "topk_cuda_kernels.cuh"
#include "topk_cuda_regs.cuh"
#include "topk_order.hpp"

namespace kiln::topk {

inline constexpr int kSamplePerThread = 4;  // sampled elements a thread
inline constexpr int kSampleRun = 32;       // consecutive columns of one sampled run (a warp's load)

// Dynamic shared memory of a block (the list, then the candidate buffer), sized so that 6, 4 or 2
// blocks (768 or 1024 threads) with their 16 KiB of histograms fit an H100/H200 SM's 228 KiB.
// topk_cuda.space.json keeps it within a device's max_smem_per_block.
__host__ __device__ constexpr std::size_t sample_dynamic_bytes(int threads) {
  return threads >= 512 ? 98304 : threads >= 256 ? 39936 : 20480;
}
// At 128 threads a smaller buffer, for rows expected to leave few candidates, lets 8 blocks share
// an SM (1024 threads at 64 registers, within the 228 KiB), so that more rows' latency-bound steps
// (the sample, the selections between barriers) overlap (README, "Where sample spends 1024 x 32768").
inline constexpr std::size_t kSampleSmallBytes = 11264;
__host__ __device__ constexpr int sample_min_blocks(int threads) { return threads >= 512 ? 2 : threads >= 256 ? 4 : 8; }

// The candidates a row of n is expected to leave at sampled_threshold's threshold: the rank it takes
// in its sample scaled to the row (k itself when the sample is the row).
inline double sample_expected_candidates(int threads, std::int64_t n, std::int64_t k) {
  const std::int64_t samples = n < 4 * threads ? n : 4 * threads;  // kSamplePerThread x threads
  if (samples == n) return static_cast<double>(k);
  const double mean = static_cast<double>(k) * static_cast<double>(samples) / static_cast<double>(n);
  const double rank = std::ceil(mean + 4.0 * std::sqrt(mean) + 4.0);
  return rank * static_cast<double>(n) / static_cast<double>(samples);
}

// The dynamic shared memory of a launch: the small buffer at 128 threads when it holds the list and
// 2.5 times the expected candidates (a row that overflows it is read again: slower, equally exact).
inline std::size_t sample_launch_bytes(int threads, std::int64_t n, std::int64_t k) {
  if (threads != 128) return sample_dynamic_bytes(threads);
  const double entries = static_cast<double>(list_length(k)) + 2.5 * sample_expected_candidates(threads, n, k) + 64.0;
  return entries * 8.0 <= static_cast<double>(kSampleSmallBytes) ? kSampleSmallBytes : sample_dynamic_bytes(threads);
}

namespace sample_detail {

// Bit j set when element j of the 16 (vector j / 4, lane j % 4) passes l (filter_detail::passes'
// compare, without .ftz): one compare and one predicated or an element.
template <bool SMALLEST>
__device__ __forceinline__ unsigned passing(const float4 (&f)[filter_detail::kLoads], const filter_detail::Limit& l) {
  static_assert(filter_detail::kLoads == 4, "16 elements");
  if (l.all) return 0xFFFFu;
  unsigned m = 0;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const float x = filter_detail::element(f, j);
    if constexpr (SMALLEST) {
      asm("{\n\t.reg .pred p;\n\tsetp.le.f32 p, %1, %2;\n\t@p or.b32 %0, %0, %3;\n\t}"
          : "+r"(m) : "f"(x), "f"(l.limit), "r"(1u << j));
    } else {
      asm("{\n\t.reg .pred p;\n\tsetp.gtu.f32 p, %1, %2;\n\t@p or.b32 %0, %0, %3;\n\t}"
          : "+r"(m) : "f"(x), "f"(l.limit), "r"(1u << j));
    }
  }
  return m;
}

// Element j (0..15, known only at run time) of the 16 by selects, so that f stays in registers.
__device__ __forceinline__ float pick(const float4 (&f)[filter_detail::kLoads], int j) {
  const float4 a = (j & 8) ? ((j & 4) ? f[3] : f[2]) : ((j & 4) ? f[1] : f[0]);
  const float lo = (j & 1) ? a.y : a.x, hi = (j & 1) ? a.w : a.z;
  return (j & 2) ? hi : lo;
}


// Step 1 of ALGO sample (and of ALGO stream's first kernel), called by every thread of a block of
// T: the threshold L of row x as a 22-bit key prefix (0: every element passes), from a sample of
// kSamplePerThread x T elements in kSampleRun-column runs spread evenly over the row (the whole
// row when it is shorter): the prefix of the sample's r-th best, r four standard deviations (and
// 4) above the k-th best's expected rank in the sample (the k-th itself when the sample is the
// row), by two 11-bit digits. hist (two kBins histograms) must be clear, and nothing the caller
// cleared before may be read before the first barrier here; on return hist[0] is clear and
// hist[1] holds counts (the caller clears it), and every thread has passed a barrier after the
// last read of hist.
template <int T, bool SMALLEST>
__device__ std::uint32_t sampled_threshold(const float* x, int n, int k, unsigned (*hist)[regs_detail::kBins],
                                     regs_detail::Block& sh) {
  namespace d = regs_detail;
  constexpr int S = kSamplePerThread * T, kRuns = S / kSampleRun;
  static_assert(kRuns >= 2, "the sample takes runs at both ends of the row");
  const int t = threadIdx.x, samples = n < S ? n : S;
  auto key = [&](float value) { return key_of(float_bits(value), SMALLEST); };
  // Element i of S, in run i / 32 (runs from column 0 to the last 32 columns).
  float s[kSamplePerThread];
#pragma unroll
  for (int j = 0; j < kSamplePerThread; ++j) {
    const int i = j * T + t;
    const int c = n <= S ? i
                         : static_cast<int>(static_cast<std::int64_t>(i / kSampleRun) * (n - kSampleRun) / (kRuns - 1)) +
                               i % kSampleRun;
    s[j] = i < samples ? x[c] : 0.0f;
  }
  __syncthreads();  // hist (and what the caller cleared) is clear
#pragma unroll
  for (int j = 0; j < kSamplePerThread; ++j) {
    if (j * T + t < samples) atomicAdd(&hist[0][key(s[j]) >> d::kKeyShift], 1u);
  }
  const float mean = static_cast<float>(k) * static_cast<float>(samples) / static_cast<float>(n);
  const auto rank =
      samples == n ? static_cast<std::uint32_t>(k) : static_cast<std::uint32_t>(ceilf(mean + 4.0f * sqrtf(mean) + 4.0f));
  if (rank > static_cast<std::uint32_t>(samples)) {  // block-uniform
    __syncthreads();  // every sample counted
    for (int i = t; i < d::kBins; i += T) hist[0][i] = 0;
    __syncthreads();
    return 0;
  }
  d::choose<T>(hist[0], d::kBins, rank, nullptr, sh);
  const int b0 = sh.chosen;  // found: the sample holds at least rank elements
  const std::uint32_t need = rank - sh.above;
#pragma unroll
  for (int j = 0; j < kSamplePerThread; ++j) {
    const std::uint32_t kk = key(s[j]);
    if (j * T + t < samples && static_cast<int>(kk >> d::kKeyShift) == b0) {
      atomicAdd(&hist[1][(kk >> (d::kKeyShift - d::kBits)) & (d::kBins - 1)], 1u);
    }
  }
  d::choose<T>(hist[1], d::kBins, need, hist[0], sh);  // and hist[0] cleared
  return (static_cast<std::uint32_t>(b0) << d::kBits) | static_cast<std::uint32_t>(sh.chosen);
}


// A block step's 16-byte vectors of thread t: vector u0 + u T + t for u < kLoads (streaming
// loads), zero past `end`; returns which of the 16 elements were loaded (bit 4 u + lane).
template <int T>
__device__ __forceinline__ unsigned load_step(const float4* x4, int u0, int end, float4 (&v)[filter_detail::kLoads]) {
  unsigned valid = 0;
#pragma unroll
  for (int u = 0; u < filter_detail::kLoads; ++u) {
    const int at = u0 + u * T + static_cast<int>(threadIdx.x);
    const bool in_row = at < end;
    v[u] = in_row ? __ldcs(x4 + at) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    valid |= in_row ? 0xFu << (4 * u) : 0u;
  }
  return valid;
}

}  // namespace sample_detail

// Block b takes rows b, b + gridDim.x, ... Dynamic shared memory: list_length(k) entries of the
// list, then `cap` entries of the candidate buffer.
template <class Config, bool SMALLEST>
__global__ void __launch_bounds__(Config::THREADS, sample_min_blocks(Config::THREADS))
    sample_kernel(const float* in, std::int64_t rows, int n, int k, int cap, float* values, std::int64_t* indices) {
  namespace d = regs_detail;
  namespace f = filter_detail;
  constexpr int T = Config::THREADS;
  constexpr int kStep = T * f::kLoads;  // 16-byte vectors of a block step
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ __align__(16) unsigned hist[2][d::kBins];
  __shared__ d::Block sh;
  __shared__ std::uint32_t appended;  // entries appended to the buffer (past cap too)
  const int len = list_length(k), t = threadIdx.x;
  auto* list = reinterpret_cast<std::uint64_t*>(dynamic);
  std::uint64_t* buffer = list + len;
  auto key = [&](float value) { return key_of(float_bits(value), SMALLEST); };

  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* x = in + row * n;
    const auto address = reinterpret_cast<std::uintptr_t>(x);
    int head = static_cast<int>(((16 - address % 16) % 16) / 4);  // columns before the first 16-byte boundary
    if (head > n) head = n;
    const int vectors = (n - head) / 4, tail = head + 4 * vectors;
    const auto* x4 = reinterpret_cast<const float4*>(x + head);
    for (int i = t; i < 2 * d::kBins; i += T) (&hist[0][0])[i] = 0;
    for (int i = t; i < len; i += T) list[i] = 0;
    if (t == 0) appended = 0;  // (sampled_threshold's first barrier orders these before any use)
    // A step's 16 elements of thread t (vector j / 4, lane j % 4: column head + 4 (u0 + (j / 4) T
    // + t) + j % 4) and which of them lie in the row. (Issuing the first step's loads before the
    // sample's was measured slower: 100 against 89 us at 1024 x 32768, k 256, 256 threads, H100;
    // the loads held across the sample's selection spill.)
    float4 v[f::kLoads];

    // 1. The threshold L from the sample.
    const std::uint32_t lower = sample_detail::sampled_threshold<T, SMALLEST>(x, n, k, hist, sh);
    const f::Limit at_lower = f::limit_of<2 * d::kBits, SMALLEST>(lower);
    unsigned* const digit0 = hist[0];  // clear
    unsigned* const other = hist[1];   // the sample's second digit, cleared by the first choose below

    // 2. The row streamed: the elements at or above L into the buffer, their digit 0 counted
    // (kCount), or, refilling, only appended.
    auto stream = [&](const f::Limit& limit, auto count) {
      constexpr bool kCount = decltype(count)::value;
      for (int u0 = 0; u0 < vectors; u0 += kStep) {  // block-uniform
        const unsigned valid = sample_detail::load_step<T>(x4, u0, vectors, v);
        unsigned mask = sample_detail::passing<SMALLEST>(v, limit) & valid;
        // The lanes' passing elements, one a lane per round (a lane has about 16 r / samples of them,
        // rarely more than one, so the warp runs one or two rounds, not 16 branches), each round's
        // slots from one ballot and one atomic of the warp.
        for (unsigned has = __ballot_sync(0xFFFFFFFFu, mask != 0); has != 0; has = __ballot_sync(0xFFFFFFFFu, mask != 0)) {
          const int leader = __ffs(has) - 1, lane = t & 31;
          std::uint32_t at = 0;
          if (lane == leader) at = atomicAdd(&appended, static_cast<std::uint32_t>(__popc(has)));
          at = __shfl_sync(0xFFFFFFFFu, at, leader) + static_cast<std::uint32_t>(__popc(has & ((1u << lane) - 1u)));
          if (mask != 0) {
            const int j = __ffs(mask) - 1;
            mask &= mask - 1;
            const std::uint32_t kk = key(sample_detail::pick(v, j));
            if constexpr (kCount) atomicAdd(&digit0[kk >> d::kKeyShift], 1u);
            const auto column = static_cast<std::uint32_t>(head + 4 * (u0 + (j >> 2) * T + t) + (j & 3));
            if (at < static_cast<std::uint32_t>(cap)) buffer[at] = pack(kk, column);
          }
        }
      }
      if (t < 32) {  // the head and the tail: at most 6 columns
        const int lane = t, extra = head + (n - tail);
        const int column = lane < head ? lane : tail + (lane - head);
        const bool take = lane < extra && f::passes<SMALLEST>(x[column], limit);
        if (__any_sync(0xFFFFFFFFu, take)) {
          std::uint32_t total = 0;
          const std::uint32_t at = f::warp_slots(take ? 1 : 0, &appended, &total);
          if (take) {
            const std::uint32_t kk = key(x[column]);
            if constexpr (kCount) atomicAdd(&digit0[kk >> d::kKeyShift], 1u);
            if (at < static_cast<std::uint32_t>(cap)) buffer[at] = pack(kk, static_cast<std::uint32_t>(column));
          }
        }
      }
    };
    stream(at_lower, std::true_type{});

    // 3. Digit 0's bucket of the k-th best among the candidates; when fewer than k passed L, the
    // rest of the row is counted too and the selection reads the row.
    d::choose<T>(digit0, d::kBins, static_cast<std::uint32_t>(k), other, sh);
    std::uint32_t count = appended;
    bool buffered = count <= static_cast<std::uint32_t>(cap);  // block-uniform
    // A row that outgrew the buffer: the entries the selection needs are those of digit 0's
    // chosen bucket and above (the histogram counted every candidate, buffered or not); when they
    // fit, one more pass over the row (from L2, mostly) refills the buffer with them alone, where
    // the selection would otherwise read the row element by element once a digit.
    if (!buffered && sh.chosen >= 0 && sh.above + digit0[sh.chosen] <= static_cast<std::uint32_t>(cap)) {
      const std::uint32_t from = static_cast<std::uint32_t>(sh.chosen) << d::kBits;  // a 22-bit prefix
      __syncthreads();  // every thread read appended and the histogram's bucket
      if (t == 0) appended = 0;
      __syncthreads();
      stream(f::limit_of<2 * d::kBits, SMALLEST>(from > lower ? from : lower), std::false_type{});
      __syncthreads();
      count = appended;
      buffered = true;
    }
    if (sh.chosen < 0) {
      for (int c = t; c < n; c += T) {
        const float value = x[c];
        if (!f::passes<SMALLEST>(value, at_lower)) atomicAdd(&digit0[key(value) >> d::kKeyShift], 1u);
      }
      d::choose<T>(digit0, d::kBins, static_cast<std::uint32_t>(k), nullptr, sh);
      buffered = false;
    }
    auto each = [&](auto visit) {
      if (buffered) {
        for (std::uint32_t i = t; i < count; i += T) visit(buffer[i]);
      } else {
        for (int c = t; c < n; c += T) visit(pack(key(x[c]), static_cast<std::uint32_t>(c)));
      }
    };
    d::finish<T>(digit0, other, sh, list, len, k, each, x, row, values, indices);
  }
}

template <class Config>
cudaError_t launch_sample(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest,
                          float* values, std::int64_t* indices, cudaStream_t stream) {
  // Resident blocks per device, for each of the two buffer sizes.
  static std::atomic<std::int64_t> cached[cuda_detail::kCachedDevices];
  static std::atomic<std::int64_t> cached_small[cuda_detail::kCachedDevices];
  const std::size_t bytes = sample_launch_bytes(Config::THREADS, n, k);
  return regs_detail::launch_persistent(bytes < sample_dynamic_bytes(Config::THREADS) ? cached_small : cached,
                                        sample_kernel<Config, false>, sample_kernel<Config, true>, Config::THREADS,
                                        bytes, in, rows, n, k, smallest, values, indices, stream,
                                        sample_dynamic_bytes(Config::THREADS));
}

}  // namespace kiln::topk
