// CUDA row softmax: out[r, :] = softmax(in[r, :]) for fp32 and bf16 rows, fp32 math.
//
// A block holds ROWS_PER_BLOCK row groups of ROW_WARPS warps; each group owns one row at a time.
// Every thread caches CACHE elements of its row in fp32 registers, loaded VEC_BYTES at a time:
// chunk c of thread t covers the VEC elements starting at (c * ROW_THREADS + t) * VEC, so a warp's
// load is one contiguous, coalesced span. The row is read from DRAM once and written once:
//   load all chunks (every load in flight at once) -> max (warp shuffles, then one shared-memory
//   exchange between the group's warps) -> e = exp(x - max) in place, sum -> store e / sum.
// A row whose start is not vector-aligned (cols * sizeof(T) not a multiple of VEC_BYTES) is split
// into a few single elements up to the first aligned address, whole vectors, and a few single
// elements at the end, so any width runs on full-width accesses.
// Rows wider than the register cache (ROW_THREADS * CACHE) take a streaming path: an online
// max/sum pass over cache-sized batches, then a write pass that re-reads the row (mostly from L2).
// Only in/out pointers of different alignment phases fall back to one element per access.
#pragma once
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
  static constexpr int kRowWarps = Config::ROW_WARPS;
  static constexpr int kCache = Config::CACHE;          // fp32 registers of row cache per thread
  static constexpr int kVecBytes = Config::VEC_BYTES;   // bytes per vector load / store
  static constexpr int kVec = kVecBytes / static_cast<int>(sizeof(T));  // elements per vector
  static constexpr int kRowThreads = 32 * kRowWarps;
  static constexpr int kRowsPerBlock = kThreads / kRowThreads;
  static constexpr int kRowCapacity = kRowThreads * kCache;  // widest row held in registers

  static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024, "THREADS: whole warps, at most 1024");
  static_assert(kRowWarps >= 1 && kThreads % kRowThreads == 0, "a block holds whole row groups");
  static_assert(kVecBytes == 4 || kVecBytes == 8 || kVecBytes == 16, "VEC_BYTES: 4, 8 or 16");
  static_assert(kVec >= 1 && kCache % kVec == 0, "CACHE must be a multiple of the vector's elements");
  static_assert(kCache >= 1 && kCache <= 128, "CACHE: 1..128 registers");
};

