// out = a*x + y on the GPU (fp32), with planted faults that only a GPU has, to show that each one
// costs only its own variant and is recorded with the right kind: a write far outside any
// allocation and a trap (the device reports an error: runtime), an endless loop on the device
// (timeout), a launch the runtime refuses (runtime), more static shared memory than any GPU has
// (ptxas fails: compile), a wrong answer, a NaN and an output left unwritten (correctness), and a
// write one element past the output with every value right, which only compute-sanitizer's
// memcheck sees (sanitizer).
// The FAULT == none variants are correct.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"

namespace faulty {

template <class Config>
__global__ void saxpy_kernel(float a, const float* x, const float* y, float* out, std::int64_t n,
                             std::int64_t wild_offset, const volatile int* spin) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if constexpr (Config::FAULT == "illegal_address") {
    // The offset is a kernel argument, so the compiler cannot see the write is out of bounds.
    if (i == 0) out[wild_offset] = a;
  }
  if constexpr (Config::FAULT == "trap") {
    if (i == 0) __trap();
  }
  if constexpr (Config::FAULT == "hang") {
    // A flag in device memory that nothing clears. (A volatile local would not do: nvcc keeps it
    // in a register, the loop is dropped, and the variant passes.)
    while (*spin != 0) {
    }
  }
  const std::int64_t end = Config::FAULT == "unwritten" ? n - 1 : n;
  float v = i < end ? a * x[i] + y[i] : 0.0f;
  if constexpr (Config::FAULT == "ptxas") {
    // 256 KiB of static shared memory: more than any GPU gives a block (227 KiB on Hopper), so
    // ptxas rejects the kernel whatever the architecture.
    __shared__ float staged[64 * 1024];
    staged[threadIdx.x] = v;
    __syncthreads();
    v = staged[threadIdx.x];
  }
  if constexpr (Config::FAULT == "wrong") {
    if (i == n / 2) v += 1.0f;
  }
  if constexpr (Config::FAULT == "nan") {
    if (i == 0) v = __int_as_float(0x7FC00000);
  }
  if (i < end) out[i] = v;
  if constexpr (Config::FAULT == "overrun") {
    // One element past the output, which is allocated exactly n floats; the problems' n are not
    // multiples of 128, so the stray write lands in the allocation's padding and no value is
    // disturbed: only memcheck can tell.
    if (i == n - 1) out[n] = v;
  }
}

class SaxpyCudaWorkload final : public kiln::Workload {
 public:
  SaxpyCudaWorkload(const kiln::Problem& p, std::uint64_t seed)
      : n_(p.i("n")), x_host_(static_cast<std::size_t>(n_)), y_host_(static_cast<std::size_t>(n_)),
        out_(static_cast<std::size_t>(n_)) {
    kiln::Rng rng(seed);
    for (auto& v : x_host_) v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : y_host_) v = rng.uniform(-1.0f, 1.0f);
    a_ = rng.uniform(0.5f, 2.0f);
    x_ = kiln::cuda::DeviceBuffer<float>(x_host_);
    y_ = kiln::cuda::DeviceBuffer<float>(y_host_);
    spin_ = kiln::cuda::DeviceBuffer<int>(std::vector<int>{1});
  }

  template <class Config>
  void run(cudaStream_t stream) {
    // launch_config: 2048 threads a block, twice what any CUDA device accepts; the launch fails.
    constexpr int threads = Config::FAULT == "launch_config" ? 2048 : Config::THREADS;
    const auto blocks = static_cast<unsigned>((n_ + threads - 1) / threads);
    // 2^40 elements (4 TiB) past the output: no allocation reaches that far.
    constexpr std::int64_t wild_offset = std::int64_t{1} << 40;
    saxpy_kernel<Config><<<blocks, threads, 0, stream>>>(a_, x_.get(), y_.get(), out_.get(), n_, wild_offset,
                                                        spin_.get());
    KILN_CUDA_CHECK(cudaGetLastError());
  }

  void poison() override {
    kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(out_.get()), n_, kiln::poison::f32);
  }

  std::vector<kiln::CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> out = out_.download();
    kiln::Comparison c("out", "fp32");
    for (std::size_t i = 0; i < out.size(); ++i) {
      c.f32(out[i], static_cast<double>(a_) * x_host_[i] + y_host_[i]);
    }
    return {c.result()};
  }

  std::size_t footprint_bytes() const override { return 3 * sizeof(float) * static_cast<std::size_t>(n_); }

 private:
  std::int64_t n_;
  float a_ = 1.0f;
  std::vector<float> x_host_, y_host_;
  kiln::cuda::DeviceBuffer<float> x_, y_, out_;
  kiln::cuda::DeviceBuffer<int> spin_;  // holds 1: what the hang variant waits on
};

}  // namespace faulty
