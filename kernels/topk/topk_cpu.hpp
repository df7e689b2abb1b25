// The CPU top-k workload: the harness include of topk_cpu.space.json.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/workload.hpp"
#include "topk_check.hpp"
#include "topk_cpu_kernels.hpp"

namespace kiln::topk {

class CpuWorkload final : public Workload {
 public:
  CpuWorkload(const Problem& problem, std::uint64_t seed)
      : shape_(shape_of(problem)),
        seed_(seed),
        in_(static_cast<std::size_t>(shape_.rows * shape_.n)),
        values_(static_cast<std::size_t>(shape_.rows * shape_.k)),
        indices_(values_.size()) {
    for (std::int64_t r = 0; r < shape_.rows; ++r)
      for (std::int64_t c = 0; c < shape_.n; ++c) in_[r * shape_.n + c] = input_value(seed, r, c, shape_.n, shape_.special);
  }

  template <class Config>
  void run() {
    topk_rows<Config>(in_.data(), shape_.rows, shape_.n, shape_.k, shape_.smallest, values_.data(), indices_.data());
  }

  void poison() override {
    std::fill(values_.begin(), values_.end(), float_of_bits(poison::f32));
    std::fill(indices_.begin(), indices_.end(), kPoisonIndex);
  }

  std::vector<CheckResult> check() override {
    return {check_rows(values_.data(), indices_.data(), shape_, rows_to_compare(shape_, seed_), seed_,
                       [&](std::int64_t r) { return in_.data() + r * shape_.n; })};
  }

  std::unique_ptr<Workload> copy() const override { return std::make_unique<CpuWorkload>(*this); }

  std::size_t footprint_bytes() const override {
    return in_.size() * sizeof(float) + values_.size() * sizeof(float) + indices_.size() * sizeof(std::int64_t);
  }

  // The input and outputs, for tests that build special rows or tamper with a result.
  std::vector<float>& input() { return in_; }
  std::vector<float>& values() { return values_; }
  std::vector<std::int64_t>& indices() { return indices_; }

 private:
  Shape shape_;
  std::uint64_t seed_;
  std::vector<float> in_;
  std::vector<float> values_;
  std::vector<std::int64_t> indices_;
};

}  // namespace kiln::topk