namespace cuda_detail {

constexpr float kLog2e = 1.4426950408889634f;

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

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Reduction over the ROW_WARPS warps of a row group; every thread of the block must call it (it
// synchronises the block when a row spans several warps). `slots` is this group's shared array of
// ROW_WARPS floats; callers alternate between two arrays so that consecutive reductions do not race.
template <class Tr, bool kMax>
__device__ __forceinline__ float row_reduce(float v, float* slots) {
  v = kMax ? warp_max(v) : warp_sum(v);
  if constexpr (Tr::kRowWarps > 1) {
    const int lane = threadIdx.x % 32;
    const int warp_in_row = (threadIdx.x % Tr::kRowThreads) / 32;
    if (lane == 0) slots[warp_in_row] = v;
    __syncthreads();
    const float identity = kMax ? -INFINITY : 0.0f;
    v = lane < Tr::kRowWarps ? slots[lane] : identity;
    v = kMax ? warp_max(v) : warp_sum(v);
  }
  return v;
}

// Shared memory of the row reductions: max and sum slots per row group. The max slots of row n+1
// are written only after every thread passed the sum barrier of row n, which follows its reads of
// the max slots of row n (and likewise for the sum slots), so one pair of arrays suffices.
template <class Tr>
struct ReduceSlots {
  float max[Tr::kRowsPerBlock][Tr::kRowWarps];
  float sum[Tr::kRowsPerBlock][Tr::kRowWarps];
};

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

// Rows that fit the register cache: one DRAM read and one write per element.
// kPeel: rows may start unaligned (head and tail elements). Without it every row is known to be
// whole aligned vectors, which saves the split's registers (a block more per SM for the widest
// caches); launch() picks the instantiation.
template <class Tr, bool kPeel, class T>
__global__ void __launch_bounds__(Tr::kThreads) softmax_cached_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                     std::int64_t rows, int cols) {
  constexpr int V = Tr::kVec;
  constexpr int kChunks = Tr::kCache / V;
  constexpr int kStride = Tr::kRowThreads * V;  // elements between a thread's chunks
  using P = Packet<T, V>;
  using P1 = Packet<T, 1>;
  __shared__ ReduceSlots<Tr> slots;
  const int group = threadIdx.x / Tr::kRowThreads;
  const int t = threadIdx.x % Tr::kRowThreads;

  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Tr::kRowsPerBlock; first < rows;
       first += static_cast<std::int64_t>(gridDim.x) * Tr::kRowsPerBlock) {
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
    // is one base pointer plus an immediate offset; chunk c exists when c * kRowThreads < vec_limit.
    const int vec_limit = static_cast<int>(split.vecs) - t;
    const T* body_src = src + split.head + t * V;
    T* body_dst = dst + split.head + t * V;
    const std::int64_t tail_at = split.head + split.vecs * V + t;

    float x[kChunks][V];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * Tr::kRowThreads < vec_limit) {
        P::load_last(body_src + c * kStride, x[c]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) x[c][k] = -INFINITY;
      }
    }
    float head = -INFINITY;
    float tail = -INFINITY;
    if constexpr (kPeel) {
      if (t < split.head) P1::load_last(src + t, &head);
      if (t < split.tail) P1::load_last(src + tail_at, &tail);
    }

    float m = fmaxf(head, tail);
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
      for (int k = 0; k < V; ++k) m = fmaxf(m, x[c][k]);
    m = row_reduce<Tr, true>(m, slots.max[group]);

    // exp(x - m) as ex2((x - m) * log2 e): subtracting first keeps the argument exact to an ulp.
    // Missing elements hold -inf and give 0.
    float s = 0.0f;
    if constexpr (kPeel) {
      head = exp2f((head - m) * kLog2e);
      tail = exp2f((tail - m) * kLog2e);
      s = head + tail;
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        x[c][k] = exp2f((x[c][k] - m) * kLog2e);
        s += x[c][k];
      }
    s = row_reduce<Tr, false>(s, slots.sum[group]);
    const float inv = 1.0f / s;

#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * Tr::kRowThreads < vec_limit) {
#pragma unroll
        for (int k = 0; k < V; ++k) x[c][k] *= inv;
        P::store(body_dst + c * kStride, x[c]);
      }
    }
    if constexpr (kPeel) {
      if (t < split.head) {
        head *= inv;
        P1::store(dst + t, &head);
      }
      if (t < split.tail) {
        tail *= inv;
        P1::store(dst + tail_at, &tail);
      }
    }
  }
}

