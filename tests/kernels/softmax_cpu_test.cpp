// The CPU softmax: variants spanning the space pass their own check on tails and odd shapes, the
// vectorised exp is accurate, and check() catches unwritten, non-finite and wrong elements.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln_catch.hpp"
#include "problem_helpers.hpp"
#include "softmax_cpu.hpp"

namespace {

// Corners of softmax_cpu.space.json: narrow vectors and three passes, wide vectors with row
// tiles and the online algorithm, unrolled online, rows in lanes with wide and narrow vectors.
struct NarrowThreePass {
  static constexpr int VEC = 4, UNROLL = 2, ROW_TILE = 1;
  static constexpr kiln::Choice ALGO{"three_pass"};
  static constexpr const char* kiln_name = "softmax_cpu__VEC4_UNROLL2_ROW_TILE1_ALGOthree_pass";
};
struct WideTiledOnline {
  static constexpr int VEC = 16, UNROLL = 1, ROW_TILE = 4;
  static constexpr kiln::Choice ALGO{"online"};
  static constexpr const char* kiln_name = "softmax_cpu__VEC16_UNROLL1_ROW_TILE4_ALGOonline";
};
struct UnrolledOnline {
  static constexpr int VEC = 8, UNROLL = 4, ROW_TILE = 1;
  static constexpr kiln::Choice ALGO{"online"};
  static constexpr const char* kiln_name = "softmax_cpu__VEC8_UNROLL4_ROW_TILE1_ALGOonline";
};
struct WideLanes {
  static constexpr int VEC = 16, UNROLL = 1, ROW_TILE = 1;
  static constexpr kiln::Choice ALGO{"lanes"};
  static constexpr const char* kiln_name = "softmax_cpu__VEC16_UNROLL1_ROW_TILE1_ALGOlanes";
};
struct UnrolledLanes {
  static constexpr int VEC = 4, UNROLL = 4, ROW_TILE = 1;
  static constexpr kiln::Choice ALGO{"lanes"};
  static constexpr const char* kiln_name = "softmax_cpu__VEC4_UNROLL4_ROW_TILE1_ALGOlanes";
};
struct TiledThreePass {
  static constexpr int VEC = 16, UNROLL = 2, ROW_TILE = 1;
  static constexpr kiln::Choice ALGO{"three_pass"};
  static constexpr const char* kiln_name = "softmax_cpu__VEC16_UNROLL2_ROW_TILE1_ALGOthree_pass";
};

template <class Config>
kiln::CheckResult run_and_check(std::int64_t rows, std::int64_t cols, const std::string& dtype, std::uint64_t seed) {
  kiln::softmax::CpuWorkload w(kiln_test::softmax_problem(rows, cols, dtype), seed);
  w.poison();
  w.template run<Config>();
  auto results = w.check();
  REQUIRE(results.size() == 1);
  return results[0];
}

template <class Config>
void check_shapes() {
  // Tails of every kind: single column, shorter than one vector, not a multiple of the step,
  // row counts that leave a partial row tile.
  const struct {
    std::int64_t rows, cols;
  } shapes[] = {{3, 1001}, {5, 1}, {1, 3}, {17, 37}, {6, 64}, {9, 4099}, {2, 20003},
                // rows in lanes: whole groups and leftover rows, the widest such row, one wider
                {33, 64}, {40, 1}, {21, 2}, {35, 65}};
  for (const auto& s : shapes) {
    for (const std::string dtype : {"fp32", "bf16"}) {
      INFO(Config::kiln_name << " rows=" << s.rows << " cols=" << s.cols << " dtype=" << dtype);
      const kiln::CheckResult r = run_and_check<Config>(s.rows, s.cols, dtype, 1234 + s.rows);
      CHECK(r.output == "out");
      CHECK(r.dtype == dtype);
      CHECK(r.elements == static_cast<std::uint64_t>(s.rows * s.cols));
      CHECK(r.compared == r.elements);
      CHECK(r.unwritten == 0);
      CHECK(r.non_finite == 0);
      CHECK(r.rel_l2 < kiln_test::tolerance(dtype));
    }
  }
}

}  // namespace

