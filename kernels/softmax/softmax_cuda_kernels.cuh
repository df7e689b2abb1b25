// CUDA row softmax: out[r, :] = softmax(in[r, :]) for fp32 and bf16 rows, fp32 math.
//
// A row is owned by ROW_THREADS threads of one block (a few lanes of a warp for narrow rows, up to
// the whole block for wide ones) and, with SPLIT > 1, by those threads in each of the SPLIT blocks
// of a thread-block cluster (sm_90: the blocks exchange their partial max and sum through
// distributed shared memory). A block holds THREADS / ROW_THREADS row groups; each group owns one
// row at a time. Every thread caches CACHE elements of its row in fp32 registers, loaded VEC_BYTES
// at a time (VEC_BYTES 0: one element an access, whatever its size): chunk c of row thread t covers the VEC elements starting at (c * SPAN + t) * VEC,
// where SPAN = ROW_THREADS * SPLIT threads share the row, so a warp's load is one contiguous,
// coalesced span (for sub-warp rows, the spans of neighbouring rows are neighbours too). The row is
// read from DRAM once and written once:
//   load all chunks (every load in flight at once) -> max (shuffles, then one shared-memory
//   exchange between the group's warps) -> e = exp(x - max) in place, sum -> store e / sum.
// A row whose start is not vector-aligned (cols * sizeof(T) not a multiple of VEC_BYTES) is split
// into a few single elements up to the first aligned address, whole vectors, and a few single
// elements at the end, so any width runs on full-width accesses.
// Rows of 1, 2 (or, bf16, 4) elements on one-thread rows with 16-byte accesses are read as whole
// vectors of several rows (softmax_packed_kernel).
// Rows wider than the register cache (SPAN * CACHE) take a streaming path: an online max/sum pass
// over cache-sized batches, then a write pass that re-reads the row (mostly from L2).
// Only in/out pointers of different alignment phases fall back to one element per access.
#pragma once
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kiln::softmax {

template <class Config, class T>
struct CudaTraits {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16>, "fp32 or bf16 rows");
  static constexpr int kThreads = Config::THREADS;
  static constexpr int kRowThreads = Config::ROW_THREADS;  // threads of one block on one row
  static constexpr int kSplit = Config::SPLIT;             // blocks of a cluster on one row
  static constexpr int kCache = Config::CACHE;             // fp32 registers of row cache per thread
  // Bytes per vector load / store; 0 asks for one element per access (2 bytes of bf16, 4 of fp32):
  // a row of a few elements held by a few lanes then needs no single-element peel at its ends,
  // and a warp's access still covers consecutive elements of neighbouring rows.
  static constexpr int kVecBytes = Config::VEC_BYTES;
  static constexpr bool kStage = Config::STAGE != 0;       // rows staged through shared memory
  static constexpr int kVec = kVecBytes == 0 ? 1 : kVecBytes / static_cast<int>(sizeof(T));  // elements per vector
  static constexpr int kAccessBytes = kVec * static_cast<int>(sizeof(T));                    // bytes per access
  static constexpr int kRowLanes = kRowThreads < 32 ? kRowThreads : 32;  // lanes of a row in a warp
  static constexpr int kRowWarps = kRowThreads < 32 ? 1 : kRowThreads / 32;
  static constexpr int kRowsPerBlock = kThreads / kRowThreads;
  static constexpr int kSpan = kRowThreads * kSplit;        // threads over one row
  static constexpr int kRowCapacity = kSpan * kCache;       // widest row held in registers

  static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024, "THREADS: whole warps, at most 1024");
  static_assert(kRowThreads >= 1 && (kRowThreads & (kRowThreads - 1)) == 0, "ROW_THREADS: a power of two");
  static_assert(kThreads % kRowThreads == 0, "a block holds whole row groups");
  static_assert(kSplit >= 1 && kSplit <= 16 && (kSplit & (kSplit - 1)) == 0, "SPLIT: 1, 2, 4, 8 or 16");
  static_assert(kSplit == 1 || kRowsPerBlock == 1, "a split row fills its blocks");
  static_assert(kVecBytes == 0 || kVecBytes == 4 || kVecBytes == 8 || kVecBytes == 16, "VEC_BYTES: 0 (an element), 4, 8 or 16");
  static_assert(kVec >= 1 && kCache % kVec == 0, "CACHE must be a multiple of the vector's elements");
  static_assert(kCache >= 1 && kCache <= 128, "CACHE: 1..128 registers");
  static_assert(Config::STAGE == 0 || Config::STAGE == 1, "STAGE: 0 or 1");
  static_assert(!kStage || kSplit == 1, "a staged tile is one block's rows");
  // The staged tile of a block: its rows at the widest cached width, plus one vector of phase.
  static constexpr int kStageBytes = kStage ? kThreads * kCache * static_cast<int>(sizeof(T)) + kAccessBytes : 0;
  static_assert(kStageBytes <= 48 * 1024, "a staged tile fits the default shared memory of a block");
};

