// The dispatch learned from measurements: tree learning on synthetic tables and on timings
// replayed offline from the committed H200 worklog, regret, the record's domain section, and the
// header written from it (compiled by a real compiler, byte-identical when rebuilt from the record).
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "committed_worklog.hpp"
#include "dispatch_tree.hpp"
#include "domain.hpp"
#include "domain_report.hpp"
#include "evaluate.hpp"
#include "header.hpp"
#include "kiln/gen/generate.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "manifest.hpp"
#include "process.hpp"
#include "record.hpp"
#include "temp_dir.hpp"

using namespace kiln::tuner;

namespace {

kiln::Problem rc(std::int64_t rows, std::int64_t cols, const std::string& dtype = "fp32") {
  kiln::Problem p;
  p.set("rows", rows);
  p.set("cols", cols);
  p.set("dtype", dtype);
  return p;
}

// Variant "narrow" is fastest below 1024 columns, "wide" from 4096; each is twice as slow on the
// other side. "middling" is 10 % behind the best everywhere.
TreeTable two_regimes() {
  TreeTable t;
  t.variants = {"narrow", "middling", "wide"};
  for (std::int64_t cols : {16, 64, 256, 1024, 4096, 16384, 65536}) {
    for (std::int64_t rows : {8, 512}) {
      t.points.push_back(rc(rows, cols));
      const double best = 1e-6 * static_cast<double>(rows * cols) / 1024;
      const bool narrow = cols <= 1024;
      t.time.push_back({narrow ? best : 2 * best, 1.1 * best, narrow ? 2 * best : best});
      t.floor_s.push_back(best / 2);
    }
  }
  return t;
}

// A table where each point's best is a different variant in no simple pattern.
TreeTable scattered() {
  TreeTable t;
  for (int v = 0; v < 5; ++v) t.variants.push_back("v" + std::to_string(v));
  for (int i = 0; i < 40; ++i) {
    t.points.push_back(rc(1 + (i * 37) % 101, 1 + (i * 53) % 997));
    std::vector<double> row;
    for (int v = 0; v < 5; ++v) row.push_back(1.0 + ((i * 7 + v * 13) % 11) / 10.0);
    t.time.push_back(row);
    t.floor_s.push_back(0.5);
  }
  return t;
}

std::vector<std::string> leaf_variants(const DispatchTree& tree) {
  std::vector<std::string> out;
  for (const auto& n : tree.nodes) {
    if (n.is_leaf()) out.push_back(n.variant);
  }
  return out;
}

double worst_regret_of(const DispatchTree& tree, const TreeTable& t) {
  double worst = 1;
  for (std::size_t i = 0; i < t.points.size(); ++i) {
    const std::string& v = tree.nodes[tree.leaf_of(t.points[i])].variant;
    const auto column = static_cast<std::size_t>(std::find(t.variants.begin(), t.variants.end(), v) - t.variants.begin());
    worst = std::max(worst, regret(t.time[i], column));
  }
  return worst;
}

const char* kDomainSpace = R"json({
  "kiln_space": 1, "kernel": "dtoy", "backend": "cpu",
  "harness": { "include": "dtoy.hpp", "workload": "dtoy::Workload" },
  "parameters": { "VEC": { "values": [4, 8, 16], "default": 8 } },
  "problem": {
    "dims": {
      "rows": { "type": "int", "domain": { "min": 1, "max": 65536, "scale": "log" } },
      "cols": { "type": "int", "domain": { "min": 1, "max": 65536, "scale": "log" } },
      "dtype": ["fp32", "bf16"]
    },
    "domain_constraints": [ "rows * cols >= 64" ],
    "work": { "bytes": "8 * rows * cols" }
  },
  "problems": [ { "rows": 512, "cols": 512, "dtype": "fp32" } ],
  "tuning": { "coverage": 8, "held_out": 4 }
})json";

Manifest domain_manifest(const kiln_test::TempDir& dir) {
  kiln_test::write_file(dir / "dtoy.space.json", kDomainSpace);
  kiln::gen::generate(dir / "dtoy.space.json", std::filesystem::path(KILN_SOURCE_DIR) / "presets/devices/cpu.json",
                      dir / "out");
  return load_manifest(dir / "out/manifest.json");
}

// A record whose tree sends bf16 to VEC16, fp32 with cols <= 2048 to VEC4, the rest to VEC8.
Record tree_record() {
  Record r;
  r.kernel = "dtoy";
  r.backend = "cpu";
  r.space_hash = "0123456789abcdef";
  r.preset = "cpu";
  r.device_name = "Test CPU";
  r.date = "2026-11-24";
  r.strategy = "exhaustive";
  TreeTable t;
  t.variants = {"dtoy__VEC4", "dtoy__VEC8", "dtoy__VEC16"};
  for (const std::string dtype : {"fp32", "bf16"}) {
    for (std::int64_t cols : {64, 1024, 4096, 65536}) {
      t.points.push_back(rc(64, cols, dtype));
      const double b = 1e-6;
      if (dtype == "bf16") {
        t.time.push_back({2 * b, 2 * b, b});
      } else if (cols <= 1024) {
        t.time.push_back({b, 2 * b, 3 * b});
      } else {
        t.time.push_back({2 * b, b, 3 * b});
      }
      t.floor_s.push_back(b / 4);
    }
  }
  RecordedDomain d;
  d.tree = learn_tree(t, {1.05});
  d.coverage_points = t.points.size();
  d.finalists = t.variants;
  d.held_out.push_back({rc(100, 3000), "dtoy__VEC8", 2e-6, "dtoy__VEC4", 1.8e-6, 1e-6, "memory bandwidth"});
  r.domain = d;
  return r;
}

// Compiles dir/use.cpp against the header written under dir/include (a real compiler, warnings as
// errors) and runs it: it exits 0 when the dispatch chose what it checks.
void compile_and_run_use(const kiln_test::TempDir& dir) {
  std::string output;
  auto sink = [&](const std::string& line) { output += line + "\n"; };
  ChildResult built = run_child({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", "c++", "-std=c++17", "-Wall", "-Werror",
                                 "-I" + (dir / "include").string(), "-I" + std::string(KILN_SOURCE_DIR) + "/autotune/include",
                                 (dir / "use.cpp").string(), "-o", (dir / "use").string()},
                                std::chrono::seconds(120), sink);
  INFO(output);
  REQUIRE(built.exited_cleanly());
  CHECK(run_child({(dir / "use").string()}, std::chrono::seconds(10), sink).exited_cleanly());
}

}  // namespace

TEST_CASE("one variant within the tolerance everywhere makes a single leaf", "[tree]") {
  TreeTable t = two_regimes();
  const DispatchTree loose = learn_tree(t, {2.0});
  CHECK(loose.leaf_count() == 1);
  CHECK(leaf_variants(loose) == std::vector<std::string>{"middling"});  // worst regret 1.1, not 2
  CHECK(loose.nodes[0].points == t.points.size());
  CHECK(loose.nodes[0].worst_regret == kiln_test::Approx(1.1));
}

TEST_CASE("two regimes split on the dim that separates them, at a log2 midpoint", "[tree]") {
  TreeTable t = two_regimes();
  const DispatchTree tree = learn_tree(t, {1.05});
  REQUIRE(tree.leaf_count() == 2);
  CHECK(tree.nodes[0].dim == "cols");
  REQUIRE(tree.nodes[0].threshold);
  CHECK(*tree.nodes[0].threshold == 2048);  // between 1024 and 4096
  CHECK(leaf_variants(tree) == std::vector<std::string>{"narrow", "wide"});
  CHECK(worst_regret_of(tree, t) <= 1.05);
  // The leaves' provenance: points, worst regret, geometric means of time and floor.
  const TreeNode& narrow = tree.nodes[static_cast<std::size_t>(tree.nodes[0].yes)];
  CHECK(narrow.points == 8);
  CHECK(narrow.worst_regret == kiln_test::Approx(1.0));
  CHECK(narrow.time_s / narrow.floor_s == kiln_test::Approx(2.0));
}

