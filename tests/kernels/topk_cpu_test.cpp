// The CPU top-k workload: variants spanning the space pass their own exact check on odd shapes,
// both modes and both inputs (special: NaN, infinities, signed zeros, ties), with rows split into
// parts and not; the reference ranks as documented; check() catches unwritten entries, a wrong
// tie order and a wrong value.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "kiln_catch.hpp"
#include "problem_helpers.hpp"
#include "reference_store_dir.hpp"
#include "temp_dir.hpp"
#include "topk_cpu.hpp"

namespace {

// Corners of topk_cpu.space.json.
struct HeapSmallChunk {
  static constexpr kiln::Choice ALGO{"heap"};
  static constexpr int CHUNK = 16384, BLOCK = 16;
  static constexpr const char* kiln_name = "topk_cpu__ALGOheap_CHUNK16384_BLOCK16";
};
struct BufferSmallChunk {
  static constexpr kiln::Choice ALGO{"buffer"};
  static constexpr int CHUNK = 16384, BLOCK = 64;
  static constexpr const char* kiln_name = "topk_cpu__ALGObuffer_CHUNK16384_BLOCK64";
};
struct HeapLargeChunk {
  static constexpr kiln::Choice ALGO{"heap"};
  static constexpr int CHUNK = 262144, BLOCK = 64;
  static constexpr const char* kiln_name = "topk_cpu__ALGOheap_CHUNK262144_BLOCK64";
};
struct BufferLargeChunk {
  static constexpr kiln::Choice ALGO{"buffer"};
  static constexpr int CHUNK = 262144, BLOCK = 16;
  static constexpr const char* kiln_name = "topk_cpu__ALGObuffer_CHUNK262144_BLOCK16";
};
// ALGO select: every element's entry, nth_element, and the radix sort of the best.
struct SelectSmallChunk {
  static constexpr kiln::Choice ALGO{"select"};
  static constexpr int CHUNK = 16384, BLOCK = 16;
  static constexpr const char* kiln_name = "topk_cpu__ALGOselect_CHUNK16384_BLOCK16";
};
struct SelectLargeChunk {
  static constexpr kiln::Choice ALGO{"select"};
  static constexpr int CHUNK = 262144, BLOCK = 64;
  static constexpr const char* kiln_name = "topk_cpu__ALGOselect_CHUNK262144_BLOCK64";
};

template <class Config>
kiln::CheckResult run_and_check(std::int64_t rows, std::int64_t n, std::int64_t k, const std::string& mode,
                                const std::string& input, std::uint64_t seed) {
  kiln::topk::CpuWorkload w(kiln_test::topk_problem(rows, n, k, mode, input), seed);
  w.poison();
  w.template run<Config>();
  auto results = w.check();
  REQUIRE(results.size() == 1);
  return results[0];
}

template <class Config>
void check_shapes() {
  // k = 1, k = n, k not a power of two, prime n, n shorter than a filter block, rows long enough
  // to be split into parts (with 4 threads: 1 and 3 rows of more than 16384 columns), k = 2048,
  // many short rows (taken in runs by a thread's one selector), and many rows with k >= 64 (the
  // radix sort of the best entries).
  const struct {
    std::int64_t rows, n, k;
  } shapes[] = {{1, 1, 1},      {5, 4099, 37},   {3, 1000, 1000}, {2, 300007, 2048}, {17, 97, 96},
                {64, 1021, 1},  {1, 200003, 1000}, {3, 65537, 5},  {4, 15, 7},     {1000, 9, 3},
                {300, 200, 150}};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(4);
  for (const auto& s : shapes) {
    for (const std::string mode : {"largest", "smallest"}) {
      for (const std::string input : {"normal", "special"}) {
        INFO(Config::kiln_name << " rows=" << s.rows << " n=" << s.n << " k=" << s.k << " " << mode << " " << input);
        const kiln::CheckResult r = run_and_check<Config>(s.rows, s.n, s.k, mode, input, 4242 + s.n);
        CHECK(r.output == "topk");
        CHECK(r.elements == static_cast<std::uint64_t>(s.rows * s.k));
        CHECK(r.compared == r.elements);
        CHECK(r.unwritten == 0);
        CHECK(r.non_finite == 0);
        CHECK(r.rel_l2 == 0.0);
      }
    }
  }
  omp_set_num_threads(saved);
}

// The first of two adjacent equal finite values in the second output row (k entries a row): a
// tie, whose two indices swapped give the same values in the wrong order; -1 if none.
std::int64_t first_tie(const std::vector<float>& v, std::int64_t k) {
  for (std::int64_t j = k; j + 1 < 2 * k; ++j) {
    if (kiln::bits_of(v[j]) == kiln::bits_of(v[j + 1]) && std::isfinite(v[j])) return j;
  }
  return -1;
}

}  // namespace

