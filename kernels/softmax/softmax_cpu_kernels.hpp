// CPU row softmax: out[r, :] = softmax(in[r, :]) for fp32 rows and bf16 rows (raw bit patterns,
// std::uint16_t), with fp32 math. OpenMP splits the rows over cores; within a core the rows are
// walked with GCC vectors of VEC lanes, UNROLL independent vectors per step and ROW_TILE rows
// interleaved, by one of two algorithms (ALGO):
//   three_pass: max pass; exp pass that stores e = exp(x - max) (into the fp32 output row, or a
//               per-thread fp32 scratch row for bf16) and sums it; scale pass. One exp per element.
//   online:     one pass keeping a running max and a rescaled sum, then a pass that recomputes
//               exp(x - max) / sum straight into the output. Reads only the input and writes the
//               output once, at the price of about 2 + 1/UNROLL exps per element.
//   lanes:      rows of at most kLanesMaxCols columns VEC at a time, one row per lane: the VEC
//               rows (contiguous in memory) are transposed into one vector per column, so the
//               max and the sum are lane-wise, with neither a horizontal reduction nor a partial
//               vector, which is most of a narrow row's work in the other two; then transposed
//               back. Wider rows, and the last rows % VEC, go the three_pass way.
#pragma once
#include <cfloat>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kiln/choice.hpp"
#include "softmax_cpu_simd.hpp"

namespace kiln::softmax {

template <class Config>
struct CpuTraits {
  static constexpr int kVec = Config::VEC;            // fp32 lanes per vector
  static constexpr int kUnroll = Config::UNROLL;      // independent vectors per row and step
  static constexpr int kRowTile = Config::ROW_TILE;   // rows walked together
  static constexpr bool kOnline = Config::ALGO == "online";
  static constexpr bool kLanes = Config::ALGO == "lanes";
  static constexpr int kStep = kVec * kUnroll;        // columns per main-loop step
  static constexpr int kLive = kStep * kRowTile;      // fp32 values in flight per step

  static_assert(kVec == 4 || kVec == 8 || kVec == 16, "VEC must be 4, 8 or 16 fp32 lanes");
  static_assert(kUnroll >= 1 && kUnroll <= 8, "UNROLL must be 1..8");
  static_assert(kRowTile >= 1 && kRowTile <= 8, "ROW_TILE must be 1..8");
  static_assert(Config::ALGO == "online" || Config::ALGO == "three_pass" || Config::ALGO == "lanes",
                "ALGO: three_pass, online or lanes");
};

namespace cpu_detail {

// Visits the columns [0, cols) of a row: `step(c)` for every whole step of STEP columns starting
// at c, then `vec(c, count)` for the remaining whole vectors (count is simd::Full<V>) and for the
// final partial vector (count is an int < V).
template <int STEP, int V, class Step, class Vec>
inline void sweep(std::int64_t cols, Step&& step, Vec&& vec) {
  std::int64_t c = 0;
  for (; c + STEP <= cols; c += STEP) step(c);
  for (; c + V <= cols; c += V) vec(c, simd::Full<V>{});
  if (c < cols) vec(c, static_cast<int>(cols - c));
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Softmax of R consecutive rows starting at `in`/`out`, three-pass algorithm.
// `scratch` holds R * cols floats when T is bf16 (unused for fp32: the output row is the scratch).
template <class Tr, int R, class T>
void rows_three_pass(const T* in, T* out, float* scratch, std::int64_t cols) {
  constexpr int V = Tr::kVec;
  constexpr int U = Tr::kUnroll;
  using F = simd::f32<V>;
  float* e_rows;
  if constexpr (std::is_same_v<T, float>) {
    e_rows = out;
  } else {
    e_rows = scratch;
  }

  // Pass 1: row maxima, U independent accumulators per row.
  F acc[R][U];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < U; ++u) acc[r][u] = simd::splat<V>(kNegInf);
  sweep<V * U, V>(
      cols,
      [&](std::int64_t c) {
        for (int r = 0; r < R; ++r)
          for (int u = 0; u < U; ++u)
            acc[r][u] = simd::vmax<V>(acc[r][u], simd::load<V>(in + r * cols + c + u * V, simd::Full<V>{}, 0.0f));
      },
      [&](std::int64_t c, auto count) {
        for (int r = 0; r < R; ++r) acc[r][0] = simd::vmax<V>(acc[r][0], simd::load<V>(in + r * cols + c, count, kNegInf));
      });
  float row_max[R];
  for (int r = 0; r < R; ++r) {
    F m = acc[r][0];
    for (int u = 1; u < U; ++u) m = simd::vmax<V>(m, acc[r][u]);
    row_max[r] = simd::hmax<V>(m);
  }

  // Pass 2: e = exp(x - max), stored as fp32 and summed.
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < U; ++u) acc[r][u] = simd::splat<V>(0.0f);
  sweep<V * U, V>(
      cols,
      [&](std::int64_t c) {
        for (int r = 0; r < R; ++r)
          for (int u = 0; u < U; ++u) {
            const std::int64_t at = r * cols + c + u * V;
            F e = simd::exp<V>(simd::load<V>(in + at, simd::Full<V>{}, 0.0f) - row_max[r]);
            simd::store<V>(e_rows + at, e, simd::Full<V>{});
            acc[r][u] += e;
          }
      },
      [&](std::int64_t c, auto count) {
        for (int r = 0; r < R; ++r) {
          const std::int64_t at = r * cols + c;
          F e = simd::exp<V>(simd::load<V>(in + at, count, kNegInf) - row_max[r]);
          simd::store<V>(e_rows + at, e, count);
          acc[r][0] += e;
        }
      });
  float inv[R];
  for (int r = 0; r < R; ++r) {
    F s = acc[r][0];
    for (int u = 1; u < U; ++u) s += acc[r][u];
    inv[r] = 1.0f / simd::hsum<V>(s);
  }

