// The workload of the integration projects' CPU saxpy kernels (faulty, steady, shard): out = a*x + y
// over n floats, checked element by element against the fp64 reference. A project supplies only
// its kernel: Kernel::run<Config>(a, x, y, out, n).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/workload.hpp"

namespace kiln_test {

template <class Kernel>
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
    Kernel::template run<Config>(a_, x_.data(), y_.data(), out_.data(), n_);
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

  // The timing's input sets as copies: a project's workload making them cheap (40 sets of 48 MB
  // for n = 4194304 on a machine reporting a 480 MiB last-level cache), as a user's would.
  std::unique_ptr<kiln::Workload> copy() const override { return std::make_unique<SaxpyWorkload>(*this); }

 private:
  std::int64_t n_;
  float a_ = 1.0f;
  std::vector<float> x_, y_, out_;
};

}  // namespace kiln_test
