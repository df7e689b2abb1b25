// The CUDA N-body workload: the harness include of nbody_cuda.space.json.
// Bodies are generated on the device by a counter-based hash of (seed, body); check() downloads
// the bodies and every acceleration, and compares a sample (all bodies when n is small) with the
// fp64 reference.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kiln/counter_random.hpp"
#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"
#include "nbody_check.hpp"
#include "nbody_cuda_kernels.cuh"

namespace kiln::nbody {

namespace cuda_fill {

// Positions uniform in the unit cube, masses uniform in [kMassLo, kMassHi) (nbody_check.hpp).
// Body is float4; a template, like every kernel in these headers, so that several translation
// units of one program may include the header.
template <class Body>
__global__ void bodies_kernel(Body* bodies, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const auto c = static_cast<std::uint64_t>(4 * i);
    using ::kiln::random::uniform;
    bodies[i] = make_float4(uniform(seed, 0, c), uniform(seed, 0, c + 1), uniform(seed, 0, c + 2),
                            kMassLo + (kMassHi - kMassLo) * uniform(seed, 0, c + 3));
  }
}

}  // namespace cuda_fill

class CudaWorkload final : public Workload {
 public:
  CudaWorkload(const Problem& problem, std::uint64_t seed)
      : n_(bodies_of(problem)),
        seed_(seed),
        bodies_(static_cast<std::size_t>(4 * n_)),
        acc_(static_cast<std::size_t>(3 * n_)) {
    cuda_fill::bodies_kernel<<<::kiln::cuda::grid_for(n_), 256>>>(bodies4(), n_, seed_);
    KILN_CUDA_CHECK(cudaGetLastError());
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
  }

  template <class Config>
  void run(cudaStream_t stream) {
    KILN_CUDA_CHECK(launch<Config>(bodies4(), acc_.get(), n_, stream));
  }

  void poison() override { ::kiln::cuda::fill(reinterpret_cast<std::uint32_t*>(acc_.get()), 3 * n_, poison::f32); }


  std::vector<CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> bodies = bodies_.download();
    const std::vector<float> acc = acc_.download();
    return {compare_bodies(acc.data(), bodies.data(), n_, bodies_to_compare(n_, seed_))};
  }

  std::size_t footprint_bytes() const override { return bodies_.bytes() + acc_.bytes(); }

  // The device output (3n floats), for tests that tamper with a result.
  float* output_device() const { return acc_.get(); }

 private:
  // cudaMalloc returns 256-byte aligned memory, so the x, y, z, m floats can be read as float4.
  float4* bodies4() const { return reinterpret_cast<float4*>(bodies_.get()); }

  std::int64_t n_;
  std::uint64_t seed_;
  cuda::DeviceBuffer<float> bodies_;  // x, y, z, m per body
  cuda::DeviceBuffer<float> acc_;     // ax, ay, az per body
};

}  // namespace kiln::nbody