namespace cuda_detail {

constexpr float kLog2e = 1.4426950408889634f;
// 2^x in one MUFU.EX2: exp2f's denormal-preserving form costs about four instructions, and these
// kernels are issue-bound (ncu on the H200, 2026-11-30: 80-86 % of issue slots busy at 26969 x
// 2360 bf16, 78320 x 191 bf16, 1202684 x 572 bf16). ftz flushes results below 2^-126 to 0: an
// output element under 1e-38 of its row's sum.
__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <int BYTES>
struct BitsOf;
template <>
struct BitsOf<2> {
  using type = unsigned short;
};
template <>
struct BitsOf<4> {
  using type = unsigned int;
};
template <>
struct BitsOf<8> {
  using type = uint2;
};
template <>
struct BitsOf<16> {
  using type = uint4;
};

// V consecutive elements of T moved as one access of V * sizeof(T) bytes.
template <class T, int V>
struct Packet {
  using Bits = typename BitsOf<V * static_cast<int>(sizeof(T))>::type;

  __device__ __forceinline__ static void unpack(const Bits& bits, float* x) {
    T e[V];
    memcpy(e, &bits, sizeof bits);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if constexpr (std::is_same_v<T, float>) {
        x[k] = e[k];
      } else {
        x[k] = __bfloat162float(e[k]);
      }
    }
  }

  __device__ __forceinline__ static Bits pack(const float* x) {
    T e[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if constexpr (std::is_same_v<T, float>) {
        e[k] = x[k];
      } else {
        e[k] = __float2bfloat16_rn(x[k]);
      }
    }
    Bits bits;
    memcpy(&bits, e, sizeof bits);
    return bits;
  }

  // Read-only path, kept in L2 (the streaming kernel reads the row a second time).
  __device__ __forceinline__ static void load_keep(const T* p, float* x) {
    unpack(__ldg(reinterpret_cast<const Bits*>(p)), x);
  }
  // Last use of the input: evict-first.
  __device__ __forceinline__ static void load_last(const T* p, float* x) {
    unpack(__ldcs(reinterpret_cast<const Bits*>(p)), x);
  }
  // The output is never re-read by the kernel: streaming store.
  __device__ __forceinline__ static void store(T* p, const float* x) { __stcs(reinterpret_cast<Bits*>(p), pack(x)); }
};

