// CPU selective scan: the sequential recurrence, with fp32 math. OpenMP splits the work into
// units of CHANNEL_BLOCK channels of one group of one batch; a unit walks time in tiles of
// TIME_TILE steps. Per tile it converts B and C of its group into a [time][state] scratch (the
// state padded with zeros to whole vectors, so that padded lanes stay at h = 0), shared by the
// unit's channels; then, per step, every channel of the block updates its state vectors of VEC
// lanes, h = exp(dt A) h + dt u B, and reduces y = C . h. The block's channels are independent
// dependency chains within a step, which the core overlaps.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kiln/numeric.hpp"
#include "selective_scan_args.hpp"
#include "softmax_cpu_simd.hpp"

namespace kiln::scan {

template <class Config>
struct CpuTraits {
  static constexpr int kVec = Config::VEC;                   // fp32 lanes per state vector
  static constexpr int kChannelBlock = Config::CHANNEL_BLOCK;  // channels sharing a B/C tile
  static constexpr int kTimeTile = Config::TIME_TILE;        // steps per B/C tile

  static_assert(kVec == 4 || kVec == 8 || kVec == 16, "VEC must be 4, 8 or 16 fp32 lanes");
  static_assert(kChannelBlock >= 1 && kChannelBlock <= 64, "CHANNEL_BLOCK must be 1..64");
  static_assert(kTimeTile >= 1, "TIME_TILE must be positive");
};

namespace cpu_detail {

inline float to_float(float x) { return x; }
inline float to_float(Bf16 x) { return float_from_bf16(x.bits); }
inline float to_float(F16 x) { return float_from_f16(x.bits); }

template <class T>
inline T from_float(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, Bf16>) {
    return Bf16{bf16_from_float(x)};
  } else {
    return F16{f16_from_float(x)};
  }
}

inline float softplus(float x) { return x <= 20.0f ? std::log1p(std::exp(x)) : x; }
inline float silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace cpu_detail

// Synchronous; uses every OpenMP thread. The arguments are checked by the caller.
template <class Config, class T>
void selective_scan(const ScanArgs<T>& a) {
  using Tr = CpuTraits<Config>;
  constexpr int V = Tr::kVec;
  constexpr int CB = Tr::kChannelBlock;
  constexpr int TT = Tr::kTimeTile;
  using F = softmax::simd::f32<V>;
  namespace simd = softmax::simd;
  using cpu_detail::to_float;

  if (a.batch <= 0 || a.channels <= 0) return;
  const std::int64_t L = a.length, N = a.state;
  if (L == 0) {
    if (a.final_state) std::fill_n(a.final_state, a.batch * a.channels * N, 0.0f);
    return;
  }
  const std::int64_t NV = (N + V - 1) / V;  // state vectors per channel
  const std::int64_t NP = NV * V;            // padded state
  const std::int64_t per_group = a.channels / a.groups;
  const std::int64_t blocks_per_group = (per_group + CB - 1) / CB;
  const std::int64_t units = a.batch * a.groups * blocks_per_group;

#pragma omp parallel
  {
    std::vector<F> bt(static_cast<std::size_t>(TT * NV)), ct(bt.size());
    std::vector<F> h(static_cast<std::size_t>(CB * NV)), A(h.size());
#pragma omp for schedule(static)
    for (std::int64_t unit = 0; unit < units; ++unit) {
      const std::int64_t b = unit / (a.groups * blocks_per_group);
      const std::int64_t g = unit / blocks_per_group % a.groups;
      const std::int64_t d0 = g * per_group + unit % blocks_per_group * CB;
      const int count = static_cast<int>(std::min<std::int64_t>(CB, g * per_group + per_group - d0));
      const T* Bg = a.B + (b * a.groups + g) * N * L;
      const T* Cg = a.C + (b * a.groups + g) * N * L;
      float Dd[CB], bias[CB];
      for (int c = 0; c < count; ++c) {
        const std::int64_t d = d0 + c;
        Dd[c] = a.D ? a.D[d] : 0.0f;
        bias[c] = a.delta_bias ? a.delta_bias[d] : 0.0f;
        for (std::int64_t k = 0; k < NV; ++k) {
          F v = simd::splat<V>(0.0f);
          for (int l = 0; l < V; ++l) {
            const std::int64_t n = k * V + l;
            v[l] = n < N ? a.A[d * N + n] : 0.0f;
          }
          A[c * NV + k] = v;
          h[c * NV + k] = simd::splat<V>(0.0f);
        }
      }
      for (std::int64_t t0 = 0; t0 < L; t0 += TT) {
        const int steps = static_cast<int>(std::min<std::int64_t>(TT, L - t0));
        for (int t = 0; t < steps; ++t) {
          for (std::int64_t k = 0; k < NV; ++k) {
            F vb = simd::splat<V>(0.0f), vc = simd::splat<V>(0.0f);
            for (int l = 0; l < V; ++l) {
              const std::int64_t n = k * V + l;
              if (n < N) {
                vb[l] = to_float(Bg[n * L + t0 + t]);
                vc[l] = to_float(Cg[n * L + t0 + t]);
              }
            }
            bt[t * NV + k] = vb;
            ct[t * NV + k] = vc;
          }
        }
        for (int t = 0; t < steps; ++t) {
          for (int c = 0; c < count; ++c) {
            const std::int64_t at = (b * a.channels + d0 + c) * L + t0 + t;
            const float u = to_float(a.u[at]);
            float dt = to_float(a.delta[at]) + bias[c];
            if (a.softplus) dt = cpu_detail::softplus(dt);
            const float dtu = dt * u;
            F acc = simd::splat<V>(0.0f);
            for (std::int64_t k = 0; k < NV; ++k) {
              F& hk = h[c * NV + k];
              hk = simd::exp<V>(A[c * NV + k] * dt) * hk + bt[t * NV + k] * dtu;
              acc += ct[t * NV + k] * hk;
            }
            float y = simd::hsum<V>(acc) + Dd[c] * u;
            if (a.z) y *= cpu_detail::silu(to_float(a.z[at]));
            a.y[at] = cpu_detail::from_float<T>(y);
          }
        }
      }
      if (a.final_state) {
        for (int c = 0; c < count; ++c) {
          float* out = a.final_state + (b * a.channels + d0 + c) * N;
          for (std::int64_t n = 0; n < N; ++n) out[n] = h[c * NV + n / V][n % V];
        }
      }
    }
  }
}

}  // namespace kiln::scan
