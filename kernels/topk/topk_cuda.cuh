// The CUDA top-k workload: the harness include of topk_cuda.space.json.
// Inputs are generated on the device by the formula of topk_check.hpp (the CPU workload's too);
// check() downloads every output entry and, one at a time, only the input rows it compares with the
// reference (none when the reference store holds the entries of an earlier passing output).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"
#include "topk_check.hpp"
#include "topk_cuda_launch.cuh"

namespace kiln::topk {

namespace cuda_fill {

// A template, like every kernel in these headers, so that several translation units of one
// program may include the header.
template <class T>
__global__ void input_kernel(T* x, std::int64_t rows, std::int64_t n, std::uint64_t seed, bool special) {
  const std::int64_t count = rows * n;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    x[i] = input_value(seed, i / n, i % n, n, special);
  }
}

}  // namespace cuda_fill

class CudaWorkload final : public Workload {
 public:
  CudaWorkload(const Problem& problem, std::uint64_t seed)
      : shape_(shape_of(problem)),
        seed_(seed),
        in_(static_cast<std::size_t>(shape_.rows * shape_.n)),
        values_(static_cast<std::size_t>(shape_.rows * shape_.k)),
        indices_(static_cast<std::size_t>(shape_.rows * shape_.k)),
        // Sized for the largest workspace any variant takes, so that no run allocates.
        workspace_(max_workspace_bytes(shape_.rows, shape_.n, shape_.k) / sizeof(std::uint64_t)) {
    if (shape_.k > kMaxList) throw Error("topk: the CUDA kernels take k up to 2048");
    cuda_fill::input_kernel<<<::kiln::cuda::grid_for(shape_.rows * shape_.n), 256>>>(in_.get(), shape_.rows, shape_.n,
                                                                                    seed_, shape_.special);
    KILN_CUDA_CHECK(cudaGetLastError());
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
  }

  template <class Config>
  void run(cudaStream_t stream) {
    KILN_CUDA_CHECK(launch<Config>(in_.get(), shape_.rows, shape_.n, shape_.k, shape_.smallest, values_.get(),
                                   indices_.get(), workspace_.get(), stream));
  }

  void poison() override {
    ::kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(values_.get()), shape_.rows * shape_.k, poison::f32);
    ::kiln::cuda::fill(reinterpret_cast<std::uint64_t*>(indices_.get()), shape_.rows * shape_.k,
                       static_cast<std::uint64_t>(kPoisonIndex));
  }

  std::vector<CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> values = values_.download();
    const std::vector<std::int64_t> indices = indices_.download();
    // An input row is downloaded only when it is read (rows in increasing order, one at a time):
    // an output the reference store vouches for reads none.
    std::vector<float> row;
    return {check_rows(values.data(), indices.data(), shape_, rows_to_compare(shape_, seed_), seed_, [&](std::int64_t r) {
      row.resize(static_cast<std::size_t>(shape_.n));
      KILN_CUDA_CHECK(cudaMemcpy(row.data(), in_.get() + r * shape_.n, static_cast<std::size_t>(shape_.n) * sizeof(float),
                                 cudaMemcpyDeviceToHost));
      return row.data();
    })};
  }

  std::size_t footprint_bytes() const override {
    return in_.bytes() + values_.bytes() + indices_.bytes() + workspace_.bytes();
  }

  // The device outputs, for tests that tamper with a result.
  float* values_device() const { return values_.get(); }
  std::int64_t* indices_device() const { return indices_.get(); }

 private:
  Shape shape_;
  std::uint64_t seed_;
  cuda::DeviceBuffer<float> in_;
  cuda::DeviceBuffer<float> values_;
  cuda::DeviceBuffer<std::int64_t> indices_;
  cuda::DeviceBuffer<std::uint64_t> workspace_;
};

}  // namespace kiln::topk
