// ALGO air: radix selection over the whole GPU, after AIR top-k (SC'23). A row is shared by
// `blocks` blocks (grid blocks x rows), sized from the occupancy so that the grid fills the GPU
// once; with one block per row the block runs every pass itself (one launch).
//
// The radix digits are taken BITS at a time from the top of the 64-bit packed entry (key, then
// complemented column; topk_order.hpp), so the k-th best entry is unique and ties need no pass of
// their own. L_0 is the row; pass s reads L_{s-1} (pass 0: the row), classifies each element by
// digit s-1 against the chosen bucket b_{s-1} (above: a result, appended with an atomic slot
// counter; below: dropped; equal: live, in L_s), counts digit s of the live elements in a
// shared-memory histogram that is added to the row's global one, and appends them to a global
// buffer when |L_s| (known from the previous histogram) fits it; otherwise the next pass reads
// the row again with the prefix filter. The last block of a pass (atomic ticket) picks b_s, the
// bucket that holds the need-th best live entry. When |L_s| equals the entries still needed, pass
// s makes all of L_s results and the row is finished.
//
// Pass 0 reads the row from DRAM once: each block keeps a threshold digit, the bucket of its own
// k-th best so far (no element below it can be among the row's k best), counts only elements at
// or above it and appends them to the buffer. The histogram is then exact on every bucket at or
// above the row's k-th bucket b_0 (each block's threshold stays <= b_0), which is all the bucket
// choice reads, and the buffer holds every element at or above b_0: pass 1 reads the buffer, not
// the row. A finishing kernel sorts the k results (bitonic) and writes values and indices.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "topk_cuda_filter.cuh"
#include "topk_cuda_kernels.cuh"
#include "topk_order.hpp"

