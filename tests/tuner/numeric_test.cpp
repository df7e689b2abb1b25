// The harness's 16-bit conversions: exact round trips, and round-to-nearest-even against a
// reference computed in double; and where a comparison locates bad elements.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "kiln/check.hpp"
#include "kiln/numeric.hpp"
#include "kiln/rng.hpp"
#include "kiln_catch.hpp"

namespace {

bool is_nan_f16(std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }

// The nearest fp16 value to x (ties to even), found by search over the finite halves of x's sign.
std::uint16_t nearest_f16(float x) {
  std::uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  double target = std::fabs(static_cast<double>(x));
  std::uint16_t best = sign;
  double best_err = 1e300;
  for (std::uint32_t m = 0; m <= 0x7C00u; ++m) {  // 0x7C00 is infinity: the nearest beyond 65504
    double v = m == 0x7C00u ? 65536.0 : static_cast<double>(kiln::float_from_f16(static_cast<std::uint16_t>(m)));
    double err = std::fabs(v - target);
    if (err < best_err || (err == best_err && (m & 1u) == 0)) {
      best_err = err;
      best = static_cast<std::uint16_t>(sign | m);
    }
  }
  return best;
}

}  // namespace

TEST_CASE("every fp16 value survives float and back") {
  for (std::uint32_t h = 0; h <= 0xFFFFu; ++h) {
    auto bits = static_cast<std::uint16_t>(h);
    if (is_nan_f16(bits)) {
      CHECK(is_nan_f16(kiln::f16_from_float(kiln::float_from_f16(bits))));
      continue;
    }
    INFO("half 0x" << std::hex << h);
    REQUIRE(kiln::f16_from_float(kiln::float_from_f16(bits)) == bits);
  }
}

TEST_CASE("fp16 rounding is to nearest, ties to even, subnormals included") {
  kiln::Rng rng(17);
  for (int i = 0; i < 300; ++i) {
    // Spread over the subnormal and normal ranges: 2^-26 .. 2^16.
    float x = std::ldexp(rng.uniform(1.0f, 2.0f), -26 + static_cast<int>(rng.uniform() * 42)) * (i % 2 ? -1.0f : 1.0f);
    INFO("x = " << x);
    CHECK(kiln::f16_from_float(x) == nearest_f16(x));
  }
  CHECK(kiln::f16_from_float(3.0e-5f) == nearest_f16(3.0e-5f));
  CHECK(kiln::f16_from_float(1e6f) == 0x7C00u);
}

TEST_CASE("every bf16 value survives float and back") {
  for (std::uint32_t h = 0; h <= 0xFFFFu; ++h) {
    auto bits = static_cast<std::uint16_t>(h);
    float f = kiln::float_from_bf16(bits);
    if (std::isnan(f)) continue;
    REQUIRE(kiln::bf16_from_float(f) == bits);
  }
}

TEST_CASE("a comparison says where the first bad element and the largest error are") {
  kiln::Comparison c("out", "fp32");
  c.f32(1.0f, 1.0);
  c.f32(2.5f, 2.0);  // the largest error: element 1
  c.written_f32(kiln::float_of_bits(kiln::poison::f32));
  c.f32(std::numeric_limits<float>::quiet_NaN(), 1.0);
  c.written_f32(std::numeric_limits<float>::infinity());
  c.f32(3.1f, 3.0);
  const kiln::CheckResult r = c.result();
  CHECK(r.elements == 6);
  CHECK(r.unwritten == 1);
  CHECK(r.first_unwritten_at == 2);
  CHECK(r.non_finite == 2);
  CHECK(r.first_non_finite_at == 3);
  CHECK(r.worst_at == 1);
  CHECK(r.worst_value == 2.5);
  CHECK(r.worst_reference == 2.0);

  kiln::Comparison clean("out", "fp32");
  clean.f32(1.0f, 1.0);
  CHECK(clean.result().first_unwritten_at == -1);
  CHECK(clean.result().first_non_finite_at == -1);
  CHECK(clean.result().worst_at == 0);
}

TEST_CASE("a comparison of elements examined elsewhere counts the compared ones for their error only") {
  kiln::Examined e;
  e.elements = 1000;
  e.unwritten = 2;
  e.first_unwritten_at = 17;
  e.non_finite = 1;
  e.first_non_finite_at = 900;
  kiln::Comparison c("out", "bf16", e);
  c.bf16_at(500, kiln::bf16_from_float(0.5f), 0.5);
  c.bf16_at(17, kiln::poison::bf16, 0.25);         // counted by the examination, not again
  c.bf16_at(900, kiln::bf16_from_float(std::numeric_limits<float>::infinity()), 0.25);
  c.bf16_at(501, kiln::bf16_from_float(0.75f), 0.5);  // the largest error, at its flat index
  const kiln::CheckResult r = c.result();
  CHECK(r.elements == 1000);
  CHECK(r.compared == 4);
  CHECK(r.unwritten == 2);
  CHECK(r.first_unwritten_at == 17);
  CHECK(r.non_finite == 1);
  CHECK(r.first_non_finite_at == 900);
  CHECK(r.worst_at == 501);
  CHECK(r.worst_value == 0.75);
  CHECK(r.max_abs_err == 0.25);
  // The poisoned and infinite elements add their reference to the norm but no error.
  CHECK(r.rel_l2 == kiln_test::Approx(0.25 / std::sqrt(0.25 + 0.0625 + 0.0625 + 0.25)));

  // The two ways of counting do not mix.
  CHECK_THROWS_AS(c.bf16(kiln::bf16_from_float(0.5f), 0.5), std::logic_error);
  CHECK_THROWS_AS(c.written_bf16(kiln::bf16_from_float(0.5f)), std::logic_error);
  kiln::Comparison walked("out", "bf16");
  CHECK_THROWS_AS(walked.bf16_at(0, kiln::bf16_from_float(0.5f), 0.5), std::logic_error);
}