TEST_CASE("softmax cpu: variants across the space pass on tails", "[softmax][cpu]") {
  check_shapes<NarrowThreePass>();
  check_shapes<WideTiledOnline>();
  check_shapes<UnrolledOnline>();
  check_shapes<TiledThreePass>();
  check_shapes<WideLanes>();
  check_shapes<UnrolledLanes>();
}

namespace {

// The same matrix through softmax_rows out of place and in place (in == out): kiln::cpu::softmax
// accepts in == out, so every algorithm must read each element before it writes it.
template <class Config, class T>
void check_in_place(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  kiln::Rng rng(seed);
  std::vector<T> in(static_cast<std::size_t>(rows * cols));
  for (auto& x : in) {
    const float v = rng.uniform(-8.0f, 8.0f);
    if constexpr (std::is_same_v<T, float>) {
      x = v;
    } else {
      x = kiln::bf16_from_float(v);
    }
  }
  std::vector<T> out(in.size());
  kiln::softmax::softmax_rows<Config>(in.data(), out.data(), rows, cols);
  std::vector<T> inout = in;
  kiln::softmax::softmax_rows<Config>(inout.data(), inout.data(), rows, cols);
  INFO(Config::kiln_name << " rows=" << rows << " cols=" << cols << (std::is_same_v<T, float> ? " fp32" : " bf16"));
  CHECK(std::memcmp(inout.data(), out.data(), out.size() * sizeof(T)) == 0);
}

template <class Config>
void check_in_place_shapes() {
  const struct {
    std::int64_t rows, cols;
  } shapes[] = {{3, 1001}, {5, 1}, {17, 37}, {33, 64}, {40, 3}, {35, 65}, {2, 20003}};
  for (const auto& s : shapes) {
    check_in_place<Config, float>(s.rows, s.cols, 99 + s.cols);
    check_in_place<Config, std::uint16_t>(s.rows, s.cols, 98 + s.cols);
  }
}

}  // namespace

TEST_CASE("softmax cpu: in place (in == out) gives the bits of out of place", "[softmax][cpu]") {
  check_in_place_shapes<NarrowThreePass>();
  check_in_place_shapes<WideTiledOnline>();
  check_in_place_shapes<UnrolledOnline>();
  check_in_place_shapes<TiledThreePass>();
  check_in_place_shapes<WideLanes>();
  check_in_place_shapes<UnrolledLanes>();
}

TEST_CASE("softmax cpu: fp32 results are close to the fp64 reference, not merely within tolerance", "[softmax][cpu]") {
  // The polynomial exp is within about an ulp; an error budget of 1e-6 leaves the harness's 1e-5
  // tolerance a tenfold margin.
  CHECK(run_and_check<NarrowThreePass>(64, 1000, "fp32", 7).rel_l2 < 1e-6);
  CHECK(run_and_check<WideTiledOnline>(64, 1000, "fp32", 7).rel_l2 < 1e-6);
  CHECK(run_and_check<WideLanes>(4096, 50, "fp32", 7).rel_l2 < 1e-6);
}

TEST_CASE("softmax cpu: the vectorised exp is accurate to about an ulp", "[softmax][cpu]") {
  namespace simd = kiln::softmax::simd;
  double worst = 0.0;
  for (float x = -87.0f; x <= 0.0f; x += 0.00731f) {
    const float y = simd::exp<8>(simd::splat<8>(x))[3];
    const double ref = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::fabs(y - ref) / ref);
  }
  CHECK(worst < 2.5e-7);
  CHECK(simd::exp<4>(simd::splat<4>(-INFINITY))[0] == 0.0f);
  CHECK(simd::exp<4>(simd::splat<4>(-100.0f))[1] == 0.0f);
  CHECK(simd::exp<4>(simd::splat<4>(0.0f))[2] == 1.0f);
}

