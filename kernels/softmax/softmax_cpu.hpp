// The CPU softmax workload: the harness include of softmax_cpu.space.json.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/workload.hpp"
#include "softmax_check.hpp"
#include "softmax_cpu_kernels.hpp"

namespace kiln::softmax {

class CpuWorkload final : public Workload {
 public:
  CpuWorkload(const Problem& problem, std::uint64_t seed) : shape_(shape_of(problem)), seed_(seed) {
    const auto count = static_cast<std::size_t>(shape_.rows * shape_.cols);
    Rng rng(seed);
    std::vector<float> values(count);
    for (std::int64_t r = 0; r < shape_.rows; ++r) {
      const float offset = rng.uniform(kRowOffsetLo, kRowOffsetHi);
      for (std::int64_t c = 0; c < shape_.cols; ++c) values[r * shape_.cols + c] = offset + rng.uniform(kLogitLo, kLogitHi);
    }
    if (shape_.bf16) {
      in_bf16_.resize(count);
      for (std::size_t k = 0; k < count; ++k) in_bf16_[k] = bf16_from_float(values[k]);
      out_bf16_.resize(count);
    } else {
      in_f32_ = std::move(values);
      out_f32_.resize(count);
    }
  }

  template <class Config>
  void run() {
    if (shape_.bf16) {
      softmax_rows<Config>(in_bf16_.data(), out_bf16_.data(), shape_.rows, shape_.cols);
    } else {
      softmax_rows<Config>(in_f32_.data(), out_f32_.data(), shape_.rows, shape_.cols);
    }
  }

  void poison() override {
    std::fill(out_f32_.begin(), out_f32_.end(), float_of_bits(poison::f32));
    std::fill(out_bf16_.begin(), out_bf16_.end(), poison::bf16);
  }

  std::vector<CheckResult> check() override {
    const std::vector<std::int64_t> compared = rows_to_compare(shape_, seed_);
    if (shape_.bf16) {
      return {compare_rows(out_bf16_.data(), shape_, compared, [&](std::int64_t r, float* x) {
        for (std::int64_t c = 0; c < shape_.cols; ++c) x[c] = float_from_bf16(in_bf16_[r * shape_.cols + c]);
      })};
    }
    return {compare_rows(out_f32_.data(), shape_, compared, [&](std::int64_t r, float* x) {
      std::copy_n(in_f32_.data() + r * shape_.cols, shape_.cols, x);
    })};
  }

  std::unique_ptr<Workload> copy() const override { return std::make_unique<CpuWorkload>(*this); }

  std::size_t footprint_bytes() const override {
    return (in_f32_.size() + out_f32_.size()) * sizeof(float) + (in_bf16_.size() + out_bf16_.size()) * sizeof(std::uint16_t);
  }

  // The output buffers, for tests that tamper with a result to exercise check().
  std::vector<float>& output_f32() { return out_f32_; }
  std::vector<std::uint16_t>& output_bf16() { return out_bf16_; }

 private:
  Shape shape_;
  std::uint64_t seed_;
  std::vector<float> in_f32_, out_f32_;
  std::vector<std::uint16_t> in_bf16_, out_bf16_;
};

}  // namespace kiln::softmax
