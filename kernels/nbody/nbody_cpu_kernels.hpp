// CPU all-pairs N-body accelerations, vectorised over i with GCC vectors of VEC lanes.
//
// Bodies i are taken in blocks of IVECS * VEC; a block keeps its positions and accumulators as
// 6 * IVECS vectors, and each body j (broadcast from the x, y, z, m array) updates all IVECS
// vectors, so one broadcast feeds IVECS * VEC interactions. The j range is walked in tiles of
// JTILE bodies (16 bytes each) and, within a tile, over all of a thread's i-blocks, so the tile
// stays in L1/L2 while the blocks' state goes to memory between tiles. OpenMP assigns i-blocks to
// threads with the same static schedule in every tile, so a block's state stays with one core.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "nbody_softening.hpp"

namespace kiln::nbody {

namespace simd {

template <class T, int N>
struct VecOf {
  typedef T type __attribute__((vector_size(N * sizeof(T))));
};
template <int N>
using f32 = typename VecOf<float, N>::type;
template <int N>
using i32 = typename VecOf<std::int32_t, N>::type;

template <int N>
inline f32<N> splat(float x) {
  return f32<N>{} + x;
}

// Newton step for y ~ 1/sqrt(x): the relative error e becomes about 1.5 e^2.
template <int N>
inline f32<N> rsqrt_newton(f32<N> x, f32<N> y) {
  return y * (1.5f - (x * 0.5f) * y * y);
}

// 1/sqrt(x) for normal positive x, to within a few ulp. Where the target has a hardware estimate
// of this width (AVX-512: 2^-14, AVX: 1.5 * 2^-12 relative error) one Newton step follows it;
// otherwise the bit-level first guess (3.4e-2) takes three.
template <int N>
inline f32<N> rsqrt(f32<N> x) {
#if defined(__AVX512F__)
  if constexpr (N == 16) return rsqrt_newton<N>(x, (f32<N>)_mm512_maskz_rsqrt14_ps(0xFFFF, (__m512)x));
#endif
#if defined(__AVX512VL__)
  if constexpr (N == 8) return rsqrt_newton<N>(x, (f32<N>)_mm256_maskz_rsqrt14_ps(0xFF, (__m256)x));
  if constexpr (N == 4) return rsqrt_newton<N>(x, (f32<N>)_mm_maskz_rsqrt14_ps(0xF, (__m128)x));
#elif defined(__AVX__)
  if constexpr (N == 8) return rsqrt_newton<N>(x, (f32<N>)_mm256_rsqrt_ps((__m256)x));
  if constexpr (N == 4) return rsqrt_newton<N>(x, (f32<N>)_mm_rsqrt_ps((__m128)x));
#endif
  f32<N> y = (f32<N>)(0x5F375A86 - ((i32<N>)x >> 1));
  for (int step = 0; step < 3; ++step) y = rsqrt_newton<N>(x, y);
  return y;
}

}  // namespace simd

template <class Config>
struct CpuTraits {
  static constexpr int kVec = Config::VEC;      // i-lanes per vector
  static constexpr int kIVecs = Config::IVECS;  // i-vectors sharing each broadcast j
  static constexpr int kJTile = Config::JTILE;  // j bodies per cache tile
  static constexpr int kIBlock = kVec * kIVecs;

