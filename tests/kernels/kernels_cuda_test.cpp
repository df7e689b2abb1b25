// The CUDA softmax, N-body, selective-scan and top-k workloads on a GPU: every test config passes
// its own check on tails and odd shapes, directly on a stream and from a captured CUDA graph, and
// check() catches unwritten, non-finite and wrong elements; the selective scan's and top-k's public
// functions compute the same and reject bad arguments. Without a CUDA device the test exits with 77
// (reported as skipped).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels_cuda_cases.hpp"
#include "kiln_catch.hpp"
#include "problem_helpers.hpp"

namespace cc = kiln_test::cuda_cases;

namespace {

// Every test case starts here: whichever runs first ends the process with 77 when there is no
// device, whatever order the test runner picks.
void require_device() {
  std::string why;
  if (!cc::device_available(why)) {
    std::printf("no CUDA device found (%s): skipping\n", why.c_str());
    std::fflush(stdout);
    std::exit(77);
  }
}

void require_pass(const kiln::CheckResult& r, std::uint64_t elements, const std::string& dtype) {
  CHECK(r.dtype == dtype);
  CHECK(r.elements == elements);
  CHECK(r.unwritten == 0);
  CHECK(r.non_finite == 0);
  CHECK(r.compared > 0);
  CHECK(r.rel_l2 < kiln_test::tolerance(dtype));
}

}  // namespace

TEST_CASE("softmax cuda: configs pass on tails, alignments and both paths", "[softmax][cuda]") {
  require_device();
  // cols 1001 and 16385: odd, so rows start at every alignment (single-element head and tail around
  // the vectors); 1030: rows alternately 16-byte and 8-byte aligned; 4104 and 20000: vector rows
  // with a partial last pass; 20000, 16385: wider than every register cache (streaming path) for
  // some configs; 1: a single column; 63 and 3: narrow rows at every alignment (sub-warp rows);
  // 100003, 262144: few wide rows (split over a cluster); 3 on a split config leaves blocks of
  // the cluster without elements; 1305 x 2, 4099 x 8 and 2049 x 5: many narrow rows, the grid's
  // last blocks only partly filled; 7 x 2 fp32, 1003 x 4 and 3 x 1 bf16, 100001 x 1 fp32: rows
  // packed several to a vector on one-lane rows, with rows left over after the last whole vector
  // (all of them for 3 x 1 bf16).
  const struct {
    std::int64_t rows, cols;
    const char* dtype;
  } shapes[] = {{3, 1001, "bf16"},   {5, 1, "fp32"},      {1000, 4104, "bf16"}, {33, 20000, "fp32"},
                {2, 16385, "bf16"},  {4001, 1030, "fp32"}, {7, 1030, "bf16"},    {300, 8192, "bf16"},
                {777, 63, "bf16"},   {1000, 3, "fp32"},    {2, 100003, "fp32"},  {1, 262144, "bf16"},
                {5, 40000, "bf16"},  {1305, 2, "bf16"},    {4099, 8, "fp32"},    {2049, 5, "bf16"},
                {7, 2, "fp32"},      {1003, 4, "bf16"},    {3, 1, "bf16"},       {100001, 1, "fp32"}};
  for (const std::string& config : cc::softmax_configs()) {
    for (const auto& s : shapes) {
      INFO(config << " rows=" << s.rows << " cols=" << s.cols << " dtype=" << s.dtype);
      const auto results = cc::softmax_case(config, s.rows, s.cols, s.dtype, 17 + s.rows);
      REQUIRE(results.size() == 1);
      require_pass(results[0], static_cast<std::uint64_t>(s.rows * s.cols), s.dtype);
      CHECK(results[0].compared == results[0].elements);
    }
  }
}

TEST_CASE("softmax cuda: in and out of different alignment phase", "[softmax][cuda]") {
  require_device();
  for (const std::string& config : cc::softmax_configs()) {
    for (const std::string dtype : {"fp32", "bf16"}) {
      for (std::int64_t cols : {1, 37, 1024, 20000}) {
        INFO(config << " cols=" << cols << " dtype=" << dtype);
        const std::int64_t rows = 9;
        const kiln::CheckResult r = cc::softmax_phase_case(config, rows, cols, dtype, 3 + cols);
        require_pass(r, static_cast<std::uint64_t>(rows * cols), dtype);
        CHECK(r.compared == r.elements);
      }
    }
  }
}