  // Pass 3: scale (in place for fp32, converting from the scratch row for bf16).
  sweep<V * U, V>(
      cols,
      [&](std::int64_t c) {
        for (int r = 0; r < R; ++r)
          for (int u = 0; u < U; ++u) {
            const std::int64_t at = r * cols + c + u * V;
            simd::store<V>(out + at, simd::load<V>(e_rows + at, simd::Full<V>{}, 0.0f) * inv[r], simd::Full<V>{});
          }
      },
      [&](std::int64_t c, auto count) {
        for (int r = 0; r < R; ++r) {
          const std::int64_t at = r * cols + c;
          simd::store<V>(out + at, simd::load<V>(e_rows + at, count, 0.0f) * inv[r], count);
        }
      });
}

// Softmax of R consecutive rows, online algorithm. Each lane keeps a running max m and a sum s
// of exp(x - m); a step of U vectors rescales s once (exp(m_old - m_new)) and adds U exps.
// m starts at -FLT_MAX rather than -inf so that a lane that has seen only padding keeps s = 0
// without computing -inf - (-inf).
template <class Tr, int R, class T>
void rows_online(const T* in, T* out, std::int64_t cols) {
  constexpr int V = Tr::kVec;
  constexpr int U = Tr::kUnroll;
  using F = simd::f32<V>;

  F m[R];
  F s[R];
  for (int r = 0; r < R; ++r) {
    m[r] = simd::splat<V>(-FLT_MAX);
    s[r] = simd::splat<V>(0.0f);
  }
  sweep<V * U, V>(
      cols,
      [&](std::int64_t c) {
        for (int r = 0; r < R; ++r) {
          F x[U];
          for (int u = 0; u < U; ++u) x[u] = simd::load<V>(in + r * cols + c + u * V, simd::Full<V>{}, 0.0f);
          F step_max = x[0];
          for (int u = 1; u < U; ++u) step_max = simd::vmax<V>(step_max, x[u]);
          F m_new = simd::vmax<V>(m[r], step_max);
          F sum = s[r] * simd::exp<V>(m[r] - m_new);
          for (int u = 0; u < U; ++u) sum += simd::exp<V>(x[u] - m_new);
          s[r] = sum;
          m[r] = m_new;
        }
      },
      [&](std::int64_t c, auto count) {
        for (int r = 0; r < R; ++r) {
          F x = simd::load<V>(in + r * cols + c, count, kNegInf);
          F m_new = simd::vmax<V>(m[r], x);
          s[r] = s[r] * simd::exp<V>(m[r] - m_new) + simd::exp<V>(x - m_new);
          m[r] = m_new;
        }
      });
  float row_max[R];
  float inv[R];
  for (int r = 0; r < R; ++r) {
    row_max[r] = simd::hmax<V>(m[r]);
    inv[r] = 1.0f / simd::hsum<V>(s[r] * simd::exp<V>(m[r] - row_max[r]));
  }

  sweep<V * U, V>(
      cols,
      [&](std::int64_t c) {
        for (int r = 0; r < R; ++r)
          for (int u = 0; u < U; ++u) {
            const std::int64_t at = r * cols + c + u * V;
            F x = simd::load<V>(in + at, simd::Full<V>{}, 0.0f);
            simd::store<V>(out + at, simd::exp<V>(x - row_max[r]) * inv[r], simd::Full<V>{});
          }
      },
      [&](std::int64_t c, auto count) {
        for (int r = 0; r < R; ++r) {
          const std::int64_t at = r * cols + c;
          F x = simd::load<V>(in + at, count, kNegInf);
          simd::store<V>(out + at, simd::exp<V>(x - row_max[r]) * inv[r], count);
        }
      });
}

// The widest row ALGO lanes takes one row per lane: the transposed tile is kLanesMaxCols vectors.
inline constexpr std::int64_t kLanesMaxCols = 64;

// Softmax of VEC consecutive rows of cols <= kLanesMaxCols columns, one row per lane. With
// `whole_loads`, each row is read in whole vectors, the last one running up to VEC - 1 elements
// past the row (into the next rows, and past the VEC rows' end: the caller says it may), and
// transposed VEC x VEC in registers; otherwise element by element.
template <class Tr, class T>
void rows_in_lanes(const T* in, T* out, std::int64_t cols, bool whole_loads) {
  constexpr int V = Tr::kVec;
  constexpr int U = Tr::kUnroll;
  using F = simd::f32<V>;
  // t[c * V + r]: column c of row r, whole blocks of V columns (kLanesMaxCols is a multiple of V).
  alignas(64) float t[kLanesMaxCols * V];
  if (whole_loads) {
    for (std::int64_t c0 = 0; c0 < cols; c0 += V) {
      F block[V];
      for (int r = 0; r < V; ++r) block[r] = simd::load<V>(in + r * cols + c0, simd::Full<V>{}, 0.0f);
      simd::transpose<V>(block);
      for (int j = 0; j < V; ++j) simd::store<V>(t + (c0 + j) * V, block[j], simd::Full<V>{});
    }
  } else {
    for (int r = 0; r < V; ++r) {
      const T* row = in + r * cols;
      for (std::int64_t c = 0; c < cols; ++c) t[c * V + r] = simd::to_float(row[c]);
    }
    // The last block's columns past the row: read by the transpose back, never stored.
    for (std::int64_t c = cols; c % V != 0; ++c) simd::store<V>(t + c * V, simd::splat<V>(0.0f), simd::Full<V>{});
  }
  // U independent accumulators over the columns, U columns a step (indices known at compile time,
  // so that the accumulators stay in registers; an index c % U put them in memory, a chain of
  // stores and reloads per column), the leftover columns into the first.
  F acc[U];
  for (int u = 0; u < U; ++u) acc[u] = simd::splat<V>(kNegInf);
  std::int64_t c = 0;
  for (; c + U <= cols; c += U) {
    for (int u = 0; u < U; ++u) acc[u] = simd::vmax<V>(acc[u], simd::load<V>(t + (c + u) * V, simd::Full<V>{}, 0.0f));
  }
  for (; c < cols; ++c) acc[0] = simd::vmax<V>(acc[0], simd::load<V>(t + c * V, simd::Full<V>{}, 0.0f));
  F m = acc[0];
  for (int u = 1; u < U; ++u) m = simd::vmax<V>(m, acc[u]);
  for (int u = 0; u < U; ++u) acc[u] = simd::splat<V>(0.0f);
  const auto exp_at = [&](std::int64_t col) {
    F e = simd::exp<V>(simd::load<V>(t + col * V, simd::Full<V>{}, 0.0f) - m);
    simd::store<V>(t + col * V, e, simd::Full<V>{});
    return e;
  };
  for (c = 0; c + U <= cols; c += U) {
    for (int u = 0; u < U; ++u) acc[u] += exp_at(c + u);
  }
  for (; c < cols; ++c) acc[0] += exp_at(c);
  F sum = acc[0];
  for (int u = 1; u < U; ++u) sum += acc[u];
  const F inv = simd::splat<V>(1.0f) / sum;
  // Back to rows in whole vectors (the columns past the row's end are read, never stored).
  for (std::int64_t c0 = 0; c0 < cols; c0 += V) {
    F block[V];
    for (int j = 0; j < V; ++j) block[j] = simd::load<V>(t + (c0 + j) * V, simd::Full<V>{}, 0.0f) * inv;
    simd::transpose<V>(block);
    const std::int64_t left = cols - c0;
    for (int r = 0; r < V; ++r) {
      if (left >= V) {
        simd::store<V>(out + r * cols + c0, block[r], simd::Full<V>{});
      } else {
        simd::store<V>(out + r * cols + c0, block[r], static_cast<int>(left));
      }
    }
  }
}

template <class Tr, int R, class T>
void rows(const T* in, T* out, float* scratch, std::int64_t cols) {
  if constexpr (Tr::kOnline) {
    rows_online<Tr, R>(in, out, cols);
  } else {
    rows_three_pass<Tr, R>(in, out, scratch, cols);
  }
}

}  // namespace cpu_detail