  static_assert(kVec == 4 || kVec == 8 || kVec == 16, "VEC must be 4, 8 or 16 lanes");
  static_assert(kIVecs >= 1 && kIVecs <= 8, "IVECS must be 1..8");
  static_assert(kJTile >= 16 && kJTile % 16 == 0, "JTILE must be a positive multiple of 16");
};

namespace cpu_detail {

// One i-block's state: positions and accumulated accelerations, IVECS vectors each.
template <class Tr>
struct BlockState {
  simd::f32<Tr::kVec> x[Tr::kIVecs], y[Tr::kIVecs], z[Tr::kIVecs];
  simd::f32<Tr::kVec> ax[Tr::kIVecs], ay[Tr::kIVecs], az[Tr::kIVecs];
};

// Positions of the block's bodies; bodies past n sit at the origin and their results are dropped.
template <class Tr>
void init_block(BlockState<Tr>& st, const float* bodies, std::int64_t n, std::int64_t first) {
  for (int v = 0; v < Tr::kIVecs; ++v) {
    for (int k = 0; k < Tr::kVec; ++k) {
      const std::int64_t i = first + v * Tr::kVec + k;
      const bool real = i < n;
      st.x[v][k] = real ? bodies[4 * i] : 0.0f;
      st.y[v][k] = real ? bodies[4 * i + 1] : 0.0f;
      st.z[v][k] = real ? bodies[4 * i + 2] : 0.0f;
    }
    st.ax[v] = st.ay[v] = st.az[v] = simd::splat<Tr::kVec>(0.0f);
  }
}

// Adds the pull of bodies [j0, j1) to the block (its state in registers for the whole tile).
template <class Tr>
void block_tile(BlockState<Tr>& st, const float* bodies, std::int64_t j0, std::int64_t j1) {
  constexpr int V = Tr::kVec;
  constexpr int IV = Tr::kIVecs;
  using F = simd::f32<V>;
  F x[IV], y[IV], z[IV], ax[IV], ay[IV], az[IV];
  for (int v = 0; v < IV; ++v) {
    x[v] = st.x[v];
    y[v] = st.y[v];
    z[v] = st.z[v];
    ax[v] = st.ax[v];
    ay[v] = st.ay[v];
    az[v] = st.az[v];
  }
  const F eps2 = simd::splat<V>(kSoftening2);
  for (std::int64_t j = j0; j < j1; ++j) {
    const F xj = simd::splat<V>(bodies[4 * j]);
    const F yj = simd::splat<V>(bodies[4 * j + 1]);
    const F zj = simd::splat<V>(bodies[4 * j + 2]);
    const F mj = simd::splat<V>(bodies[4 * j + 3]);
    for (int v = 0; v < IV; ++v) {
      const F dx = xj - x[v];
      const F dy = yj - y[v];
      const F dz = zj - z[v];
      const F r2 = dx * dx + dy * dy + dz * dz + eps2;
      const F inv = simd::rsqrt<V>(r2);
      const F s = mj * (inv * inv) * inv;
      ax[v] += dx * s;
      ay[v] += dy * s;
      az[v] += dz * s;
    }
  }
  for (int v = 0; v < IV; ++v) {
    st.ax[v] = ax[v];
    st.ay[v] = ay[v];
    st.az[v] = az[v];
  }
}

template <class Tr>
void store_block(const BlockState<Tr>& st, float* acc, std::int64_t n, std::int64_t first) {
  for (int v = 0; v < Tr::kIVecs; ++v) {
    for (int k = 0; k < Tr::kVec; ++k) {
      const std::int64_t i = first + v * Tr::kVec + k;
      if (i >= n) return;
      acc[3 * i] = st.ax[v][k];
      acc[3 * i + 1] = st.ay[v][k];
      acc[3 * i + 2] = st.az[v][k];
    }
  }
}

}  // namespace cpu_detail

// Accelerations of n bodies: bodies holds x, y, z, m per body (4n floats), acc receives ax, ay,
// az per body (3n floats). Synchronous; uses every OpenMP thread.
template <class Config>
void accelerations(const float* bodies, float* acc, std::int64_t n) {
  using Tr = CpuTraits<Config>;
  if (n <= 0) return;
  const std::int64_t blocks = (n + Tr::kIBlock - 1) / Tr::kIBlock;
  std::vector<cpu_detail::BlockState<Tr>> state(static_cast<std::size_t>(blocks));

#pragma omp parallel
  {
    // Every loop below uses the same static schedule over the same blocks, so a thread only ever
    // touches the blocks it initialised: no barrier is needed between the loops.
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < blocks; ++b) cpu_detail::init_block<Tr>(state[b], bodies, n, b * Tr::kIBlock);
    for (std::int64_t j0 = 0; j0 < n; j0 += Tr::kJTile) {
      const std::int64_t j1 = j0 + Tr::kJTile < n ? j0 + Tr::kJTile : n;
#pragma omp for schedule(static) nowait
      for (std::int64_t b = 0; b < blocks; ++b) cpu_detail::block_tile<Tr>(state[b], bodies, j0, j1);
    }
#pragma omp for schedule(static) nowait
    for (std::int64_t b = 0; b < blocks; ++b) cpu_detail::store_block<Tr>(state[b], acc, n, b * Tr::kIBlock);
  }
}

}  // namespace kiln::nbody