TEST_CASE("softmax cuda: rows of huge magnitude (masked rows near the lowest float, 1e10, 1e9)", "[softmax][cuda]") {
  require_device();
  // An exponent formed as x log2 e - m log2 e overflows here (m log2 e itself at -3e38, its
  // rounding beyond about 1e9); (x - m) log2 e does not. 20000 columns take the streaming path.
  for (const std::string& config : cc::softmax_configs()) {
    for (const std::string dtype : {"fp32", "bf16"}) {
      for (std::int64_t cols : {3, 37, 1001, 2361, 20000}) {
        INFO(config << " cols=" << cols << " dtype=" << dtype);
        const kiln::CheckResult r = cc::softmax_huge_case(config, 8, cols, dtype, 11 + cols);
        require_pass(r, static_cast<std::uint64_t>(8 * cols), dtype);
        CHECK(r.compared == r.elements);
      }
    }
  }
}

TEST_CASE("softmax cuda: in and out one element into their allocations, nothing written outside", "[softmax][cuda]") {
  require_device();
  for (const std::string& config : cc::softmax_configs()) {
    for (const std::string dtype : {"fp32", "bf16"}) {
      // 1 and 3: several rows share the first and last vectors; 1001, 2361: one row does; 1024: rows
      // aligned to each other, not to the vectors.
      for (std::int64_t cols : {1, 3, 37, 1001, 1024, 2361}) {
        INFO(config << " cols=" << cols << " dtype=" << dtype);
        const std::int64_t rows = 9;
        bool guards = false;
        const kiln::CheckResult r = cc::softmax_shifted_case(config, rows, cols, dtype, 5 + cols, &guards);
        require_pass(r, static_cast<std::uint64_t>(rows * cols), dtype);
        CHECK(r.compared == r.elements);
        CHECK(guards);
      }
    }
  }
}

TEST_CASE("softmax cuda: large problems from a captured graph, sampled rows", "[softmax][cuda]") {
  require_device();
  const std::int64_t rows = 2048, cols = 8192;  // 16M elements: the check samples rows
  for (const std::string& config : cc::softmax_configs()) {
    for (const std::string dtype : {"bf16", "fp32"}) {
      INFO(config << " " << dtype);
      cc::Case graph;
      graph.mode = cc::Mode::graph;
      const auto results = cc::softmax_case(config, rows, cols, dtype, 5, graph);
      REQUIRE(results.size() == 1);
      require_pass(results[0], static_cast<std::uint64_t>(rows * cols), dtype);
      CHECK(results[0].compared == static_cast<std::uint64_t>(64 * cols));
    }
  }
}

TEST_CASE("softmax cuda: check() catches unwritten, non-finite and wrong elements", "[softmax][cuda]") {
  require_device();
  const std::string config = cc::softmax_configs().front();
  for (const std::string dtype : {"fp32", "bf16"}) {
    INFO(dtype);
    cc::Case c;
    c.element = 3 * 1001 - 1;  // the last element of the last row
    c.tamper = cc::Tamper::poison;
    kiln::CheckResult r = cc::softmax_case(config, 3, 1001, dtype, 9, c)[0];
    CHECK(r.unwritten == 1);
    CHECK(r.non_finite == 0);

    c.tamper = cc::Tamper::nan;
    r = cc::softmax_case(config, 3, 1001, dtype, 9, c)[0];
    CHECK(r.unwritten == 0);
    CHECK(r.non_finite == 1);

    c.tamper = cc::Tamper::offset;
    c.amount = 0.25f;  // probabilities here average 1e-3
    r = cc::softmax_case(config, 3, 1001, dtype, 9, c)[0];
    CHECK(r.unwritten == 0);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_l2 > kiln_test::tolerance(dtype));

    // A problem whose check compares 64 sampled rows: elements outside them are examined on the
    // device, and reported at their flat index.
    const std::int64_t rows = 2048, cols = 8192;
    c.element = 1000 * cols + 77;
    c.tamper = cc::Tamper::poison;
    r = cc::softmax_case(config, rows, cols, dtype, 9, c)[0];
    CHECK(r.compared == static_cast<std::uint64_t>(64 * cols));
    CHECK(r.elements == static_cast<std::uint64_t>(rows * cols));
    CHECK(r.unwritten == 1);
    CHECK(r.first_unwritten_at == c.element);
    CHECK(r.non_finite == 0);
    c.tamper = cc::Tamper::nan;
    r = cc::softmax_case(config, rows, cols, dtype, 9, c)[0];
    CHECK(r.unwritten == 0);
    CHECK(r.non_finite == 1);
    CHECK(r.first_non_finite_at == c.element);
  }
}