// Row softmax of a rows x cols row-major matrix; T is float or std::uint16_t (bf16 bits).
// Synchronous; uses every OpenMP thread. in and out must not overlap.
template <class Config, class T>
void softmax_rows(const T* in, T* out, std::int64_t rows, std::int64_t cols) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::uint16_t>, "fp32 or bf16 bits");
  using Tr = CpuTraits<Config>;
  constexpr int R = Tr::kRowTile;
  if (rows <= 0 || cols <= 0) return;
  if constexpr (Tr::kLanes) {
    if (cols <= cpu_detail::kLanesMaxCols) {
      constexpr int V = Tr::kVec;
      const std::int64_t groups = rows / V;
      const std::int64_t units = groups + rows % V;  // whole groups of V rows, then single rows
#pragma omp parallel
      {
        std::vector<float> scratch(std::is_same_v<T, float> ? 0 : static_cast<std::size_t>(cols));
#pragma omp for schedule(static)
        for (std::int64_t unit = 0; unit < units; ++unit) {
          if (unit < groups) {
            const std::int64_t offset = unit * V * cols;
            // The last row's whole-vector loads run up to V - 1 elements past the group.
            const bool whole_loads = offset + V * cols + V <= rows * cols;
            cpu_detail::rows_in_lanes<Tr>(in + offset, out + offset, cols, whole_loads);
          } else {
            const std::int64_t offset = (groups * V + (unit - groups)) * cols;
            cpu_detail::rows<Tr, 1>(in + offset, out + offset, scratch.data(), cols);
          }
        }
      }
      return;
    }
  }
  const std::int64_t full_tiles = rows / R;
  const std::int64_t units = full_tiles + rows % R;  // whole tiles, then single leftover rows
  constexpr bool kScratch = !Tr::kOnline && !std::is_same_v<T, float>;

#pragma omp parallel
  {
    std::vector<float> scratch(kScratch ? static_cast<std::size_t>(R * cols) : 0);
#pragma omp for schedule(static)
    for (std::int64_t unit = 0; unit < units; ++unit) {
      if (unit < full_tiles) {
        const std::int64_t offset = unit * R * cols;
        cpu_detail::rows<Tr, R>(in + offset, out + offset, scratch.data(), cols);
      } else {
        const std::int64_t offset = (full_tiles * R + (unit - full_tiles)) * cols;
        cpu_detail::rows<Tr, 1>(in + offset, out + offset, scratch.data(), cols);
      }
    }
  }
}

}  // namespace kiln::softmax
