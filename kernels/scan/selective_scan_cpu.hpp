// The CPU selective-scan workload: the harness include of selective_scan_cpu.space.json.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/workload.hpp"
#include "selective_scan_check.hpp"
#include "selective_scan_cpu_kernels.hpp"

namespace kiln::scan {

class CpuWorkload final : public Workload {
 public:
  CpuWorkload(const Problem& problem, std::uint64_t seed) : CpuWorkload(shape_of(problem), seed, Options{}) {}

  CpuWorkload(const Shape& shape, std::uint64_t seed, const Options& options)
      : shape_(shape), options_(options), seed_(seed) {
    const Shape& s = shape_;
    auto fill = [&](std::vector<float>& v, Tensor t, std::int64_t count) {
      v.resize(static_cast<std::size_t>(count));
      for (std::int64_t i = 0; i < count; ++i) v[i] = input_value(seed_, t, i, s, options_);
    };
    fill(A_, Tensor::A, s.channels * s.state);
    if (options_.D) fill(D_, Tensor::D, s.channels);
    if (options_.delta_bias) fill(bias_, Tensor::delta_bias, s.channels);
    if (options_.final_state) final_state_.resize(static_cast<std::size_t>(s.rows() * s.state));
    switch (s.dtype) {
      case ScanDType::fp32: make_io(f32_, fill); break;
      case ScanDType::bf16: make_io(bf16_, fill); break;
      case ScanDType::fp16: make_io(f16_, fill); break;
    }
  }

  template <class Config>
  void run() {
    switch (shape_.dtype) {
      case ScanDType::fp32: selective_scan<Config>(args(f32_)); break;
      case ScanDType::bf16: selective_scan<Config>(args(bf16_)); break;
      case ScanDType::fp16: selective_scan<Config>(args(f16_)); break;
    }
  }

  void poison() override {
    std::fill(f32_.y.begin(), f32_.y.end(), float_of_bits(poison::f32));
    std::fill(bf16_.y.begin(), bf16_.y.end(), Bf16{poison::bf16});
    std::fill(f16_.y.begin(), f16_.y.end(), F16{poison::f16});
    std::fill(final_state_.begin(), final_state_.end(), float_of_bits(poison::f32));
  }

  std::vector<CheckResult> check() override {
    const float* h = final_state_.data();
    switch (shape_.dtype) {
      case ScanDType::bf16: return compare(shape_, options_, seed_, [&](std::int64_t i) { return bf16_.y[i].bits; }, h);
      case ScanDType::fp16: return compare(shape_, options_, seed_, [&](std::int64_t i) { return f16_.y[i].bits; }, h);
      case ScanDType::fp32: break;
    }
    return compare(shape_, options_, seed_, [&](std::int64_t i) { return f32_.y[i]; }, h);
  }

  std::unique_ptr<Workload> copy() const override { return std::make_unique<CpuWorkload>(*this); }

  std::size_t footprint_bytes() const override {
    const std::size_t io = shape_.dtype == ScanDType::fp32 ? 4 : 2;
    const std::size_t elements = static_cast<std::size_t>((shape_.elements() * (options_.z ? 4 : 3)) + 2 * shape_.bc_elements());
    return elements * io + (A_.size() + D_.size() + bias_.size() + final_state_.size()) * sizeof(float);
  }

  // The outputs, for tests that tamper with a result to exercise check(): y of the problem's dtype
  // (the others are empty) and the final state.
  std::vector<float>& output_y_f32() { return f32_.y; }
  std::vector<Bf16>& output_y_bf16() { return bf16_.y; }
  std::vector<F16>& output_y_f16() { return f16_.y; }
  std::vector<float>& output_final_state() { return final_state_; }

 private:
  template <class T>
  struct Io {
    std::vector<T> u, delta, z, B, C, y;
  };

  template <class T, class Fill>
  void make_io(Io<T>& io, Fill&& fill) {
    std::vector<float> v;
    auto make = [&](std::vector<T>& out, Tensor t, std::int64_t count) {
      fill(v, t, count);
      out.resize(v.size());
      std::transform(v.begin(), v.end(), out.begin(), [](float x) { return cpu_detail::from_float<T>(x); });
    };
    make(io.u, Tensor::u, shape_.elements());
    make(io.delta, Tensor::delta, shape_.elements());
    if (options_.z) make(io.z, Tensor::z, shape_.elements());
    make(io.B, Tensor::B, shape_.bc_elements());
    make(io.C, Tensor::C, shape_.bc_elements());
    io.y.resize(static_cast<std::size_t>(shape_.elements()));
  }

  template <class T>
  ScanArgs<T> args(Io<T>& io) {
    ScanArgs<T> a;
    a.u = io.u.data();
    a.delta = io.delta.data();
    a.A = A_.data();
    a.B = io.B.data();
    a.C = io.C.data();
    a.D = options_.D ? D_.data() : nullptr;
    a.z = options_.z ? io.z.data() : nullptr;
    a.delta_bias = options_.delta_bias ? bias_.data() : nullptr;
    a.y = io.y.data();
    a.final_state = options_.final_state ? final_state_.data() : nullptr;
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
  std::vector<float> A_, D_, bias_, final_state_;
  Io<float> f32_;
  Io<Bf16> bf16_;
  Io<F16> f16_;
};

}  // namespace kiln::scan