TEST_CASE("softmax cpu: large problems compare a sample of rows but examine every element", "[softmax][cpu]") {
  const std::int64_t rows = 1100, cols = 4000;  // 4.4M elements: above the full-check limit
  const kiln::CheckResult r = run_and_check<TiledThreePass>(rows, cols, "fp32", 99);
  CHECK(r.elements == static_cast<std::uint64_t>(rows * cols));
  CHECK(r.compared == static_cast<std::uint64_t>(kiln::softmax::kSampleRows * cols));
  CHECK(r.rel_l2 < 1e-5);

  const auto picked = kiln::softmax::rows_to_compare({rows, cols, false}, 99);
  REQUIRE(picked.size() == static_cast<std::size_t>(kiln::softmax::kSampleRows));
  CHECK(picked.front() == 0);
  CHECK(picked.back() == rows - 1);
  CHECK(picked != kiln::softmax::rows_to_compare({rows, cols, false}, 100));
}

TEST_CASE("softmax cpu: check() catches unwritten, non-finite and wrong elements", "[softmax][cpu]") {
  const std::int64_t rows = 3, cols = 1001;
  SECTION("fp32") {
    kiln::softmax::CpuWorkload w(kiln_test::softmax_problem(rows, cols, "fp32"), 5);
    w.poison();
    w.run<UnrolledOnline>();
    const kiln::CheckResult good = w.check()[0];
    REQUIRE(good.unwritten == 0);
    REQUIRE(good.rel_l2 < 1e-5);
    auto& out = w.output_f32();

    const float saved = out[1500];
    out[1500] = kiln::float_of_bits(kiln::poison::f32);
    kiln::CheckResult r = w.check()[0];
    CHECK(r.unwritten == 1);
    CHECK(r.non_finite == 0);

    out[1500] = NAN;
    r = w.check()[0];
    CHECK(r.unwritten == 0);
    CHECK(r.non_finite == 1);

    // One element of a 1001-wide row off by 0.05 (probabilities average 1e-3): far beyond 1e-5.
    out[1500] = saved + 0.05f;
    r = w.check()[0];
    CHECK(r.unwritten == 0);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_l2 > 1e-3);
    CHECK(std::fabs(r.max_abs_err - 0.05) < 1e-4);
  }
  SECTION("bf16") {
    kiln::softmax::CpuWorkload w(kiln_test::softmax_problem(rows, cols, "bf16"), 5);
    w.poison();
    w.run<WideTiledOnline>();
    REQUIRE(w.check()[0].unwritten == 0);
    auto& out = w.output_bf16();

    out[2] = kiln::poison::bf16;
    out[2001] = kiln::poison::bf16;
    kiln::CheckResult r = w.check()[0];
    CHECK(r.unwritten == 2);

    w.run<WideTiledOnline>();
    out[7] = kiln::bf16_from_float(kiln::float_from_bf16(out[7]) + 0.25f);
    r = w.check()[0];
    CHECK(r.unwritten == 0);
    CHECK(r.rel_l2 > 1e-2);
  }
}

TEST_CASE("softmax cpu: a poisoned output fails without a run", "[softmax][cpu]") {
  kiln::softmax::CpuWorkload w(kiln_test::softmax_problem(4, 33, "fp32"), 8);
  w.poison();
  const kiln::CheckResult r = w.check()[0];
  CHECK(r.unwritten == 4 * 33);
  CHECK(w.footprint_bytes() == 2 * 4 * 33 * sizeof(float));
}

TEST_CASE("softmax cpu: a rotation set is a copy in memory of its own that runs and checks as the original",
          "[softmax][cpu]") {
  for (const char* dtype : {"fp32", "bf16"}) {
    INFO(dtype);
    kiln::softmax::CpuWorkload w(kiln_test::softmax_problem(5, 1001, dtype), 13);
    std::unique_ptr<kiln::Workload> set = w.copy();
    REQUIRE(set != nullptr);
    auto& copy = dynamic_cast<kiln::softmax::CpuWorkload&>(*set);
    CHECK(copy.footprint_bytes() == w.footprint_bytes());
    // Its own buffers: running the copy leaves the original's outputs as they were.
    w.poison();
    copy.poison();
    copy.run<WideTiledOnline>();
    CHECK(copy.check()[0].unwritten == 0);
    CHECK(copy.check()[0].rel_l2 < 1e-2);
    CHECK(w.check()[0].unwritten == 5 * 1001);
  }
}