TEST_CASE("nbody cuda: configs pass for any n", "[nbody][cuda]") {
  require_device();
  for (const std::string& config : cc::nbody_configs()) {
    for (std::int64_t n : {1, 5, 1000, 4097, 20000}) {
      INFO(config << " n=" << n);
      const auto results = cc::nbody_case(config, n, 31 + n);
      REQUIRE(results.size() == 1);
      require_pass(results[0], static_cast<std::uint64_t>(3 * n), "fp32");
      CHECK(results[0].output == "acc");
    }
    cc::Case graph;
    graph.mode = cc::Mode::graph;
    require_pass(cc::nbody_case(config, 3000, 4, graph)[0], 3 * 3000, "fp32");
  }
}

TEST_CASE("nbody cuda: check() catches unwritten, non-finite and wrong elements", "[nbody][cuda]") {
  require_device();
  const std::string config = cc::nbody_configs().front();
  cc::Case c;
  c.element = 3 * 999 + 1;
  c.tamper = cc::Tamper::poison;
  kiln::CheckResult r = cc::nbody_case(config, 1000, 12, c)[0];
  CHECK(r.unwritten == 1);

  c.tamper = cc::Tamper::nan;
  r = cc::nbody_case(config, 1000, 12, c)[0];
  CHECK(r.non_finite == 1);

  c.tamper = cc::Tamper::offset;
  c.amount = 50.0f;  // accelerations are of order 100 here
  r = cc::nbody_case(config, 1000, 12, c)[0];
  CHECK(r.unwritten == 0);
  CHECK(r.non_finite == 0);
  CHECK(r.rel_l2 > 1e-4);
}

namespace {

void require_scan_pass(const std::vector<kiln::CheckResult>& results, std::int64_t rows, std::int64_t length,
                       std::int64_t state, const std::string& dtype, bool final_state) {
  // The per-dtype tolerance of selective_scan_cuda.space.json ("tolerance").
  const double tol = dtype == "bf16" ? 1e-2 : dtype == "fp16" ? 2e-3 : 2e-5;
  REQUIRE(results.size() == (final_state ? 2u : 1u));
  CHECK(results[0].output == "y");
  CHECK(results[0].dtype == dtype);
  CHECK(results[0].elements == static_cast<std::uint64_t>(rows * length));
  CHECK(results[0].unwritten == 0);
  CHECK(results[0].non_finite == 0);
  CHECK(results[0].compared > 0);
  CHECK(results[0].rel_l2 < tol);
  if (final_state) {
    CHECK(results[1].output == "final_state");
    CHECK(results[1].elements == static_cast<std::uint64_t>(rows * state));
    CHECK(results[1].unwritten == 0);
    CHECK(results[1].non_finite == 0);
    CHECK(results[1].rel_l2 < 2e-5);
  }
}

}  // namespace

TEST_CASE("nbody tree cuda: configs meet their tolerance with a valid tree for any n", "[nbody][tree][cuda]") {
  require_device();
  for (const std::string& config : cc::nbody_tree_configs()) {
    const double tolerance = cc::nbody_tree_tolerance(config);
    for (const char* bodies : {"plummer", "cube"}) {
      for (std::int64_t n : {1, 2, 3, 37, 1000, 4099, 70001}) {
        INFO(config << " " << bodies << " n=" << n);
        const cc::TreeCaseResult r = cc::nbody_tree_case(config, n, bodies, 40 + n);
        CHECK(r.invariants == "");
        CHECK(r.check.unwritten == 0);
        CHECK(r.check.non_finite == 0);
        CHECK(r.check.elements == static_cast<std::uint64_t>(3 * n));
        CHECK(r.check.rel_l2 <= tolerance);
      }
    }
    // As the harness times it: captured into a CUDA graph (the sort included).
    cc::Case graph;
    graph.mode = cc::Mode::graph;
    const cc::TreeCaseResult r = cc::nbody_tree_case(config, 20011, "plummer", 6, graph);
    CHECK(r.invariants == "");
    CHECK(r.check.rel_l2 <= tolerance);
  }
}

