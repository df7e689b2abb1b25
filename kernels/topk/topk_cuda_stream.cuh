// ALGO stream: ALGO sample's three steps as three kernels over all rows, so that the rows are
// streamed by as many blocks as the GPU holds whatever their number (sample takes one block per
// row: 64 rows of 10^6 columns keep 64 SMs busy), with no barrier and no selection beside the
// loads:
//   1. stream_threshold_kernel, one block per row: the threshold L of sample_detail::
//      sampled_threshold (a 22-bit key prefix from 4 x THREADS sampled elements), into the row's
//      state, whose candidate count it zeroes;
//   2. stream_filter_kernel, a block per chunk of kStreamSteps block steps of a row (any number of
//      chunks a row): 16-byte streaming loads, one float compare an element folded into a mask;
//      a warp step with passing elements takes its slots in the row's candidate list with one
//      global atomic (a warp scan of the lanes' counts) and writes their packed entries;
//   3. stream_select_kernel, one block per row: regs' selection (regs_detail::finish) over the
//      row's candidates, read from the workspace (about r n / samples entries a row: 5 900 of
//      10^6 at k 100 and 512 threads). When fewer than k passed L (a sample far from the row's
//      distribution) the selection reads the whole row; when more passed than the list holds, it
//      reads the row filtered by L: slower, equally exact.
// The workspace holds a row's state (L and the count) and its candidate list of stream_cap
// entries: twice the expected number passing L and 4096, at most n.
// Measured on an H200 (2026-11-25, direct launches, CUDA events, median of 7; README.md has the
// table): ahead of air and sample on tens to a hundred rows of 10^5 to 10^6 columns (32 x 10^6 at
// k 2048: 121 against 186 us for air at 512 threads; 64 x 1000003 at k 100: 137 against 155 us),
// behind air on fewer, longer rows (one block selects over a row's candidates) and behind sample
// on many rows: with the steps apart, every row's threshold and selection wait in turn for the
// whole grid (1024 x 32768 at k 256: 88.5 against 73.4 us).
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "topk_cuda_filter.cuh"
#include "topk_cuda_kernels.cuh"
#include "topk_cuda_regs.cuh"
#include "topk_cuda_sample.cuh"
#include "topk_order.hpp"

namespace kiln::topk {

inline constexpr int kStreamSteps = 4;  // block steps (16 x THREADS elements each) of a filter tile

struct StreamRowState {
  std::uint32_t lower;  // L as a 22-bit key prefix; 0: every element passes
  std::uint32_t count;  // candidates that passed L (past the list's capacity too)
};

// Entries of a row's candidate list: twice the expected number of elements passing L, plus 4096,
// at most n. The expectation is sampled_threshold's rank over the sample, times n; it falls as
// the sample grows, so 128 threads (the smallest sample) bounds every block size.
inline std::int64_t stream_cap(std::int64_t n, std::int64_t k) {
  const double samples = static_cast<double>(kSamplePerThread * 128);
  if (static_cast<double>(n) <= samples) return n;
  const double mean = static_cast<double>(k) * samples / static_cast<double>(n);
  const double rank = std::ceil(mean + 4.0 * std::sqrt(mean) + 4.0);
  const double cap = 2.0 * static_cast<double>(n) * rank / samples + 4096.0;
  return cap >= static_cast<double>(n) ? n : static_cast<std::int64_t>(cap);
}

inline std::size_t stream_workspace_bytes(std::int64_t rows, std::int64_t n, std::int64_t k) {
  return static_cast<std::size_t>(rows) *
         (sizeof(StreamRowState) + static_cast<std::size_t>(stream_cap(n, k)) * sizeof(std::uint64_t));
}

namespace stream_detail {

// Grids of one block per row (or per chunk) stride over more rows than a grid's x dimension holds.
inline constexpr std::int64_t kMaxGrid = 2147483647;
// The row's columns before its first 16-byte boundary (at most 3, at most n) and its whole
// 16-byte vectors after them.
__device__ __forceinline__ void row_vectors(const float* x, int n, int* head, int* vectors) {
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  int h = static_cast<int>(((16 - address % 16) % 16) / 4);
  if (h > n) h = n;
  *head = h;
  *vectors = (n - h) / 4;
}

}  // namespace stream_detail

// 1. Block b takes rows b, b + gridDim.x, ...
template <class Config, bool SMALLEST>
__global__ void __launch_bounds__(Config::THREADS)
    stream_threshold_kernel(const float* in, std::int64_t rows, int n, int k, StreamRowState* states) {
  constexpr int T = Config::THREADS;
  __shared__ __align__(16) unsigned hist[2][regs_detail::kBins];
  __shared__ regs_detail::Block sh;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    for (int i = threadIdx.x; i < 2 * regs_detail::kBins; i += T) (&hist[0][0])[i] = 0;
    const std::uint32_t lower = sample_detail::sampled_threshold<T, SMALLEST>(in + row * n, n, k, hist, sh);
    if (threadIdx.x == 0) states[row] = StreamRowState{lower, 0u};
  }
}