// Butterfly reductions over LANES consecutive lanes (a power of two up to 32); every lane of the
// warp takes part, and xor offsets below LANES stay inside each lane group.
template <int LANES>
__device__ __forceinline__ float lanes_max(float v) {
#pragma unroll
  for (int offset = LANES / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

template <int LANES>
__device__ __forceinline__ float lanes_sum(float v) {
#pragma unroll
  for (int offset = LANES / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Shared memory of the row reductions: max and sum slots per row group (none when a row lives in
// one warp). The max slots of row n+1 are written only after every thread passed the sum barrier
// of row n, which follows its reads of the max slots of row n (and likewise for the sum slots), so
// one pair of arrays suffices.
template <class Tr>
struct ReduceSlots {
  static constexpr int kGroups = Tr::kRowWarps > 1 ? Tr::kRowsPerBlock : 1;
  float max[kGroups][Tr::kRowWarps];
  float sum[kGroups][Tr::kRowWarps];
  __device__ __forceinline__ float* max_of(int group) { return max[kGroups > 1 ? group : 0]; }
  __device__ __forceinline__ float* sum_of(int group) { return sum[kGroups > 1 ? group : 0]; }
};

// Reduction over the ROW_THREADS threads of a row group in one block; every thread of the block
// must call it (it synchronises the block when a row spans several warps). `slots` is this group's
// shared array of ROW_WARPS floats.
template <class Tr, bool kMax>
__device__ __forceinline__ float row_reduce(float v, float* slots) {
  v = kMax ? lanes_max<Tr::kRowLanes>(v) : lanes_sum<Tr::kRowLanes>(v);
  if constexpr (Tr::kRowWarps > 1) {
    const int lane = threadIdx.x % 32;
    const int warp_in_row = (threadIdx.x % Tr::kRowThreads) / 32;
    if (lane == 0) slots[warp_in_row] = v;
    __syncthreads();
    const float identity = kMax ? -INFINITY : 0.0f;
    v = lane < Tr::kRowWarps ? slots[lane] : identity;
    v = kMax ? lanes_max<32>(v) : lanes_sum<32>(v);
  }
  return v;
}

// Rows that fit the register cache: one DRAM read and one write per element.
// V is the elements per access: Tr::kVec for aligned rows, 1 otherwise (cols % V == 0 required).
// How a row splits around V-element vectors at V-aligned addresses: `head` single elements before
// the first aligned address, `vecs` whole vectors, then `tail` single elements. The output row
// splits the same way (launch() checks that in and out have the same alignment phase). A row whose
// bytes are a multiple of the vector size and whose base is aligned has head = tail = 0.
template <int V, class T>
struct RowSplit {
  int head = 0;
  std::int64_t vecs = 0;
  int tail = 0;

  __device__ __forceinline__ RowSplit(const T* row, std::int64_t cols) {
    const int phase = static_cast<int>((reinterpret_cast<std::uintptr_t>(row) / sizeof(T)) % V);
    const int to_aligned = phase == 0 ? 0 : V - phase;
    head = cols < to_aligned ? static_cast<int>(cols) : to_aligned;
    vecs = (cols - head) / V;
    tail = static_cast<int>(cols - head - vecs * V);
  }
};

// The partial (max, sum of exp(x - max)) of one block's share of a split row, exchanged between
// the blocks of a cluster through distributed shared memory. Two buffers, alternating per row:
// a block writes buffer n % 2 for row n only after the cluster barrier of row n - 1, which every
// block reaches after reading buffer (n - 2) % 2 -- so a buffer is never overwritten while read.
struct Partial {
  float max;
  float sum;
};

// Rows that fit the register cache: one DRAM read and one write per element.
// kPeel: rows may start unaligned (head and tail elements). Without it every row is known to be
// whole aligned vectors, which saves the split's registers (a block more per SM for the widest
// caches); launch() picks the instantiation. The peeled kernel of 1024-thread blocks is held to two
// blocks an SM (32 registers): ptxas gave it 48 at CACHE 16, one block an SM, where the aligned one
// fits two; held there it spills 8 bytes and runs in 0.69-0.85x the time (H200, 2026-11-30: 1686 x
// 16178 fp32 68.4 -> 58.2 us, 4000 x 16001 bf16 114.6 -> 79.4; bench/data/peel1024-2026-11-30.txt).
// Asking the same of smaller blocks made ptxas spill more and was no faster (kernels/softmax/
// README.md), and a second argument of 1 would let ptxas take more registers: elsewhere it is 0,
// none.
// With SPLIT > 1 the blocks of a cluster share each row: every block reduces its share to a max
// and a sum of exp(x - its max), the cluster exchanges those pairs once, and each block rescales
// its cached exps by exp(its max - row max) / row sum.
template <class Tr, bool kPeel, class T>
__global__ void __launch_bounds__(Tr::kThreads, kPeel && Tr::kThreads == 1024 ? 2 : 0)
    softmax_cached_kernel(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows, int cols) {
  constexpr int V = Tr::kVec;
  constexpr int kChunks = Tr::kCache / V;
  constexpr int kStride = Tr::kSpan * V;  // elements between a thread's chunks
  constexpr int kPeelSlots = V > Tr::kSpan ? (V - 1 + Tr::kSpan - 1) / Tr::kSpan : 1;
  using P = Packet<T, V>;
  using P1 = Packet<T, 1>;
  __shared__ ReduceSlots<Tr> slots;
  const int group = threadIdx.x / Tr::kRowThreads;
  int t = threadIdx.x % Tr::kRowThreads;
  std::int64_t unit = blockIdx.x;  // the block, or the cluster, that owns a set of rows
  std::int64_t units = gridDim.x;
  [[maybe_unused]] __shared__ Partial partials[Tr::kSplit > 1 ? 2 : 1];
  [[maybe_unused]] int parity = 0;
  if constexpr (Tr::kSplit > 1) {
    const int rank = static_cast<int>(blockIdx.x % Tr::kSplit);
    t += rank * Tr::kRowThreads;
    unit = blockIdx.x / Tr::kSplit;
    units = gridDim.x / Tr::kSplit;
  }

  for (std::int64_t first = unit * Tr::kRowsPerBlock; first < rows; first += units * Tr::kRowsPerBlock) {
    // Rows past the end still join the block's barriers; they only skip loads and stores.
    const std::int64_t row = first + group;
    const T* src = in + row * cols;
    T* dst = out + row * cols;
    RowSplit<V, T> split(src, row < rows ? cols : 0);
    if constexpr (!kPeel) {
      split.head = 0;
      split.vecs = row < rows ? cols / V : 0;
      split.tail = 0;
    }
    // Chunk c of this thread starts c * kStride elements after its first vector, so every access
    // is one base pointer plus an immediate offset; chunk c exists when c * kSpan < vec_limit.
    const int vec_limit = static_cast<int>(split.vecs) - t;
    const T* body_src = src + split.head + t * V;
    T* body_dst = dst + split.head + t * V;
    const std::int64_t tail_at = split.head + split.vecs * V;

    float x[kChunks][V];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * Tr::kSpan < vec_limit) {
        P::load_last(body_src + c * kStride, x[c]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) x[c][k] = -INFINITY;
      }
    }
    // Head and tail elements (fewer than V each) spread over the row's threads: kPeelSlots each.
    float head[kPeelSlots];
    float tail[kPeelSlots];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kPeelSlots; ++i) {
      head[i] = tail[i] = -INFINITY;
      if constexpr (kPeel) {
        const int e = t + i * Tr::kSpan;
        if (e < split.head) P1::load_last(src + e, &head[i]);
        if (e < split.tail) P1::load_last(src + tail_at + e, &tail[i]);
        m = fmaxf(m, fmaxf(head[i], tail[i]));
      }
    }

#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * Tr::kSpan >= vec_limit) break;
#pragma unroll
      for (int k = 0; k < V; ++k) m = fmaxf(m, x[c][k]);
    }
    m = row_reduce<Tr, true>(m, slots.max_of(group));
    // A block share without elements (a split row narrower than the cluster) has m = -inf; its
    // exps must come out 0, not NaN.
    const float m_exp = Tr::kSplit > 1 && m == -INFINITY ? 0.0f : m;

    // exp(x - m) as ex2((x - m) * log2 e): subtracting first keeps the argument exact to an ulp
    // at any magnitude (the one-FFMA form x log2 e - m log2 e is shifted by the rounding of
    // m log2 e, 2^-24 of it: beyond |m| of about 1e9 that shift overflows ex2, and a row masked
    // with -3.4e38 overflows m log2 e itself). Missing elements hold -inf and give 0.
    // Only elements that exist: a row narrower than the thread's vectors and peel slots (one lane
    // a row of 3 bf16 has 8 cached elements and 3 head and 3 tail slots with 8-byte vectors) would
    // otherwise pay an ex2 for every empty one; narrow rows are issue-bound (291 warp instructions
    // per row of 3 bf16, the schedulers 85 % busy, DRAM 11 %).
    float s = 0.0f;
    if constexpr (kPeel) {
#pragma unroll
      for (int i = 0; i < kPeelSlots; ++i) {
        const int e = t + i * Tr::kSpan;
        if (e < split.head) {
          head[i] = ex2_ftz((head[i] - m_exp) * kLog2e);
          s += head[i];
        }
        if (e < split.tail) {
          tail[i] = ex2_ftz((tail[i] - m_exp) * kLog2e);
          s += tail[i];
        }
      }
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * Tr::kSpan >= vec_limit) break;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        x[c][k] = ex2_ftz((x[c][k] - m_exp) * kLog2e);
        s += x[c][k];
      }
    }
    s = row_reduce<Tr, false>(s, slots.sum_of(group));
    float inv = 1.0f / s;
    if constexpr (Tr::kSplit > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      namespace cg = cooperative_groups;
      cg::cluster_group cluster = cg::this_cluster();
      if (threadIdx.x == 0) partials[parity] = {m, s};
      cluster.sync();
      float row_max = -INFINITY;
#pragma unroll
      for (int r = 0; r < Tr::kSplit; ++r) row_max = fmaxf(row_max, cluster.map_shared_rank(&partials[parity], r)->max);
      float row_sum = 0.0f;
#pragma unroll
      for (int r = 0; r < Tr::kSplit; ++r) {
        const Partial p = *cluster.map_shared_rank(&partials[parity], r);
        if (p.max != -INFINITY) row_sum += p.sum * ex2_ftz((p.max - row_max) * kLog2e);
      }
      inv = m == -INFINITY ? 0.0f : ex2_ftz((m - row_max) * kLog2e) / row_sum;
      parity ^= 1;
#else
      __trap();  // clusters need sm_90; launch() refuses SPLIT > 1 elsewhere
#endif
    }

#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * Tr::kSpan < vec_limit) {
#pragma unroll
        for (int k = 0; k < V; ++k) x[c][k] *= inv;
        P::store(body_dst + c * kStride, x[c]);
      }
    }
    if constexpr (kPeel) {
#pragma unroll
      for (int i = 0; i < kPeelSlots; ++i) {
        const int e = t + i * Tr::kSpan;
        if (e < split.head) {
          head[i] *= inv;
          P1::store(dst + e, &head[i]);
        }
        if (e < split.tail) {
          tail[i] *= inv;
          P1::store(dst + tail_at + e, &tail[i]);
        }
      }
    }
  }
  if constexpr (Tr::kSplit > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // No block leaves while another may still read its partials.
    cooperative_groups::this_cluster().sync();
#endif
  }
}