TEST_CASE("nbody tree cuda: the issue's size, 2^20 Plummer bodies, within 1e-3", "[nbody][tree][cuda]") {
  require_device();
  for (const std::string& config : cc::nbody_tree_configs()) {
    if (config.rfind("e3_", 0) != 0) continue;
    INFO(config);
    const cc::TreeCaseResult r = cc::nbody_tree_case(config, 1 << 20, "plummer", 1);
    CHECK(r.invariants == "");
    CHECK(r.check.unwritten == 0);
    CHECK(r.check.non_finite == 0);
    CHECK(r.check.compared == 3 * 1024);
    CHECK(r.check.rel_l2 <= 1e-3);
  }
}

TEST_CASE("nbody tree cuda: check() catches unwritten, non-finite and wrong elements", "[nbody][tree][cuda]") {
  require_device();
  const std::string config = "e3_METHODtree_WALKwarp_THREADS128_THETA50_LEAF16_QUAD1";
  cc::Case c;
  c.element = 3 * 500 + 1;
  c.tamper = cc::Tamper::poison;
  CHECK(cc::nbody_tree_case(config, 1000, "cube", 12, c).check.unwritten == 1);
  c.tamper = cc::Tamper::nan;
  CHECK(cc::nbody_tree_case(config, 1000, "cube", 12, c).check.non_finite == 1);
  c.tamper = cc::Tamper::offset;
  c.amount = 50.0f;  // cube accelerations are of order 100 at n = 1000: 50 in one component is far above 1e-3
  const kiln::CheckResult r = cc::nbody_tree_case(config, 1000, "cube", 12, c).check;
  CHECK(r.unwritten == 0);
  CHECK(r.non_finite == 0);
  CHECK(r.rel_l2 > 1e-3);
}

TEST_CASE("nbody tree cuda: the public function meets the tolerance it is given", "[nbody][tree][cuda][api]") {
  require_device();
  for (const char* bodies : {"plummer", "cube"}) {
    for (std::int64_t n : {1, 2, 1000, 65537, 300007}) {
      for (double tolerance : {2e-2, 1e-2, 1e-3, 5e-4, 1e-4, 1e-6}) {
        INFO(bodies << " n=" << n << " tolerance " << tolerance);
        const kiln::CheckResult r = cc::nbody_tree_api_case(n, bodies, tolerance, 3);
        CHECK(r.unwritten == 0);
        CHECK(r.non_finite == 0);
        CHECK(r.rel_l2 <= std::max(tolerance, 1e-5));
      }
    }
  }
}

TEST_CASE("nbody tree cuda: bad arguments throw NbodyError naming the argument, writing nothing",
          "[nbody][tree][cuda][api]") {
  require_device();
  int count = 1;
  for (int which = 0; which < count; ++which) {
    std::string expected;
    bool untouched = false;
    const std::string what = cc::nbody_tree_api_error(which, count, expected, untouched);
    INFO("bad argument " << which << ": expected \"" << expected << "\", got \"" << what << "\"");
    CHECK(what.find(expected) != std::string::npos);
    CHECK(untouched);
  }
  CHECK(count >= 12);
}

TEST_CASE("selective_scan cuda: configs pass on odd lengths, channel counts, groups and states", "[scan][cuda]") {
  require_device();
  // Lengths below, at and above a chunk, odd (1000, 3001, 4099) so that the last chunk ends inside
  // a thread's steps; 97 and 33 channels leave a partial channel block; groups of 4 and 3 channels;
  // state sizes that are no multiple of STATES (5, 7) and the largest (256).
  const struct {
    std::int64_t batch, channels, length, state, groups;
    const char* dtype;
  } shapes[] = {{2, 97, 1000, 16, 1, "bf16"}, {1, 8, 3001, 16, 2, "fp32"},  {3, 5, 1, 5, 1, "fp16"},
                {1, 12, 4099, 7, 3, "fp32"},  {1, 33, 2049, 16, 1, "fp16"}, {1, 4, 300, 256, 1, "fp32"},
                {1, 64, 8192, 16, 1, "bf16"}};
  for (const std::string& config : cc::selective_scan_configs()) {
    for (const auto& s : shapes) {
      INFO(config << " " << s.batch << "x" << s.channels << "x" << s.length << " state " << s.state << " groups "
                  << s.groups << " " << s.dtype);
      require_scan_pass(cc::selective_scan_case(config, s.batch, s.channels, s.length, s.state, s.groups, s.dtype, 31,
                                                40 + s.length),
                        s.batch * s.channels, s.length, s.state, s.dtype, true);
    }
    for (int options = 0; options < 32; ++options) {
      INFO(config << " options " << options);
      require_scan_pass(cc::selective_scan_case(config, 2, 9, 1500, 16, 3, "fp32", options, 7 + options),
                        18, 1500, 16, "fp32", options & 16);
    }
    cc::Case graph;
    graph.mode = cc::Mode::graph;
    require_scan_pass(cc::selective_scan_case(config, 1, 16, 1000, 16, 1, "bf16", 31, 3, graph), 16, 1000, 16, "bf16",
                      true);
  }
}

