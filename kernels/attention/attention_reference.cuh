// References the fast kernel is checked against, both written for obviousness, not speed:
//  - reference_row_cpu: one query row in fp64 on the host (small problems: every row);
//  - reference_rows_kernel: a list of query rows in fp32 on the GPU, one block per row, keys in
//    a plain strided loop (large problems: a sample of rows).
// Both read the same 16-bit inputs the kernel reads and apply the same bottom-right causal mask.
// A row that sees no key has output 0 and log-sum-exp -inf.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attention_params.cuh"
#include "attention_shape.cuh"
#include "kiln/numeric.hpp"

namespace kiln::attention {

inline double element_to_double(std::uint16_t bits, AttentionDType dtype) {
  return dtype == AttentionDType::bf16 ? kiln::float_from_bf16(bits) : kiln::float_from_f16(bits);
}

// A float rounded to the element type (nearest even), as bits. fp16 goes through CUDA's own host
// conversion: kiln::f16_from_float mis-rounds values in the fp16 subnormal range (|x| < 6.1e-5)
// to infinities and NaNs, which would poison the inputs.
inline std::uint16_t element_bits(float x, AttentionDType dtype) {
  if (dtype == AttentionDType::bf16) return kiln::bf16_from_float(x);
  const __half h = __float2half_rn(x);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

// Host copies of the inputs, in the shape's layout.
struct HostInputs {
  std::vector<std::uint16_t> q, k, v;
};

// Row r = (b·Hq + h)·Sq + i: fills out[0..D) and returns the row's log-sum-exp (natural log).
inline double reference_row_cpu(const Shape& s, const HostInputs& in, std::int64_t r, double* out) {
  const int i = static_cast<int>(r % s.seq_q);
  const std::int64_t bh = r / s.seq_q;
  const int h = static_cast<int>(bh % s.heads_q);
  const int b = static_cast<int>(bh / s.heads_q);
  const int hk = h / (s.heads_q / s.heads_kv);
  const Strides qs = s.q_strides();
  const Strides ks = s.kv_strides();
  const int D = s.head_dim;
  const std::int64_t q0 = b * qs.batch + h * qs.head + i * qs.seq;
  std::vector<double> q(D);
  for (int d = 0; d < D; ++d) q[d] = element_to_double(in.q[q0 + d], s.dtype);

  const int keys = s.visible_keys(i);
  std::vector<double> score(keys > 0 ? keys : 0);
  double m = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < keys; ++j) {
    const std::int64_t k0 = b * ks.batch + hk * ks.head + j * ks.seq;
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += q[d] * element_to_double(in.k[k0 + d], s.dtype);
    score[j] = dot * static_cast<double>(s.scale());
    m = std::max(m, score[j]);
  }
  for (int d = 0; d < D; ++d) out[d] = 0;
  if (keys <= 0) return -std::numeric_limits<double>::infinity();
  double sum = 0;
  for (int j = 0; j < keys; ++j) {
    const double w = std::exp(score[j] - m);
    sum += w;
    const std::int64_t v0 = b * ks.batch + hk * ks.head + j * ks.seq;
    for (int d = 0; d < D; ++d) out[d] += w * element_to_double(in.v[v0 + d], s.dtype);
  }
  for (int d = 0; d < D; ++d) out[d] /= sum;
  return m + std::log(sum);
}

inline constexpr int kReferenceThreads = 128;

template <class Element>
__device__ inline float element_to_float(Element x) {
  if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else {
    return __half2float(x);
  }
}

// Rows `rows[blockIdx.x]` (r = (b·Hq + h)·Sq + i) of the attention in `p`: out[n][D], lse[n].
template <int kHeadDim, class Element>
__global__ void __launch_bounds__(kReferenceThreads)
    reference_rows_kernel(const ForwardParams p, bool causal, const std::int64_t* rows, float* out, float* lse) {
  __shared__ float q[kHeadDim];
  __shared__ float o_sum[kHeadDim];
  __shared__ float partial[kReferenceThreads];
  const int tid = threadIdx.x;
  const std::int64_t r = rows[blockIdx.x];
  const int i = static_cast<int>(r % p.seq_q);
  const std::int64_t bh = r / p.seq_q;
  const int h = static_cast<int>(bh % p.heads_q);
  const int b = static_cast<int>(bh / p.heads_q);
  const int hk = h / p.group;
  const Element* qp = static_cast<const Element*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride + i * p.q_seq_stride;
  const Element* kp = static_cast<const Element*>(p.k) + b * p.k_batch_stride + hk * p.k_head_stride;
  const Element* vp = static_cast<const Element*>(p.v) + b * p.v_batch_stride + hk * p.v_head_stride;
  for (int d = tid; d < kHeadDim; d += kReferenceThreads) {
    q[d] = element_to_float(qp[d]);
    o_sum[d] = 0.f;
  }
  __syncthreads();

  std::int64_t keys = p.seq_k;
  if (causal) keys = min(static_cast<std::int64_t>(p.seq_k), static_cast<std::int64_t>(i) + p.seq_k - p.seq_q + 1);

  auto score = [&](std::int64_t j) {
    const Element* kj = kp + j * p.k_seq_stride;
    float dot = 0.f;
    for (int d = 0; d < kHeadDim; ++d) dot += q[d] * element_to_float(kj[d]);
    return dot * p.scale;
  };

  // Row maximum.
  float m = -INFINITY;
  for (std::int64_t j = tid; j < keys; j += kReferenceThreads) m = fmaxf(m, score(j));
  partial[tid] = m;
  __syncthreads();
  for (int stride = kReferenceThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] = fmaxf(partial[tid], partial[tid + stride]);
    __syncthreads();
  }
  m = partial[0];
  __syncthreads();

  // Weights, their sum, and the weighted sum of values.
  float sum = 0.f;
  float o[kHeadDim];
  for (int d = 0; d < kHeadDim; ++d) o[d] = 0.f;
  for (std::int64_t j = tid; j < keys; j += kReferenceThreads) {
    const float w = expf(score(j) - m);
    sum += w;
    const Element* vj = vp + j * p.v_seq_stride;
    for (int d = 0; d < kHeadDim; ++d) o[d] += w * element_to_float(vj[d]);
  }
  for (int d = 0; d < kHeadDim; ++d) atomicAdd(&o_sum[d], o[d]);
  partial[tid] = sum;
  __syncthreads();
  for (int stride = kReferenceThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  sum = partial[0];
  for (int d = tid; d < kHeadDim; d += kReferenceThreads) {
    out[blockIdx.x * static_cast<std::int64_t>(kHeadDim) + d] = sum > 0.f ? o_sum[d] / sum : 0.f;
  }
  if (tid == 0) lse[blockIdx.x] = sum > 0.f ? m + logf(sum) : -INFINITY;
}

}  // namespace kiln::attention