namespace kiln::topk {

inline constexpr int kAirItems = 8;        // elements per thread per tile (two 16-byte loads)
inline constexpr int kAirStateBytes = 64;  // one row's AirState, padded
inline constexpr std::int64_t kAirMinBuffer = 4096;

// A row's selection state in the workspace; zeroed before pass 0 (which ignores the first six
// fields and starts from the whole row).
struct AirState {
  std::uint64_t prefix;     // (entry >> shift) of the live elements: the buckets chosen so far
  std::uint32_t shift;      // bits below the chosen digits
  std::uint32_t outer;      // shift before the last digit (64: every element was live)
  std::uint32_t count;      // live elements
  std::uint32_t need;       // results still to come from the live elements
  std::uint32_t source;     // where the live elements are: 0 the row, 1 + b buffer b
  std::uint32_t finished;   // every result is written
  std::uint32_t arrived;    // blocks done with the current pass
  std::uint32_t results;    // result slots taken
  std::uint32_t buffered[2];  // entries appended to each buffer
  std::uint32_t overflow;     // pass 0: a block's candidates overflowed its region of the buffer
  std::uint32_t top;          // pass 0 with several blocks: the highest bin flushed to the row's histogram
  std::uint32_t barrier;      // air_rest_kernel: blocks arrived after each pass, summed over the passes
};
static_assert(sizeof(AirState) <= kAirStateBytes, "AirState fits its slot");

// Buffer capacity per row (entries): the candidates of pass 0 and of each later pass must fit to
// avoid reading the row again. In pass 0 each of the row's blocks appends to a region of its own,
// an equal part of the buffer: an eighth of its share. A block appends about k (1 + ln steps) c
// entries (its threshold follows its own k-th best, and the threshold's bucket holds c times k,
// c about 2 to 4 on smooth data: see README), far below that at the shapes of the issue (1 x 2^28,
// k 1024: about 14 000 of 51 000 at 660 blocks), whereas a sixteenth would be tight at 2^26. The
// two buffers take half the input's bytes.
__host__ __device__ inline std::int64_t air_buffer_entries(std::int64_t n) {
  const std::int64_t c = n / 8 > kAirMinBuffer ? n / 8 : kAirMinBuffer;
  return c < n ? c : n;
}

// The workspace of `rows` rows: states, histograms (2^bits counters), two buffers, k results.
struct AirLayout {
  std::int64_t rows, n, k;
  int bits;
  __host__ __device__ std::size_t states() const { return 0; }
  __host__ __device__ std::size_t hists() const { return static_cast<std::size_t>(rows) * kAirStateBytes; }
  __host__ __device__ std::size_t buffers() const { return hists() + static_cast<std::size_t>(rows) * (std::size_t{4} << bits); }
  __host__ __device__ std::size_t results() const {
    return buffers() + static_cast<std::size_t>(rows) * 2 * static_cast<std::size_t>(air_buffer_entries(n)) * 8;
  }
  __host__ __device__ std::size_t bytes() const { return results() + static_cast<std::size_t>(rows * k) * 8; }
};

namespace air_detail {

template <int THREADS, int BITS>
struct Shared {
  unsigned hist[1 << BITS];
  std::uint64_t list[kMaxList];  // the finishing sort (one block per row)
  int warp_sums[THREADS / 32];
  AirState st;
  unsigned tau;             // pass 0: the block's threshold digit
  std::uint32_t appended;   // pass 0: entries the block appended to its region
  std::uint32_t base;
  int chosen, above, last;
  int done;  // air_rest_kernel: the row is finished
};

struct RowPointers {
  const float* x;
  AirState* state;
  unsigned* hist;
  std::uint64_t* buffer[2];
  std::uint64_t* results;
};

// Passes after 0: reads the live elements from the
// row (filtered by the chosen prefix) or from a buffer, in tiles of kAirItems per thread.
template <class Tr>
__device__ void scan_source(int pass, const RowPointers& p, std::int64_t n, int k, bool smallest, const AirState& st,
                            bool emit_all, bool append, int shift, int bins, Shared<Tr::kThreads, Tr::kBits>& sh) {
  constexpr int T = Tr::kThreads;
  const int t = threadIdx.x;
  const int blocks = gridDim.x, block = blockIdx.x;
  const std::int64_t cap = air_buffer_entries(n);
  const int write = pass & 1;
  // The source: the row (a scalar head up to the first 16-byte boundary, 16-byte loads, a scalar
  // tail; the head and tail are one extra tile of the last block) or a buffer.
  const bool from_row = st.source == 0;
  const auto address = reinterpret_cast<std::uintptr_t>(p.x);
  std::int64_t head = static_cast<std::int64_t>(((16 - address % 16) % 16) / 4);
  if (head > n) head = n;
  const std::int64_t vectors = (n - head) / 4;
  const std::int64_t tail = head + 4 * vectors;
  const auto* x4 = reinterpret_cast<const float4*>(p.x + head);
  // (Selections by ?: rather than indexing: an indexed array would live in local memory.)
  const std::uint64_t* buffer = st.source == 2 ? p.buffer[1] : p.buffer[0];
  const std::int64_t units =
      from_row ? vectors : static_cast<std::int64_t>(st.source == 2 ? st.buffered[1] : st.buffered[0]);
  std::uint64_t* const out = write ? p.buffer[1] : p.buffer[0];
  std::uint32_t* const out_count = write ? &p.state->buffered[1] : &p.state->buffered[0];
  constexpr int kLoads = kAirItems / 4;
  const std::int64_t step = static_cast<std::int64_t>(T) * (from_row ? kLoads : kAirItems);
  const std::int64_t per = (units + blocks - 1) / blocks;
  const std::int64_t u0 = per * block < units ? per * block : units;
  const std::int64_t u1 = per * (block + 1) < units ? per * (block + 1) : units;
  const std::int64_t tiles = (u1 - u0 + step - 1) / step + (from_row && block == blocks - 1 ? 1 : 0);
  // The row's next tile is loaded before the current one is classified, so that its loads are
  // in flight across the tile's barriers.
  float4 next[kLoads];
  if (from_row) {
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const std::int64_t v = u0 + u * T + t;
      if (v < u1) next[u] = __ldcs(x4 + v);
    }
  }
  for (std::int64_t it = 0; it < tiles; ++it) {
    const std::int64_t ub = u0 + it * step;
    std::uint64_t e[kAirItems];
    unsigned valid = 0;
#pragma unroll
    for (int j = 0; j < kAirItems; ++j) e[j] = 0;
    if (ub >= u1) {  // the row's head and tail (at most 6 elements)
      if (t < head + (n - tail)) {
        const std::int64_t column = t < head ? t : tail + (t - head);
        e[0] = pack(key_of(float_bits(p.x[column]), smallest), static_cast<std::uint32_t>(column));
        valid = 1;
      }
    } else if (from_row) {
      float4 f[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        f[u] = next[u];
        const std::int64_t v = ub + step + u * T + t;
        if (v < u1) next[u] = __ldcs(x4 + v);
      }
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const std::int64_t v = ub + u * T + t;
        if (v < u1) {
          const auto column = static_cast<std::uint32_t>(head + 4 * v);
          e[4 * u + 0] = pack(key_of(float_bits(f[u].x), smallest), column);
          e[4 * u + 1] = pack(key_of(float_bits(f[u].y), smallest), column + 1);
          e[4 * u + 2] = pack(key_of(float_bits(f[u].z), smallest), column + 2);
          e[4 * u + 3] = pack(key_of(float_bits(f[u].w), smallest), column + 3);
          valid |= 0xFu << (4 * u);
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kAirItems; ++j) {
        const std::int64_t i = ub + j * T + t;
        if (i < u1) {
          e[j] = __ldcg(buffer + i);
          valid |= 1u << j;
        }
      }
    }

    // Classify: results (atomic slots), dropped, or live (counted; appended below).
    unsigned live = 0;
#pragma unroll
    for (int j = 0; j < kAirItems; ++j) {
      if (!(valid & (1u << j))) continue;
      const std::uint64_t v = e[j];
      bool result = emit_all;
      if (pass > 0) {
        if (st.outer < 64 && (v >> st.outer) != (st.prefix >> (st.outer - st.shift))) continue;
        const std::uint64_t hi = v >> st.shift;
        if (hi < st.prefix) continue;
        if (hi > st.prefix) result = true;
      }
      if (result) {
        const std::uint32_t slot = atomicAdd(&p.state->results, 1u);
        if (slot < static_cast<std::uint32_t>(k)) p.results[slot] = v;
        continue;
      }
      const auto d = static_cast<std::uint32_t>((v >> shift) & static_cast<std::uint64_t>(bins - 1));
      atomicAdd(&sh.hist[d], 1u);
      live |= 1u << j;
    }
    if (!append) continue;
    const int mine = __popc(live);
    if (!__syncthreads_or(mine > 0)) continue;
    int total;
    int at = cuda_detail::block_exclusive_scan<T>(mine, sh.warp_sums, &total);
    if (t == 0) sh.base = atomicAdd(out_count, static_cast<std::uint32_t>(total));
    __syncthreads();
    const std::uint32_t base = sh.base;
#pragma unroll
    for (int j = 0; j < kAirItems; ++j) {
      if (!(live & (1u << j))) continue;
      const std::int64_t slot = static_cast<std::int64_t>(base) + at++;
      if (slot < cap) out[slot] = e[j];
    }
    __syncthreads();  // sh.base is rewritten by the next tile
  }
}

// The end of a pass: the block's histogram into the row's; the last block to arrive picks the
// bucket and writes the row's state for the next pass.
template <class Tr>
__device__ void finish_pass(int pass, const RowPointers& p, std::int64_t n, const AirState& st, bool emit_all,
                            bool append, int shift, int width, int bins, Shared<Tr::kThreads, Tr::kBits>& sh) {
  constexpr int T = Tr::kThreads;
  const int t = threadIdx.x;
  const int blocks = gridDim.x;
  const std::int64_t cap = air_buffer_entries(n);
  const int write = pass & 1;
  std::uint32_t* const out_count = write ? &p.state->buffered[1] : &p.state->buffered[0];
  __syncthreads();
  if (blocks > 1) {
    if (!emit_all) {
      for (int i = t; i < bins; i += T) {
        if (sh.hist[i] != 0) atomicAdd(&p.hist[i], sh.hist[i]);
      }
    }
    __threadfence();
    __syncthreads();
    if (t == 0) sh.last = atomicAdd(&p.state->arrived, 1u) == static_cast<std::uint32_t>(blocks - 1);
    __syncthreads();
    if (!sh.last) return;
    __threadfence();
    if (!emit_all) {
      for (int i = t; i < bins; i += T) {
        sh.hist[i] = __ldcg(&p.hist[i]);
        p.hist[i] = 0;  // zero for the next pass
      }
    }
    __syncthreads();
  }
  if (t < 32 && !emit_all) {
    int b = 0;
    std::uint32_t a = 0;
    // The histogram is exact at and above the need-th best live entry, so the bucket is found; if
    // it were not, the row stops short of k results and the check sees the unwritten entries.
    const bool found = filter_detail::find_bucket(sh.hist, 0, bins, st.need, &b, &a);
    if (t == 0) {
      sh.chosen = found ? b : -1;
      sh.above = static_cast<int>(a);
    }
  }
  __syncthreads();
  if (t == 0) {
    AirState* g = p.state;
    if (emit_all || sh.chosen < 0) {
      g->finished = 1;
    } else {
      const auto b = static_cast<std::uint32_t>(sh.chosen);
      const std::uint32_t appended = __ldcg(out_count);
      const bool fits = append && static_cast<std::int64_t>(appended) <= cap && !(pass == 0 && __ldcg(&g->overflow));
      g->prefix = (pass == 0 ? 0 : st.prefix << width) | b;
      g->outer = st.shift;
      g->shift = static_cast<std::uint32_t>(shift);
      g->count = sh.hist[b];
      g->need = st.need - static_cast<std::uint32_t>(sh.above);
      g->source = fits ? 1u + static_cast<std::uint32_t>(write) : 0u;
      *(write ? &g->buffered[0] : &g->buffered[1]) = 0;  // read in this pass; the next one writes it
    }
    g->arrived = 0;
    __threadfence();
  }
  __syncthreads();
}

// One pass of one block over its share of the pass's source. All threads call it. FILTER: pass
// 0 (the filter, compiled only into air_filter_kernel), otherwise a pass >= 1.
template <class Tr, bool FILTER>
__device__ void run_pass(int pass, const RowPointers& p, std::int64_t n, int k, bool smallest,
                         Shared<Tr::kThreads, Tr::kBits>& sh) {
  constexpr int T = Tr::kThreads, B = Tr::kBits;
  const int t = threadIdx.x;
  const int blocks = gridDim.x, block = blockIdx.x;
  const std::int64_t cap = air_buffer_entries(n);
  if (t == 0) {
    AirState s;
    s.prefix = 0;
    s.shift = 64;
    s.outer = 64;
    s.count = static_cast<std::uint32_t>(n);
    s.need = static_cast<std::uint32_t>(k);
    s.source = 0;
    if (pass > 0) {
      s.prefix = __ldcg(&p.state->prefix);
      s.shift = __ldcg(&p.state->shift);
      s.outer = __ldcg(&p.state->outer);
      s.count = __ldcg(&p.state->count);
      s.need = __ldcg(&p.state->need);
      s.source = __ldcg(&p.state->source);
    }
    s.finished = __ldcg(&p.state->finished);
    s.buffered[0] = __ldcg(&p.state->buffered[0]);
    s.buffered[1] = __ldcg(&p.state->buffered[1]);
    sh.st = s;
    sh.tau = 0;
    sh.appended = 0;
  }
  for (int i = t; i < (1 << B); i += T) sh.hist[i] = 0;
  __syncthreads();
  const AirState st = sh.st;
  if (st.finished) {  // uniform: every thread read sh.st after the barrier
    __syncthreads();  // sh.st is rewritten by the next pass of this block
    return;
  }
  // (Pass 0 filters even when n == k: pass 1 then finds every live element needed.)
  const bool emit_all = pass > 0 && st.count == st.need;
  const int shift = static_cast<int>(st.shift > static_cast<std::uint32_t>(B) ? st.shift - B : 0);
  const int width = static_cast<int>(st.shift) - shift;
  const int bins = 1 << width;
  // Pass 0 appends whatever passes its threshold (overflow is seen by the last block); later
  // passes append the live elements when all of them fit.
  const bool append = !emit_all && (pass == 0 || st.count <= cap);
  if constexpr (FILTER) {
    // With several blocks on the row, each appends to a region of its own (in buffer 1, which
    // pass 1 writes only after this pass), counted in shared memory, and copies it into buffer 0
    // at the end with one atomic: the row's blocks do not contend on one global counter per warp
    // and step. A block whose candidates overflow its region makes the next pass read the row.
    const auto region = static_cast<std::uint32_t>(blocks > 1 ? cap / blocks : cap);
    std::uint64_t* const mine = blocks > 1 ? p.buffer[1] + static_cast<std::int64_t>(block) * region : p.buffer[0];
    filter_detail::filter_row<T, B>(p.x, n, smallest, blocks, block, st.need, sh.hist, &sh.tau, &sh.appended, mine,
                                    region, blocks > 1 ? p.hist : nullptr, blocks > 1 ? &p.state->top : nullptr);
    __syncthreads();
    const std::uint32_t appended = sh.appended;
    if (blocks == 1) {
      if (t == 0) p.state->buffered[0] = appended;
    } else {
      if (t == 0) {
        if (appended > region) atomicExch(&p.state->overflow, 1u);
        sh.base = atomicAdd(&p.state->buffered[0], appended);
      }
      __syncthreads();
      const std::uint32_t base = sh.base;
      if (appended <= region) {
        for (std::uint32_t i = t; i < appended; i += T) {
          if (base + i < cap) p.buffer[0][base + i] = mine[i];
        }
      }
    }
  } else {
    scan_source<Tr>(pass, p, n, k, smallest, st, emit_all, append, shift, bins, sh);
  }
  finish_pass<Tr>(pass, p, n, st, emit_all, append, shift, width, bins, sh);
}

// One block of THREADS threads per row: sorts the row's k results in `list` (shared memory,
// list_length(k) entries) and writes values and indices.
template <int THREADS>
__device__ void finish_row(const RowPointers& p, std::int64_t row, int k, float* values, std::int64_t* indices,
                           std::uint64_t* list) {
  const int t = threadIdx.x, len = list_length(k);
  // Only the slots this call filled (the workspace keeps earlier calls' entries).
  const std::uint32_t taken = __ldcg(&p.state->results);
  const int filled = taken < static_cast<std::uint32_t>(k) ? static_cast<int>(taken) : k;
  for (int i = t; i < len; i += THREADS) list[i] = i < filled ? __ldcg(p.results + i) : 0;
  __syncthreads();
  cuda_detail::block_sort<THREADS>(list, len, t);
  for (int j = t; j < k; j += THREADS) {
    const std::uint64_t e = list[j];
    // An empty slot (0) would mean fewer than k results: leave the poison for the check to see.
    if (e == 0) continue;
    const std::uint32_t column = packed_column(e);
    values[row * k + j] = p.x[column];
    indices[row * k + j] = column;
  }
}

template <class Tr>
__device__ RowPointers row_pointers(const float* in, std::int64_t n, int k, void* workspace, std::int64_t rows,
                                    std::int64_t row) {
  const AirLayout layout{rows, n, k, Tr::kBits};
  auto* base = static_cast<char*>(workspace);
  const std::int64_t cap = air_buffer_entries(n);
  RowPointers p;
  p.x = in + row * n;
  p.state = reinterpret_cast<AirState*>(base + layout.states() + row * kAirStateBytes);
  p.hist = reinterpret_cast<unsigned*>(base + layout.hists()) + (row << Tr::kBits);
  auto* buffers = reinterpret_cast<std::uint64_t*>(base + layout.buffers()) + row * 2 * cap;
  p.buffer[0] = buffers;
  p.buffer[1] = buffers + cap;
  p.results = reinterpret_cast<std::uint64_t*>(base + layout.results()) + row * k;
  return p;
}

}  // namespace air_detail

