// The kernel template and its Kiln workload: each row scaled by its own factor.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/workload.hpp"

namespace user {

template <class Config>
void scale_rows_kernel(const float* in, const float* scale, float* out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r0 = 0; r0 < rows; r0 += Config::ROWS) {
    std::int64_t r1 = r0 + Config::ROWS < rows ? r0 + Config::ROWS : rows;
    for (std::int64_t r = r0; r < r1; ++r) {
      const float s = scale[r];
      std::int64_t c = 0;
      for (; c + Config::UNROLL <= cols; c += Config::UNROLL) {
        for (int u = 0; u < Config::UNROLL; ++u) out[r * cols + c + u] = in[r * cols + c + u] * s;
      }
      for (; c < cols; ++c) out[r * cols + c] = in[r * cols + c] * s;
    }
  }
}

class ScaleRowsWorkload final : public kiln::Workload {
 public:
  ScaleRowsWorkload(const kiln::Problem& p, std::uint64_t seed)
      : rows_(p.i("rows")), cols_(p.i("cols")), in_(rows_ * cols_), scale_(rows_), out_(rows_ * cols_) {
    kiln::Rng rng(seed);
    for (auto& v : in_) v = rng.uniform(-4.0f, 4.0f);
    for (auto& v : scale_) v = rng.uniform(0.25f, 2.0f);
  }
  template <class Config>
  void run() {
    scale_rows_kernel<Config>(in_.data(), scale_.data(), out_.data(), rows_, cols_);
  }
  void poison() override {
    for (auto& v : out_) v = kiln::float_of_bits(kiln::poison::f32);
  }
  std::vector<kiln::CheckResult> check() override {
    kiln::Comparison c("out", "fp32");
    for (std::int64_t r = 0; r < rows_; ++r) {
      for (std::int64_t k = 0; k < cols_; ++k) {
        c.f32(out_[r * cols_ + k], static_cast<double>(in_[r * cols_ + k]) * scale_[r]);
      }
    }
    return {c.result()};
  }
  std::size_t footprint_bytes() const override { return sizeof(float) * (2 * in_.size() + scale_.size()); }

 private:
  std::int64_t rows_, cols_;
  std::vector<float> in_, scale_, out_;
};

}  // namespace user
