// The CPU tree N-body workload: the harness include of the nbody_tree_cpu_* spaces (one per
// tolerance, the family nbody_tree_cpu).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kiln/workload.hpp"
#include "nbody_tree_check.hpp"
#include "nbody_tree_cpu_kernels.hpp"

namespace kiln::nbody {

class TreeCpuWorkload final : public Workload {
 public:
  TreeCpuWorkload(const Problem& problem, std::uint64_t seed)
      : n_(tree_bodies_of(problem)),
        seed_(seed),
        kind_(bodies_kind_of(problem)),
        bodies_(make_bodies(kind_, n_, seed)),
        acc_(static_cast<std::size_t>(3 * n_)) {
    tree_.reserve(n_);  // run() then allocates nothing
  }

  template <class Config>
  void run() {
    tree_accelerations<Config>(bodies_.data(), acc_.data(), n_, tree_);
  }

  void poison() override { std::fill(acc_.begin(), acc_.end(), float_of_bits(poison::f32)); }

  std::vector<CheckResult> check() override {
    return {compare_tree(acc_.data(), bodies_.data(), n_, bodies_to_compare(n_, seed_, kTreeSampleBodies),
                         tree_stored_key(kind_, n_, seed_))};
  }

  std::size_t footprint_bytes() const override { return (bodies_.size() + acc_.size()) * sizeof(float); }

  // For tests: the output, the bodies (to set their own), the tree and the walk's counts.
  std::vector<float>& output() { return acc_; }
  std::vector<float>& bodies() { return bodies_; }
  const CpuTree& tree() const { return tree_; }
  template <class Config>
  WalkCounts count() {
    return tree_interactions<Config>(bodies_.data(), acc_.data(), n_, tree_);
  }

 private:
  std::int64_t n_;
  std::uint64_t seed_;
  Bodies kind_;
  std::vector<float> bodies_;  // x, y, z, m per body
  std::vector<float> acc_;     // ax, ay, az per body
  CpuTree tree_;
};

}  // namespace kiln::nbody
