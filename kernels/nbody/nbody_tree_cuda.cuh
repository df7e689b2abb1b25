// The CUDA tree N-body workload: the harness include of the nbody_tree_cuda_* spaces (one per
// tolerance, the family nbody_tree_cuda). The bodies are made on the host by the same counters
// as the CPU workload's (nbody_tree_check.hpp) and uploaded once; the workspace is allocated once,
// so run() only enqueues kernels.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"
#include "nbody_tree_check.hpp"
#include "nbody_tree_cuda_kernels.cuh"
#include "nbody_tree_math.hpp"

namespace kiln::nbody {

// A built tree copied to the host, for the tests' invariant check (nbody_tree_invariants.hpp).
struct TreeDownload {
  std::vector<std::uint64_t> codes;
  std::vector<float> sorted;
  std::vector<tree::Links> links;
  std::vector<tree::Moments> moments;
};

class TreeCudaWorkload final : public Workload {
 public:
  TreeCudaWorkload(const Problem& problem, std::uint64_t seed)
      : n_(tree_bodies_of(problem)),
        seed_(seed),
        kind_(bodies_kind_of(problem)),
        bodies_(make_bodies(kind_, n_, seed)),
        acc_(static_cast<std::size_t>(3 * n_)) {
    KILN_CUDA_CHECK(tree_workspace_bytes(n_, workspace_bytes_));
    workspace_ = cuda::DeviceBuffer<unsigned char>(workspace_bytes_);
  }

  template <class Config>
  void run(cudaStream_t stream) {
    KILN_CUDA_CHECK(tree_launch<Config>(bodies4(), acc_.get(), n_, workspace_.get(), workspace_bytes_, stream));
  }

  void poison() override { ::kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(acc_.get()), 3 * n_, poison::f32); }

  std::vector<CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> bodies = bodies_.download();
    const std::vector<float> acc = acc_.download();
    return {compare_tree(acc.data(), bodies.data(), n_, bodies_to_compare(n_, seed_, kTreeSampleBodies),
                         tree_stored_key(kind_, n_, seed_))};
  }

  std::size_t footprint_bytes() const override { return bodies_.bytes() + acc_.bytes() + workspace_.bytes(); }

  // For tests: the device output (3n floats), and the tree of the last tree run (n >= 2).
  float* output_device() const { return acc_.get(); }
  TreeDownload download_tree() const {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    std::size_t sort_bytes = 0;
    KILN_CUDA_CHECK(tree_cuda::sort_temp_bytes(n_, sort_bytes));
    const tree_cuda::Layout l = tree_cuda::layout(n_, sort_bytes);
    const unsigned char* base = workspace_.get();
    TreeDownload t;
    const auto un = static_cast<std::size_t>(n_);
    t.codes.resize(un);
    t.sorted.resize(4 * un);
    t.links.resize(un - 1);
    t.moments.resize(un - 1);
    KILN_CUDA_CHECK(cudaMemcpy(t.codes.data(), base + l.keys_out, un * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    KILN_CUDA_CHECK(cudaMemcpy(t.sorted.data(), base + l.sorted, 4 * un * sizeof(float), cudaMemcpyDeviceToHost));
    KILN_CUDA_CHECK(cudaMemcpy(t.links.data(), base + l.links, (un - 1) * sizeof(tree::Links), cudaMemcpyDeviceToHost));
    KILN_CUDA_CHECK(
        cudaMemcpy(t.moments.data(), base + l.moments, (un - 1) * sizeof(tree::Moments), cudaMemcpyDeviceToHost));
    return t;
  }

 private:
  // cudaMalloc returns 256-byte aligned memory, so the x, y, z, m floats can be read as float4.
  float4* bodies4() const { return reinterpret_cast<float4*>(bodies_.get()); }

  std::int64_t n_;
  std::uint64_t seed_;
  Bodies kind_;
  cuda::DeviceBuffer<float> bodies_;  // x, y, z, m per body
  cuda::DeviceBuffer<float> acc_;     // ax, ay, az per body
  std::size_t workspace_bytes_ = 0;
  cuda::DeviceBuffer<unsigned char> workspace_;
};

}  // namespace kiln::nbody