TEST_CASE("a symbolic dim splits on equality, and the tree is deterministic and survives JSON", "[tree]") {
  TreeTable t;
  t.variants = {"a", "b"};
  for (const std::string dtype : {"fp32", "bf16"}) {
    for (std::int64_t cols : {10, 100, 1000}) {
      t.points.push_back(rc(4, cols, dtype));
      t.time.push_back(dtype == "bf16" ? std::vector<double>{2.0, 1.0} : std::vector<double>{1.0, 2.0});
      t.floor_s.push_back(0);
    }
  }
  const DispatchTree tree = learn_tree(t, {1.05});
  REQUIRE(tree.leaf_count() == 2);
  CHECK(tree.nodes[0].dim == "dtype");
  CHECK(tree.nodes[0].symbol == std::optional<std::string>("fp32"));
  CHECK(tree.nodes[static_cast<std::size_t>(tree.nodes[0].yes)].floor_s == 0);  // no floor at some point
  CHECK(tree_to_json(learn_tree(t, {1.05})) == tree_to_json(tree));
  const DispatchTree back = tree_from_json(tree_to_json(tree));
  CHECK(tree_to_json(back) == tree_to_json(tree));
  for (const auto& p : t.points) CHECK(back.leaf_of(p) == tree.leaf_of(p));
}

TEST_CASE("among equally good splits, the one where the winner changes, not a chain peeling a run", "[tree]") {
  // "a" is fastest at every width but 128, where "b" is (and "a" twice as slow). Every split below
  // 128 leaves that one point unserved; the first of them (between 1 and 2) would start a chain
  // that peels one point at a time off the run "a" serves.
  TreeTable t;
  t.variants = {"a", "b"};
  for (std::int64_t cols : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    t.points.push_back(rc(4, cols));
    t.time.push_back(cols == 128 ? std::vector<double>{2.0, 1.0} : std::vector<double>{1.0, 2.0});
    t.floor_s.push_back(0);
  }
  const DispatchTree tree = learn_tree(t, {1.05});
  CHECK(tree.leaf_count() == 3);
  CHECK(tree.depth() == 2);
  REQUIRE(tree.nodes[0].threshold);
  CHECK(*tree.nodes[0].threshold == 64);  // between 64 and 128: the power of two there
  CHECK(worst_regret_of(tree, t) == 1.0);
}

TEST_CASE("a split lies at the power of two between its two values nearest their log2 midpoint, if any", "[tree]") {
  // Tile sizes and register caches are powers of two: a variant caching rows of 128 elements,
  // fastest at 79 columns, streams rows from 129 on, so a split between 79 and 138 goes at 128.
  auto threshold = [](std::int64_t a, std::int64_t b) {
    TreeTable t;
    t.variants = {"small", "large"};
    t.points = {rc(4, a), rc(4, b)};
    t.time = {{1.0, 2.0}, {2.0, 1.0}};
    t.floor_s = {0, 0};
    const DispatchTree tree = learn_tree(t, {1.05});
    REQUIRE(tree.nodes[0].threshold);
    return *tree.nodes[0].threshold;
  };
  CHECK(threshold(79, 138) == 128);
  CHECK(threshold(4, 100) == 16);    // 4, 8, 16, 32, 64 lie between; 20 is the midpoint
  CHECK(threshold(4, 6) == 4);       // a itself, when a power of two
  CHECK(threshold(5, 7) == 6);       // none between: the midpoint, rounded
  CHECK(threshold(1000, 1001) == 1000);
}

TEST_CASE("every coverage point is served within the tolerance, whatever the table", "[tree]") {
  const TreeTable t = scattered();
  const DispatchTree tree = learn_tree(t, {1.05});
  CHECK(worst_regret_of(tree, t) <= 1.05);
  CHECK(tree.depth() <= 12);
  std::size_t counted = 0;
  for (const auto& n : tree.nodes) counted += n.is_leaf() ? n.points : 0;
  CHECK(counted == t.points.size());
}

TEST_CASE("a leaf holds at least min_leaf_points points, and no split ends in two leaves of one variant", "[tree]") {
  const TreeTable t = scattered();
  for (std::size_t m : {2u, 4u, 7u}) {
    const DispatchTree tree = learn_tree(t, {1.05, 12, m});
    CHECK(tree.min_leaf_points == m);
    std::size_t counted = 0;
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const auto& n = tree.nodes[i];
      if (n.is_leaf()) {
        CHECK(n.points >= m);
        counted += n.points;
        continue;
      }
      const auto& yes = tree.nodes[static_cast<std::size_t>(n.yes)];
      const auto& no = tree.nodes[static_cast<std::size_t>(n.no)];
      CHECK_FALSE((yes.is_leaf() && no.is_leaf() && yes.variant == no.variant));
    }
    CHECK(counted == t.points.size());
  }
}

// Variant "a" is fastest everywhere but at two cliffs (points 3 and 7 of ten), where it is 1.5x
// "c"; "c" is 1.5x "a" everywhere else. Leaves of one point fit the cliffs and mislead their
// neighbours; leave-one-out sees that and takes larger leaves, which name "a" alone.
TEST_CASE("min_leaf_points auto: leave-one-out prefers leaves that carry across cliffs", "[tree]") {
  TreeTable t;
  t.variants = {"a", "c"};
  for (int i = 0; i < 10; ++i) {
    kiln::Problem p;
    p.set("n", std::int64_t{1024} << i);
    t.points.push_back(p);
    const bool cliff = i == 3 || i == 7;
    t.time.push_back(cliff ? std::vector<double>{1.5, 1.0} : std::vector<double>{1.0, 1.5});
    t.floor_s.push_back(0.5);
  }
  const DispatchTree fitted = learn_tree(t, {1.05, 12, 1});
  CHECK(worst_regret_of(fitted, t) == 1.0);
  CHECK(fitted.leaf_count() >= 5);  // each cliff a leaf of its own

  CHECK(choose_min_leaf_points(t, {1.05, 12, 0}) > 1);
  const DispatchTree chosen = learn_tree(t, {1.05, 12, 0});
  CHECK(chosen.min_leaf_points > 1);
  CHECK(leaf_variants(chosen) == std::vector<std::string>{"a"});

  // Two clean regimes keep their split.
  const DispatchTree regimes = learn_tree(two_regimes(), {1.05, 12, 0});
  CHECK(leaf_variants(regimes) == std::vector<std::string>{"narrow", "wide"});
}

// Four points one leaf must hold (min_leaf_points 4): "edge" is the fastest at three and 3x the
// best at the fourth; "steady" is 1.07x at the three and the fastest at the fourth. Served counts
// three points for "edge" and one for "steady"; the sum of log regrets is log 3 = 1.10 for "edge"
// and 3 log 1.07 = 0.20 for "steady".
TEST_CASE("fitting regret, a leaf names the variant of the smallest sum of log regrets, not the one that serves most points",
          "[tree]") {
  TreeTable t;
  t.variants = {"edge", "steady"};
  for (int i = 0; i < 4; ++i) {
    kiln::Problem p;
    p.set("n", std::int64_t{1} << (4 + i));
    t.points.push_back(p);
    t.time.push_back(i < 3 ? std::vector<double>{1.0, 1.07} : std::vector<double>{3.0, 1.0});
    t.floor_s.push_back(0.5);
  }
  CHECK(leaf_variants(learn_tree(t, {1.05, 12, 4})) == std::vector<std::string>{"edge"});
  const DispatchTree fitted = learn_tree(t, {1.05, 12, 4, TreeFit::regret});
  CHECK(leaf_variants(fitted) == std::vector<std::string>{"steady"});
  CHECK(fitted.nodes[0].worst_regret == kiln_test::Approx(1.07));
  // With leaves of one point allowed, both fits split off the fourth point and serve every point.
  for (TreeFit fit : {TreeFit::served, TreeFit::regret}) {
    const DispatchTree free = learn_tree(t, {1.05, 12, 1, fit});
    CHECK(worst_regret_of(free, t) == 1.0);
    CHECK(leaf_variants(free) == std::vector<std::string>{"edge", "steady"});
  }
}