// Rows narrower than a vector that divide it (ROW_THREADS 1 with 16-byte accesses: rows of 1 or 2
// fp32, of 1, 2 or 4 bf16; in and out 16-byte aligned): the matrix is read as whole vectors, each
// holding V / COLS whole rows, CACHE / V of them per thread, in flight at once, and a warp's
// access is 512 contiguous bytes. The row-per-thread path moves such a row as one or two single
// elements (4 bytes of a row of one fp32 element a thread, and a block per 128 or 256 of them),
// which leaves it far below the copy rate: a block start per kilobyte, and too few bytes in
// flight. The last rows.cols % V elements (fewer than a vector, whole rows) are one thread's.
template <class Tr, int COLS, class T>
__global__ void __launch_bounds__(Tr::kThreads) softmax_packed_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                     std::int64_t rows) {
  constexpr int V = Tr::kVec;
  constexpr int kChunks = Tr::kCache / V;
  constexpr int kRowsPerVec = V / COLS;
  static_assert(COLS < V && V % COLS == 0, "whole rows in a vector");
  using P = Packet<T, V>;
  using P1 = Packet<T, 1>;
  const std::int64_t vecs = rows / kRowsPerVec;
  const std::int64_t per_block = static_cast<std::int64_t>(Tr::kThreads) * kChunks;
  // softmax of one row of COLS elements held at x[0..COLS), in place.
  auto row_softmax = [](float* x) {
    float m = x[0];
#pragma unroll
    for (int k = 1; k < COLS; ++k) m = fmaxf(m, x[k]);
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < COLS; ++k) {
      x[k] = ex2_ftz((x[k] - m) * kLog2e);
      s += x[k];
    }
    const float inv = 1.0f / s;
#pragma unroll
    for (int k = 0; k < COLS; ++k) x[k] *= inv;
  };
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * per_block + threadIdx.x; base < vecs;
       base += static_cast<std::int64_t>(gridDim.x) * per_block) {
    float x[kChunks][V];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const std::int64_t j = base + static_cast<std::int64_t>(c) * Tr::kThreads;
      if (j < vecs) P::load_last(in + j * V, x[c]);
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const std::int64_t j = base + static_cast<std::int64_t>(c) * Tr::kThreads;
      if (j < vecs) {
#pragma unroll
        for (int r = 0; r < kRowsPerVec; ++r) row_softmax(&x[c][r * COLS]);
        P::store(out + j * V, x[c]);
      }
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (std::int64_t row = vecs * kRowsPerVec; row < rows; ++row) {
      float x[COLS];
#pragma unroll
      for (int k = 0; k < COLS; ++k) P1::load_last(in + row * COLS + k, &x[k]);
      row_softmax(x);
#pragma unroll
      for (int k = 0; k < COLS; ++k) P1::store(out + row * COLS + k, &x[k]);
    }
  }
}

