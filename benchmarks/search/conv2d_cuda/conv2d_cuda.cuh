// The 2D convolution workload: the harness include of conv2d_cuda.space.json. Inputs are generated
// on the device by a counter-based hash; the reference is computed on the device with fp64 sums
// (a host reference of a 4096² image with a 15×15 filter would take seconds), and every output
// element is compared with it on the host.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "conv2d_cuda_kernel.cuh"
#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"

namespace kiln::conv2d {

namespace device {

__global__ void reference(const float* in, const float* filter, float* out, int W, int H) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  const int in_w = W + kFilter - 1;
  double sum = 0;
  for (int i = 0; i < kFilter; ++i) {
    for (int j = 0; j < kFilter; ++j) {
      sum += static_cast<double>(in[static_cast<std::int64_t>(y + i) * in_w + x + j]) * filter[i * kFilter + j];
    }
  }
  out[static_cast<std::int64_t>(y) * W + x] = static_cast<float>(sum);
}

}  // namespace device

class Workload final : public ::kiln::Workload {
 public:
  Workload(const Problem& p, std::uint64_t seed)
      : w_(dim(p, "W")), h_(dim(p, "H")),
        in_(static_cast<std::size_t>((w_ + kFilter - 1) * (h_ + kFilter - 1))),
        filter_(kFilter * kFilter), out_(static_cast<std::size_t>(w_ * h_)) {
    const std::int64_t in_count = (w_ + kFilter - 1) * (h_ + kFilter - 1);
    ::kiln::cuda::fill_uniform(in_.get(), in_count, -1.0f, 1.0f, seed, 1);
    ::kiln::cuda::fill_uniform(filter_.get(), std::int64_t{kFilter * kFilter}, -1.0f, 1.0f, seed, 2);
    KILN_CUDA_CHECK(cudaMemcpyToSymbol(filter_constant, filter_.get(), sizeof(float) * kFilter * kFilter, 0,
                                       cudaMemcpyDeviceToDevice));
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
  }

  template <class Config>
  void run(cudaStream_t stream) {
    KILN_CUDA_CHECK(launch<Config>(out_.get(), in_.get(), filter_.get(), static_cast<int>(w_), static_cast<int>(h_), stream));
  }

  void poison() override { ::kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(out_.get()), w_ * h_, poison::f32); }

  std::vector<CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    const std::size_t count = static_cast<std::size_t>(w_ * h_);
    if (reference_.empty()) {
      ::kiln::cuda::DeviceBuffer<float> ref(count);
      const dim3 grid(static_cast<unsigned>((w_ + 15) / 16), static_cast<unsigned>((h_ + 15) / 16));
      device::reference<<<grid, dim3(16, 16)>>>(in_.get(), filter_.get(), ref.get(), static_cast<int>(w_),
                                                static_cast<int>(h_));
      KILN_CUDA_CHECK(cudaGetLastError());
      reference_.resize(count);
      KILN_CUDA_CHECK(cudaMemcpy(reference_.data(), ref.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
    }
    std::vector<float> out(count);
    KILN_CUDA_CHECK(cudaMemcpy(out.data(), out_.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
    Comparison c("out", "fp32");
    for (std::size_t i = 0; i < count; ++i) c.f32(out[i], reference_[i]);
    return {c.result()};
  }

  std::size_t footprint_bytes() const override {
    return 4 * static_cast<std::size_t>((w_ + kFilter - 1) * (h_ + kFilter - 1) + w_ * h_);
  }

 private:
  static std::int64_t dim(const Problem& p, const char* name) {
    const std::int64_t v = p.i(name);
    if (v <= 0 || v > (1 << 15)) throw Error(std::string("conv2d: ") + name + " out of range");
    return v;
  }

  std::int64_t w_, h_;
  ::kiln::cuda::DeviceBuffer<float> in_, filter_, out_;
  std::vector<float> reference_;  // computed once: the inputs never change
};

}  // namespace kiln::conv2d