TEST_CASE("topk cpu: variants across the space pass the exact check on odd shapes", "[topk][cpu]") {
  check_shapes<HeapSmallChunk>();
  check_shapes<BufferSmallChunk>();
  check_shapes<HeapLargeChunk>();
  check_shapes<BufferLargeChunk>();
  check_shapes<SelectSmallChunk>();
  check_shapes<SelectLargeChunk>();
}

TEST_CASE("topk cpu: the special input holds NaN, infinities, signed zeros and ties", "[topk][cpu]") {
  int nan = 0, pinf = 0, ninf = 0, nzero = 0, pzero = 0, ints = 0;
  for (std::int64_t c = 0; c < 4000; ++c) {
    const float x = kiln::topk::input_value(9, 0, c, 4000, true);
    const std::uint32_t u = kiln::bits_of(x);
    if (std::isnan(x)) ++nan;
    else if (x == INFINITY) ++pinf;
    else if (x == -INFINITY) ++ninf;
    else if (u == 0x80000000u) ++nzero;
    else if (u == 0) ++pzero;
    else if (x == std::nearbyint(x) && std::fabs(x) <= 8) ++ints;
  }
  CHECK(nan > 50);
  CHECK(pinf > 50);
  CHECK(ninf > 50);
  CHECK(nzero > 50);
  CHECK(pzero > 50);
  CHECK(nan + pinf + ninf + nzero + pzero + ints == 4000);
}

TEST_CASE("topk cpu: the reference ranks NaN above +inf, -0 as +0, ties by lower index", "[topk][cpu]") {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  const float x[] = {1.0f, qnan, -INFINITY, INFINITY, -0.0f, 0.0f, -qnan, 1.0f};
  using V = std::vector<std::int64_t>;
  CHECK(kiln::topk::reference_row(x, 8, 8, false) == V{1, 6, 3, 0, 7, 4, 5, 2});
  CHECK(kiln::topk::reference_row(x, 8, 8, true) == V{2, 4, 5, 0, 7, 3, 1, 6});
  CHECK(kiln::topk::reference_row(x, 8, 3, true) == V{2, 4, 5});
  CHECK(kiln::topk::reference_row(x, 8, 1, false) == V{1});
}

TEST_CASE("topk cpu: agrees() accepts exactly the reference's output", "[topk][cpu]") {
  // Every row of the special input (ties, NaNs of both signs, infinities, signed zeros) and of the
  // normal one, both modes, k = 1, a middle k and k = n: the reference's output agrees; each
  // single change of it does not (an index past the row, swapped neighbours, a lower element in
  // place of the last, a repeated entry, a value with other bits).
  for (const bool special : {true, false}) {
    for (const bool smallest : {false, true}) {
      const std::int64_t n = 257;
      std::vector<float> x(n);
      for (std::int64_t c = 0; c < n; ++c) x[c] = kiln::topk::input_value(11, special ? 1 : 2, c, n, special);
      for (const std::int64_t k : {std::int64_t{1}, std::int64_t{37}, n}) {
        INFO((special ? "special" : "normal") << (smallest ? " smallest" : " largest") << " k " << k);
        const std::vector<std::int64_t> ref = kiln::topk::reference_row(x.data(), n, k, smallest);
        std::vector<std::int64_t> idx = ref;
        std::vector<float> val(k);
        for (std::int64_t j = 0; j < k; ++j) val[j] = x[ref[j]];
        CHECK(kiln::topk::agrees(val.data(), idx.data(), x.data(), n, k, smallest));
        auto changed = [&](auto change) {
          std::vector<std::int64_t> i2 = idx;
          std::vector<float> v2 = val;
          change(i2, v2);
          return kiln::topk::agrees(v2.data(), i2.data(), x.data(), n, k, smallest);
        };
        CHECK_FALSE(changed([&](auto& i2, auto& v2) { i2[0] = n; }));
        CHECK_FALSE(changed([&](auto& i2, auto& v2) { v2[k - 1] = -v2[k - 1] == v2[k - 1] ? 1.0f : -v2[k - 1]; }));
        if (k > 1) {
          CHECK_FALSE(changed([&](auto& i2, auto& v2) {
            std::swap(i2[0], i2[1]);
            std::swap(v2[0], v2[1]);
          }));
          CHECK_FALSE(changed([&](auto& i2, auto& v2) {
            i2[1] = i2[0];
            v2[1] = v2[0];
          }));
        }
        if (k < n) {  // the reference's (k+1)-th in place of its k-th
          const std::int64_t next = kiln::topk::reference_row(x.data(), n, k + 1, smallest)[k];
          CHECK_FALSE(changed([&](auto& i2, auto& v2) {
            i2[k - 1] = next;
            v2[k - 1] = x[next];
          }));
        }
      }
    }
  }
}