TEST_CASE("fitting regret, every leaf holds min_leaf_points, each split lowers the sum of log regrets, and a node "
          "one variant serves is a leaf", "[tree]") {
  const TreeTable t = scattered();
  auto log_regret_sum = [&](const DispatchTree& tree) {
    double sum = 0;
    for (std::size_t i = 0; i < t.points.size(); ++i) {
      const std::string& v = tree.nodes[tree.leaf_of(t.points[i])].variant;
      const auto at = static_cast<std::size_t>(std::find(t.variants.begin(), t.variants.end(), v) - t.variants.begin());
      sum += std::log(regret(t.time[i], at));
    }
    return sum;
  };
  // The best single variant by that sum: the root's leaf when no split is allowed.
  const DispatchTree root = learn_tree(t, {1.05, 12, t.points.size(), TreeFit::regret});
  REQUIRE(root.leaf_count() == 1);
  for (std::size_t m : {1u, 3u, 6u}) {
    const DispatchTree tree = learn_tree(t, {1.05, 12, m, TreeFit::regret});
    CHECK(tree.min_leaf_points == m);
    CHECK(tree.leaf_count() > 1);
    CHECK(log_regret_sum(tree) < log_regret_sum(root));
    std::size_t counted = 0;
    for (const auto& n : tree.nodes) {
      if (!n.is_leaf()) continue;
      CHECK(n.points >= m);
      counted += n.points;
    }
    CHECK(counted == t.points.size());
  }
  // A table one variant serves within the tolerance everywhere is that variant's leaf, as served.
  TreeTable easy = scattered();
  for (auto& row : easy.time) row[2] = *std::min_element(row.begin(), row.end()) * 1.01;
  const DispatchTree one = learn_tree(easy, {1.05, 12, 1, TreeFit::regret});
  CHECK(leaf_variants(one) == std::vector<std::string>{"v2"});
}

// Rows of 1 and 2 columns in a domain of up to 1000: "cache2" (its rows of up to 2 columns in
// registers) is fastest at both, "cache8" 10 % behind, "stream" (any width) twice as slow. Nothing
// was measured past 2 columns.
TreeTable narrow_points() {
  TreeTable t;
  t.variants = {"cache2", "cache8", "stream"};
  for (std::int64_t cols : {1, 2}) {
    for (std::int64_t rows : {1000, 100000}) {
      t.points.push_back(rc(rows, cols));
      t.time.push_back({1e-6, 1.1e-6, 2e-6});
      t.floor_s.push_back(0.5e-6);
    }
  }
  return t;
}

TEST_CASE("a leaf is not stretched past its variant's reach where none of its points lies", "[tree]") {
  TreeTable t = narrow_points();
  // Without reaches: one leaf, cache2 for rows of any width.
  CHECK(leaf_variants(learn_tree(t, {1.05})) == std::vector<std::string>{"cache2"});

  t.reach = {{{"cols", 2}}, {{"cols", 8}}, {{"cols", 1000}}};
  t.upper = {{"cols", 1000}};
  const DispatchTree tree = learn_tree(t, {1.05});
  // cache2 up to 2 columns, then the best of those reaching further at the same points (cache8,
  // 1.1x) up to its 8, then stream, which reaches the domain's end.
  REQUIRE(tree.nodes.size() == 5);
  CHECK(tree.nodes[0].dim == "cols");
  CHECK(*tree.nodes[0].threshold == 2);
  CHECK(tree.nodes[2].dim == "cols");
  CHECK(*tree.nodes[2].threshold == 8);
  CHECK(leaf_variants(tree) == std::vector<std::string>{"cache2", "cache8", "stream"});
  CHECK(tree.nodes[1].points == 4);
  CHECK(tree.nodes[3].points == 0);  // past a reach: no point, no time
  CHECK(tree.nodes[4].points == 0);
  CHECK(tree.nodes[3].time_s == 0);
  CHECK(tree.nodes[tree.leaf_of(rc(5000, 5))].variant == "cache8");
  CHECK(tree.nodes[tree.leaf_of(rc(5000, 900))].variant == "stream");
  CHECK(worst_regret_of(tree, t) == kiln_test::Approx(1.0));  // the points are served as before
  // The tree survives its JSON, leaves without points included, and the report counts them.
  CHECK(tree_to_json(tree_from_json(tree_to_json(tree))) == tree_to_json(tree));
  RecordedDomain d;
  d.tree = tree;
  CHECK_THAT(domain_summary(d), kiln_test::ContainsSubstring("3 leaves, 2 of them past a variant's reach, depth 2"));
  d.tree = learn_tree(narrow_points(), {1.05});
  CHECK_THAT(domain_summary(d), kiln_test::ContainsSubstring("1 leaves, depth 0"));

  // A point past the reach where the variant still serves: it is trusted up to that point.
  TreeTable measured = narrow_points();
  measured.reach = t.reach;
  measured.upper = t.upper;
  measured.points.push_back(rc(1000, 5));
  measured.time.push_back({1e-6, 1.1e-6, 2e-6});
  measured.floor_s.push_back(0.5e-6);
  const DispatchTree trusted = learn_tree(measured, {1.05});
  CHECK(*trusted.nodes[0].threshold == 5);
  CHECK(trusted.nodes[trusted.leaf_of(rc(1000, 5))].variant == "cache2");
  CHECK(trusted.nodes[trusted.leaf_of(rc(1000, 6))].variant == "cache8");

  // A leaf whose extent ends within its variant's reach is left alone: a split at 2 columns
  // bounds the narrow leaf.
  TreeTable bounded = narrow_points();
  bounded.reach = t.reach;
  bounded.upper = {{"cols", 2}};
  CHECK(learn_tree(bounded, {1.05}).leaf_count() == 1);

  // A reach table that does not match the variants is refused.
  TreeTable wrong = narrow_points();
  wrong.reach = {{{"cols", 2}}};
  CHECK_THROWS(learn_tree(wrong, {1.05}));
}

TEST_CASE("a table with a missing or non-positive time is refused", "[tree]") {
  TreeTable t = two_regimes();
  t.time[3][1] = 0;
  CHECK_THROWS(learn_tree(t, {1.05}));
  t = two_regimes();
  t.time[2].pop_back();
  CHECK_THROWS(learn_tree(t, {1.05}));
}

