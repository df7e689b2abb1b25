// Device helpers shared by the CUDA selective-scan kernels (chunk and chain): element conversion,
// one-instruction exp2, the branch-free softplus, and vector loads and stores of a thread's steps.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "selective_scan_args.hpp"

namespace kiln::scan {

namespace cuda_detail {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

template <class T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else {
    return __float2half_rn(x);
  }
}

// One MUFU.EX2: 2^x, flushing results below 2^-126 to 0 (a state that decays that far is gone).
__device__ __forceinline__ float ex2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// A vector of `Bytes` bytes (8 or 16) as one load or store.
template <int Bytes>
using Raw = std::conditional_t<Bytes == 16, uint4, uint2>;

// softplus(x) = max(x, 0) + log1p(e), e = exp(-|x|) in (0, 1], without branches: log1p(e) =
// 2 atanh(s), s = e / (2 + e) in (0, 1/3], by its series to s^11 (the first term left out is below
// 1.5e-7 of the sum). Two MUFU ops (ex2, rcp) and about a dozen FMA-pipe ones, where log1pf costs
// about 25 and a branch; within 1e-6 of the fp64 value wherever dt matters.
__device__ __forceinline__ float softplus(float x) {
  constexpr float kLog2e = 1.4426950408889634f;
  const float e = ex2(-fabsf(x) * kLog2e);
  const float s = __fdividef(e, 2.0f + e);
  const float w = s * s;
  float p = 1.0f / 11.0f;
  p = p * w + 1.0f / 9.0f;
  p = p * w + 1.0f / 7.0f;
  p = p * w + 1.0f / 5.0f;
  p = p * w + 1.0f / 3.0f;
  p = p * w + 1.0f;
  return (2.0f * s) * p + fmaxf(x, 0.0f);
}

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

// Steps t .. t+I-1 of `row` as floats, 0 past `length`. `vec`: the row and t allow vectors of
// min(16, I x size) bytes and length is a multiple of 16 bytes, so a vector is wholly in or out.
template <int I, class T>
__device__ __forceinline__ void load_items(const T* row, std::int64_t t, std::int64_t length, bool vec,
                                           float (&v)[I]) {
  constexpr int kBytes = I * static_cast<int>(sizeof(T)) < 16 ? I * static_cast<int>(sizeof(T)) : 16;
  constexpr int kPer = kBytes / static_cast<int>(sizeof(T));
  if (vec) {
#pragma unroll
    for (int q = 0; q < I; q += kPer) {
      alignas(16) T e[kPer];
      if (t + q < length) {
        *reinterpret_cast<Raw<kBytes>*>(e) = __ldg(reinterpret_cast<const Raw<kBytes>*>(row + t + q));
#pragma unroll
        for (int k = 0; k < kPer; ++k) v[q + k] = to_float(e[k]);
      } else {
#pragma unroll
        for (int k = 0; k < kPer; ++k) v[q + k] = 0.0f;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < I; ++k) v[k] = t + k < length ? to_float(row[t + k]) : 0.0f;
  }
}

// Stores steps t .. t+I-1 of `row` that lie before `length`; `vec` as for load_items.
template <int I, class T>
__device__ __forceinline__ void store_items(T* row, std::int64_t t, std::int64_t length, bool vec, const float (&v)[I]) {
  constexpr int kBytes = I * static_cast<int>(sizeof(T)) < 16 ? I * static_cast<int>(sizeof(T)) : 16;
  constexpr int kPer = kBytes / static_cast<int>(sizeof(T));
  if (vec) {
#pragma unroll
    for (int q = 0; q < I; q += kPer) {
      if (t + q >= length) break;
      alignas(16) T e[kPer];
#pragma unroll
      for (int k = 0; k < kPer; ++k) e[k] = from_float<T>(v[q + k]);
      *reinterpret_cast<Raw<kBytes>*>(row + t + q) = *reinterpret_cast<const Raw<kBytes>*>(e);
    }
  } else {
#pragma unroll
    for (int k = 0; k < I; ++k) {
      if (t + k < length) row[t + k] = from_float<T>(v[k]);
    }
  }
}

// Both kernels lay their blocks out as [batch][group][channel block], a block holding up to
// `per_block` consecutive channels of one group (the group's last block may hold fewer).
inline std::int64_t blocks_per_group(std::int64_t channels, std::int64_t groups, std::int64_t per_block) {
  return (channels / groups + per_block - 1) / per_block;
}

// The batch, group and channels of this block, and the group's B and C.
template <class T>
struct BlockChannels {
  std::int64_t b, g, d0, group_end;  // channels d0 .. min(d0 + per_block, group_end) - 1
  const T* B;
  const T* C;
};

template <class T>
__device__ __forceinline__ BlockChannels<T> block_channels(const ScanArgs<T>& a, std::int64_t per_group_blocks,
                                                           std::int64_t per_block) {
  const std::int64_t per_group = a.channels / a.groups;
  const std::int64_t unit = blockIdx.x;
  BlockChannels<T> c;
  c.b = unit / (a.groups * per_group_blocks);
  c.g = unit / per_group_blocks % a.groups;
  c.d0 = c.g * per_group + unit % per_group_blocks * per_block;
  c.group_end = c.g * per_group + per_group;
  c.B = a.B + (c.b * a.groups + c.g) * a.state * a.length;
  c.C = a.C + (c.b * a.groups + c.g) * a.state * a.length;
  return c;
}

}  // namespace cuda_detail

}  // namespace kiln::scan
