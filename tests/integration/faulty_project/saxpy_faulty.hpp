// out = a*x + y, a CPU kernel with planted faults, to show that each one costs only its own variant and is
// recorded with the right kind: a segfault (crash), an endless loop (timeout), a wrong answer
// and a NaN (correctness), an output left unwritten (correctness), an exception (runtime) and a
// source that does not compile (compile). The FAULT == none variants are correct.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/workload.hpp"

namespace faulty {

template <class Config>
void saxpy(float a, const float* x, const float* y, float* out, std::int64_t n) {
  static_assert(Config::UNROLL >= 1, "UNROLL must be positive");
  if constexpr (Config::FAULT == "compile") {
    static_assert(Config::UNROLL == 0, "planted compile error");
  }
  if constexpr (Config::FAULT == "crash") {
    volatile float* null = nullptr;
    null[n] = a;  // planted segfault
  }
  if constexpr (Config::FAULT == "hang") {
    volatile bool forever = true;
    while (forever) {
    }
  }
  if constexpr (Config::FAULT == "throw") throw kiln::RuntimeError("planted device error");
  std::int64_t end = Config::FAULT == "unwritten" ? n - 1 : n;
  std::int64_t i = 0;
  for (; i + Config::UNROLL <= end; i += Config::UNROLL) {
    for (int u = 0; u < Config::UNROLL; ++u) out[i + u] = a * x[i + u] + y[i + u];
  }
  for (; i < end; ++i) out[i] = a * x[i] + y[i];
  if constexpr (Config::FAULT == "wrong") out[n / 2] += 1.0f;
  if constexpr (Config::FAULT == "nan") out[0] = 0.0f / 0.0f;
}

class SaxpyWorkload final : public kiln::Workload {
 public:
  SaxpyWorkload(const kiln::Problem& p, std::uint64_t seed) : n_(p.i("n")), x_(n_), y_(n_), out_(n_) {
    kiln::Rng rng(seed);
    for (auto& v : x_) v = rng.uniform(-1.0f, 1.0f);
    for (auto& v : y_) v = rng.uniform(-1.0f, 1.0f);
    a_ = rng.uniform(0.5f, 2.0f);
  }

  template <class Config>
  void run() {
    saxpy<Config>(a_, x_.data(), y_.data(), out_.data(), n_);
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

}  // namespace faulty