TEST_CASE("regret is a variant's time over the point's fastest", "[tree]") {
  CHECK(regret({2.0, 1.0, 4.0}, 0) == 2.0);
  CHECK(regret({2.0, 1.0, 4.0}, 1) == 1.0);
  CHECK(median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(median({4.0, 1.0, 2.0, 3.0}) == 2.5);
  RecordedDomain d;
  d.held_out.push_back({rc(1, 1), "a", 3e-6, "b", 2e-6, 1e-6, "memory bandwidth"});
  d.held_out.push_back({rc(2, 2), "a", 2e-5, "a", 2e-5, 1.6e-5, "memory bandwidth"});
  const DomainFigures all = domain_figures(d);
  CHECK(all.points == 2);
  CHECK(all.worst_regret == kiln_test::Approx(1.5));
  CHECK(all.median_regret == kiln_test::Approx(1.25));
  CHECK(all.worst_ratio == kiln_test::Approx(3.0));
  const DomainFigures large = domain_figures(d, 10e-6);  // only the point with a 16 us floor
  CHECK(large.points == 1);
  CHECK(large.worst_ratio == kiln_test::Approx(1.25));
}

TEST_CASE("the coverage finalists are the fastest of each listed problem and by score, and the default", "[domain]") {
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  REQUIRE(m.variants.size() == 3);
  m.problems = {rc(512, 512), rc(8, 65536)};
  const auto vec = [&](const std::string& v) { return *m.variant_index("dtoy__VEC" + v); };
  auto outcome = [&](std::size_t index, double square, double wide) {
    VariantOutcome o;
    o.index = index;
    o.median_s[m.problems[0].key()] = square;
    o.median_s[m.problems[1].key()] = wide;
    o.score = std::sqrt(square * wide);
    return o;
  };
  // VEC4 is fastest on the square problem, VEC16 on the wide one; VEC8 is the default.
  std::vector<VariantOutcome> outcomes = {outcome(vec("4"), 1.0, 9.0), outcome(vec("8"), 3.0, 3.0),
                                          outcome(vec("16"), 9.0, 1.0)};
  CHECK(coverage_finalists(m, outcomes, 1) == std::set<std::size_t>{vec("4"), vec("8"), vec("16")});
  // A failed variant is never a finalist, whatever its times.
  outcomes[2].failure = kiln::worklog::FailureKind::runtime;
  outcomes[2].score.reset();
  CHECK(coverage_finalists(m, outcomes, 1) == std::set<std::size_t>{vec("4"), vec("8")});
  // The default is kept even when it is nowhere near the top.
  outcomes[1].median_s[m.problems[0].key()] = 50;
  outcomes[1].median_s[m.problems[1].key()] = 50;
  outcomes[1].score = 50;
  CHECK(coverage_finalists(m, outcomes, 1).count(vec("8")) == 1);
}

TEST_CASE("the probe points are each int dim's smallest coverage point, the middle one by size of several", "[domain]") {
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  m.problems = {rc(512, 512)};
  // Four points with one row, two with one column: of the one-row points the middle one by size
  // is 1 x 256 (of 64, 256, 1024 and 4096 elements, the lower middle), of the one-column points
  // 128 x 1 (the lower of two).
  m.coverage = {rc(64, 64), rc(1, 4096), rc(1, 64, "bf16"), rc(128, 1), rc(1, 1024), rc(4096, 1, "bf16"),
                rc(1, 256), rc(512, 512)};
  std::vector<std::string> keys;
  for (const auto& p : probe_points(m)) keys.push_back(p.key());
  CHECK(keys == std::vector<std::string>{rc(1, 256).key(), rc(128, 1).key()});
  // A listed problem at a dim's edge is timed anyway: it is no probe point.
  m.problems.push_back(rc(128, 1));
  keys.clear();
  for (const auto& p : probe_points(m)) keys.push_back(p.key());
  CHECK(keys == std::vector<std::string>{rc(1, 256).key()});
  // Without a domain there are none.
  Manifest plain = m;
  plain.coverage.clear();
  for (auto& d : plain.dims) d.range.reset();
  CHECK(probe_points(plain).empty());
}

TEST_CASE("a variant fastest only at a probe point is a coverage finalist", "[domain]") {
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  m.problems = {rc(512, 512), rc(8, 65536)};
  m.coverage = {rc(4096, 1), rc(64, 64), rc(512, 512)};
  REQUIRE(probe_points(m).size() == 2);  // 64 x 64 (the fewest rows) and 4096 x 1 (the fewest columns)
  const kiln::Problem narrow = rc(4096, 1);
  const auto vec = [&](const std::string& v) { return *m.variant_index("dtoy__VEC" + v); };
  auto outcome = [&](std::size_t index, double square, double wide, double one_column) {
    VariantOutcome o;
    o.index = index;
    o.median_s[m.problems[0].key()] = square;
    o.median_s[m.problems[1].key()] = wide;
    o.median_s[narrow.key()] = one_column;
    o.score = std::sqrt(square * wide);
    return o;
  };
  // VEC8 (the default) wins both listed problems; VEC4 is second on both and by score; VEC16 is
  // last on every listed problem but 3x faster than the others on rows of one column.
  std::vector<VariantOutcome> outcomes = {outcome(vec("4"), 2.0, 2.0, 3.5), outcome(vec("8"), 1.0, 1.0, 3.0),
                                          outcome(vec("16"), 9.0, 9.0, 1.0)};
  CHECK(coverage_finalists(m, outcomes, 1).count(vec("16")) == 1);
  CHECK(coverage_finalists(m, outcomes, 1).count(vec("4")) == 0);
  // Without its probe time (a worklog from before the probe points), the listed problems decide.
  outcomes[2].median_s.erase(narrow.key());
  CHECK(coverage_finalists(m, outcomes, 1) == std::set<std::size_t>{vec("8")});
}

TEST_CASE("a variant whose worklog lacks only a probe time runs when measuring, as every run does", "[domain]") {
  // needs_run decides whether a proposal is compiled in the batch and measured on the pool's GPUs;
  // a variant missing only its probe times used to be measured on the tuner's thread, compiled
  // one at a time (softmax_cuda on two H200: 9 s a variant, no GPU's worker used).
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  m.problems = {rc(512, 512)};
  m.coverage = {rc(4096, 1), rc(64, 64), rc(512, 512)};
  const std::vector<kiln::Problem> probes = probe_points(m);
  REQUIRE(probes.size() == 2);
  auto log = kiln::worklog::Worklog::open(dir / "w.sqlite");
  EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.log = &log;
  ctx.context_key = "ctx";
  const std::size_t v = *m.variant_index("dtoy__VEC8");
  const std::string hash = variant_hash(ctx, v);
  auto put = [&](const kiln::Problem& p, kiln::worklog::Phase phase) {
    kiln::worklog::Measurement meas;
    meas.key = {"ctx", m.kernel, m.variants[v].name, hash, p.key(), phase};
    meas.result = "{}";
    if (phase == kiln::worklog::Phase::bench) meas.median_s = 1e-6;
    log.put_measurement(meas);
  };
  CHECK(needs_run(ctx, v));  // nothing held
  for (const auto& p : m.problems) {
    put(p, kiln::worklog::Phase::check);
    put(p, kiln::worklog::Phase::bench);
  }
  for (const auto& p : m.checks) put(p, kiln::worklog::Phase::check);
  CHECK(needs_run(ctx, v));  // the probes are missing, and a tuning that measures adds them
  ctx.measure = false;
  CHECK_FALSE(needs_run(ctx, v));  // reading only: the worklog is complete without them
  ctx.measure = true;
  put(probes[0], kiln::worklog::Phase::bench);
  CHECK(needs_run(ctx, v));
  put(probes[1], kiln::worklog::Phase::bench);
  CHECK_FALSE(needs_run(ctx, v));
}

TEST_CASE("the screen points are the coverage points farthest from where every variant is timed", "[domain]") {
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  m.problems = {rc(512, 512)};
  m.coverage = {rc(4096, 1), rc(4, 64),     rc(512, 512),         rc(1024, 8),
                rc(256, 256), rc(64, 4096), rc(300, 300, "bf16")};
  REQUIRE(probe_points(m).size() == 2);  // 4 x 64 (the fewest rows) and 4096 x 1 (the fewest columns)
  m.tuning.screen = 3;
  // bf16 is timed nowhere yet: farthest of all. Then 64 x 4096 (6 powers of two from 512 x 512),
  // then 1024 x 8 (5 from 4096 x 1); 256 x 256 is 2 from 512 x 512.
  std::vector<kiln::Problem> points = screen_points(m);
  REQUIRE(points.size() == 3);
  CHECK(points[0].key() == rc(300, 300, "bf16").key());
  CHECK(points[1].key() == rc(64, 4096).key());
  CHECK(points[2].key() == rc(1024, 8).key());
  CHECK(screen_points(m) == points);  // deterministic
  m.tuning.screen = 100;  // as many as there are: the listed problem and the probe points aside
  CHECK(screen_points(m).size() == 4);
  m.tuning.screen = 0;
  CHECK(screen_points(m).empty());
}

TEST_CASE("screening makes a finalist of a variant that beats every finalist at a screen point", "[domain]") {
  // Replayed from a real worklog with every time in it, so the tuning (ctx.measure on) measures
  // nothing: the finalists come from the listed problem and the probe points (VEC8 everywhere),
  // VEC16 is 3x faster at 1024 x 8, the point farthest from those, and VEC4 is slower there.
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  m.problems = {rc(512, 512)};
  m.coverage = {rc(4096, 1), rc(64, 64), rc(256, 128), rc(1024, 8), rc(256, 256)};
  m.tuning.screen = 1;
  const std::map<std::string, double> rates = {{"dram_bytes_per_s", 1e9}};
  auto log = kiln::worklog::Worklog::open(dir / "w.sqlite");
  EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.log = &log;
  ctx.context_key = "ctx";
  const auto vec = [&](const std::string& v) { return *m.variant_index("dtoy__VEC" + v); };
  auto put = [&](std::size_t v, const kiln::Problem& p, double seconds) {
    kiln::worklog::Measurement meas;
    meas.key = {"ctx", m.kernel, m.variants[v].name, variant_hash(ctx, v), p.key(), kiln::worklog::Phase::bench};
    meas.result = "{}";
    meas.median_s = seconds;
    log.put_measurement(meas);
  };
  auto floor = [](const kiln::Problem& p) { return 8e-9 * static_cast<double>(p.i("rows") * p.i("cols")); };
  std::vector<VariantOutcome> outcomes;
  for (const std::string v : {"4", "8", "16"}) {
    VariantOutcome o;
    o.index = vec(v);
    o.complete = true;
    const double listed = v == "8" ? 1e-3 : 2e-3;
    o.median_s[m.problems[0].key()] = listed;
    o.score = listed;
    for (const auto& p : probe_points(m)) o.median_s[p.key()] = (v == "8" ? 1.5 : 2.0) * floor(p);
    outcomes.push_back(o);
  }
  const kiln::Problem hot = rc(1024, 8);
  for (const auto& p : m.coverage) put(vec("8"), p, (p.key() == hot.key() ? 6.0 : 1.5) * floor(p));
  put(vec("4"), hot, 8.0 * floor(hot));
  for (const auto& p : m.coverage) put(vec("16"), p, (p.key() == hot.key() ? 2.0 : 3.0) * floor(p));
  REQUIRE(coverage_finalists(m, outcomes, 1) == std::set<std::size_t>{vec("8")});

  std::ostringstream out;
  ctx.measure = true;
  time_coverage(ctx, outcomes, 1, out);
  INFO(out.str());
  CHECK(out.str().find("screen point rows=1024 cols=8 dtype=fp32: dtoy__VEC16 is 3x faster than every finalist; a finalist now") !=
        std::string::npos);
  CHECK(out.str().find("1 screen points timed on every variant; 1 finalist added") != std::string::npos);
  CHECK(out.str().find("coverage of 5 points timed on 2 finalists (0 measured now)") != std::string::npos);
  const TreeTable table = coverage_table(m, outcomes, rates);
  CHECK(table.variants == std::vector<std::string>{"dtoy__VEC8", "dtoy__VEC16"});

  // Not beyond the tolerance: no finalist added.
  put(vec("16"), hot, 5.8 * floor(hot));
  for (auto& o : outcomes) o.median_s.erase(hot.key());
  std::ostringstream again;
  time_coverage(ctx, outcomes, 1, again);
  CHECK(again.str().find("1 screen points timed on every variant; 0 finalists added") != std::string::npos);
}

TEST_CASE("the refinement points are the candidates farthest from the coverage points of their leaf", "[domain]") {
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  // Two leaves: cols <= 1024 (fitted to 64 x 64 and 64 x 256) and the rest (fitted to 64 x 4096).
  TreeTable t;
  t.variants = {"narrow", "wide"};
  t.points = {rc(64, 64), rc(64, 256), rc(64, 4096)};
  t.time = {{1, 2}, {1, 2}, {2, 1}};
  t.floor_s = {0.5, 0.5, 0.5};
  const DispatchTree tree = learn_tree(t, {1.05});
  REQUIRE(tree.leaf_count() == 2);
  m.refine_candidates = {rc(128, 128), rc(65536, 128), rc(64, 65536), rc(32, 2048), rc(300, 300, "bf16")};
  m.tuning.refine = 3;
  // bf16 reaches a leaf fitted to fp32 points only: farthest of all. Then 65536 x 128 (10 powers of
  // two of rows and 1 of cols from 64 x 64 and from 64 x 256), then 64 x 65536 (4 from 64 x 4096);
  // 32 x 2048 (2 from 64 x 4096) and 128 x 128 (2 from 64 x 64) come last.
  std::vector<kiln::Problem> points = refine_points(m, tree, t.points);
  REQUIRE(points.size() == 3);
  CHECK(points[0].key() == rc(300, 300, "bf16").key());
  CHECK(points[1].key() == rc(65536, 128).key());
  CHECK(points[2].key() == rc(64, 65536).key());
  CHECK(refine_points(m, tree, t.points) == points);  // deterministic
  m.tuning.refine = 100;  // as many as there are
  CHECK(refine_points(m, tree, t.points).size() == 5);
  m.tuning.refine = 0;
  CHECK(refine_points(m, tree, t.points).empty());
}

TEST_CASE("refinement points join the coverage and the dispatch is learned again over them", "[domain]") {
  // Replayed from a real worklog with every time in it, so the tuning (ctx.measure on) measures
  // nothing: VEC8 is fastest at every coverage point (one leaf), VEC16 three times faster at
  // 4096 x 4096, the candidate farthest from the coverage.
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  m.problems = {rc(512, 512)};
  m.coverage = {rc(64, 64), rc(256, 128), rc(256, 256), rc(1024, 64)};
  m.held_out = {rc(128, 128)};
  m.refine_candidates = {rc(32, 32), rc(4096, 4096), rc(8, 16)};
  m.tuning.refine = 1;
  const std::map<std::string, double> rates = {{"dram_bytes_per_s", 1e9}};
  auto log = kiln::worklog::Worklog::open(dir / "w.sqlite");
  EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.log = &log;
  ctx.context_key = "ctx";
  const auto vec = [&](const std::string& v) { return *m.variant_index("dtoy__VEC" + v); };
  auto floor = [](const kiln::Problem& p) { return 8e-9 * static_cast<double>(p.i("rows") * p.i("cols")); };
  auto put = [&](std::size_t v, const kiln::Problem& p, double seconds) {
    kiln::worklog::Measurement meas;
    meas.key = {"ctx", m.kernel, m.variants[v].name, variant_hash(ctx, v), p.key(), kiln::worklog::Phase::bench};
    meas.result = "{}";
    meas.median_s = seconds;
    log.put_measurement(meas);
  };
  const kiln::Problem far = rc(4096, 4096);
  const std::map<std::string, std::pair<double, double>> factor = {  // (coverage and held out, at `far`)
      {"4", {2.0, 4.0}}, {"8", {1.0, 3.0}}, {"16", {1.5, 1.0}}};
  std::vector<VariantOutcome> outcomes;
  for (const auto& [v, f] : factor) {
    VariantOutcome o;
    o.index = vec(v);
    o.complete = true;
    o.score = f.first;
    for (const auto& p : m.coverage) o.median_s[p.key()] = f.first * floor(p);
    for (const auto& p : m.held_out) put(vec(v), p, f.first * floor(p));
    outcomes.push_back(o);
  }

  SECTION("without their times in the worklog, the dispatch stays the coverage's") {
    ctx.measure = false;
    Record record;
    std::ostringstream out;
    fit_domain(ctx, outcomes, rates, record, out);
    INFO(out.str());
    CHECK(out.str().find("refinement points (farthest from their leaf's coverage): rows=4096 cols=4096 dtype=fp32") !=
          std::string::npos);
    CHECK(out.str().find("3 of the 3 variants have no time at every refinement point yet; the dispatch stays") !=
          std::string::npos);
    REQUIRE(record.domain);
    CHECK(record.domain->refine_points == 0);
    CHECK(record.domain->coverage_points == 4);
    CHECK(record.domain->tree->leaf_count() == 1);
  }
  SECTION("with some of them, the dispatch stays the coverage's until all are timed") {
    put(vec("8"), far, 3.0 * floor(far));
    ctx.measure = false;
    Record record;
    std::ostringstream out;
    fit_domain(ctx, outcomes, rates, record, out);
    INFO(out.str());
    CHECK(out.str().find("2 of the 3 variants have no time at every refinement point yet") != std::string::npos);
    REQUIRE(record.domain);
    CHECK(record.domain->refine_points == 0);
    CHECK(record.domain->tree->leaf_count() == 1);
  }
  SECTION("with them, the dispatch is learned again over both") {
    for (const auto& [v, f] : factor) put(vec(v), far, f.second * floor(far));
    ctx.measure = true;
    Record record;
    std::ostringstream out;
    fit_domain(ctx, outcomes, rates, record, out);
    INFO(out.str());
    CHECK(out.str().find("1 refinement points timed on 3 variants; dispatch learned again over 5 points") !=
          std::string::npos);
    REQUIRE(record.domain);
    CHECK(record.domain->refine_points == 1);
    CHECK(record.domain->coverage_points == 5);
    CHECK(record.domain->tree->leaf_count() == 2);
    CHECK(dispatched_variant(m, record, far) == "dtoy__VEC16");
    CHECK(dispatched_variant(m, record, rc(64, 64)) == "dtoy__VEC8");
    CHECK(record.domain->coverage_worst_regret == Approx(1.0));
    // The record keeps the count through JSON.
    const Record back = record_from_json(record_to_json(record), "record");
    CHECK(back.domain->refine_points == 1);
  }
}

TEST_CASE("a listed problem the tree serves too slowly gets its fastest variant, ahead of the tree", "[domain]") {
  // VEC8 is fastest at every coverage point (one leaf); at the listed problem 512 x 512 VEC16 is
  // (times from the outcomes, the held-out ones from the worklog: nothing is measured).
  kiln_test::TempDir dir;
  Manifest m = domain_manifest(dir);
  const kiln::Problem listed = rc(512, 512);
  m.problems = {listed, rc(2048, 64)};
  m.coverage = {rc(64, 64), rc(256, 128), rc(256, 256), rc(1024, 64)};
  m.held_out = {rc(128, 128)};
  const std::map<std::string, double> rates = {{"dram_bytes_per_s", 1e9}};
  auto log = kiln::worklog::Worklog::open(dir / "w.sqlite");
  EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.log = &log;
  ctx.context_key = "ctx";
  ctx.measure = false;
  const auto vec = [&](const std::string& v) { return *m.variant_index("dtoy__VEC" + v); };
  auto floor = [](const kiln::Problem& p) { return 8e-9 * static_cast<double>(p.i("rows") * p.i("cols")); };
  auto outcomes_with = [&](double vec16_at_listed) {
    std::vector<VariantOutcome> outcomes;
    for (const auto& [v, f] : std::map<std::string, double>{{"4", 2.0}, {"8", 1.0}, {"16", 1.5}}) {
      VariantOutcome o;
      o.index = vec(v);
      o.complete = true;
      o.score = f;
      for (const auto& p : m.coverage) o.median_s[p.key()] = f * floor(p);
      for (const auto& p : m.problems) o.median_s[p.key()] = f * floor(p);
      if (v == "16") o.median_s[listed.key()] = vec16_at_listed * floor(listed);
      for (const auto& p : m.held_out) {
        kiln::worklog::Measurement meas;
        meas.key = {"ctx", m.kernel, m.variants[o.index].name, variant_hash(ctx, o.index), p.key(), kiln::worklog::Phase::bench};
        meas.result = "{}";
        meas.median_s = f * floor(p);
        log.put_measurement(meas);
      }
      outcomes.push_back(o);
    }
    return outcomes;
  };

  SECTION("three times faster there: dispatched exactly, the tree elsewhere") {
    Record record;
    std::ostringstream out;
    fit_domain(ctx, outcomes_with(1.0 / 3), rates, record, out);
    INFO(out.str());
    REQUIRE(record.domain);
    CHECK(record.domain->tree->leaf_count() == 1);
    REQUIRE(record.domain->listed.size() == 1);
    const ListedPoint& l = record.domain->listed[0];
    CHECK(l.problem == listed);
    CHECK(l.variant == "dtoy__VEC16");
    CHECK(l.tree_variant == "dtoy__VEC8");
    CHECK(l.tree_s / l.time_s == Approx(3.0));
    CHECK(l.floor_s > 0);
    CHECK(dispatched_variant(m, record, listed) == "dtoy__VEC16");
    CHECK(dispatched_variant(m, record, rc(512, 513)) == "dtoy__VEC8");
    CHECK(domain_summary(*record.domain).find("listed: 1 problem dispatched exactly, ahead of the tree (its variant 3.00x "
                                              "slower there)") != std::string::npos);
    // Through JSON, and into the header ahead of the tree.
    record.kernel = m.kernel;
    const Record back = record_from_json(record_to_json(record), "record");
    REQUIRE(back.domain->listed.size() == 1);
    CHECK(back.domain->listed[0].problem == listed);
    CHECK(record_to_json(back) == record_to_json(record));
    std::vector<std::string> warnings;
    const std::string header = dispatch_header(m, back, warnings);
    CHECK(warnings.empty());
    const auto exact = header.find("  if (p.rows == 512 && p.cols == 512 && p.dtype == \"fp32\") {\n    return launch(VEC16{});");
    CHECK(exact != std::string::npos);
    CHECK(exact < header.find("return launch(VEC8{});  // leaf 0"));
  }
  SECTION("within the tolerance there: the tree serves it") {
    Record record;
    std::ostringstream out;
    fit_domain(ctx, outcomes_with(1.0 / 1.04), rates, record, out);
    REQUIRE(record.domain);
    CHECK(record.domain->listed.empty());
    CHECK_FALSE(record_to_json(record).at("domain").contains("listed"));
  }
}

TEST_CASE("a record's listed problems are read strictly", "[domain]") {
  auto j = record_to_json(tree_record());
  j["domain"]["listed"] = nlohmann::ordered_json::array(
      {{{"problem", {{"rows", 64}, {"cols", 100}, {"dtype", "fp32"}}}, {"variant", "dtoy__VEC16"}, {"time_s", 1e-6},
        {"tree_variant", "dtoy__VEC4"}, {"tree_s", 2e-6}, {"floor_s", 0.0}}});
  CHECK(record_from_json(j, "record").domain->listed.size() == 1);
  auto negative = j;
  negative["domain"]["listed"][0]["time_s"] = -1.0;
  CHECK_THROWS(record_from_json(negative, "record"));
  auto missing = j;
  missing["domain"]["listed"][0].erase("tree_s");
  CHECK_THROWS(record_from_json(missing, "record"));
  auto treeless = j;
  treeless["domain"].erase("tree");
  CHECK_THROWS(record_from_json(treeless, "record"));
}

TEST_CASE("a wrong field of a record is one error naming the file and the field's JSON pointer", "[domain]") {
  auto good = record_to_json(tree_record());
  good["domain"]["listed"] = nlohmann::ordered_json::array(
      {{{"problem", {{"rows", 64}, {"cols", 100}, {"dtype", "fp32"}}}, {"variant", "dtoy__VEC16"}, {"time_s", 1e-6},
        {"tree_variant", "dtoy__VEC4"}, {"tree_s", 2e-6}, {"floor_s", 0.0}}});
  REQUIRE(record_from_json(good, "r.json").domain);
  REQUIRE(good.at("domain").at("held_out").size() > 0);
  const struct {
    const char* pointer;
    nlohmann::ordered_json value;  // null: the field removed
    const char* said;
  } cases[] = {
      {"/kernel", 5, "/kernel: "},
      {"/kiln_record", 2, "/kiln_record: a record of format 1 is expected"},
      {"/device/name", nullptr, "/device/name: required key is missing"},
      {"/counts", "x", "/counts: "},
      {"/rates/fp32_flops", "fast", "/rates/fp32_flops: expected a positive number"},
      {"/domain/regret_tolerance", 0, "/domain/regret_tolerance: expected a positive number, got 0"},
      {"/domain/coverage/points", -3, "/domain/coverage/points: expected a whole number >= 0"},
      {"/domain/held_out/0/dispatched", 5, "/domain/held_out/0/dispatched: "},
      {"/domain/held_out/0/best_s", 0, "/domain/held_out/0/best_s: expected a positive number, got 0"},
      {"/domain/held_out/0/floor_s", -1.0, "/domain/held_out/0/floor_s: expected a number >= 0"},
      {"/domain/held_out/0/problem", "rows", "/domain/held_out/0/problem: expected an object"},
      {"/domain/listed/0/time_s", -1.0, "/domain/listed/0/time_s: expected a positive number"},
      {"/domain/listed/0/tree_s", nullptr, "/domain/listed/0/tree_s: required key is missing"},
      {"/domain/finalists", "all", "/domain/finalists: "},
      {"/domain/tree/dim", 7, "/domain/tree/dim: "},
      {"/domain/tree/then/then", "leaf", "/domain/tree/then/then: expected an object"},
  };
  for (const auto& c : cases) {
    INFO(c.pointer);
    auto bad = good;
    const nlohmann::ordered_json::json_pointer at(c.pointer);
    if (!bad.contains(at)) {
      // rates may be empty in the toy record: add the member first
      bad[at] = 1.0;
    }
    if (c.value.is_null()) {
      bad[at.parent_pointer()].erase(at.back());
    } else {
      bad[at] = c.value;
    }
    try {
      (void)record_from_json(bad, "r.json");
      FAIL("read without an error");
    } catch (const std::exception& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.rfind("r.json: ", 0) == 0);
      CHECK(what.find(c.said) != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find("[json.exception") == std::string::npos);
    }
  }
}

