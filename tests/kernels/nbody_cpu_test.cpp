// The CPU N-body kernel: variants spanning the space pass their own check for any n, the vector
// rsqrt is accurate, and check() catches unwritten, non-finite and wrong accelerations.
#include <cmath>
#include <cstdint>

#include "kiln_catch.hpp"
#include "nbody_cpu.hpp"
#include "problem_helpers.hpp"

namespace {

// Corners of nbody_cpu.space.json.
struct Narrow {
  static constexpr int VEC = 8, IVECS = 1, JTILE = 4096;
  static constexpr const char* kiln_name = "nbody_cpu__VEC8_IVECS1_JTILE4096";
};
struct Blocked {
  static constexpr int VEC = 8, IVECS = 4, JTILE = 256;
  static constexpr const char* kiln_name = "nbody_cpu__VEC8_IVECS4_JTILE256";
};
struct Wide {
  static constexpr int VEC = 16, IVECS = 2, JTILE = 1024;
  static constexpr const char* kiln_name = "nbody_cpu__VEC16_IVECS2_JTILE1024";
};

template <class Config>
kiln::CheckResult run_and_check(std::int64_t n, std::uint64_t seed) {
  kiln::nbody::CpuWorkload w(kiln_test::nbody_problem(n), seed);
  w.poison();
  w.template run<Config>();
  auto results = w.check();
  REQUIRE(results.size() == 1);
  return results[0];
}

template <class Config>
void check_sizes() {
  // One body, fewer bodies than a vector, than an i-block, j tails of every tile size.
  for (std::int64_t n : {1, 5, 37, 300, 1000, 1031}) {
    INFO(Config::kiln_name << " n=" << n);
    const kiln::CheckResult r = run_and_check<Config>(n, 77 + n);
    CHECK(r.output == "acc");
    CHECK(r.dtype == "fp32");
    CHECK(r.elements == static_cast<std::uint64_t>(3 * n));
    CHECK(r.compared == r.elements);
    CHECK(r.unwritten == 0);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_l2 < 1e-5);
  }
}

}  // namespace

TEST_CASE("nbody cpu: variants across the space pass for any n", "[nbody][cpu]") {
  check_sizes<Narrow>();
  check_sizes<Blocked>();
  check_sizes<Wide>();
}

TEST_CASE("nbody cpu: a single body feels no force", "[nbody][cpu]") {
  kiln::nbody::CpuWorkload w(kiln_test::nbody_problem(1), 3);
  w.poison();
  w.run<Wide>();
  for (float a : w.output()) CHECK(a == 0.0f);
}

TEST_CASE("nbody cpu: the vector rsqrt is accurate to a few ulp", "[nbody][cpu]") {
  namespace simd = kiln::nbody::simd;
  double worst8 = 0.0, worst16 = 0.0;
  for (float x = 1e-4f; x < 4.0f; x *= 1.0007f) {
    const double ref = 1.0 / std::sqrt(static_cast<double>(x));
    worst8 = std::max(worst8, std::fabs(simd::rsqrt<8>(simd::splat<8>(x))[5] - ref) / ref);
    worst16 = std::max(worst16, std::fabs(simd::rsqrt<16>(simd::splat<16>(x))[11] - ref) / ref);
  }
  CHECK(worst8 < 5e-7);
  CHECK(worst16 < 5e-7);
}

TEST_CASE("nbody cpu: large n compares a sample of bodies but examines every element", "[nbody][cpu]") {
  const std::int64_t n = 5000;
  const kiln::CheckResult r = run_and_check<Wide>(n, 11);
  CHECK(r.elements == static_cast<std::uint64_t>(3 * n));
  CHECK(r.compared == static_cast<std::uint64_t>(3 * kiln::nbody::kSampleBodies));
  CHECK(r.rel_l2 < 1e-5);

  const auto picked = kiln::nbody::bodies_to_compare(n, 11);
  REQUIRE(picked.size() == static_cast<std::size_t>(kiln::nbody::kSampleBodies));
  CHECK(picked.front() == 0);
  CHECK(picked.back() == n - 1);
}

TEST_CASE("nbody cpu: check() catches unwritten, non-finite and wrong elements", "[nbody][cpu]") {
  kiln::nbody::CpuWorkload w(kiln_test::nbody_problem(1000), 21);
  w.poison();
  w.run<Blocked>();
  REQUIRE(w.check()[0].rel_l2 < 1e-5);
  auto& acc = w.output();

  const float saved = acc[3 * 999 + 2];
  acc[3 * 999 + 2] = kiln::float_of_bits(kiln::poison::f32);
  kiln::CheckResult r = w.check()[0];
  CHECK(r.unwritten == 1);

  acc[3 * 999 + 2] = INFINITY;
  r = w.check()[0];
  CHECK(r.unwritten == 0);
  CHECK(r.non_finite == 1);

  // Accelerations are of order 100 here: doubling one component of one body is far off.
  acc[3 * 999 + 2] = 2.0f * saved + 1.0f;
  r = w.check()[0];
  CHECK(r.unwritten == 0);
  CHECK(r.non_finite == 0);
  CHECK(r.rel_l2 > 1e-4);
}
