// The sum of squares of a vector, with LANES independent partial sums, UNROLL elements per lane
// per step, the vector walked in BLOCK-sized pieces, the whole PASSES times (a known factor of
// extra work): 1000 variants that differ in speed and all give the same answer within rounding.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/workload.hpp"

namespace large {

template <class Config>
double sum_squares(const float* x, std::int64_t n) {
  constexpr int kStep = Config::LANES * Config::UNROLL;
  double total = 0;
  for (int pass = 0; pass < Config::PASSES; ++pass) {
    double partial[Config::LANES] = {};
    for (std::int64_t start = 0; start < n; start += Config::BLOCK) {
      const std::int64_t end = start + Config::BLOCK < n ? start + Config::BLOCK : n;
      std::int64_t i = start;
      for (; i + kStep <= end; i += kStep) {
        for (int l = 0; l < Config::LANES; ++l) {
          for (int u = 0; u < Config::UNROLL; ++u) {
            const double v = x[i + l * Config::UNROLL + u];
            partial[l] += v * v;
          }
        }
      }
      for (; i < end; ++i) partial[0] += static_cast<double>(x[i]) * x[i];
    }
    double sum = 0;
    for (double p : partial) sum += p;
    total = sum;  // every pass computes the same sum
    asm volatile("" : : "r"(partial) : "memory");
  }
  return total;
}

class Workload final : public kiln::Workload {
 public:
  Workload(const kiln::Problem& p, std::uint64_t seed) : x_(static_cast<std::size_t>(p.i("n"))) {
    kiln::Rng rng(seed);
    for (auto& v : x_) v = rng.uniform(-1.0f, 1.0f);
  }

  template <class Config>
  void run() {
    out_ = static_cast<float>(sum_squares<Config>(x_.data(), static_cast<std::int64_t>(x_.size())));
  }

  void poison() override { out_ = kiln::float_of_bits(kiln::poison::f32); }

  std::vector<kiln::CheckResult> check() override {
    double expected = 0;
    for (float v : x_) expected += static_cast<double>(v) * v;
    kiln::Comparison c("sum", "fp32");
    c.f32(out_, expected);
    return {c.result()};
  }

  std::size_t footprint_bytes() const override { return sizeof(float) * x_.size(); }

 private:
  std::vector<float> x_;
  float out_ = 0;
};

}  // namespace large