TEST_CASE("a manifest whose problems do not fit its dims is refused with the file, the set and the dim", "[domain]") {
  kiln_test::TempDir dir;
  domain_manifest(dir);
  const auto file = dir / "out/manifest.json";
  const nlohmann::ordered_json good = nlohmann::ordered_json::parse(kiln_test::read_file(file));
  REQUIRE(good.at("coverage").size() > 0);
  struct Case {
    const char* set;
    nlohmann::ordered_json problem;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"coverage", {{"rows", "many"}, {"cols", 8}, {"dtype", "fp32"}}, "'rows' is an int dim, got a symbol"},
      {"held_out", {{"rows", 8}, {"cols", 8}}, "no value for the dim 'dtype'"},
      {"problems", {{"rows", 8}, {"cols", 8}, {"dtype", 4}}, "'dtype' is a symbolic dim, got an integer"},
      {"checks", {{"rows", 8}, {"cols", 8}, {"dtype", "fp64"}}, "'fp64' is not a value of the dim 'dtype'"},
      {"refine_candidates", {{"rows", 8}, {"cols", 8}, {"dtype", "fp32"}, {"depth", 2}}, "'depth' is not a dim"},
  };
  for (const auto& c : cases) {
    nlohmann::ordered_json bad = good;
    bad[c.set] = nlohmann::ordered_json::array({c.problem});
    const auto path = dir / (std::string(c.set) + ".json");
    kiln_test::write_file(path, bad.dump());
    INFO(c.set);
    CHECK_THROWS_WITH(load_manifest(path), kiln_test::ContainsSubstring(path.string()) &&
                                               kiln_test::ContainsSubstring("/" + std::string(c.set) + "/0 (") &&
                                               kiln_test::ContainsSubstring(c.message));
  }
}