// The passes a row may take: one per digit of the 64-bit entry, and one that only classifies.
template <int BITS>
__host__ __device__ constexpr int air_passes() {
  return (64 + BITS - 1) / BITS + 1;
}

// One block per row runs every pass after pass 0 and the finishing sort (many rows: the rows fill
// the GPU). At least 768 threads per SM (80 registers a thread).
template <class Config>
__global__ void __launch_bounds__(Config::THREADS, Config::THREADS >= 768 ? 1 : 768 / Config::THREADS)
    air_row_kernel(const float* in, std::int64_t rows, std::int64_t n, int k, bool smallest, void* workspace,
                   float* values, std::int64_t* indices) {
  using Tr = CudaTraits<Config>;
  __shared__ air_detail::Shared<Tr::kThreads, Tr::kBits> sh;
  const std::int64_t row = blockIdx.y;
  const air_detail::RowPointers p = air_detail::row_pointers<Tr>(in, n, k, workspace, rows, row);
#pragma unroll 1
  for (int s = 1; s < air_passes<Tr::kBits>(); ++s) air_detail::run_pass<Tr, false>(s, p, n, k, smallest, sh);
  air_detail::finish_row<Tr::kThreads>(p, row, k, values, indices, sh.list);
}

// Pass 0 over blocks x rows blocks: a kernel of its own, so that the filter runs at its own
// register budget (filter_min_blocks), not that of the later passes' tiles.
template <class Config>
__global__ void __launch_bounds__(Config::THREADS, filter_detail::filter_min_blocks(Config::THREADS, Config::REGS))
    air_filter_kernel(const float* in, std::int64_t rows, std::int64_t n, int k, bool smallest, void* workspace) {
  using Tr = CudaTraits<Config>;
  __shared__ air_detail::Shared<Tr::kThreads, Tr::kBits> sh;
  const std::int64_t row = blockIdx.y;
  air_detail::run_pass<Tr, true>(0, air_detail::row_pointers<Tr>(in, n, k, workspace, rows, row), n, k, smallest, sh);
}