// Rows wider than the register cache, in batches of CACHE / kVec accesses of V elements per
// thread (the same loads in flight as the cached kernel). Pass 1 keeps a per-thread running max m
// and sum s of exp(x - m), rescaling s once per batch; pass 2 re-reads each batch (mostly from
// L2) and writes exp(x - max) / sum. V is Tr::kVec, or 1 when in and out differ in alignment.
template <class Tr, int V, class T>
__global__ void __launch_bounds__(Tr::kThreads, 1) softmax_streaming_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                        std::int64_t rows, std::int64_t cols) {
  constexpr int kChunks = Tr::kCache / Tr::kVec;
  constexpr int kStride = Tr::kRowThreads * V;
  constexpr int kBatchVecs = Tr::kRowThreads * kChunks;
  using P = Packet<T, V>;
  using P1 = Packet<T, 1>;
  __shared__ ReduceSlots<Tr> slots;
  const int group = threadIdx.x / Tr::kRowThreads;
  const int t = threadIdx.x % Tr::kRowThreads;

  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Tr::kRowsPerBlock; first < rows;
       first += static_cast<std::int64_t>(gridDim.x) * Tr::kRowsPerBlock) {
    const std::int64_t row = first + group;
    const T* src = in + row * cols;
    T* dst = out + row * cols;
    RowSplit<V, T> split(src, row < rows ? cols : 0);
    const std::int64_t vec_limit = split.vecs - t;  // as in the cached kernel, per batch below
    const T* body_src = src + split.head + t * V;
    T* body_dst = dst + split.head + t * V;
    const std::int64_t tail_at = split.head + split.vecs * V + t;

    float head = -INFINITY;
    float tail = -INFINITY;
    if (t < split.head) P1::load_keep(src + t, &head);
    if (t < split.tail) P1::load_keep(src + tail_at, &tail);
    float m = fmaxf(head, tail);
    float s = m == -INFINITY ? 0.0f : exp2f((head - m) * kLog2e) + exp2f((tail - m) * kLog2e);

    for (std::int64_t batch = 0; batch < split.vecs; batch += kBatchVecs) {
      const std::int64_t limit = vec_limit - batch;
      const T* batch_src = body_src + batch * V;
      float x[kChunks][V];
      float batch_max = -INFINITY;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * Tr::kRowThreads < limit) {
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
        for (int k = 0; k < V; ++k) batch_sum += exp2f((x[c][k] - m_new) * kLog2e);
      s = s * exp2f((m - m_new) * kLog2e) + batch_sum;
      m = m_new;
    }
    const float row_max = row_reduce<Tr, true>(m, slots.max[group]);
    const float scaled = m == -INFINITY ? 0.0f : s * exp2f((m - row_max) * kLog2e);
    const float inv = 1.0f / row_reduce<Tr, false>(scaled, slots.sum[group]);

    if (t < split.head) {
      head = exp2f((head - row_max) * kLog2e) * inv;
      P1::store(dst + t, &head);
    }
    if (t < split.tail) {
      tail = exp2f((tail - row_max) * kLog2e) * inv;
      P1::store(dst + tail_at, &tail);
    }
    for (std::int64_t batch = 0; batch < split.vecs; batch += kBatchVecs) {
      const std::int64_t limit = vec_limit - batch;
      float x[kChunks][V];
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * Tr::kRowThreads < limit) P::load_last(body_src + batch * V + c * kStride, x[c]);
      }
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * Tr::kRowThreads < limit) {
#pragma unroll
          for (int k = 0; k < V; ++k) x[c][k] = exp2f((x[c][k] - row_max) * kLog2e) * inv;
          P::store(body_dst + batch * V + c * kStride, x[c]);
        }
      }
    }
  }
}

}  // namespace cuda_detail

// Enqueues the row softmax of a rows x cols row-major matrix on `stream` (T: float or
// __nv_bfloat16; in and out device pointers that must not overlap). Returns the launch status.
template <class Config, class T>
cudaError_t launch(const T* in, T* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  using Tr = CudaTraits<Config, T>;
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const std::int64_t groups = (rows + Tr::kRowsPerBlock - 1) / Tr::kRowsPerBlock;
  // Grid-stride over row groups beyond the grid limit.
  const unsigned blocks = static_cast<unsigned>(groups < 0x7FFFFFFF ? groups : 0x7FFFFFFF);
  // Vector accesses need in and out rows to reach an aligned address after the same head.
  const auto in_at = reinterpret_cast<std::uintptr_t>(in);
  const auto out_at = reinterpret_cast<std::uintptr_t>(out);
  const bool same_phase = (in_at - out_at) % Tr::kVecBytes == 0;
  const bool all_aligned = in_at % Tr::kVecBytes == 0 && out_at % Tr::kVecBytes == 0 && cols % Tr::kVec == 0;
  if (!same_phase) {
    cuda_detail::softmax_streaming_kernel<Tr, 1><<<blocks, Tr::kThreads, 0, stream>>>(in, out, rows, cols);
  } else if (cols <= Tr::kRowCapacity && all_aligned) {
    cuda_detail::softmax_cached_kernel<Tr, false>
        <<<blocks, Tr::kThreads, 0, stream>>>(in, out, rows, static_cast<int>(cols));
  } else if (cols <= Tr::kRowCapacity) {
    cuda_detail::softmax_cached_kernel<Tr, true>
        <<<blocks, Tr::kThreads, 0, stream>>>(in, out, rows, static_cast<int>(cols));
  } else {
    cuda_detail::softmax_streaming_kernel<Tr, Tr::kVec><<<blocks, Tr::kThreads, 0, stream>>>(in, out, rows, cols);
  }
  return cudaGetLastError();
}

}  // namespace kiln::softmax