TEST_CASE("a tree learned from the committed H200 softmax timings serves every problem within 5 %", "[tree]") {
  auto log = kiln::worklog::Worklog::open(kiln_test::committed_h200_worklog(),
                                          kiln::worklog::OpenMode::read_only);
  std::string context;
  for (const auto& s : log.sessions()) {
    if (s.kernel == "softmax_cuda") context = s.context_key;
  }
  REQUIRE(!context.empty());
  std::map<std::string, std::map<std::string, double>> times;  // variant -> problem key -> median
  std::vector<std::string> keys;
  for (const auto& m : log.measurements(context, "softmax_cuda")) {
    if (m.key.phase != kiln::worklog::Phase::bench || m.status != kiln::worklog::MeasurementStatus::ok) continue;
    times[m.key.variant][m.key.problem_key] = median_of(m);
  }
  // The problems every variant was timed on (the listed ones; coverage and held-out points are
  // timed on finalists only).
  std::map<std::string, std::size_t> timed_by;
  for (const auto& [variant, by_key] : times) {
    for (const auto& [key, median] : by_key) ++timed_by[key];
  }
  for (const auto& [key, count] : timed_by) {
    if (count == times.size()) keys.push_back(key);
  }
  REQUIRE(keys.size() >= 4);
  TreeTable t;
  for (const auto& key : keys) {
    kiln::Problem p;
    std::istringstream words(key);
    for (std::string word; words >> word;) {
      const auto eq = word.find('=');
      const std::string value = word.substr(eq + 1);
      if (std::isdigit(static_cast<unsigned char>(value[0]))) {
        p.set(word.substr(0, eq), static_cast<std::int64_t>(std::stoll(value)));
      } else {
        p.set(word.substr(0, eq), value);
      }
    }
    t.points.push_back(p);
    t.time.emplace_back();
    t.floor_s.push_back(0);
  }
  for (const auto& [variant, by_key] : times) {
    if (by_key.size() != keys.size()) continue;
    t.variants.push_back(variant);
    for (std::size_t i = 0; i < keys.size(); ++i) t.time[i].push_back(by_key.at(keys[i]));
  }
  REQUIRE(t.variants.size() >= 40);
  const DispatchTree tree = learn_tree(t, {1.05});
  CHECK(worst_regret_of(tree, t) <= 1.05);
  CHECK(tree.leaf_count() >= 2);  // the buckets' winners differ: one variant does not serve all
  CHECK(tree.leaf_count() <= keys.size());
  CHECK(tree_to_json(learn_tree(t, {1.05})) == tree_to_json(tree));
}

