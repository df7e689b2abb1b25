// The kernel template of the family and its Kiln workload: y = Σ_k x^k / (k + 1) for k up to
// DEGREE (Horner), UNROLL elements at a time. One template serves every member; a member's space
// fixes DEGREE.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/workload.hpp"

namespace user {

template <int kDegree>
float poly_at(float x) {
  float y = 1.0f / (kDegree + 1);
  for (int k = kDegree - 1; k >= 0; --k) y = y * x + 1.0f / (k + 1);
  return y;
}

template <class Config>
void poly_kernel(const float* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + Config::UNROLL <= n; i += Config::UNROLL) {
    for (int u = 0; u < Config::UNROLL; ++u) y[i + u] = poly_at<Config::DEGREE>(x[i + u]);
  }
  for (; i < n; ++i) y[i] = poly_at<Config::DEGREE>(x[i]);
}

// The same polynomial in double, for the checks.
inline double poly_reference(int degree, double x) {
  double y = 1.0 / (degree + 1);
  for (int k = degree - 1; k >= 0; --k) y = y * x + 1.0 / (k + 1);
  return y;
}

class PolyWorkload final : public kiln::Workload {
 public:
  PolyWorkload(const kiln::Problem& p, std::uint64_t seed) : n_(p.i("n")), x_(n_), y_(n_) {
    kiln::Rng rng(seed);
    for (auto& v : x_) v = rng.uniform(-1.0f, 1.0f);
  }
  template <class Config>
  void run() {
    degree_ = Config::DEGREE;
    poly_kernel<Config>(x_.data(), y_.data(), n_);
  }
  void poison() override {
    for (auto& v : y_) v = kiln::float_of_bits(kiln::poison::f32);
  }
  std::vector<kiln::CheckResult> check() override {
    kiln::Comparison c("y", "fp32");
    for (std::int64_t i = 0; i < n_; ++i) c.f32(y_[i], poly_reference(degree_, x_[i]));
    return {c.result()};
  }
  std::size_t footprint_bytes() const override { return sizeof(float) * (x_.size() + y_.size()); }

 private:
  std::int64_t n_;
  std::vector<float> x_, y_;
  int degree_ = 0;
};

}  // namespace user
