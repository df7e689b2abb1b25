// CUDA row softmax: out[r, :] = softmax(in[r, :]) for fp32 and bf16 rows, fp32 math.
//
// A block holds ROWS_PER_BLOCK row groups of ROW_WARPS warps; each group owns one row at a time.
// Every thread caches CACHE elements of its row in fp32 registers, loaded VEC_BYTES at a time:
// chunk c of thread t covers the VEC elements starting at (c * ROW_THREADS + t) * VEC, so a warp's
// load is one contiguous, coalesced span. The row is read from DRAM once and written once:
//   load all chunks (every load in flight at once) -> max (warp shuffles, then one shared-memory
//   exchange between the group's warps) -> e = exp(x - max) in place, sum -> store e / sum.
// Rows wider than the register cache (ROW_THREADS * CACHE) take a streaming path: an online
// max/sum pass over cache-sized batches, then a write pass that re-reads the row (mostly from L2).
// Rows whose base addresses are not VEC_BYTES-aligned (cols * sizeof(T) not a multiple of
// VEC_BYTES, or a misaligned pointer) use the same kernels with one element per access.
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
template <class Tr, int V, class T>
__global__ void __launch_bounds__(Tr::kThreads) softmax_cached_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                     std::int64_t rows, int cols) {
  constexpr int kChunks = Tr::kCache / V;
  constexpr int kStride = Tr::kRowThreads * V;  // elements between a thread's chunks
  using P = Packet<T, V>;
  __shared__ ReduceSlots<Tr> slots;
  const int group = threadIdx.x / Tr::kRowThreads;
  const int t = threadIdx.x % Tr::kRowThreads;

  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Tr::kRowsPerBlock; first < rows;
       first += static_cast<std::int64_t>(gridDim.x) * Tr::kRowsPerBlock) {
    // Rows past the end still join the block's barriers; they only skip loads and stores.
    const std::int64_t row = first + group;
    // Chunk c of this thread starts kStride * c elements after its first element, so every access
    // is one base pointer plus an immediate offset; `limit` is how many elements remain from there.
    const int limit = row < rows ? cols - t * V : 0;
    const T* src = in + row * cols + t * V;
    T* dst = out + row * cols + t * V;

    float x[kChunks][V];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * kStride < limit) {
        P::load_last(src + c * kStride, x[c]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) x[c][k] = -INFINITY;
      }
    }

    float m = -INFINITY;
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
      for (int k = 0; k < V; ++k) m = fmaxf(m, x[c][k]);
    m = row_reduce<Tr, true>(m, slots.max[group]);

    // exp(x - m) as ex2((x - m) * log2 e): subtracting first keeps the argument exact to an ulp.
    // Padding lanes hold -inf and give 0.
    float s = 0.0f;
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
      if (c * kStride < limit) {
#pragma unroll
        for (int k = 0; k < V; ++k) x[c][k] *= inv;
        P::store(dst + c * kStride, x[c]);
      }
    }
  }
}

// Rows wider than the register cache, in batches of kRowCapacity elements. Pass 1 keeps a
// per-thread running max m and sum s of exp(x - m), rescaling s once per batch; pass 2 re-reads
// each batch and writes exp(x - max) / sum.
template <class Tr, int V, class T>
__global__ void __launch_bounds__(Tr::kThreads) softmax_streaming_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                                        std::int64_t rows, std::int64_t cols) {
  constexpr int kChunks = Tr::kCache / V;
  constexpr int kStride = Tr::kRowThreads * V;
  constexpr int kBatch = Tr::kRowCapacity;
  using P = Packet<T, V>;
  __shared__ ReduceSlots<Tr> slots;
  const int group = threadIdx.x / Tr::kRowThreads;
  const int t = threadIdx.x % Tr::kRowThreads;

  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Tr::kRowsPerBlock; first < rows;
       first += static_cast<std::int64_t>(gridDim.x) * Tr::kRowsPerBlock) {
    const std::int64_t row = first + group;
    // As in the cached kernel, but `limit` counts from the batch's first element of this thread.
    const std::int64_t row_limit = row < rows ? cols - t * V : 0;
    const T* src = in + row * cols + t * V;
    T* dst = out + row * cols + t * V;

    float m = -INFINITY;
    float s = 0.0f;
    for (std::int64_t base = 0; base < cols; base += kBatch) {
      const std::int64_t limit = row_limit - base;
      float x[kChunks][V];
      float batch_max = -INFINITY;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * kStride < limit) {
          P::load_keep(src + base + c * kStride, x[c]);
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

    for (std::int64_t base = 0; base < cols; base += kBatch) {
      const std::int64_t limit = row_limit - base;
      float x[kChunks][V];
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * kStride < limit) P::load_last(src + base + c * kStride, x[c]);
      }
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (c * kStride < limit) {
#pragma unroll
          for (int k = 0; k < V; ++k) x[c][k] = exp2f((x[c][k] - row_max) * kLog2e) * inv;
          P::store(dst + base + c * kStride, x[c]);
        }
      }
    }
  }
}

template <class Tr, int V, class T>
void launch_path(const T* in, T* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  const std::int64_t groups = (rows + Tr::kRowsPerBlock - 1) / Tr::kRowsPerBlock;
  // Grid-stride over row groups beyond the grid limit.
  const unsigned blocks = static_cast<unsigned>(groups < 0x7FFFFFFF ? groups : 0x7FFFFFFF);
  if (cols <= Tr::kRowCapacity) {
    softmax_cached_kernel<Tr, V><<<blocks, Tr::kThreads, 0, stream>>>(in, out, rows, static_cast<int>(cols));
  } else {
    softmax_streaming_kernel<Tr, V><<<blocks, Tr::kThreads, 0, stream>>>(in, out, rows, cols);
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
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % Tr::kVecBytes == 0 &&
                       reinterpret_cast<std::uintptr_t>(out) % Tr::kVecBytes == 0 && cols % Tr::kVec == 0;
  if (aligned) {
    cuda_detail::launch_path<Tr, Tr::kVec>(in, out, rows, cols, stream);
  } else {
    cuda_detail::launch_path<Tr, 1>(in, out, rows, cols, stream);
  }
  return cudaGetLastError();
}

}  // namespace kiln::softmax
