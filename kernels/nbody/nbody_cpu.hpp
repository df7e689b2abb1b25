// The CPU N-body workload: the harness include of nbody_cpu.space.json.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/workload.hpp"
#include "nbody_check.hpp"
#include "nbody_cpu_kernels.hpp"

namespace kiln::nbody {

class CpuWorkload final : public Workload {
 public:
  CpuWorkload(const Problem& problem, std::uint64_t seed)
      : n_(bodies_of(problem)), seed_(seed), bodies_(static_cast<std::size_t>(4 * n_)), acc_(static_cast<std::size_t>(3 * n_)) {
    Rng rng(seed);
    for (std::int64_t i = 0; i < n_; ++i) {
      bodies_[4 * i] = rng.uniform(0.0f, 1.0f);
      bodies_[4 * i + 1] = rng.uniform(0.0f, 1.0f);
      bodies_[4 * i + 2] = rng.uniform(0.0f, 1.0f);
      bodies_[4 * i + 3] = rng.uniform(kMassLo, kMassHi);
    }
  }

  template <class Config>
  void run() {
    accelerations<Config>(bodies_.data(), acc_.data(), n_);
  }

  void poison() override { std::fill(acc_.begin(), acc_.end(), float_of_bits(poison::f32)); }

  std::vector<CheckResult> check() override {
    return {compare_bodies(acc_.data(), bodies_.data(), n_, bodies_to_compare(n_, seed_))};
  }

  std::unique_ptr<Workload> copy() const override { return std::make_unique<CpuWorkload>(*this); }

  std::size_t footprint_bytes() const override { return (bodies_.size() + acc_.size()) * sizeof(float); }

  // The output, for tests that tamper with a result to exercise check().
  std::vector<float>& output() { return acc_; }

 private:
  std::int64_t n_;
  std::uint64_t seed_;
  std::vector<float> bodies_;  // x, y, z, m per body
  std::vector<float> acc_;     // ax, ay, az per body
};

}  // namespace kiln::nbody
