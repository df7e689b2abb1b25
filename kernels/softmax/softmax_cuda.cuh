// The CUDA softmax workload: the harness include of softmax_cuda.space.json.
// Inputs are generated on the device by a counter-based hash of (seed, element), so that a 256 MB
// input takes milliseconds; check() examines every output element for poison and non-finite values
// on the device and downloads only the rows it compares with the fp64 reference (input and output).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kiln/counter_random.hpp"
#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"
#include "softmax_check.hpp"
#include "softmax_cuda_kernels.cuh"

namespace kiln::softmax {

namespace cuda_fill {

// Logits: a per-row offset plus a per-element spread (the distribution of softmax_check.hpp).
template <class T>
__global__ void logits_kernel(T* x, std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  const std::int64_t count = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / cols;
    const float offset = kRowOffsetLo + (kRowOffsetHi - kRowOffsetLo) * ::kiln::random::uniform(seed, 1, static_cast<std::uint64_t>(r));
    const float v = offset + kLogitLo + (kLogitHi - kLogitLo) * ::kiln::random::uniform(seed, 2, static_cast<std::uint64_t>(i));
    if constexpr (std::is_same_v<T, float>) {
      x[i] = v;
    } else {
      x[i] = __float2bfloat16_rn(v);
    }
  }
}

}  // namespace cuda_fill

class CudaWorkload final : public Workload {
 public:
  CudaWorkload(const Problem& problem, std::uint64_t seed)
      : shape_(shape_of(problem)),
        seed_(seed),
        count_(shape_.rows * shape_.cols),
        bytes_(static_cast<std::size_t>(count_) * (shape_.bf16 ? 2 : 4)),
        in_(bytes_ / 4 + 1),
        out_(bytes_ / 4 + 1) {
    // Buffers are allocated as 32-bit words (cudaMalloc aligns them to 256 bytes) and viewed as
    // fp32 or bf16 elements.
    if (shape_.bf16) {
      cuda_fill::logits_kernel<<<::kiln::cuda::grid_for(count_), 256>>>(in_bf16(), shape_.rows, shape_.cols, seed_);
    } else {
      cuda_fill::logits_kernel<<<::kiln::cuda::grid_for(count_), 256>>>(in_f32(), shape_.rows, shape_.cols, seed_);
    }
    KILN_CUDA_CHECK(cudaGetLastError());
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
  }

  template <class Config>
  void run(cudaStream_t stream) {
    if (shape_.bf16) {
      KILN_CUDA_CHECK(launch<Config>(in_bf16(), out_bf16(), shape_.rows, shape_.cols, stream));
    } else {
      KILN_CUDA_CHECK(launch<Config>(in_f32(), out_f32(), shape_.rows, shape_.cols, stream));
    }
  }

  void poison() override {
    if (shape_.bf16) {
      ::kiln::cuda::fill(reinterpret_cast<std::uint16_t*>(out_.get()), count_, poison::bf16);
    } else {
      ::kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(out_.get()), count_, poison::f32);
    }
  }


  std::vector<CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    // Every output element examined for being written and finite on the device; only the
    // compared rows (all of a small problem, 64 of a large one) cross to the host.
    if (shape_.bf16) return {compare<std::uint16_t>(cuda::examine_bf16(out_.get(), count_))};
    return {compare<float>(cuda::examine_f32(out_.get(), count_))};
  }

  std::size_t footprint_bytes() const override { return 2 * bytes_; }

  // The device output (fp32 or bf16 elements), for tests that tamper with a result.
  void* output_device() const { return out_.get(); }
  bool is_bf16() const { return shape_.bf16; }

 private:
  float* in_f32() const { return in_.get(); }
  float* out_f32() const { return out_.get(); }
  __nv_bfloat16* in_bf16() const { return reinterpret_cast<__nv_bfloat16*>(in_.get()); }
  __nv_bfloat16* out_bf16() const { return reinterpret_cast<__nv_bfloat16*>(out_.get()); }

  // The compared rows against the fp64 reference (Elem: float, or std::uint16_t holding bf16).
  template <class Elem>
  CheckResult compare(const Examined& examined) const {
    const std::vector<std::int64_t> compared = rows_to_compare(shape_, seed_);
    const std::vector<Elem> in = download_rows<Elem>(in_.get(), compared);
    const std::vector<Elem> out = download_rows<Elem>(out_.get(), compared);
    return compare_sampled_rows(in.data(), out.data(), shape_, compared, examined);
  }

  // The rows `picked` (sorted) of a device matrix, one after another: one copy when they are all
  // of its rows, otherwise one a row.
  template <class Elem>
  std::vector<Elem> download_rows(const void* base, const std::vector<std::int64_t>& picked) const {
    const auto cols = static_cast<std::size_t>(shape_.cols);
    std::vector<Elem> host(picked.size() * cols);
    const auto* rows = static_cast<const Elem*>(base);
    if (static_cast<std::int64_t>(picked.size()) == shape_.rows) {
      KILN_CUDA_CHECK(cudaMemcpy(host.data(), rows, host.size() * sizeof(Elem), cudaMemcpyDeviceToHost));
      return host;
    }
    for (std::size_t k = 0; k < picked.size(); ++k) {
      KILN_CUDA_CHECK(cudaMemcpy(host.data() + k * cols, rows + static_cast<std::size_t>(picked[k]) * cols,
                                 cols * sizeof(Elem), cudaMemcpyDeviceToHost));
    }
    return host;
  }

  Shape shape_;
  std::uint64_t seed_;
  std::int64_t count_;
  std::size_t bytes_;
  cuda::DeviceBuffer<float> in_;
  cuda::DeviceBuffer<float> out_;
};

}  // namespace kiln::softmax