// The passes after pass 0 and the finishing sort in one launch when several blocks share a row
// (one launch per pass costs a few microseconds each, also for the passes after the row is
// finished, which return at once: 6 of them with 11-bit digits). After each pass the row's blocks
// meet at a barrier, a counter in the row's state, so that all of them read the state the pass's
// last block wrote; a finished row leaves the loop together, and its block 0 sorts the results.
// The launch is cooperative (every block of the grid resident at once, or the launch fails), so
// the barrier never waits for a block that cannot start.
template <class Config>
__global__ void __launch_bounds__(Config::THREADS, Config::THREADS >= 768 ? 1 : 768 / Config::THREADS)
    air_rest_kernel(const float* in, std::int64_t rows, std::int64_t n, int k, bool smallest, void* workspace,
                    float* values, std::int64_t* indices) {
  using Tr = CudaTraits<Config>;
  __shared__ air_detail::Shared<Tr::kThreads, Tr::kBits> sh;
  const std::int64_t row = blockIdx.y;
  const air_detail::RowPointers p = air_detail::row_pointers<Tr>(in, n, k, workspace, rows, row);
#pragma unroll 1
  for (int s = 1; s < air_passes<Tr::kBits>(); ++s) {
    air_detail::run_pass<Tr, false>(s, p, n, k, smallest, sh);
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();  // this block's results, histogram and (last block) state before its arrival
      atomicAdd(&p.state->barrier, 1u);
      const unsigned target = static_cast<unsigned>(s) * gridDim.x;
      while (*static_cast<volatile unsigned*>(&p.state->barrier) < target) __nanosleep(64);
      __threadfence();
      sh.done = static_cast<int>(__ldcg(&p.state->finished));
    }
    __syncthreads();
    if (sh.done) break;
  }
  if (blockIdx.x == 0) air_detail::finish_row<Tr::kThreads>(p, row, k, values, indices, sh.list);
}