// Rows that fit the register cache, staged through shared memory (STAGE = 1): a block owns a tile
// of consecutive rows, one contiguous range of global memory, as many rows as fill THREADS * CACHE
// elements (row group g takes the tile's rows g, g + G, g + 2G, ... for G row groups, `per_group`
// of them). The block copies the tile in with V-element accesses at aligned addresses (single
// elements only at the tile's two ends), every loaded vector in flight at once, each row group
// computes its rows from shared memory and writes the results back, and the block copies the tile
// out the same way. Narrow or odd-width rows thus move on full-width, coalesced accesses with a
// whole cache's bytes in flight per thread (a row of 2 bf16 is 4 bytes: one row a thread would
// keep 4 bytes in flight), where the direct path pays single-element accesses at each row's
// unaligned ends. The tile sits in shared memory at its global alignment phase, so aligned global
// vectors are aligned shared vectors. launch() guarantees in and out share that phase.
template <class Tr, class T>
__global__ void __launch_bounds__(Tr::kThreads) softmax_staged_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                     std::int64_t rows, int cols, int per_group) {
  constexpr int V = Tr::kVec;
  constexpr int kLoadsInFlight = Tr::kCache / V;  // a full tile's vectors per thread
  using P1 = Packet<T, 1>;
  using Bits = typename Packet<T, V>::Bits;
  extern __shared__ __align__(16) unsigned char stage_bytes[];
  T* const tile = reinterpret_cast<T*>(stage_bytes);
  __shared__ ReduceSlots<Tr> slots;
  const int group = threadIdx.x / Tr::kRowThreads;
  const int t = threadIdx.x % Tr::kRowThreads;
  const std::int64_t tile_capacity = static_cast<std::int64_t>(Tr::kRowsPerBlock) * per_group;

  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * tile_capacity; first < rows;
       first += static_cast<std::int64_t>(gridDim.x) * tile_capacity) {
    const std::int64_t tile_rows = rows - first < tile_capacity ? rows - first : tile_capacity;
    const int count = static_cast<int>(tile_rows) * cols;  // elements of the tile
    const T* src = in + first * cols;
    T* dst = out + first * cols;
    const int phase = static_cast<int>((reinterpret_cast<std::uintptr_t>(src) / sizeof(T)) % V);
    const int head = count < (V - phase) % V ? count : (V - phase) % V;
    const int vecs = (count - head) / V;
    const int tail_at = head + vecs * V;
    T* const staged = tile + phase;  // element i of the tile at staged[i]

    // Copy in: every vector of the thread in flight, then their shared-memory stores.
    for (int base = 0; base < vecs; base += Tr::kThreads * kLoadsInFlight) {
      Bits v[kLoadsInFlight];
#pragma unroll
      for (int k = 0; k < kLoadsInFlight; ++k) {
        const int j = base + k * Tr::kThreads + static_cast<int>(threadIdx.x);
        if (j < vecs) v[k] = __ldcs(reinterpret_cast<const Bits*>(src + head + j * V));
      }
#pragma unroll
      for (int k = 0; k < kLoadsInFlight; ++k) {
        const int j = base + k * Tr::kThreads + static_cast<int>(threadIdx.x);
        if (j < vecs) *reinterpret_cast<Bits*>(staged + head + j * V) = v[k];
      }
    }
    for (int i = static_cast<int>(threadIdx.x); i < count - vecs * V; i += Tr::kThreads) {
      const int e = i < head ? i : tail_at + (i - head);
      staged[e] = src[e];
    }
    __syncthreads();

    // Each row group: its rows from shared memory into registers, softmax, back to shared memory.
    // Every thread runs all per_group steps (a row spanning warps reduces through barriers).
    for (int j = 0; j < per_group; ++j) {
      const int local = group + j * Tr::kRowsPerBlock;
      const bool live = local < tile_rows;
      T* const row = staged + local * cols;
      // This thread's elements of the row (elements t, t + ROW_THREADS, ...): every step stops
      // there, so a narrow row costs its width, not CACHE steps with an ex2 each (a row of one
      // fp32 element took 211 warp instructions with CACHE 8, the schedulers 82 % busy).
      const int mine = live && t < cols ? (cols - t + Tr::kRowThreads - 1) / Tr::kRowThreads : 0;
      float x[Tr::kCache];
      float m = -INFINITY;
#pragma unroll
      for (int k = 0; k < Tr::kCache; ++k) {
        if (k >= mine) break;
        P1::unpack(*reinterpret_cast<const typename P1::Bits*>(row + t + k * Tr::kRowThreads), &x[k]);
        m = fmaxf(m, x[k]);
      }
      m = row_reduce<Tr, true>(m, slots.max_of(group));
      float s = 0.0f;
#pragma unroll
      for (int k = 0; k < Tr::kCache; ++k) {
        if (k >= mine) break;
        x[k] = ex2_ftz((x[k] - m) * kLog2e);
        s += x[k];
      }
      s = row_reduce<Tr, false>(s, slots.sum_of(group));
      const float inv = 1.0f / s;
#pragma unroll
      for (int k = 0; k < Tr::kCache; ++k) {
        if (k >= mine) break;
        x[k] *= inv;
        *reinterpret_cast<typename P1::Bits*>(row + t + k * Tr::kRowThreads) = P1::pack(&x[k]);
      }
    }
    __syncthreads();

    // Copy out, the same split of the tile.
    for (int j = static_cast<int>(threadIdx.x); j < vecs; j += Tr::kThreads) {
      __stcs(reinterpret_cast<Bits*>(dst + head + j * V), *reinterpret_cast<const Bits*>(staged + head + j * V));
    }
    for (int i = static_cast<int>(threadIdx.x); i < count - vecs * V; i += Tr::kThreads) {
      const int e = i < head ? i : tail_at + (i - head);
      dst[e] = staged[e];
    }
    // The next tile's copy-in overwrites what this copy-out reads.
    __syncthreads();
  }
}

