// The CUDA selective-scan workload: the harness include of selective_scan_cuda.space.json.
// The input rows (u, delta, z, B, C: hundreds of MB at Mamba's sizes) are drawn on the device by the
// counter-based hash of selective_scan_check.hpp, the per-channel A, D and delta_bias on the host;
// check() downloads the outputs and regenerates the compared rows' inputs on the host for the fp64
// reference. Drawing the rows on the host took 0.8 s at 5120 x 8192 bf16 alone, paid by every
// variant's process.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"
#include "selective_scan_check.hpp"
#include "selective_scan_cuda_kernels.cuh"

namespace kiln::scan {

class CudaWorkload final : public Workload {
 public:
  CudaWorkload(const Problem& problem, std::uint64_t seed) : CudaWorkload(shape_of(problem), seed, Options{}) {}

  CudaWorkload(const Shape& shape, std::uint64_t seed, const Options& options)
      : shape_(shape),
        options_(options),
        seed_(seed),
        io_bytes_(shape.dtype == ScanDType::fp32 ? 4 : 2),
        u_(words(shape.elements())),
        delta_(words(shape.elements())),
        z_(words(options.z ? shape.elements() : 0)),
        B_(words(shape.bc_elements())),
        C_(words(shape.bc_elements())),
        y_(words(shape.elements())),
        A_(static_cast<std::size_t>(shape.channels * shape.state)),
        D_(static_cast<std::size_t>(options.D ? shape.channels : 1)),
        bias_(static_cast<std::size_t>(options.delta_bias ? shape.channels : 1)),
        final_state_(static_cast<std::size_t>(options.final_state ? shape.rows() * shape.state : 1)) {
    draw(u_.get(), Tensor::u, shape_.elements());
    draw(delta_.get(), Tensor::delta, shape_.elements());
    if (options_.z) draw(z_.get(), Tensor::z, shape_.elements());
    draw(B_.get(), Tensor::B, shape_.bc_elements());
    draw(C_.get(), Tensor::C, shape_.bc_elements());
    draw(A_.get(), Tensor::A, shape_.channels * shape_.state);
    if (options_.D) draw(D_.get(), Tensor::D, shape_.channels);
    if (options_.delta_bias) draw(bias_.get(), Tensor::delta_bias, shape_.channels);
  }

  template <class Config>
  void run(cudaStream_t stream) {
    switch (shape_.dtype) {
      case ScanDType::fp32: KILN_CUDA_CHECK(launch<Config>(args<float>(), stream)); break;
      case ScanDType::bf16: KILN_CUDA_CHECK(launch<Config>(args<__nv_bfloat16>(), stream)); break;
      case ScanDType::fp16: KILN_CUDA_CHECK(launch<Config>(args<__half>(), stream)); break;
    }
  }

