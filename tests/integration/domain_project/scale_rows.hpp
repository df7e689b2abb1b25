// out[r][c] = a * x[r][c] + s[r] over a rows x cols matrix, two ways: one thread (no start-up
// cost, slow on large matrices) or split over OpenMP threads (a start-up cost, faster on large
// ones). Which wins depends on the problem's size: a domain's dispatch has something to learn.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/workload.hpp"

namespace domain_test {

template <class Config>
void scale_rows(float a, const float* x, const float* s, float* out, std::int64_t rows, std::int64_t cols) {
  if constexpr (Config::ALGO == "parallel") {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; c += 1) out[r * cols + c] = a * x[r * cols + c] + s[r];
    }
  } else {
    for (std::int64_t r = 0; r < rows; ++r) {
      std::int64_t c = 0;
      for (; c + Config::UNROLL <= cols; c += Config::UNROLL) {
        for (int u = 0; u < Config::UNROLL; ++u) out[r * cols + c + u] = a * x[r * cols + c + u] + s[r];
      }
      for (; c < cols; ++c) out[r * cols + c] = a * x[r * cols + c] + s[r];
    }
  }
}

class Workload final : public kiln::Workload {
 public:
  Workload(const kiln::Problem& p, std::uint64_t seed)
      : rows_(p.i("rows")), cols_(p.i("cols")), x_(static_cast<std::size_t>(rows_ * cols_)), s_(rows_), out_(x_.size()) {
    kiln::Rng rng(seed);
    for (auto& v : x_) v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : s_) v = rng.uniform(-1.0f, 1.0f);
    a_ = rng.uniform(0.5f, 2.0f);
  }

  template <class Config>
  void run() {
    scale_rows<Config>(a_, x_.data(), s_.data(), out_.data(), rows_, cols_);
  }

  void poison() override {
    for (auto& v : out_) v = kiln::float_of_bits(kiln::poison::f32);
  }

  std::vector<kiln::CheckResult> check() override {
    kiln::Comparison c("out", "fp32");
    for (std::int64_t r = 0; r < rows_; ++r) {
      for (std::int64_t k = 0; k < cols_; ++k) {
        c.f32(out_[r * cols_ + k], static_cast<double>(a_) * x_[r * cols_ + k] + s_[r]);
      }
    }
    return {c.result()};
  }

  std::size_t footprint_bytes() const override { return sizeof(float) * (2 * x_.size() + s_.size()); }

 private:
  std::int64_t rows_, cols_;
  float a_ = 1.0f;
  std::vector<float> x_, s_, out_;
};

}  // namespace domain_test