inline std::size_t air_workspace_bytes(int bits, std::int64_t rows, std::int64_t n, std::int64_t k) {
  return AirLayout{rows, n, k, bits}.bytes();
}

// The blocks of `kernel` (THREADS threads, no dynamic shared memory) resident at once on the
// current device, all SMs together; 0 when the device cannot launch cooperatively and
// `cooperative` is asked for. Queried once per device (cuda_detail::per_device).
template <int THREADS, class Kernel>
cudaError_t resident_blocks(Kernel kernel, bool cooperative, std::atomic<std::int64_t> (&cache)[cuda_detail::kCachedDevices],
                            std::int64_t* wave) {
  return cuda_detail::per_device(
      cache,
      [&](int device, std::int64_t* w) {
        int sms = 0, per_sm = 0, coop = 1;
        cudaError_t status = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        if (status == cudaSuccess && cooperative) {
          status = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device);
        }
        if (status == cudaSuccess) status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, 0);
        if (status != cudaSuccess) return status;
        // (A cooperative launch needs every block resident: no block an SM means none at all.)
        if (!cooperative && per_sm < 1) per_sm = 1;
        *w = coop == 0 ? 0 : static_cast<std::int64_t>(sms > 0 ? sms : 1) * per_sm;
        return cudaSuccess;
      },
      wave);
}

