// Comparing a variant's output with a higher-precision reference.
// A workload feeds every output element through a Comparison; the harness decides pass/fail from
// the result and the space's tolerance for the output's element type (NaN never passes, nor does
// an element still holding the poison pattern).
#pragma once
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "kiln/numeric.hpp"

namespace kiln {

struct CheckResult {
  std::string output;             // which output tensor ("out", "lse", ...)
  std::string dtype;              // element type of that output: "fp32", "bf16" or "fp16"
  std::uint64_t elements = 0;     // elements examined for being written and finite
  std::uint64_t compared = 0;     // elements compared with the reference (all, or a random sample)
  std::uint64_t unwritten = 0;    // elements still holding the poison pattern after the run
  std::uint64_t non_finite = 0;   // NaN or infinity among the written elements
  double rel_l2 = 0.0;            // ||out - ref||_2 / ||ref||_2 over the compared elements
  double max_abs_err = 0.0;
  // Where to look: positions in the order the workload examined the elements (its flat index
  // when it walks the output in order), for the first unwritten and the first non-finite element
  // and the compared element with the largest error, with its value and reference.
  std::int64_t first_unwritten_at = -1;
  std::int64_t first_non_finite_at = -1;
  std::int64_t worst_at = -1;
  double worst_value = 0.0;
  double worst_reference = 0.0;
};

// What a walk over a whole output found when it examined every element for being written and
// finite (on the device, for outputs too large to download whole at every check): positions are
// flat indices into the output, -1 for none.
struct Examined {
  std::uint64_t elements = 0;
  std::uint64_t unwritten = 0;
  std::uint64_t non_finite = 0;
  std::int64_t first_unwritten_at = -1;
  std::int64_t first_non_finite_at = -1;
};

class Comparison {
 public:
  Comparison(std::string output, std::string dtype) {
    result_.output = std::move(output);
    result_.dtype = std::move(dtype);
  }

  // An element examined only for being written and finite (outside the reference sample).
  void written_f32(float out) { examine(bits_of(out) == poison::f32, out); }
  void written_bf16(std::uint16_t out) { examine(out == poison::bf16, float_from_bf16(out)); }
  void written_f16(std::uint16_t out) { examine(out == poison::f16, float_from_f16(out)); }

  // An element examined and compared with its reference value.
  void f32(float out, double ref) { compare(bits_of(out) == poison::f32, out, ref); }
  void bf16(std::uint16_t out, double ref) { compare(out == poison::bf16, float_from_bf16(out), ref); }
  void f16(std::uint16_t out, double ref) { compare(out == poison::f16, float_from_f16(out), ref); }

  // Every element examined elsewhere (`Examined`, flat positions); the compared ones then come
  // through the *_at calls below with their flat index, and are counted for their error only.
  // Mixing these with the calls above in one Comparison would count elements twice or not at
  // all: it throws std::logic_error.
  explicit Comparison(std::string output, std::string dtype, const Examined& examined)
      : Comparison(std::move(output), std::move(dtype)) {
    examined_elsewhere_ = true;
    result_.elements = examined.elements;
    result_.unwritten = examined.unwritten;
    result_.non_finite = examined.non_finite;
    result_.first_unwritten_at = examined.first_unwritten_at;
    result_.first_non_finite_at = examined.first_non_finite_at;
  }
  void f32_at(std::int64_t at, float out, double ref) { compare_at(at, bits_of(out) == poison::f32, out, ref); }
  void bf16_at(std::int64_t at, std::uint16_t out, double ref) {
    compare_at(at, out == poison::bf16, float_from_bf16(out), ref);
  }
  void f16_at(std::int64_t at, std::uint16_t out, double ref) {
    compare_at(at, out == poison::f16, float_from_f16(out), ref);
  }

  CheckResult result() const {
    CheckResult r = result_;
    r.rel_l2 = ref2_ > 0 ? std::sqrt(err2_ / ref2_) : std::sqrt(err2_);
    return r;
  }

 private:
  bool examine(bool is_poison, float value) {
    if (examined_elsewhere_) throw std::logic_error("Comparison: element examined again after an Examined walk");
    const auto at = static_cast<std::int64_t>(result_.elements++);
    if (is_poison) {
      if (result_.unwritten++ == 0) result_.first_unwritten_at = at;
      return false;
    }
    if (!std::isfinite(value)) {
      if (result_.non_finite++ == 0) result_.first_non_finite_at = at;
      return false;
    }
    return true;
  }

  void compare(bool is_poison, float value, double ref) {
    ++result_.compared;
    ref2_ += ref * ref;
    if (!examine(is_poison, value)) return;
    accumulate(static_cast<std::int64_t>(result_.elements) - 1, value, ref);
  }

  // A compared element whose examination is already counted: unwritten and non-finite ones add
  // nothing here (the examination failed the check), the others their error.
  void compare_at(std::int64_t at, bool is_poison, float value, double ref) {
    if (!examined_elsewhere_) throw std::logic_error("Comparison: *_at call without an Examined walk");
    ++result_.compared;
    ref2_ += ref * ref;
    if (is_poison || !std::isfinite(value)) return;
    accumulate(at, value, ref);
  }

  void accumulate(std::int64_t at, float value, double ref) {
    const double e = static_cast<double>(value) - ref;
    err2_ += e * e;
    if (std::fabs(e) > result_.max_abs_err || result_.worst_at < 0) {
      result_.max_abs_err = std::fabs(e);
      result_.worst_at = at;
      result_.worst_value = value;
      result_.worst_reference = ref;
    }
  }

  CheckResult result_;
  bool examined_elsewhere_ = false;
  double err2_ = 0.0;
  double ref2_ = 0.0;
};

}  // namespace kiln