TEST_CASE("the header of a learned dispatch compiles, reads like code, and rebuilds byte for byte from the record",
          "[header]") {
  kiln_test::TempDir dir("kiln-domain-header");
  const Manifest m = domain_manifest(dir);
  REQUIRE(m.has_domain());
  CHECK(m.coverage.size() == 8);
  CHECK(m.held_out.size() == 4);
  const Record record = tree_record();
  std::vector<std::string> warnings;
  const std::string header = dispatch_header(m, record, warnings);
  CHECK(warnings.empty());
  CHECK(header.find("if (p.dtype == \"fp32\") {") != std::string::npos);
  CHECK(header.find("if (p.cols <= 2048) {") != std::string::npos);
  CHECK(header.find("return launch(VEC4{});  // leaf 0: 2 coverage points, worst regret 1") != std::string::npos);
  CHECK(header.find("enum class Bucket") == std::string::npos);
  // From the record's text alone: the same bytes.
  const Record again = record_from_json(nlohmann::ordered_json::parse(record_text(record)), "record");
  CHECK(record_text(again) == record_text(record));
  CHECK(dispatch_header(m, again, warnings) == header);
  CHECK(dispatched_variant(m, again, rc(3, 5000, "fp32")) == "dtoy__VEC8");
  CHECK(dispatched_variant(m, again, rc(3, 5, "bf16")) == "dtoy__VEC16");

  kiln_test::write_file(dir / "include/kiln/tuned/dtoy.hpp", header);
  kiln_test::write_file(dir / "use.cpp", R"(
#include <cstring>
#include "kiln/tuned/dtoy.hpp"
using namespace kiln::tuned::dtoy;
constexpr Problem narrow{64, 100, kiln::Choice{"fp32"}};
constexpr Problem wide{64, 100000, kiln::Choice{"fp32"}};
constexpr Problem half{64, 100, kiln::Choice{"bf16"}};
static_assert(provenance(narrow).tuned, "tuned");
static_assert(provenance(narrow).ratio > 3.9 && provenance(narrow).ratio < 4.1, "ratio of the leaf");
int main() {
  int a = dispatch(narrow, [](auto config) { return decltype(config)::VEC; });
  int b = dispatch(wide, [](auto config) { return decltype(config)::VEC; });
  int c = dispatch(half, [](auto config) { return decltype(config)::VEC; });
  bool learned = std::strcmp(provenance(wide).selection, "learned dispatch") == 0;
  return a == 4 && b == 8 && c == 16 && learned ? 0 : 1;
}
)");
  compile_and_run_use(dir);
}

