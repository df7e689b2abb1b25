// Host-side checking shared by the CPU and CUDA selective-scan workloads: the problem's shape and
// options, the inputs (a counter-based hash of (seed, tensor, element), so the check regenerates
// any row's inputs without keeping or downloading them), the sequential recurrence in fp64, and
// the walk over every output element (each one is examined for poison and non-finite values,
// compared with the reference or not).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "kiln/check.hpp"
#include "kiln/counter_random.hpp"
#include "kiln/error.hpp"
#include "kiln/numeric.hpp"
#include "kiln/problem.hpp"
#include "kiln/rng.hpp"
#include "selective_scan_params.hpp"

namespace kiln::scan {

struct Shape {
  std::int64_t batch = 0, channels = 0, length = 0, state = 0, groups = 1;
  ScanDType dtype = ScanDType::fp32;

  std::int64_t rows() const { return batch * channels; }                 // (b, d) rows of u, delta, z, y
  std::int64_t elements() const { return rows() * length; }              // of u, delta, z, y
  std::int64_t bc_elements() const { return batch * groups * state * length; }  // of B, C
  std::int64_t group_of(std::int64_t d) const { return d / (channels / groups); }
};

// Which optional parts a workload exercises. The tuned workload runs Mamba's usual configuration,
// everything on; the tests switch parts off.
struct Options {
  bool z = true;
  bool D = true;
  bool delta_bias = true;
  bool softplus = true;
  bool final_state = true;
};

inline Shape shape_of(const Problem& problem) {
  Shape s;
  s.batch = problem.i("batch");
  s.channels = problem.i("channels");
  s.length = problem.i("length");
  s.state = problem.i("state");
  s.groups = problem.i("groups");
  const std::string& dtype = problem.s("dtype");
  if (dtype == "fp32") {
    s.dtype = ScanDType::fp32;
  } else if (dtype == "bf16") {
    s.dtype = ScanDType::bf16;
  } else if (dtype == "fp16") {
    s.dtype = ScanDType::fp16;
  } else {
    throw Error("selective_scan: dtype must be fp32, bf16 or fp16, got " + dtype);
  }
  if (s.batch < 1 || s.channels < 1 || s.length < 1) throw Error("selective_scan: batch, channels and length must be positive");
  if (s.state < 1 || s.state > kMaxScanState) throw Error("selective_scan: state must be 1 .. 256");
  if (s.groups < 1 || s.channels % s.groups != 0) throw Error("selective_scan: groups must divide channels");
  return s;
}

// The tensors the inputs are drawn for (the hash's stream).
enum class Tensor : std::uint64_t { u = 1, delta, z, B, C, A, D, delta_bias };

// The value of element i of a tensor, as the kernel sees it (I/O tensors rounded to the dtype).
// With softplus, dt = softplus(delta + delta_bias) with softplus(delta_bias) log-uniform in
// [1e-3, 1e-1] (Mamba's dt initialisation) and delta in [-0.5, 0.5); without, dt = delta +
// delta_bias in [0, 0.12). A[d, n] = -(n + 1) x [0.5, 1.5) (Mamba's S4D-real initialisation), so
// states decay over 1 to about 1000 steps; u, B, C in [-1, 1), z in [-2, 2), D in [0.5, 1.5).
// The I/O tensors (u, delta, z, B, C) are uniform in [lo, hi): lo + (hi - lo) r, the form of
// kiln::cuda::fill_uniform, so the CUDA workload draws them on the device bit for bit as here (each
// value is exact in fp32 but 0.1 r, which both round once).
struct IoRange {
  float lo, hi;
};

inline bool is_io(Tensor t) {
  return t == Tensor::u || t == Tensor::delta || t == Tensor::z || t == Tensor::B || t == Tensor::C;
}

inline IoRange io_range(Tensor t, const Options& o) {
  switch (t) {
    case Tensor::u:
    case Tensor::B:
    case Tensor::C: return {-1.0f, 1.0f};
    case Tensor::delta: return o.softplus ? IoRange{-0.5f, 0.5f} : IoRange{0.0f, 0.1f};
    case Tensor::z: return {-2.0f, 2.0f};
    default: throw Error("selective_scan: io_range of a tensor that is not an input row");
  }
}

inline float input_value(std::uint64_t seed, Tensor t, std::int64_t i, const Shape& s, const Options& o) {
  const float r = ::kiln::random::uniform(seed, static_cast<std::uint64_t>(t), static_cast<std::uint64_t>(i));
  float v = 0.0f;
  switch (t) {
    case Tensor::u:
    case Tensor::B:
    case Tensor::C:
    case Tensor::delta:
    case Tensor::z: {
      const IoRange range = io_range(t, o);
      v = range.lo + (range.hi - range.lo) * r;
      break;
    }
    case Tensor::A: return -static_cast<float>(i % s.state + 1) * (0.5f + r);
    case Tensor::D: return 0.5f + r;
    case Tensor::delta_bias: {
      if (!o.softplus) return 0.02f * r;
      const double dt0 = std::exp(std::log(1e-3) + r * std::log(100.0));
      return static_cast<float>(std::log(std::expm1(dt0)));  // softplus^-1(dt0)
    }
  }
  switch (s.dtype) {
    case ScanDType::bf16: return float_from_bf16(bf16_from_float(v));
    case ScanDType::fp16: return float_from_f16(f16_from_float(v));
    case ScanDType::fp32: break;
  }
  return v;
}

// Problems whose reference costs up to this many (element, state) steps are compared in full;
// larger ones on kSampleRows (b, d) rows drawn from the seed, always the first and the last.
inline constexpr std::int64_t kFullCheckSteps = std::int64_t{1} << 24;
inline constexpr std::int64_t kSampleRows = 64;

inline std::vector<std::int64_t> rows_to_compare(const Shape& s, std::uint64_t seed) {
  std::vector<std::int64_t> picked;
  if (s.elements() * s.state <= kFullCheckSteps || s.rows() <= kSampleRows) {
    picked.resize(static_cast<std::size_t>(s.rows()));
    std::iota(picked.begin(), picked.end(), std::int64_t{0});
    return picked;
  }
  Rng rng(seed ^ 0x5CA7'7E57'0F5E'1EC7ull);
  picked = {0, s.rows() - 1};
  while (static_cast<std::int64_t>(picked.size()) < kSampleRows) {
    const auto r = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(s.rows()));
    if (std::find(picked.begin(), picked.end(), r) == picked.end()) picked.push_back(r);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// The sequential recurrence of row r = b * channels + d in fp64, from the row's inputs as the
// kernel sees them: y (length values) and the final state (state values).
inline void reference_row(const Shape& s, const Options& o, std::uint64_t seed, std::int64_t r, std::vector<double>& y,
                          std::vector<double>& h) {
  const std::int64_t b = r / s.channels, d = r % s.channels, g = s.group_of(d);
  const std::int64_t L = s.length, N = s.state;
  const std::int64_t row = r * L;
  const std::int64_t bc = (b * s.groups + g) * N * L;
  auto in = [&](Tensor t, std::int64_t i) { return static_cast<double>(input_value(seed, t, i, s, o)); };
  std::vector<double> A(static_cast<std::size_t>(N)), Bt(static_cast<std::size_t>(N * L)), Ct(Bt.size());
  for (std::int64_t n = 0; n < N; ++n) A[n] = in(Tensor::A, d * N + n);
  for (std::int64_t k = 0; k < N * L; ++k) {
    Bt[k] = in(Tensor::B, bc + k);
    Ct[k] = in(Tensor::C, bc + k);
  }
  const double Dd = o.D ? in(Tensor::D, d) : 0.0;
  const double bias = o.delta_bias ? in(Tensor::delta_bias, d) : 0.0;
  y.assign(static_cast<std::size_t>(L), 0.0);
  h.assign(static_cast<std::size_t>(N), 0.0);
  for (std::int64_t t = 0; t < L; ++t) {
    const double u = in(Tensor::u, row + t);
    double dt = in(Tensor::delta, row + t) + bias;
    if (o.softplus) dt = dt <= 20.0 ? std::log1p(std::exp(dt)) : dt;
    double acc = 0.0;
    for (std::int64_t n = 0; n < N; ++n) {
      h[n] = std::exp(dt * A[n]) * h[n] + dt * Bt[n * L + t] * u;
      acc += Ct[n * L + t] * h[n];
    }
    acc += Dd * u;
    if (o.z) {
      const double z = in(Tensor::z, row + t);
      acc *= z / (1.0 + std::exp(-z));
    }
    y[t] = acc;
  }
}

// Walks every element of y (`y_at(i)` gives element i as its bits: a float, or the 16-bit
// pattern for bf16 and fp16) and of the final state when the options ask for one. The rows in
// `compared` are compared with the fp64 reference; the others are examined for being written
// and finite only.
template <class YAt>
std::vector<CheckResult> compare(const Shape& s, const Options& o, std::uint64_t seed, YAt&& y_at,
                                 const float* final_state) {
  const std::vector<std::int64_t> compared = rows_to_compare(s, seed);
  Comparison ys("y", dtype_name(s.dtype));
  Comparison hs("final_state", "fp32");
  std::vector<double> y_ref, h_ref;
  std::size_t next = 0;
  for (std::int64_t r = 0; r < s.rows(); ++r) {
    const bool full = next < compared.size() && compared[next] == r;
    if (full) {
      ++next;
      reference_row(s, o, seed, r, y_ref, h_ref);
    }
    for (std::int64_t t = 0; t < s.length; ++t) {
      const auto bits = y_at(r * s.length + t);
      if constexpr (sizeof(bits) == 4) {
        full ? ys.f32(bits, y_ref[t]) : ys.written_f32(bits);
      } else if (s.dtype == ScanDType::bf16) {
        full ? ys.bf16(bits, y_ref[t]) : ys.written_bf16(bits);
      } else {
        full ? ys.f16(bits, y_ref[t]) : ys.written_f16(bits);
      }
    }
    if (o.final_state) {
      for (std::int64_t n = 0; n < s.state; ++n) {
        const float v = final_state[r * s.state + n];
        full ? hs.f32(v, h_ref[n]) : hs.written_f32(v);
      }
    }
  }
  std::vector<CheckResult> results{ys.result()};
  if (o.final_state) results.push_back(hs.result());
  return results;
}

}  // namespace kiln::scan
