// ALGO shared: one block per row for many medium rows, the row read from DRAM once. The block
// filters its row (topk_cuda_filter.cuh: a threshold digit raised while it streams, no barrier
// after the first step) into a candidate buffer in shared memory, then runs a radix selection of
// the k-th best packed entry over the buffer alone: digit 0 comes from the filter's histogram
// (exact at and above the row's k-th bucket), each later digit from one sweep over the buffer's
// entries of the chosen prefix, and the selection stops at the first digit whose chosen bucket is
// needed whole (at the latest after the 64 bits). The entries at or above the resulting threshold
// are exactly the k best: they are collected from the buffer, bitonic-sorted and written.
//
// The buffer holds max(4096, 10 k) entries (at most n, at most what the device's shared memory
// per block leaves); a smooth distribution leaves a few times k candidates (about 1 200 for a
// 32768-column row at k = 256, 5 100 for 65536 at k = 1000, estimated by a simulation of the
// running threshold). When the candidates overflow it (ties or NaNs by the thousand at the k-th
// bucket, or a long row), every sweep reads the row again instead: slower, equally exact.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "topk_cuda_filter.cuh"
#include "topk_cuda_kernels.cuh"
#include "topk_order.hpp"

namespace kiln::topk {

inline constexpr std::int64_t kSharedMinBuffer = 4096;  // buffer entries at least
inline constexpr std::int64_t kSharedBufferPerK = 10;   // buffer entries per wanted entry

// Dynamic shared memory besides the buffer: the sorted list and the histogram.
inline std::size_t shared_fixed_bytes(int bits, std::int64_t k) {
  return static_cast<std::size_t>(list_length(k)) * 8 + (std::size_t{4} << bits);
}

// Buffer entries for (n, k) when a block may take `limit` bytes of dynamic shared memory.
inline std::int64_t shared_buffer_entries(int bits, std::int64_t n, std::int64_t k, std::size_t limit) {
  std::int64_t c = kSharedBufferPerK * k;
  if (c < kSharedMinBuffer) c = kSharedMinBuffer;
  if (c > n) c = n;
  const std::size_t fixed = shared_fixed_bytes(bits, k);
  const auto fit = static_cast<std::int64_t>(limit > fixed ? (limit - fixed) / 8 : 0);
  return c < fit ? c : fit;
}

namespace shared_detail {

struct Block {
  unsigned tau;           // the filter's threshold digit
  std::uint32_t count;    // candidates appended (past the buffer too)
  std::uint32_t results;  // result slots taken
  int chosen;             // the bucket of the need-th best, -1: none
  std::uint32_t above;    // entries above it
};

}  // namespace shared_detail

// Block `row`: the row's top k. Dynamic shared memory: list_length(k) entries of the list, `cap`
// entries of the buffer, 2^BITS counters.
template <class Config>
__global__ void __launch_bounds__(Config::THREADS, filter_detail::filter_min_blocks(Config::THREADS, Config::REGS))
    shared_kernel(const float* in, std::int64_t n, int k, bool smallest, std::int64_t cap, float* values,
                  std::int64_t* indices) {
  using Tr = CudaTraits<Config>;
  constexpr int T = Tr::kThreads, B = Tr::kBits, kBins = 1 << B;
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ shared_detail::Block sh;
  const int len = list_length(k), t = threadIdx.x;
  auto* list = reinterpret_cast<std::uint64_t*>(dynamic);
  std::uint64_t* buffer = list + len;
  auto* hist = reinterpret_cast<unsigned*>(buffer + cap);
  const std::int64_t row = blockIdx.x;
  const float* x = in + row * n;
  for (int i = t; i < kBins; i += T) hist[i] = 0;
  if (t == 0) {
    sh.tau = 0;
    sh.count = 0;
    sh.results = 0;
  }
  __syncthreads();
  filter_detail::filter_row<T, B>(x, n, smallest, 1, 0, static_cast<std::uint32_t>(k), hist, &sh.tau, &sh.count,
                                  buffer, static_cast<std::uint32_t>(cap), nullptr, nullptr);
  __syncthreads();
  const std::int64_t count = sh.count;
  const bool from_buffer = count <= cap;
  // Every candidate: the buffer's entries, or the row's when they did not fit.
  auto each = [&](auto visit) {
    if (from_buffer) {
      for (std::int64_t i = t; i < count; i += T) visit(buffer[i]);
    } else {
      for (std::int64_t c = t; c < n; c += T) visit(pack(key_of(float_bits(x[c]), smallest), static_cast<std::uint32_t>(c)));
    }
  };

  // The k-th best entry's leading digits: prefix (the entry >> shift). need: entries still wanted
  // from the chosen prefix.
  std::uint64_t prefix = 0;
  int shift = 64;
  auto need = static_cast<std::uint32_t>(k);
  bool found = true;
  for (;;) {
    const int width = shift < B ? shift : B;
    const int low = shift - width;
    const int bins = 1 << width;
    if (shift < 64) {  // digit 0 was counted by the filter
      for (int i = t; i < bins; i += T) hist[i] = 0;
      __syncthreads();
      const std::uint64_t mask = static_cast<std::uint64_t>(bins - 1);
      each([&](std::uint64_t v) {
        if ((v >> shift) == prefix) atomicAdd(&hist[(v >> low) & mask], 1u);
      });
      __syncthreads();
    }
    if (t < 32) {
      int b = 0;
      std::uint32_t a = 0;
      const bool ok = filter_detail::find_bucket(hist, 0, bins, need, &b, &a);
      if (t == 0) {
        sh.chosen = ok ? b : -1;
        sh.above = a;
      }
    }
    __syncthreads();
    const int b = sh.chosen;
    if (b < 0) {  // cannot happen (the histogram is exact at the chosen prefix); the check would see it
      found = false;
      break;
    }
    need -= sh.above;
    prefix = shift < 64 ? (prefix << width) | static_cast<std::uint64_t>(b) : static_cast<std::uint64_t>(b);
    shift = low;
    // The whole bucket is needed: the k best are the entries at or above prefix << shift. (At
    // shift 0 the bucket is one entry, so the loop ends after 64 bits.)
    const bool whole = hist[b] == need;
    __syncthreads();  // hist and sh are rewritten by the next digit
    if (whole) break;
  }

  for (int i = t; i < len; i += T) list[i] = 0;
  __syncthreads();
  if (found) {
    const std::uint64_t threshold = prefix << shift;
    each([&](std::uint64_t v) {
      if (v >= threshold) {
        const std::uint32_t slot = atomicAdd(&sh.results, 1u);
        if (slot < static_cast<std::uint32_t>(k)) list[slot] = v;
      }
    });
  }
  __syncthreads();
  cuda_detail::block_sort<T>(list, len, t);
  for (int j = t; j < k; j += T) {
    const std::uint64_t e = list[j];
    if (e == 0) continue;  // fewer than k results: the poison stays for the check to see
    const std::uint32_t column = packed_column(e);
    values[row * k + j] = x[column];
    indices[row * k + j] = column;
  }
}

// The dynamic shared memory a block of shared_kernel<Config> may take on the current device (the
// opt-in limit less the kernel's static shared memory), raised on the kernel once per device.
template <class Config>
cudaError_t shared_limit(std::size_t* limit) {
  static std::atomic<std::int64_t> limits[cuda_detail::kCachedDevices];
  std::int64_t l = 0;
  const cudaError_t status = cuda_detail::per_device(
      limits,
      [](int device, std::int64_t* value) {
        int optin = 0;
        cudaFuncAttributes attributes{};
        cudaError_t s = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
        if (s == cudaSuccess) s = cudaFuncGetAttributes(&attributes, shared_kernel<Config>);
        if (s != cudaSuccess) return s;
        std::int64_t v = static_cast<std::int64_t>(optin) - static_cast<std::int64_t>(attributes.sharedSizeBytes);
        if (v < 1) v = 1;
        s = cudaFuncSetAttribute(shared_kernel<Config>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(v));
        if (s == cudaSuccess) {
          s = cudaFuncSetAttribute(shared_kernel<Config>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   cudaSharedmemCarveoutMaxShared);
        }
        *value = v;
        return s;
      },
      &l);
  *limit = static_cast<std::size_t>(l);
  return status;
}

template <class Config>
cudaError_t launch_shared(const float* in, std::int64_t rows, std::int64_t n, std::int64_t k, bool smallest,
                          float* values, std::int64_t* indices, cudaStream_t stream) {
  using Tr = CudaTraits<Config>;
  std::size_t limit = 0;
  const cudaError_t status = shared_limit<Config>(&limit);
  if (status != cudaSuccess) return status;
  const std::int64_t cap = shared_buffer_entries(Tr::kBits, n, k, limit);
  const std::size_t bytes = shared_fixed_bytes(Tr::kBits, k) + static_cast<std::size_t>(cap) * 8;
  shared_kernel<Config><<<static_cast<unsigned>(rows), Config::THREADS, bytes, stream>>>(
      in, n, static_cast<int>(k), smallest, cap, values, indices);
  return cudaGetLastError();
}

}  // namespace kiln::topk
