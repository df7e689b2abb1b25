// out = a*x + y, computed PASSES times over the same data: the variants' speeds differ by known
// factors (1, 3, 9, 27), so the winner and the order of the runners-up are the same on any machine
// and in any run. KIND == "wrong" leaves the last element unwritten: a correctness failure.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/workload.hpp"

namespace passes {

template <class Config>
void saxpy_passes(float a, const float* x, const float* y, float* out, std::int64_t n) {
  const std::int64_t end = Config::KIND == "wrong" ? n - 1 : n;
  for (int pass = 0; pass < Config::PASSES; ++pass) {
    for (std::int64_t i = 0; i < end; ++i) out[i] = a * x[i] + y[i];
    // Keeps the compiler from merging the passes into one.
    asm volatile("" : : "r"(out) : "memory");
  }
}

class Workload final : public kiln::Workload {
 public:
  Workload(const kiln::Problem& p, std::uint64_t seed) : n_(p.i("n")), x_(n_), y_(n_), out_(n_) {
    kiln::Rng rng(seed);
    for (auto& v : x_) v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : y_) v = rng.uniform(-1.0f, 1.0f);
    a_ = rng.uniform(0.5f, 2.0f);
  }

  template <class Config>
  void run() {
    saxpy_passes<Config>(a_, x_.data(), y_.data(), out_.data(), n_);
  }

  void poison() override {
    for (auto& v : out_) v = kiln::float_of_bits(kiln::poison::f32);
  }

  std::vector<kiln::CheckResult> check() override {
    kiln::Comparison c("out", "fp32");
    for (std::int64_t i = 0; i < n_; ++i) c.f32(out_[i], static_cast<double>(a_) * x_[i] + y_[i]);
    return {c.result()};
  }

  std::size_t footprint_bytes() const override { return 3 * sizeof(float) * static_cast<std::size_t>(n_); }

 private:
  std::int64_t n_;
  float a_ = 1.0f;
  std::vector<float> x_, y_, out_;
};

}  // namespace passes
