// CUDA helpers for workloads: checked calls that throw kiln::RuntimeError, owning device buffers,
// and poison fills. Include from .cu files only.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/check.hpp"
#include "kiln/counter_random.hpp"
#include "kiln/error.hpp"
#include "kiln/numeric.hpp"

namespace kiln::cuda {

inline void check(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess) {
    throw RuntimeError(std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ") from " +
                       what + " at " + file + ":" + std::to_string(line));
  }
}

#define KILN_CUDA_CHECK(expr) ::kiln::cuda::check((expr), #expr, __FILE__, __LINE__)

// A grid for one thread per element in steps of 256, capped where grid-stride loops take over.
inline unsigned grid_for(std::int64_t count) {
  const std::int64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

template <class Bits>
__global__ void fill_kernel(Bits* x, std::int64_t count, Bits pattern) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    x[i] = pattern;
  }
}

// Every one of `count` elements set to `pattern` (a poison value), on the device; synchronous.
template <class Bits>
void fill(Bits* x, std::int64_t count, Bits pattern) {
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  fill_kernel<<<grid_for(count), 256>>>(x, count, pattern);
  KILN_CUDA_CHECK(cudaGetLastError());
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class T>
__global__ void fill_uniform_kernel(T* x, std::int64_t count, float lo, float hi, std::uint64_t seed,
                                    std::uint64_t stream) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    x[i] = T(lo + (hi - lo) * ::kiln::random::uniform(seed, stream, static_cast<std::uint64_t>(i)));
  }
}

// Every one of `count` elements drawn from [lo, hi) by the counter-based hash of (seed, stream,
// index), on the device (T constructible from float: float, __nv_bfloat16, __half); synchronous.
// Inputs of any size take milliseconds, and the same seed gives the same inputs on every GPU.
template <class T>
void fill_uniform(T* x, std::int64_t count, float lo, float hi, std::uint64_t seed, std::uint64_t stream) {
  fill_uniform_kernel<<<grid_for(count), 256>>>(x, count, lo, hi, seed, stream);
  KILN_CUDA_CHECK(cudaGetLastError());
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
}

namespace examine_detail {

// Per thread, then per warp (shuffles), then one atomic per warp that found anything: counts of
// unwritten and non-finite elements and the first index of each.
template <class Bits>
__global__ void examine_kernel(const Bits* x, std::int64_t count, Bits poison, Bits exponent,
                               unsigned long long* found) {
  unsigned long long unwritten = 0, non_finite = 0;
  unsigned long long first_unwritten = ~0ull, first_non_finite = ~0ull;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const Bits b = x[i];
    const auto at = static_cast<unsigned long long>(i);
    if (b == poison) {
      ++unwritten;
      first_unwritten = first_unwritten < at ? first_unwritten : at;
    } else if ((b & exponent) == exponent) {  // all exponent bits set: infinity or NaN
      ++non_finite;
      first_non_finite = first_non_finite < at ? first_non_finite : at;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
    non_finite += __shfl_down_sync(0xffffffffu, non_finite, offset);
    const unsigned long long fu = __shfl_down_sync(0xffffffffu, first_unwritten, offset);
    const unsigned long long fn = __shfl_down_sync(0xffffffffu, first_non_finite, offset);
    first_unwritten = fu < first_unwritten ? fu : first_unwritten;
    first_non_finite = fn < first_non_finite ? fn : first_non_finite;
  }
  if (threadIdx.x % 32 == 0) {
    if (unwritten > 0) {
      atomicAdd(&found[0], unwritten);
      atomicMin(&found[2], first_unwritten);
    }
    if (non_finite > 0) {
      atomicAdd(&found[1], non_finite);
      atomicMin(&found[3], first_non_finite);
    }
  }
}

template <class Bits>
Examined examine(const Bits* x, std::int64_t count, Bits poison, Bits exponent) {
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long host[4] = {0, 0, ~0ull, ~0ull};
  unsigned long long* found = nullptr;
  KILN_CUDA_CHECK(cudaMalloc(&found, sizeof host));
  cudaError_t status = cudaMemcpy(found, host, sizeof host, cudaMemcpyHostToDevice);
  if (status == cudaSuccess && count > 0) {
    // A block's threads must be whole warps: the kernel reduces over full warps.
    examine_kernel<<<grid_for(count), 256>>>(x, count, poison, exponent, found);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess) status = cudaMemcpy(host, found, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(found);
  KILN_CUDA_CHECK(status);
  Examined e;
  e.elements = static_cast<std::uint64_t>(count);
  e.unwritten = host[0];
  e.non_finite = host[1];
  e.first_unwritten_at = host[0] > 0 ? static_cast<std::int64_t>(host[2]) : -1;
  e.first_non_finite_at = host[1] > 0 ? static_cast<std::int64_t>(host[3]) : -1;
  return e;
}

}  // namespace examine_detail

// Every element of a device output examined on the device for being written (not the poison
// pattern) and finite: what a host walk over a downloaded copy would find, without moving the
// output over PCIe at every check (gigabytes for the largest problems). Synchronous.
inline Examined examine_f32(const void* out, std::int64_t count) {
  return examine_detail::examine(static_cast<const std::uint32_t*>(out), count, poison::f32, std::uint32_t{0x7F800000u});
}
inline Examined examine_bf16(const void* out, std::int64_t count) {
  return examine_detail::examine(static_cast<const std::uint16_t*>(out), count, poison::bf16, std::uint16_t{0x7F80u});
}
inline Examined examine_f16(const void* out, std::int64_t count) {
  return examine_detail::examine(static_cast<const std::uint16_t*>(out), count, poison::f16, std::uint16_t{0x7C00u});
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) KILN_CUDA_CHECK(cudaMalloc(&ptr_, count_ * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw Error("DeviceBuffer::upload: size mismatch");
    if (count_ > 0) KILN_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) KILN_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // Every element set to `pattern` (a poison value); synchronous.
  void fill(T pattern) { ::kiln::cuda::fill(ptr_, static_cast<std::int64_t>(count_), pattern); }

 private:
  void release() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace kiln::cuda