// 2. Block b takes chunks b, b + gridDim.x, ... of `chunks` a row (chunk c of row r: tile r x
// chunks + c): vectors [c x per, (c + 1) x per) of the row's 16-byte vectors; chunk 0 also takes
// the head and the tail (at most 6 columns). (A persistent grid whose blocks issued the next
// step's loads, in the next tile too, before the current step's compares and appends was slower:
// 93.5 against 88.8 us at 1024 x 32768, k 256, 256 threads, H200.)
template <class Config, bool SMALLEST>
__global__ void __launch_bounds__(Config::THREADS, filter_detail::filter_min_blocks(Config::THREADS, 48))
    stream_filter_kernel(const float* in, std::int64_t rows, int n, int chunks, StreamRowState* states,
                         std::uint64_t* candidates, std::int64_t cap) {
  namespace f = filter_detail;
  constexpr int T = Config::THREADS, kStep = T * f::kLoads, per = kStreamSteps * kStep;
  const int t = threadIdx.x;
  auto key = [&](float value) { return key_of(float_bits(value), SMALLEST); };
  const std::int64_t tiles = rows * chunks;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t row = tile / chunks;
    const int chunk = static_cast<int>(tile % chunks);
    const float* x = in + row * n;
    int head = 0, vectors = 0;
    stream_detail::row_vectors(x, n, &head, &vectors);
    const auto* x4 = reinterpret_cast<const float4*>(x + head);
    std::uint32_t* const counter = &states[row].count;
    std::uint64_t* const list = candidates + row * cap;
    const f::Limit at_lower = f::limit_of<2 * regs_detail::kBits, SMALLEST>(states[row].lower);
    // The lanes' passing elements: slots from one atomic of the warp, then each lane's in turn.
    auto append = [&](int passing, auto entry_of) {
      if (__ballot_sync(0xFFFFFFFFu, passing != 0) == 0) return;  // warp-uniform
      std::uint32_t total = 0;
      std::uint32_t at = f::warp_slots(passing, counter, &total);
      for (int i = 0; i < passing; ++i, ++at) {
        const std::uint64_t e = entry_of(i);
        if (at < static_cast<std::uint64_t>(cap)) list[at] = e;
      }
    };
    const int end = (chunk + 1) * per < vectors ? (chunk + 1) * per : vectors;
    for (int u0 = chunk * per; u0 < end; u0 += kStep) {  // block-uniform
      float4 v[f::kLoads];
      const unsigned valid = sample_detail::load_step<T>(x4, u0, end, v);
      unsigned mask = sample_detail::passing<SMALLEST>(v, at_lower) & valid;
      append(__popc(mask), [&](int) {
        const int j = __ffs(mask) - 1;
        mask &= mask - 1;
        const auto column = static_cast<std::uint32_t>(head + 4 * (u0 + (j >> 2) * T + t) + (j & 3));
        return pack(key(sample_detail::pick(v, j)), column);
      });
    }
    if (chunk == 0 && t < 32) {  // the head and the tail
      const int tail = head + 4 * vectors, extra = head + (n - tail);
      const int column = t < head ? t : tail + (t - head);
      const bool take = t < extra && f::passes<SMALLEST>(x[column], at_lower);
      append(take ? 1 : 0, [&](int) { return pack(key(x[column]), static_cast<std::uint32_t>(column)); });
    }
  }
}

