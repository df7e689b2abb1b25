// The bf16 GEMM workload (y = x · wᵀ): the harness include of gemm_cuda.space.json.
// Inputs are generated on the device by a counter-based hash; the reference is computed on the
// device too, with fp64 accumulation (a host reference of a 4096³ product would take minutes), and
// every output element is compared with it on the host.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "gemm_cuda_kernel.cuh"
#include "kiln/cuda_support.hpp"
#include "kiln/workload.hpp"

namespace kiln::gemm {

namespace device {

// The reference: 16x16 output tiles, k in steps of 16 through shared memory, fp64 sums.
__global__ void reference(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int M, int N, int K) {
  __shared__ double xs[16][17];
  __shared__ double ws[16][17];
  const int row = blockIdx.y * 16 + threadIdx.y;
  const int col = blockIdx.x * 16 + threadIdx.x;
  double sum = 0;
  for (int k0 = 0; k0 < K; k0 += 16) {
    const int xr = blockIdx.y * 16 + threadIdx.y;
    const int wr = blockIdx.x * 16 + threadIdx.y;
    const int k = k0 + threadIdx.x;
    xs[threadIdx.y][threadIdx.x] = xr < M && k < K ? static_cast<double>(__bfloat162float(x[static_cast<std::int64_t>(xr) * K + k])) : 0.0;
    ws[threadIdx.y][threadIdx.x] = wr < N && k < K ? static_cast<double>(__bfloat162float(w[static_cast<std::int64_t>(wr) * K + k])) : 0.0;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) sum += xs[threadIdx.y][kk] * ws[threadIdx.x][kk];
    __syncthreads();
  }
  if (row < M && col < N) y[static_cast<std::int64_t>(row) * N + col] = static_cast<float>(sum);
}

}  // namespace device

class Workload final : public ::kiln::Workload {
 public:
  Workload(const Problem& p, std::uint64_t seed)
      : m_(dim(p, "M")), n_(dim(p, "N")), k_(dim(p, "K")),
        x_(static_cast<std::size_t>(m_) * k_), w_(static_cast<std::size_t>(n_) * k_),
        y_(static_cast<std::size_t>(m_) * n_) {
    if (k_ % 8 != 0 || n_ % 8 != 0) throw Error("gemm: K and N must be multiples of 8");
    ::kiln::cuda::fill_uniform(x_.get(), m_ * k_, -1.0f, 1.0f, seed, 1);
    ::kiln::cuda::fill_uniform(w_.get(), n_ * k_, -1.0f, 1.0f, seed, 2);
  }

  template <class Config>
  void run(cudaStream_t stream) {
    KILN_CUDA_CHECK(launch<Config>(x_.get(), w_.get(), y_.get(), static_cast<int>(m_), static_cast<int>(n_),
                                   static_cast<int>(k_), stream));
  }

  void poison() override {
    ::kiln::cuda::fill(reinterpret_cast<std::uint16_t*>(y_.get()), m_ * n_, poison::bf16);
  }

  std::vector<CheckResult> check() override {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    const std::size_t count = static_cast<std::size_t>(m_ * n_);
    if (reference_.empty()) {
      ::kiln::cuda::DeviceBuffer<float> ref(count);
      const dim3 grid(static_cast<unsigned>((n_ + 15) / 16), static_cast<unsigned>((m_ + 15) / 16));
      device::reference<<<grid, dim3(16, 16)>>>(x_.get(), w_.get(), ref.get(), static_cast<int>(m_),
                                                static_cast<int>(n_), static_cast<int>(k_));
      KILN_CUDA_CHECK(cudaGetLastError());
      reference_.resize(count);
      KILN_CUDA_CHECK(cudaMemcpy(reference_.data(), ref.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
    }
    std::vector<std::uint16_t> out(count);
    KILN_CUDA_CHECK(cudaMemcpy(out.data(), y_.get(), count * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
    Comparison c("y", "bf16");
    for (std::size_t i = 0; i < count; ++i) c.bf16(out[i], reference_[i]);
    return {c.result()};
  }

  std::size_t footprint_bytes() const override {
    return 2 * static_cast<std::size_t>(m_ * k_ + n_ * k_ + m_ * n_);
  }

 private:
  static std::int64_t dim(const Problem& p, const char* name) {
    const std::int64_t v = p.i(name);
    if (v <= 0 || v > (1 << 20)) throw Error(std::string("gemm: ") + name + " out of range");
    return v;
  }

  std::int64_t m_, n_, k_;
  ::kiln::cuda::DeviceBuffer<__nv_bfloat16> x_, w_, y_;
  std::vector<float> reference_;  // computed once: the inputs never change
};

}  // namespace kiln::gemm
