// Portable SIMD pieces of the CPU softmax, written with GCC vector extensions so that the vector
// width is a template parameter: fp32 vectors of N lanes, loads and stores of fp32 and bf16 rows
// (whole vectors or a partial tail), horizontal reductions and a vectorised exp.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kiln/numeric.hpp"

namespace kiln::softmax::simd {

template <class T, int N>
struct VecOf {
  typedef T type __attribute__((vector_size(N * sizeof(T))));
};
template <int N>
using f32 = typename VecOf<float, N>::type;
template <int N>
using i32 = typename VecOf<std::int32_t, N>::type;
template <int N>
using u32 = typename VecOf<std::uint32_t, N>::type;
template <int N>
using u16 = typename VecOf<std::uint16_t, N>::type;

// A full vector's lane count as a type, so that loads and stores of whole vectors and of the
// partial tail are separate overloads (no run-time branch in the main loops).
template <int N>
using Full = std::integral_constant<int, N>;

template <int N>
inline f32<N> splat(float x) {
  return f32<N>{} + x;
}

template <int N>
inline f32<N> vmax(f32<N> a, f32<N> b) {
  return a > b ? a : b;
}

template <int N>
inline float hmax(f32<N> v) {
  float m = v[0];
  for (int k = 1; k < N; ++k) m = v[k] > m ? v[k] : m;
  return m;
}

template <int N>
inline float hsum(f32<N> v) {
  // Pairwise halving: log2(N) rounding steps instead of N - 1.
  float lanes[N];
  std::memcpy(lanes, &v, sizeof v);
  for (int width = N / 2; width >= 1; width /= 2) {
    for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  }
  return lanes[0];
}

// bf16 <-> fp32 on raw bit patterns. bf16 is the top half of an fp32; rounding to nearest even.
template <int N>
inline f32<N> widen_bf16(u16<N> h) {
  return (f32<N>)(__builtin_convertvector(h, u32<N>) << 16);
}

template <int N>
inline u16<N> narrow_bf16(f32<N> x) {
  u32<N> u = (u32<N>)x;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return __builtin_convertvector(u >> 16, u16<N>);
}

// One element as fp32: fp32 as it is, bf16 bits widened.
inline float to_float(float x) { return x; }
inline float to_float(std::uint16_t h) { return ::kiln::float_from_bf16(h); }

// Transpose of an N x N block held as N vectors (rows in, columns out): log2(N) rounds of
// interleaving row i with row i + N/2 (its low halves into 2i, its high halves into 2i + 1).
template <int N, std::size_t... I>
inline f32<N> zip_low(f32<N> a, f32<N> b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, ((I % 2) ? N + static_cast<int>(I / 2) : static_cast<int>(I / 2))...);
}
template <int N, std::size_t... I>
inline f32<N> zip_high(f32<N> a, f32<N> b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, ((I % 2) ? N + N / 2 + static_cast<int>(I / 2) : N / 2 + static_cast<int>(I / 2))...);
}
template <int N>
inline void transpose(f32<N> (&v)[N]) {
  for (int round = 1; round < N; round *= 2) {
    f32<N> next[N];
    for (int i = 0; i < N / 2; ++i) {
      next[2 * i] = zip_low<N>(v[i], v[i + N / 2], std::make_index_sequence<N>{});
      next[2 * i + 1] = zip_high<N>(v[i], v[i + N / 2], std::make_index_sequence<N>{});
    }
    for (int i = 0; i < N; ++i) v[i] = next[i];
  }
}

// Whole-vector loads and stores (unaligned).
template <int N>
inline f32<N> load(const float* p, Full<N>, float) {
  f32<N> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int N>
inline f32<N> load(const std::uint16_t* p, Full<N>, float) {
  u16<N> h;
  std::memcpy(&h, p, sizeof h);
  return widen_bf16<N>(h);
}
template <int N>
inline void store(float* p, f32<N> v, Full<N>) {
  std::memcpy(p, &v, sizeof v);
}
template <int N>
inline void store(std::uint16_t* p, f32<N> v, Full<N>) {
  u16<N> h = narrow_bf16<N>(v);
  std::memcpy(p, &h, sizeof h);
}

// Partial vectors (the row's last count < N elements): missing lanes read as `fill`, and only
// `count` lanes are written.
template <int N>
inline f32<N> load(const float* p, int count, float fill) {
  float lanes[N];
  for (int k = 0; k < N; ++k) lanes[k] = k < count ? p[k] : fill;
  f32<N> v;
  std::memcpy(&v, lanes, sizeof v);
  return v;
}
template <int N>
inline f32<N> load(const std::uint16_t* p, int count, float fill) {
  float lanes[N];
  for (int k = 0; k < N; ++k) {
    std::uint32_t bits = static_cast<std::uint32_t>(p[k < count ? k : 0]) << 16;
    float x;
    std::memcpy(&x, &bits, sizeof x);
    lanes[k] = k < count ? x : fill;
  }
  f32<N> v;
  std::memcpy(&v, lanes, sizeof v);
  return v;
}
template <int N>
inline void store(float* p, f32<N> v, int count) {
  for (int k = 0; k < count; ++k) p[k] = v[k];
}
template <int N>
inline void store(std::uint16_t* p, f32<N> v, int count) {
  u16<N> h = narrow_bf16<N>(v);
  for (int k = 0; k < count; ++k) p[k] = h[k];
}

// exp(x) for every lane, within about 1 ulp over the range that matters to softmax.
// Cody-Waite reduction x = n ln2 + r with |r| <= ln2/2, then the Cephes degree-6 polynomial for
// exp(r) and 2^n assembled in the exponent bits. Below ln(FLT_MIN) the result flushes to 0 (the
// exact value would be subnormal, an absolute error under 1.2e-38); -inf gives 0. Above 88 the
// argument saturates at 88 (softmax only ever passes x - max <= 0).
template <int N>
inline f32<N> exp(f32<N> x) {
  const f32<N> lo = splat<N>(-87.33654475f);
  const f32<N> hi = splat<N>(88.0f);
  f32<N> xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  // Round x*log2(e) to the nearest integer by adding 1.5 * 2^23: the sum's low mantissa bits are n.
  const float shifter = 12582912.0f;
  f32<N> shifted = xc * 1.44269504088896341f + shifter;
  f32<N> n = shifted - shifter;
  i32<N> ni = (i32<N>)shifted - (i32<N>)splat<N>(shifter);
  f32<N> r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  f32<N> p = splat<N>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  f32<N> scale = (f32<N>)((ni + 127) << 23);
  f32<N> y = p * scale;
  return x < lo ? splat<N>(0.0f) : y;
}

}  // namespace kiln::softmax::simd