// Rows wider than the register cache, in batches of CACHE / kVec accesses of V elements per
// thread (the same loads in flight as the cached kernel). Pass 1 keeps a per-thread running max m
// and sum s of exp(x - m), rescaling s once per batch; pass 2 re-reads each batch (mostly from
// L2) and writes exp(x - max) / sum. V is Tr::kVec, or 1 when in and out differ in alignment.
// With SPLIT > 1 the row is spread over the SPLIT blocks of a cluster, which exchange their
// partial (max, sum) once between the passes, as in the cached kernel: a cluster holds fewer rows
// in flight per SM, so the rows re-read in pass 2 are still in L2 when the row is very wide.
template <class Tr, int V, class T>
__global__ void __launch_bounds__(Tr::kThreads, 1) softmax_streaming_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                        std::int64_t rows, std::int64_t cols) {
  constexpr int kChunks = Tr::kCache / Tr::kVec;
  constexpr int kStride = Tr::kSpan * V;
  constexpr int kBatchVecs = Tr::kSpan * kChunks;
  constexpr int kPeelSlots = V > Tr::kSpan ? (V - 1 + Tr::kSpan - 1) / Tr::kSpan : 1;
  using P = Packet<T, V>;
  using P1 = Packet<T, 1>;
  __shared__ ReduceSlots<Tr> slots;
  const int group = threadIdx.x / Tr::kRowThreads;
  int t = threadIdx.x % Tr::kRowThreads;
  std::int64_t unit = blockIdx.x;
  std::int64_t units = gridDim.x;
  [[maybe_unused]] __shared__ Partial partials[Tr::kSplit > 1 ? 2 : 1];
  [[maybe_unused]] int parity = 0;
  if constexpr (Tr::kSplit > 1) {
    t += static_cast<int>(blockIdx.x % Tr::kSplit) * Tr::kRowThreads;
    unit = blockIdx.x / Tr::kSplit;
    units = gridDim.x / Tr::kSplit;
  }

  for (std::int64_t first = unit * Tr::kRowsPerBlock; first < rows; first += units * Tr::kRowsPerBlock) {
    const std::int64_t row = first + group;
    const T* src = in + row * cols;
    T* dst = out + row * cols;
    RowSplit<V, T> split(src, row < rows ? cols : 0);
    const std::int64_t vec_limit = split.vecs - t;  // as in the cached kernel, per batch below
    const T* body_src = src + split.head + t * V;
    T* body_dst = dst + split.head + t * V;
    const std::int64_t tail_at = split.head + split.vecs * V;

    // Head and tail elements (fewer than V each) spread over the row's threads: kPeelSlots each.
    float head[kPeelSlots];
    float tail[kPeelSlots];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kPeelSlots; ++i) {
      const int e = t + i * Tr::kSpan;
      head[i] = tail[i] = -INFINITY;
      if (e < split.head) P1::load_keep(src + e, &head[i]);
      if (e < split.tail) P1::load_keep(src + tail_at + e, &tail[i]);
      m = fmaxf(m, fmaxf(head[i], tail[i]));
    }
    float s = 0.0f;
    if (m != -INFINITY) {
#pragma unroll
      for (int i = 0; i < kPeelSlots; ++i) s += ex2_ftz((head[i] - m) * kLog2e) + ex2_ftz((tail[i] - m) * kLog2e);
    }

    for (std::int64_t batch = 0; batch < split.vecs; batch += kBatchVecs) {
      const std::int64_t limit = vec_limit - batch;
      const T* batch_src = body_src + batch * V;
      float x[kChunks][V];
      float batch_max = -INFINITY;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * Tr::kSpan < limit) {
          P::load_keep(batch_src + c * kStride, x[c]);
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k) x[c][k] = -INFINITY;
        }