template <class Config>
struct AirWaves {  // per device: the filter kernel's wave and the cooperative wave of air_rest_kernel
  static inline std::atomic<std::int64_t> filter[cuda_detail::kCachedDevices];
  static inline std::atomic<std::int64_t> rest[cuda_detail::kCachedDevices];
};

// Blocks per row: enough for one full wave of the GPU over all rows, none with less than a tile.
template <class Config>
cudaError_t air_blocks(std::int64_t rows, std::int64_t n, int* blocks) {
  std::int64_t wave = 0;
  const cudaError_t status =
      resident_blocks<Config::THREADS>(air_filter_kernel<Config>, false, AirWaves<Config>::filter, &wave);
  if (status != cudaSuccess) return status;
  if (wave < 1) wave = 1;
  const std::int64_t tile = static_cast<std::int64_t>(Config::THREADS) * kAirItems;
  std::int64_t b = wave / rows;
  if (b > (n + tile - 1) / tile) b = (n + tile - 1) / tile;
  *blocks = b < 1 ? 1 : static_cast<int>(b);
  return cudaSuccess;
}

template <class Config>
cudaError_t launch_air_rows(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest,
                            float* values, std::int64_t* indices, void* workspace, cudaStream_t stream) {
  using Tr = CudaTraits<Config>;
  int blocks = 1;
  cudaError_t status = air_blocks<Config>(rows, n, &blocks);
  if (status != cudaSuccess) return status;
  const AirLayout layout{rows, n, k, Tr::kBits};
  // States always; the global histograms only when several blocks share a row.
  status = cudaMemsetAsync(workspace, 0, blocks > 1 ? layout.buffers() : layout.hists(), stream);
  if (status != cudaSuccess) return status;
  const int kk = static_cast<int>(k);
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(rows));
  air_filter_kernel<Config><<<grid, Config::THREADS, 0, stream>>>(in, rows, n, kk, smallest, workspace);
  // The later passes: in one cooperative launch with several blocks a row when the row's blocks
  // (at most the filter's) can all be resident; otherwise one block per row runs them all (more
  // rows than a wave: the rows fill the GPU).
  std::int64_t rest = 0;
  if (blocks > 1) {
    std::int64_t rest_wave = 0;
    status = resident_blocks<Config::THREADS>(air_rest_kernel<Config>, true, AirWaves<Config>::rest, &rest_wave);
    if (status != cudaSuccess) return status;
    rest = rest_wave / rows < blocks ? rest_wave / rows : blocks;
  }
  if (rest < 1) {
    air_row_kernel<Config><<<dim3(1, static_cast<unsigned>(rows)), Config::THREADS, 0, stream>>>(
        in, rows, n, kk, smallest, workspace, values, indices);
    return cudaGetLastError();
  }
  {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(rest), static_cast<unsigned>(rows));
    config.blockDim = dim3(Config::THREADS);
    config.stream = stream;
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    config.attrs = &cooperative;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, air_rest_kernel<Config>, in, rows, n, kk, smallest, workspace, values, indices);
  }
}

// Rows go on the grid's y axis (at most 65535): more rows run as consecutive launches on the
// stream, each chunk using the start of the workspace (the layout is linear in the rows).
template <class Config>
cudaError_t launch_air(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest,
                       float* values, std::int64_t* indices, void* workspace, cudaStream_t stream) {
  constexpr std::int64_t kMaxRows = 65535;
  for (std::int64_t r = 0; r < rows; r += kMaxRows) {
    const std::int64_t chunk = rows - r < kMaxRows ? rows - r : kMaxRows;
    const cudaError_t status =
        launch_air_rows<Config>(in + r * n, chunk, n, k, smallest, values + r * k, indices + r * k, workspace, stream);
    if (status != cudaSuccess) return status;
  }
  return cudaSuccess;
}

}  // namespace kiln::topk