TEST_CASE("selective_scan cuda: the input rows drawn on the device are the reference's, bit for bit", "[scan][cuda]") {
  require_device();
  // Every dtype; softplus on and off (delta's range), z on and off; 2 groups.
  for (const char* dtype : {"fp32", "bf16", "fp16"}) {
    for (int options : {31, 31 & ~8, 31 & ~1}) {
      INFO(dtype << " options " << options);
      std::int64_t compared = 0;
      CHECK(cc::selective_scan_input_mismatches(2, 6, 3001, 16, 2, dtype, options, 11 + options, compared) == 0);
      CHECK(compared == 2 * 6 * 3001 * ((options & 1) ? 3 : 2) + 2 * 2 * 2 * 16 * 3001);
    }
  }
}

TEST_CASE("selective_scan cuda: check() catches unwritten, non-finite and wrong elements", "[scan][cuda]") {
  require_device();
  const std::string config = cc::selective_scan_configs().front();
  for (const std::string dtype : {"fp32", "bf16"}) {
    INFO(dtype);
    cc::Case c;
    c.element = 2 * 5 * 300 - 1;  // the last step of the last row
    c.tamper = cc::Tamper::poison;
    auto r = cc::selective_scan_case(config, 2, 5, 300, 16, 1, dtype, 31, 9, c);
    CHECK(r[0].unwritten == 1);
    c.tamper = cc::Tamper::nan;
    r = cc::selective_scan_case(config, 2, 5, 300, 16, 1, dtype, 31, 9, c);
    CHECK(r[0].non_finite == 1);
    c.tamper = cc::Tamper::offset;
    c.amount = 4.0f;  // |y| is about 0.1 to 1 here
    r = cc::selective_scan_case(config, 2, 5, 300, 16, 1, dtype, 31, 9, c);
    CHECK(r[0].unwritten == 0);
    CHECK(r[0].rel_l2 > (dtype == "bf16" ? 1e-2 : 2e-5));
  }
}

TEST_CASE("selective_scan cuda: the public function matches the fp64 reference", "[scan][cuda][api]") {
  require_device();
  require_scan_pass(cc::selective_scan_api_case(2, 97, 3001, 16, 1, "bf16", 5), 194, 3001, 16, "bf16", true);
  require_scan_pass(cc::selective_scan_api_case(1, 12, 1000, 16, 4, "fp16", 6), 12, 1000, 16, "fp16", true);
  require_scan_pass(cc::selective_scan_api_case(1, 7, 513, 9, 7, "fp32", 7), 7, 513, 9, "fp32", true);
}

TEST_CASE("selective_scan cuda: bad arguments throw SelectiveScanError naming the argument", "[scan][cuda][api]") {
  require_device();
  int count = 1;
  for (int which = 0; which < count; ++which) {
    std::string expected;
    const std::string what = cc::selective_scan_api_error(which, count, expected);
    INFO("bad argument " << which << ": expected \"" << expected << "\", got \"" << what << "\"");
    CHECK(what.rfind("kiln::cuda::selective_scan: ", 0) == 0);
    CHECK(what.find(expected) != std::string::npos);
  }
  CHECK(count >= 20);
}