#pragma unroll
        for (int k = 0; k < V; ++k) batch_max = fmaxf(batch_max, x[c][k]);
      }
      // A thread whose whole batch is padding has nothing to add (and -inf - -inf is NaN).
      if (batch_max == -INFINITY) continue;
      const float m_new = fmaxf(m, batch_max);
      float batch_sum = 0.0f;
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int k = 0; k < V; ++k) batch_sum += ex2_ftz((x[c][k] - m_new) * kLog2e);
      s = s * ex2_ftz((m - m_new) * kLog2e) + batch_sum;
      m = m_new;
    }
    float row_max = row_reduce<Tr, true>(m, slots.max_of(group));
    const float scaled = m == -INFINITY ? 0.0f : s * ex2_ftz((m - row_max) * kLog2e);
    float row_sum = row_reduce<Tr, false>(scaled, slots.sum_of(group));
    if constexpr (Tr::kSplit > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      namespace cg = cooperative_groups;
      cg::cluster_group cluster = cg::this_cluster();
      if (threadIdx.x == 0) partials[parity] = {row_max, row_sum};
      cluster.sync();
      float cluster_max = -INFINITY;
#pragma unroll
      for (int r = 0; r < Tr::kSplit; ++r) cluster_max = fmaxf(cluster_max, cluster.map_shared_rank(&partials[parity], r)->max);
      float cluster_sum = 0.0f;
#pragma unroll
      for (int r = 0; r < Tr::kSplit; ++r) {
        const Partial p = *cluster.map_shared_rank(&partials[parity], r);
        if (p.max != -INFINITY) cluster_sum += p.sum * ex2_ftz((p.max - cluster_max) * kLog2e);
      }
      row_max = cluster_max;
      row_sum = cluster_sum;
      parity ^= 1;
#else
      __trap();  // clusters need sm_90; launch() refuses SPLIT > 1 elsewhere
#endif
    }
    const float inv = 1.0f / row_sum;

#pragma unroll
    for (int i = 0; i < kPeelSlots; ++i) {
      const int e = t + i * Tr::kSpan;
      if (e < split.head) {
        head[i] = ex2_ftz((head[i] - row_max) * kLog2e) * inv;
        P1::store(dst + e, &head[i]);
      }
      if (e < split.tail) {
        tail[i] = ex2_ftz((tail[i] - row_max) * kLog2e) * inv;
        P1::store(dst + tail_at + e, &tail[i]);
      }
    }
    for (std::int64_t batch = 0; batch < split.vecs; batch += kBatchVecs) {
      const std::int64_t limit = vec_limit - batch;
      float x[kChunks][V];
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * Tr::kSpan < limit) P::load_last(body_src + batch * V + c * kStride, x[c]);
      }
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * Tr::kSpan < limit) {
#pragma unroll
          for (int k = 0; k < V; ++k) x[c][k] = ex2_ftz((x[c][k] - row_max) * kLog2e) * inv;
          P::store(body_dst + batch * V + c * kStride, x[c]);
        }
      }
    }
  }
  if constexpr (Tr::kSplit > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // No block leaves while another may still read its partials.
    cooperative_groups::this_cluster().sync();
#endif
  }
}

}  // namespace cuda_detail