  void poison() override {
    const std::int64_t n = shape_.elements();
    switch (shape_.dtype) {
      case ScanDType::fp32: ::kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(y_.get()), n, poison::f32); break;
      case ScanDType::bf16: ::kiln::cuda::fill(reinterpret_cast<std::uint16_t*>(y_.get()), n, poison::bf16); break;
      case ScanDType::fp16: ::kiln::cuda::fill(reinterpret_cast<std::uint16_t*>(y_.get()), n, poison::f16); break;
    }
    if (options_.final_state) {
      ::kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(final_state_.get()), shape_.rows() * shape_.state, poison::f32);
    }
  }

  std::vector<CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> h(options_.final_state ? static_cast<std::size_t>(shape_.rows() * shape_.state) : 0);
    if (!h.empty()) KILN_CUDA_CHECK(cudaMemcpy(h.data(), final_state_.get(), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const auto n = static_cast<std::size_t>(shape_.elements());
    if (shape_.dtype == ScanDType::fp32) {
      std::vector<float> y(n);
      KILN_CUDA_CHECK(cudaMemcpy(y.data(), y_.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
      return compare(shape_, options_, seed_, [&](std::int64_t i) { return y[i]; }, h.data());
    }
    std::vector<std::uint16_t> y(n);
    KILN_CUDA_CHECK(cudaMemcpy(y.data(), y_.get(), n * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
    return compare(shape_, options_, seed_, [&](std::int64_t i) { return y[i]; }, h.data());
  }

  std::size_t footprint_bytes() const override {
    const auto io = static_cast<std::size_t>(shape_.elements() * (options_.z ? 4 : 3) + 2 * shape_.bc_elements()) * io_bytes_;
    return io + (A_.size() + D_.size() + bias_.size() + final_state_.size()) * sizeof(float);
  }

  // The device input rows (u, delta, z, B, C as elements of the problem's dtype), for tests that
  // compare them with input_value().
  const void* input_row(Tensor t) const {
    switch (t) {
      case Tensor::u: return u_.get();
      case Tensor::delta: return delta_.get();
      case Tensor::z: return z_.get();
      case Tensor::B: return B_.get();
      case Tensor::C: return C_.get();
      default: throw Error("selective_scan: input_row of a tensor that is not an input row");
    }
  }

  // The device outputs, for tests that tamper with a result: y (elements of the problem's dtype)
  // and the final state.
  void* output_y() const { return y_.get(); }
  float* output_final_state() const { return final_state_.get(); }

 private:
  // Buffers are allocated as 32-bit words (cudaMalloc aligns them to 256 bytes) and viewed as
  // fp32, bf16 or fp16 elements.
  std::size_t words(std::int64_t elements) const {
    return static_cast<std::size_t>(elements) * io_bytes_ / 4 + 1;
  }

  // Draws `count` elements of tensor t: an input row tensor in the I/O dtype on the device, the
  // others in fp32 on the host, copied up.
  void draw(float* dst, Tensor t, std::int64_t count) {
    if (is_io(t)) {
      const IoRange range = io_range(t, options_);
      const auto stream = static_cast<std::uint64_t>(t);
      switch (shape_.dtype) {
        case ScanDType::fp32: ::kiln::cuda::fill_uniform(dst, count, range.lo, range.hi, seed_, stream); break;
        case ScanDType::bf16:
          ::kiln::cuda::fill_uniform(reinterpret_cast<__nv_bfloat16*>(dst), count, range.lo, range.hi, seed_, stream);
          break;
        case ScanDType::fp16:
          ::kiln::cuda::fill_uniform(reinterpret_cast<__half*>(dst), count, range.lo, range.hi, seed_, stream);
          break;
      }
      return;
    }
    std::vector<float> v(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) v[i] = input_value(seed_, t, i, shape_, options_);
    KILN_CUDA_CHECK(cudaMemcpy(dst, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  }

  template <class T>
  ScanArgs<T> args() const {
    ScanArgs<T> a;
    a.u = reinterpret_cast<const T*>(u_.get());
    a.delta = reinterpret_cast<const T*>(delta_.get());
    a.A = A_.get();
    a.B = reinterpret_cast<const T*>(B_.get());
    a.C = reinterpret_cast<const T*>(C_.get());
    a.D = options_.D ? D_.get() : nullptr;
    a.z = options_.z ? reinterpret_cast<const T*>(z_.get()) : nullptr;
    a.delta_bias = options_.delta_bias ? bias_.get() : nullptr;
    a.y = reinterpret_cast<T*>(y_.get());
    a.final_state = options_.final_state ? final_state_.get() : nullptr;
    a.batch = shape_.batch;
    a.channels = shape_.channels;
    a.length = shape_.length;
    a.state = shape_.state;
    a.groups = shape_.groups;
    a.softplus = options_.softplus;
    return a;
  }

  Shape shape_;
  Options options_;
  std::uint64_t seed_;
  std::size_t io_bytes_;
  cuda::DeviceBuffer<float> u_, delta_, z_, B_, C_, y_, A_, D_, bias_, final_state_;
};

}  // namespace kiln::scan