TEST_CASE("topk cuda: configs pass the exact check on odd shapes, both modes and inputs", "[topk][cuda]") {
  require_device();
  // k = 1, k = n, k not a power of two, k above the warp lists (radix fallback), prime n, parts
  // shorter than k, many rows, the special input (NaN, infinities, signed zeros, ties), more rows
  // than a grid's y axis holds (air launches them in chunks). On 3 x 10007 at k = 2048 of the
  // special input, air's pass 0 appends about 5000 to 6000 candidates (every element until a
  // block has counted k, then about 40 % of the rest), more than its 4096-entry buffers at 128
  // and 256 threads: the row is read again. The shared selection's buffer holds every candidate of
  // 300 x 32771 at k = 256 (odd n: each row starts at another 16-byte offset, so heads and tails
  // vary) and of 4 x 65537 at k = 2048 (on the special input over a thousand ties at the k-th
  // key); on 1 x 3000017 of the special input the NaNs (largest) or the negative infinities
  // (smallest) alone, one element in 40 and all at or above the k-th key, overflow it, so every
  // sweep reads the row again. 1 x 16777219 gives air's blocks several full filter steps each
  // (the step with no passing element, taken on most steps, in both modes); on 3 x 10007 and
  // 2 x 300007 at k = 2048 a block's share is shorter than k, every element passes and overflows
  // the block's region of the buffer (its overflow flag makes the next pass read the row).
  const struct {
    std::int64_t rows, n, k;
  } shapes[] = {{1, 16384, 1},   {5, 4099, 37},    {3, 10007, 2048}, {2, 300007, 2048}, {170, 97, 96},
                {1, 3000017, 255}, {64, 2048, 2048}, {1000, 1021, 1},  {7, 65537, 300},   {1, 1, 1},
                {70000, 16, 3},  {300, 32771, 256}, {4, 65537, 2048}, {1, 16777219, 700}};
  for (const std::string& config : cc::topk_configs()) {
    for (const auto& s : shapes) {
      for (const std::string mode : {"largest", "smallest"}) {
        for (const std::string input : {"normal", "special"}) {
          INFO(config << " rows=" << s.rows << " n=" << s.n << " k=" << s.k << " " << mode << " " << input);
          const auto results = cc::topk_case(config, s.rows, s.n, s.k, mode, input, 23 + s.n);
          REQUIRE(results.size() == 1);
          CHECK(results[0].output == "topk");
          CHECK(results[0].elements == static_cast<std::uint64_t>(s.rows * s.k));
          CHECK(results[0].compared == results[0].elements);
          CHECK(results[0].unwritten == 0);
          CHECK(results[0].non_finite == 0);
          CHECK(results[0].rel_l2 == 0.0);
        }
      }
    }
  }
}

TEST_CASE("topk cuda: the issue's shapes from a captured graph", "[topk][cuda]") {
  require_device();
  cc::Case graph;
  graph.mode = cc::Mode::graph;
  for (const std::string& config : cc::topk_configs()) {
    INFO(config);
    kiln::CheckResult r = cc::topk_case(config, 1024, 32768, 256, "largest", "normal", 3, graph)[0];
    CHECK(r.unwritten == 0);
    CHECK(r.rel_l2 == 0.0);
    r = cc::topk_case(config, 1, std::int64_t{1} << 26, 1024, "largest", "normal", 4, graph)[0];
    CHECK(r.unwritten == 0);
    CHECK(r.rel_l2 == 0.0);
  }
}

// Rows whose candidates outgrow sample's small buffer (the 128-thread launch at k 16 holds 1376
// entries): in the inputs of seeds 14 and 19, rows 117 (1484 candidates) and 506 (1400) do, as
// kernels/topk/bench/sample_overflow.cpp counts them; 512 rows are compared in full.
TEST_CASE("topk cuda: a row that outgrows sample's small buffer is exact", "[topk][cuda]") {
  require_device();
  for (const std::uint64_t seed : {14u, 19u}) {
    INFO("seed " << seed);
    const kiln::CheckResult r =
        cc::topk_case("THREADS128_ALGOsample_BITS11_SPLIT1_REGS48", 512, 32768, 16, "largest", "normal", seed, cc::Case{})[0];
    CHECK(r.unwritten == 0);
    CHECK(r.rel_l2 == 0.0);
  }
}

TEST_CASE("topk cuda: check() catches an unwritten and a wrong value", "[topk][cuda]") {
  require_device();
  const std::string config = cc::topk_configs().front();
  cc::Case c;
  c.element = 2 * 37 + 5;
  c.tamper = cc::Tamper::poison;
  kiln::CheckResult r = cc::topk_case(config, 3, 4099, 37, "largest", "normal", 6, c)[0];
  CHECK(r.unwritten == 1);
  c.tamper = cc::Tamper::offset;
  c.amount = 1e-3f;
  r = cc::topk_case(config, 3, 4099, 37, "largest", "normal", 6, c)[0];
  CHECK(r.unwritten == 0);
  CHECK(r.rel_l2 == 1.0);
  CHECK(r.worst_at == 2 * 37 + 5);
}
