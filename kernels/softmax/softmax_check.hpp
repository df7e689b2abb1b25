// Host-side checking shared by the CPU and CUDA softmax workloads: the input distribution, which
// rows are compared with the fp64 reference, the reference itself, and the walk over every output
// element (each one is examined for poison and non-finite values, compared or not).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/check.hpp"
#include "kiln/problem.hpp"
#include "kiln/rng.hpp"

namespace kiln::softmax {

// Inputs: every row gets an offset uniform in [-16, 16), so that subtracting the row max matters,
// plus logits uniform in [-6, 6), so that exp spans about five decades within a row.
inline constexpr float kRowOffsetLo = -16.0f;
inline constexpr float kRowOffsetHi = 16.0f;
inline constexpr float kLogitLo = -6.0f;
inline constexpr float kLogitHi = 6.0f;

// Problems up to this many elements are compared in full; larger ones on kSampleRows rows drawn
// from the seed, always including the first and the last row.
inline constexpr std::int64_t kFullCheckElements = std::int64_t{1} << 22;
inline constexpr std::int64_t kSampleRows = 64;

struct Shape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  bool bf16 = false;
};

inline Shape shape_of(const Problem& problem) {
  Shape s{problem.i("rows"), problem.i("cols"), false};
  const std::string& dtype = problem.s("dtype");
  if (dtype != "fp32" && dtype != "bf16") throw Error("softmax: dtype must be fp32 or bf16, got " + dtype);
  if (s.rows < 1 || s.cols < 1) throw Error("softmax: rows and cols must be positive");
  s.bf16 = dtype == "bf16";
  return s;
}

// Sorted row indices to compare with the reference.
inline std::vector<std::int64_t> rows_to_compare(const Shape& s, std::uint64_t seed) {
  std::vector<std::int64_t> picked;
  if (s.rows * s.cols <= kFullCheckElements || s.rows <= kSampleRows) {
    picked.resize(static_cast<std::size_t>(s.rows));
    std::iota(picked.begin(), picked.end(), std::int64_t{0});
    return picked;
  }
  Rng rng(seed ^ 0x50F7'3A11'C0DE'5EEDull);
  picked = {0, s.rows - 1};
  while (static_cast<std::int64_t>(picked.size()) < kSampleRows) {
    const auto r = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(s.rows));
    if (std::find(picked.begin(), picked.end(), r) == picked.end()) picked.push_back(r);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// softmax of one row in fp64.
inline void reference_row(const float* x, std::int64_t cols, std::vector<double>& ref) {
  double m = x[0];
  for (std::int64_t c = 1; c < cols; ++c) m = std::max(m, static_cast<double>(x[c]));
  double sum = 0.0;
  for (std::int64_t c = 0; c < cols; ++c) {
    ref[c] = std::exp(static_cast<double>(x[c]) - m);
    sum += ref[c];
  }
  for (std::int64_t c = 0; c < cols; ++c) ref[c] /= sum;
}

// Compares one row with the fp64 reference of its input `x` through `element(c, ref)`.
template <class Element>
void compare_row(const float* x, const Shape& s, std::vector<double>& ref, Element&& element) {
  reference_row(x, s.cols, ref);
  for (std::int64_t c = 0; c < s.cols; ++c) element(c, ref[static_cast<std::size_t>(c)]);
}

// Walks every element of `out` (Elem: float, or std::uint16_t holding bf16 bits). The rows in
// `compared` (sorted) are compared with the reference of their input, which `input_row(r, x)`
// writes into x as fp32; the other rows are examined for being written and finite only.
template <class Elem, class InputRow>
CheckResult compare_rows(const Elem* out, const Shape& s, const std::vector<std::int64_t>& compared,
                         InputRow&& input_row) {
  constexpr bool kF32 = std::is_same_v<Elem, float>;
  static_assert(kF32 || std::is_same_v<Elem, std::uint16_t>, "fp32 or bf16 bits");
  Comparison cmp("out", kF32 ? "fp32" : "bf16");
  std::vector<float> x(static_cast<std::size_t>(s.cols));
  std::vector<double> ref(static_cast<std::size_t>(s.cols));
  std::size_t next = 0;
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const Elem* o = out + r * s.cols;
    if (next < compared.size() && compared[next] == r) {
      ++next;
      input_row(r, x.data());
      compare_row(x.data(), s, ref, [&](std::int64_t c, double expected) {
        if constexpr (kF32) {
          cmp.f32(o[c], expected);
        } else {
          cmp.bf16(o[c], expected);
        }
      });
    } else {
      for (std::int64_t c = 0; c < s.cols; ++c) {
        if constexpr (kF32) {
          cmp.written_f32(o[c]);
        } else {
          cmp.written_bf16(o[c]);
        }
      }
    }
  }
  return cmp.result();
}

// The rows in `compared` compared with the reference of their input: `compared_in` and
// `compared_out` hold those rows' inputs and outputs, one row after another (Elem: float, or
// std::uint16_t holding bf16 bits); the examination of every element for being written and finite
// was done elsewhere (`examined`: the device walk over the whole output).
template <class Elem>
CheckResult compare_sampled_rows(const Elem* compared_in, const Elem* compared_out, const Shape& s,
                                 const std::vector<std::int64_t>& compared, const Examined& examined) {
  constexpr bool kF32 = std::is_same_v<Elem, float>;
  static_assert(kF32 || std::is_same_v<Elem, std::uint16_t>, "fp32 or bf16 bits");
  Comparison cmp("out", kF32 ? "fp32" : "bf16", examined);
  std::vector<float> x(static_cast<std::size_t>(s.cols));
  std::vector<double> ref(static_cast<std::size_t>(s.cols));
  for (std::size_t k = 0; k < compared.size(); ++k) {
    const std::int64_t r = compared[k];
    const Elem* in = compared_in + k * static_cast<std::size_t>(s.cols);
    const Elem* o = compared_out + k * static_cast<std::size_t>(s.cols);
    for (std::int64_t c = 0; c < s.cols; ++c) {
      if constexpr (kF32) {
        x[static_cast<std::size_t>(c)] = in[c];
      } else {
        x[static_cast<std::size_t>(c)] = float_from_bf16(in[c]);
      }
    }
    compare_row(x.data(), s, ref, [&](std::int64_t c, double expected) {
      if constexpr (kF32) {
        cmp.f32_at(r * s.cols + c, o[c], expected);
      } else {
        cmp.bf16_at(r * s.cols + c, o[c], expected);
      }
    });
  }
  return cmp.result();
}

}  // namespace kiln::softmax