TEST_CASE("topk cpu: the filter's float limit decides exactly as the key's threshold", "[topk][cpu]") {
  // passes_limit (the CUDA filter's compare) against key_of >= threshold, for every threshold
  // digit of 8 and 11 bits, thresholds at the keys no float has, and floats at and next to each
  // limit, the special values and random bit patterns (NaNs of both signs included).
  std::vector<std::uint32_t> thresholds = {1u, 0x007FFFFEu, 0x007FFFFFu, 0x00800000u, 0x7FFFFFFEu, 0x7FFFFFFFu,
                                           0x80000000u, 0x80000001u, 0xFF800000u, 0xFF800001u, 0xFFFFFFFEu,
                                           0xFFFFFFFFu};
  for (std::uint32_t d = 0; d < (1u << 11); ++d) thresholds.push_back(d << 21);
  for (std::uint32_t d = 0; d < (1u << 8); ++d) thresholds.push_back(d << 24);
  std::vector<std::uint32_t> bits = {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                     0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFF800001u, 0x7FC00000u, 0xFFC00000u,
                                     0x7FFFFFFFu, 0xFFFFFFFFu, 0x3F800000u, 0xBF800000u};
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 4000; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    bits.push_back(static_cast<std::uint32_t>(state));
  }
  std::int64_t checked = 0, mismatches = 0;
  for (const std::uint32_t t : thresholds) {
    std::vector<std::uint32_t> xs = bits;
    for (const std::uint32_t limit : {kiln::topk::float_at_most(t - 1), kiln::topk::float_at_most(~t)}) {
      for (const std::uint32_t delta : {0u, 1u, 2u, 0xFFFFFFFFu, 0xFFFFFFFEu}) {
        xs.push_back(limit + delta);
        xs.push_back((limit ^ 0x80000000u) + delta);
      }
    }
    for (const bool smallest : {false, true}) {
      for (const std::uint32_t b : xs) {
        float x;
        std::memcpy(&x, &b, sizeof x);
        const bool expected = kiln::topk::key_of(b, smallest) >= t;
        if (kiln::topk::passes_limit(x, t, smallest) != expected) {
          ++mismatches;
          UNSCOPED_INFO("threshold " << t << " bits " << b << (smallest ? " smallest" : " largest"));
        }
        ++checked;
      }
    }
  }
  CHECK(mismatches == 0);
  CHECK(checked > 2300 * 2 * 4000);
}

TEST_CASE("topk cpu: check() catches unwritten entries, a wrong tie order and a wrong value", "[topk][cpu]") {
  // special input: about 100 NaNs and 100 +infs per row, then about 200 elements 8.0, so each
  // row's top 300 ends in equal values whose order is decided by index.
  const std::int64_t k = 300;
  kiln::topk::CpuWorkload w(kiln_test::topk_problem(3, 4099, k, "largest", "special"), 5);
  w.poison();
  CHECK(w.check()[0].unwritten == 3 * k);
  w.run<HeapSmallChunk>();
  REQUIRE(w.check()[0].rel_l2 == 0.0);
  auto& v = w.values();
  auto& i = w.indices();

  i[40] = kiln::topk::kPoisonIndex;
  kiln::CheckResult r = w.check()[0];
  CHECK(r.unwritten == 1);
  CHECK(r.first_unwritten_at == 40);

  w.run<HeapSmallChunk>();
  // Two adjacent equal values (ties) swapped: same values, wrong order of indices.
  const std::int64_t at = first_tie(v, k);
  REQUIRE(at >= 0);
  std::swap(i[at], i[at + 1]);
  r = w.check()[0];
  CHECK(r.unwritten == 0);
  CHECK(r.rel_l2 == 1.0);
  CHECK(r.worst_at == at);
  std::swap(i[at], i[at + 1]);
  REQUIRE(w.check()[0].rel_l2 == 0.0);

  // The value one ulp off at its right index.
  const std::int64_t last = 3 * k - 1;
  REQUIRE(std::isfinite(v[last]));
  v[last] = std::nextafter(v[last], INFINITY);
  r = w.check()[0];
  CHECK(r.rel_l2 == 1.0);
  CHECK(r.worst_at == last);
}