namespace cuda_detail {

// Launches `kernel` over `rows`: a block per `block_rows` rows (a row group each, or a staged
// tile), or with SPLIT > 1 a cluster of SPLIT blocks per row (grid-stride beyond the grid limit),
// with `smem` bytes of dynamic shared memory.
template <class Tr, class Kernel, class... Args>
cudaError_t launch_rows(Kernel kernel, std::int64_t rows, std::int64_t block_rows, std::size_t smem, cudaStream_t stream,
                        Args... args) {
  const std::int64_t groups = (rows + block_rows - 1) / block_rows;
  constexpr std::int64_t kMaxUnits = 0x7FFFFFFF / Tr::kSplit;
  const auto units = static_cast<unsigned>(groups < kMaxUnits ? groups : kMaxUnits);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(units * Tr::kSplit);
  config.blockDim = dim3(Tr::kThreads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  if constexpr (Tr::kSplit > 1) {
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = Tr::kSplit;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// Rows of `cols` elements, fewer than a vector and dividing it, by whole vectors: a block per
// THREADS * CACHE / V of them.
template <class Tr, class T>
cudaError_t launch_packed(const T* in, T* out, std::int64_t rows, int cols, cudaStream_t stream) {
  constexpr int V = Tr::kVec;
  const std::int64_t block_rows = static_cast<std::int64_t>(Tr::kThreads) * (Tr::kCache / V) * (V / cols);
  switch (cols) {
    case 1:
      return launch_rows<Tr>(softmax_packed_kernel<Tr, 1, T>, rows, block_rows, 0, stream, in, out, rows);
    case 2:
      if constexpr (V > 2) return launch_rows<Tr>(softmax_packed_kernel<Tr, 2, T>, rows, block_rows, 0, stream, in, out, rows);
      break;
    case 4:
      if constexpr (V > 4) return launch_rows<Tr>(softmax_packed_kernel<Tr, 4, T>, rows, block_rows, 0, stream, in, out, rows);
      break;
    default:
      break;
  }
  return cudaErrorInvalidValue;  // launch() sends only rows of 1, 2 or 4 elements, fewer than V
}

}  // namespace cuda_detail

// Enqueues the row softmax of a rows x cols row-major matrix on `stream` (T: float or
// __nv_bfloat16; in and out device pointers that must not overlap). Returns the launch status.
// SPLIT > 1 needs thread-block clusters (sm_90 and later).
template <class Config, class T>
cudaError_t launch(const T* in, T* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  using Tr = CudaTraits<Config, T>;
  namespace d = cuda_detail;
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  // Vector accesses need in and out rows to reach an aligned address after the same head.
  const auto in_at = reinterpret_cast<std::uintptr_t>(in);
  const auto out_at = reinterpret_cast<std::uintptr_t>(out);
  const bool same_phase = (in_at - out_at) % Tr::kAccessBytes == 0;
  const bool all_aligned = in_at % Tr::kAccessBytes == 0 && out_at % Tr::kAccessBytes == 0 && cols % Tr::kVec == 0;
  if (!same_phase) return d::launch_rows<Tr>(d::softmax_streaming_kernel<Tr, 1, T>, rows, Tr::kRowsPerBlock, 0, stream, in, out, rows, cols);
  if (cols > Tr::kRowCapacity) {
    return d::launch_rows<Tr>(d::softmax_streaming_kernel<Tr, Tr::kVec, T>, rows, Tr::kRowsPerBlock, 0, stream, in, out, rows, cols);
  }
  const int width = static_cast<int>(cols);
  if constexpr (Tr::kRowThreads == 1 && Tr::kVecBytes == 16 && !Tr::kStage) {
    if (cols < Tr::kVec && Tr::kVec % cols == 0 && in_at % 16 == 0 && out_at % 16 == 0) {
      return d::launch_packed<Tr>(in, out, rows, width, stream);
    }
  }
  if constexpr (Tr::kStage) {
    // As many rows a row group as fill the tile (THREADS * CACHE elements).
    const int per_group = Tr::kRowThreads * Tr::kCache / width;
    const std::int64_t block_rows = static_cast<std::int64_t>(Tr::kRowsPerBlock) * per_group;
    const std::size_t smem = static_cast<std::size_t>(block_rows) * width * sizeof(T) + Tr::kAccessBytes;
    return d::launch_rows<Tr>(d::softmax_staged_kernel<Tr, T>, rows, block_rows, smem, stream, in, out, rows, width,
                              per_group);
  } else if (all_aligned) {
    return d::launch_rows<Tr>(d::softmax_cached_kernel<Tr, false, T>, rows, Tr::kRowsPerBlock, 0, stream, in, out, rows, width);
  } else {
    return d::launch_rows<Tr>(d::softmax_cached_kernel<Tr, true, T>, rows, Tr::kRowsPerBlock, 0, stream, in, out, rows, width);
  }
}

}  // namespace kiln::softmax