// 3. Block b takes rows b, b + gridDim.x, ... Dynamic shared memory: list_length(k) entries.
template <class Config, bool SMALLEST>
__global__ void __launch_bounds__(Config::THREADS)
    stream_select_kernel(const float* in, std::int64_t rows, int n, int k, const StreamRowState* states,
                         const std::uint64_t* candidates, std::int64_t cap, float* values, std::int64_t* indices) {
  namespace d = regs_detail;
  namespace f = filter_detail;
  constexpr int T = Config::THREADS;
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ __align__(16) unsigned hist[2][d::kBins];
  __shared__ d::Block sh;
  const int len = list_length(k), t = threadIdx.x;
  auto* list = reinterpret_cast<std::uint64_t*>(dynamic);
  auto key = [&](float value) { return key_of(float_bits(value), SMALLEST); };
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* x = in + row * n;
    const StreamRowState state = states[row];
    const std::uint64_t* const passed = candidates + row * cap;
    for (int i = t; i < 2 * d::kBins; i += T) (&hist[0][0])[i] = 0;
    for (int i = t; i < len; i += T) list[i] = 0;
    // The row's candidates: the list when it holds every element passing L and they are at least
    // k; the row filtered by L when the list overflowed (k <= cap < count); otherwise the row.
    const bool listed = state.count >= static_cast<std::uint32_t>(k) && state.count <= static_cast<std::uint64_t>(cap);
    const bool filtered = state.count > static_cast<std::uint64_t>(cap);
    const f::Limit at_lower = f::limit_of<2 * d::kBits, SMALLEST>(filtered ? state.lower : 0u);
    auto each = [&](auto visit) {
      if (listed) {
        for (std::uint32_t i = t; i < state.count; i += T) visit(passed[i]);
      } else {
        for (int c = t; c < n; c += T) {
          const float value = x[c];
          if (f::passes<SMALLEST>(value, at_lower)) visit(pack(key(value), static_cast<std::uint32_t>(c)));
        }
      }
    };
    __syncthreads();  // hist and list are clear
    each([&](std::uint64_t e) { atomicAdd(&hist[0][static_cast<int>(e >> (64 - d::kBits))], 1u); });
    d::choose<T>(hist[0], d::kBins, static_cast<std::uint32_t>(k), nullptr, sh);  // found: at least k visited
    d::finish<T>(hist[0], hist[1], sh, list, len, k, each, x, row, values, indices);
  }
}

template <class Config>
cudaError_t launch_stream(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest,
                          float* values, std::int64_t* indices, void* workspace, cudaStream_t stream) {
  constexpr int T = Config::THREADS, per = kStreamSteps * T * filter_detail::kLoads;
  auto* states = static_cast<StreamRowState*>(workspace);
  auto* candidates = reinterpret_cast<std::uint64_t*>(states + rows);
  const std::int64_t cap = stream_cap(n, k);
  const int chunks = static_cast<int>((n / 4 + per - 1) / per > 0 ? (n / 4 + per - 1) / per : 1);
  const auto grid = [](std::int64_t blocks) {
    return static_cast<unsigned>(blocks < stream_detail::kMaxGrid ? blocks : stream_detail::kMaxGrid);
  };
  const auto ni = static_cast<int>(n), ki = static_cast<int>(k);

  const auto smem = static_cast<std::size_t>(list_length(k)) * sizeof(std::uint64_t);
  if (smallest) {
    stream_threshold_kernel<Config, true><<<grid(rows), T, 0, stream>>>(in, rows, ni, ki, states);
    stream_filter_kernel<Config, true><<<grid(rows * chunks), T, 0, stream>>>(in, rows, ni, chunks, states, candidates, cap);
    stream_select_kernel<Config, true><<<grid(rows), T, smem, stream>>>(in, rows, ni, ki, states, candidates, cap, values,
                                                                        indices);
  } else {
    stream_threshold_kernel<Config, false><<<grid(rows), T, 0, stream>>>(in, rows, ni, ki, states);
    stream_filter_kernel<Config, false><<<grid(rows * chunks), T, 0, stream>>>(in, rows, ni, chunks, states, candidates,
                                                                               cap);
    stream_select_kernel<Config, false><<<grid(rows), T, smem, stream>>>(in, rows, ni, ki, states, candidates, cap,
                                                                         values, indices);
  }
  return cudaGetLastError();
}

}  // namespace kiln::topk