TEST_CASE("topk cpu: rows beyond the full-check size compare a sample but examine every entry", "[topk][cpu]") {
  const std::int64_t rows = 300, n = 65536, k = 10;  // 19.7M elements: above the full-check limit
  kiln::topk::CpuWorkload w(kiln_test::topk_problem(rows, n, k, "largest", "normal"), 3);
  w.poison();
  w.run<BufferLargeChunk>();
  kiln::CheckResult r = w.check()[0];
  CHECK(r.elements == static_cast<std::uint64_t>(rows * k));
  CHECK(r.compared == static_cast<std::uint64_t>(kiln::topk::kSampleRows * k));
  CHECK(r.rel_l2 == 0.0);
  // An index out of range in a row that is not compared is caught.
  const auto picked = kiln::topk::rows_to_compare({rows, n, k, false, false}, 3);
  std::int64_t skipped = 0;
  while (std::find(picked.begin(), picked.end(), skipped) != picked.end()) ++skipped;
  w.indices()[skipped * k] = n;
  r = w.check()[0];
  CHECK(r.rel_l2 == 1.0);
}

TEST_CASE("topk cpu: a reference store keeps a passing output and vouches for the same output of the same inputs",
          "[topk][cpu]") {
  kiln_test::TempDir dir("kiln-topk-store");
  const kiln_test::ReferenceStoreDir using_it(dir.path());
  auto entries = [&] {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) files.push_back(e.path());
    return files;
  };
  const std::int64_t k = 300;
  const kiln::Problem problem = kiln_test::topk_problem(3, 4099, k, "largest", "special");
  {
    kiln::topk::CpuWorkload first(problem, 5);
    first.poison();
    CHECK(first.check()[0].unwritten == 3 * k);
    CHECK(entries().empty());  // a failing output is not kept
    first.run<HeapSmallChunk>();
    REQUIRE(first.check()[0].rel_l2 == 0.0);
  }
  REQUIRE(entries().size() == 1);

  kiln::topk::CpuWorkload w(problem, 5);
  w.poison();
  w.run<SelectSmallChunk>();
  // The same entries as the stored ones: judged without the input, which is changed here to show it
  // (compared with it, the output would fail).
  const std::vector<float> input = w.input();
  for (float& x : w.input()) x = -x;
  kiln::CheckResult r = w.check()[0];
  CHECK(r.rel_l2 == 0.0);
  CHECK(r.compared == static_cast<std::uint64_t>(3 * k));
  w.input() = input;

  // Any other output is compared with its input, with the same findings as without a store.
  auto& v = w.values();
  auto& i = w.indices();
  const std::int64_t at = first_tie(v, k);
  REQUIRE(at >= 0);
  std::swap(i[at], i[at + 1]);
  r = w.check()[0];
  CHECK(r.rel_l2 == 1.0);
  CHECK(r.worst_at == at);
  std::swap(i[at], i[at + 1]);
  i[7] = kiln::topk::kPoisonIndex;
  CHECK(w.check()[0].unwritten == 1);
  w.run<SelectSmallChunk>();

  // An entry of another key, or cut short, is not read: the output is compared with its input, and
  // the entry written again.
  const std::filesystem::path entry = entries().front();
  std::string whole;
  {
    std::ifstream in(entry, std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  for (float& x : w.input()) x = -x;
  CHECK(w.check()[0].rel_l2 == 1.0);  // the changed input is read
  w.input() = input;
  CHECK(w.check()[0].rel_l2 == 0.0);
  {
    std::ifstream in(entry, std::ios::binary);
    CHECK(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) == whole);
  }
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << "topk rows=1 n=1 k=1 largest normal seed=5\n" << whole;
  for (float& x : w.input()) x = -x;
  CHECK(w.check()[0].rel_l2 == 1.0);
  w.input() = input;
}
