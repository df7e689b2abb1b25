// CUDA helpers for workloads: checked calls that throw kiln::RuntimeError, owning device buffers,
// and poison fills. Include from .cu files only.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/counter_random.hpp"
#include "kiln/error.hpp"

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