TEST_CASE("a listed problem's exact dispatch compiles and wins over the tree only there", "[header]") {
  kiln_test::TempDir dir("kiln-domain-listed");
  const Manifest m = domain_manifest(dir);
  Record record = tree_record();
  record.domain->listed.push_back({rc(64, 100, "fp32"), "dtoy__VEC16", 1e-6, "dtoy__VEC4", 2e-6, 0.5e-6});
  std::vector<std::string> warnings;
  const std::string header = dispatch_header(m, record, warnings);
  CHECK(warnings.empty());
  CHECK(header.find("return launch(VEC16{});  // listed problem: 1 us; the tree's 2 us (2x)") != std::string::npos);
  kiln_test::write_file(dir / "include/kiln/tuned/dtoy.hpp", header);
  kiln_test::write_file(dir / "use.cpp", R"(
#include <cstring>
#include "kiln/tuned/dtoy.hpp"
using namespace kiln::tuned::dtoy;
constexpr Problem listed{64, 100, kiln::Choice{"fp32"}};
constexpr Problem beside{64, 101, kiln::Choice{"fp32"}};
constexpr Problem other_type{64, 100, kiln::Choice{"bf16"}};
static_assert(provenance(listed).ratio > 1.9 && provenance(listed).ratio < 2.1, "the listed problem's own figures");
int main() {
  int a = dispatch(listed, [](auto config) { return decltype(config)::VEC; });
  int b = dispatch(beside, [](auto config) { return decltype(config)::VEC; });
  int c = dispatch(other_type, [](auto config) { return decltype(config)::VEC; });
  bool exact = std::strcmp(provenance(listed).selection, "listed problem") == 0;
  bool learned = std::strcmp(provenance(beside).selection, "learned dispatch") == 0;
  return a == 16 && b == 4 && c == 16 && exact && learned ? 0 : 1;
}
)");
  compile_and_run_use(dir);
  // A listed problem whose variant the space lost is left to the tree, with a warning.
  record.domain->listed[0].variant = "dtoy__VEC3";
  warnings.clear();
  const std::string without = dispatch_header(m, record, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("the listed problem rows=64 cols=100 dtype=fp32") != std::string::npos);
  CHECK(without.find("p.cols == 100") == std::string::npos);
}

TEST_CASE("without a record, or with a leaf the space lost, a domain header dispatches the default", "[header]") {
  kiln_test::TempDir dir("kiln-domain-header");
  const Manifest m = domain_manifest(dir);
  std::vector<std::string> warnings;
  const std::string untuned = dispatch_header(m, std::nullopt, warnings);
  CHECK(untuned.find("return launch(DefaultConfig{});") != std::string::npos);
  CHECK(untuned.find("Not tuned") != std::string::npos);
  Record r = tree_record();
  for (auto& n : r.domain->tree->nodes) {
    if (n.variant == "dtoy__VEC16") n.variant = "dtoy__VEC32";
  }
  const std::string header = dispatch_header(m, r, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("dtoy__VEC32") != std::string::npos);
  CHECK(header.find("return launch(VEC8{});  // leaf 2") != std::string::npos);  // the default
}

TEST_CASE("the report gives the held-out figures and an escaped SVG heat map", "[report]") {
  Record r = tree_record();
  r.kernel = "dtoy<&>";
  const std::string md = domain_markdown(r, "maps");
  CHECK(md.find("| all | 1 | 1.111 | 1.111 | 2.00 | 2.00 |") != std::string::npos);
  CHECK(md.find("| floor >= 10 us | 0 | - | - | - | - |") != std::string::npos);  // no point there, no figure
  CHECK(md.find("Worst by regret") != std::string::npos);
  CHECK(md.find("maps/dtoy&lt;&>_floor.svg") != std::string::npos);
  const std::string svg = heat_map_svg(r, false);
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.find("dtoy&lt;&amp;&gt;") != std::string::npos);
  CHECK(svg.find("dtoy<&>") == std::string::npos);
  CHECK(svg.find("rows=100 cols=3000 dtype=fp32: 2.000") != std::string::npos);
  CHECK(heat_map_svg(r, true).find("1.111") != std::string::npos);
}

// Variant "small" is fastest where rows * cols <= 4096 (one block's tile), "big" beyond: along
// either dim alone the winner alternates, so without the feature no split serves the points.
TEST_CASE("a feature over the dims is split on like a dim, and its header computes it", "[tree][header]") {
  kiln_test::TempDir dir("kiln-domain-feature");
  std::string space = kDomainSpace;
  const std::string constraints = R"("domain_constraints": [ "rows * cols >= 64" ],)";
  space.replace(space.find(constraints), constraints.size(), constraints + R"( "features": { "cells": "rows * cols" },)");
  kiln_test::write_file(dir / "dtoy.space.json", space);
  kiln::gen::generate(dir / "dtoy.space.json", std::filesystem::path(KILN_SOURCE_DIR) / "presets/devices/cpu.json",
                      dir / "out");
  const Manifest m = load_manifest(dir / "out/manifest.json");
  REQUIRE(m.features.size() == 1);
  CHECK(m.with_features(rc(3, 5)).i("cells") == 15);

  TreeTable t;
  t.variants = {"dtoy__VEC4", "dtoy__VEC16"};
  for (std::int64_t rows : {4, 16, 64, 256, 1024}) {
    for (std::int64_t cols : {4, 16, 64, 256, 1024}) {
      t.points.push_back(m.with_features(rc(rows, cols)));
      const bool small = rows * cols <= 4096;
      t.time.push_back({small ? 1e-6 : 3e-6, small ? 3e-6 : 1e-6});
      t.floor_s.push_back(5e-7);
    }
  }
  const DispatchTree tree = learn_tree(t, {1.05});
  CHECK(tree.leaf_count() == 2);
  CHECK(tree.nodes[0].dim == "cells");
  CHECK(worst_regret_of(tree, t) == 1.0);
  TreeTable plain = t;
  for (auto& p : plain.points) p = rc(p.i("rows"), p.i("cols"));
  CHECK(learn_tree(plain, {1.05}).leaf_count() > 2);

  Record r = tree_record();
  r.domain->tree = tree;
  CHECK(dispatched_variant(m, r, rc(32, 32)) == "dtoy__VEC4");
  CHECK(dispatched_variant(m, r, rc(100, 100)) == "dtoy__VEC16");
  std::vector<std::string> warnings;
  const std::string header = dispatch_header(m, r, warnings);
  CHECK(warnings.empty());
  INFO(header);
  CHECK(header.find("if ((p.rows * p.cols) <= 8192) {") != std::string::npos);
  kiln_test::write_file(dir / "include/kiln/tuned/dtoy.hpp", header);
  kiln_test::write_file(dir / "use.cpp", R"(
#include "kiln/tuned/dtoy.hpp"
using namespace kiln::tuned::dtoy;
int main() {
  int a = dispatch(Problem{32, 32, kiln::Choice{"fp32"}}, [](auto config) { return decltype(config)::VEC; });
  int b = dispatch(Problem{100, 100, kiln::Choice{"fp32"}}, [](auto config) { return decltype(config)::VEC; });
  return a == 4 && b == 16 ? 0 : 1;
}
)");
  compile_and_run_use(dir);

  // A record splitting on a name the space has neither as dim nor as feature: the default, said why.
  r.domain->tree->nodes[0].dim = "area";
  dispatch_header(m, r, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("'area', not a dim or feature of the space") != std::string::npos);
}
