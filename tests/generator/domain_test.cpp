// Problem domains: loading, and the coverage and held-out points drawn from them. The bad inputs
// are in the corpus of bad/ (domain_*.space.json), checked by generator_space_test.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "gen_test_support.hpp"
#include "kiln/gen/domain.hpp"
#include "kiln/gen/space.hpp"
#include "kiln/model/manifest.hpp"

using namespace gen_test;
using kiln::gen::load_space;
using kiln::gen::load_device;
using kiln::gen::ProblemInstance;
using kiln::gen::Space;

namespace {

Space domain_space() { return load_space(good_space("domain_cpu.space.json"), load_device(device("cpu"))); }

std::int64_t int_of(const Space& s, const ProblemInstance& p, const std::string& dim) {
  for (std::size_t i = 0; i < s.dims.size(); ++i) {
    if (s.dims[i].name == dim) return std::get<std::int64_t>(p.values[i]);
  }
  FAIL("no dim " << dim);
  return 0;
}

std::set<std::string> keys(const Space& s, const std::vector<ProblemInstance>& points) {
  std::set<std::string> out;
  for (const auto& p : points) out.insert(kiln::gen::problem_key(s, p));
  return out;
}

}  // namespace

TEST_CASE("a domain on every int dim, with constraints across dims, loads with its tuning", "[domain]") {
  const Space s = domain_space();
  REQUIRE(s.dims.size() == 3);
  REQUIRE(s.dims[0].range);
  CHECK(s.dims[0].range->min == 1);
  CHECK(s.dims[0].range->max == 4194304);
  CHECK(s.dims[0].range->log);
  CHECK(s.dims[1].range->max == 262144);
  CHECK(s.dims[2].symbolic);
  CHECK(s.domain_constraints.size() == 2);
  CHECK(s.tuning.coverage == 48);
  CHECK(s.tuning.held_out == 24);
  CHECK(s.tuning.regret_tolerance == 1.05);
  CHECK(s.buckets.empty());
  CHECK(kiln::gen::has_domain(s));
}

TEST_CASE("sampling gives exactly the points asked for, inside the domain, the two sets disjoint", "[domain]") {
  const Space s = domain_space();
  REQUIRE(s.coverage.size() == 48);
  REQUIRE(s.held_out.size() == 24);
  const auto coverage = keys(s, s.coverage);
  const auto held_out = keys(s, s.held_out);
  CHECK(coverage.size() == 48);  // distinct
  CHECK(held_out.size() == 24);
  for (const auto& k : held_out) CHECK(coverage.count(k) == 0);
  for (const auto* set : {&s.coverage, &s.held_out}) {
    for (const auto& p : *set) {
      CHECK(kiln::gen::in_domain(s, p));
      const std::int64_t n = int_of(s, p, "rows") * int_of(s, p, "cols");
      CHECK(n >= 16384);
      CHECK(n <= 1073741824);
    }
  }
  // Each symbolic value gets an equal share.
  for (const auto* set : {&s.coverage, &s.held_out}) {
    const auto bf16 = std::count_if(set->begin(), set->end(),
                                    [](const ProblemInstance& p) { return std::get<std::string>(p.values[2]) == "bf16"; });
    CHECK(static_cast<std::size_t>(bf16) * 2 == set->size());
  }
}

TEST_CASE("the coverage set holds the domain's extremes and odd sizes", "[domain]") {
  const Space s = domain_space();
  auto has = [&](auto predicate) { return std::any_of(s.coverage.begin(), s.coverage.end(), predicate); };
  CHECK(has([&](const ProblemInstance& p) { return int_of(s, p, "rows") == 1; }));
  CHECK(has([&](const ProblemInstance& p) { return int_of(s, p, "cols") == 1; }));
  CHECK(has([&](const ProblemInstance& p) { return int_of(s, p, "rows") == 4194304; }));
  CHECK(has([&](const ProblemInstance& p) { return int_of(s, p, "cols") == 262144; }));
  // The corner (1, 1) lies outside rows * cols >= 16384: it moves inward to the constraint's edge.
  CHECK(has([&](const ProblemInstance& p) {
    const std::int64_t n = int_of(s, p, "rows") * int_of(s, p, "cols");
    return n < 2 * 16384 && int_of(s, p, "rows") > 1 && int_of(s, p, "cols") > 1;
  }));
  // Odd sizes: both dims prime (a multiple of no tile 2, 4, ..., 1024) at some points.
  CHECK(has([&](const ProblemInstance& p) {
    return int_of(s, p, "rows") > 2 && kiln::gen::is_prime(static_cast<std::uint64_t>(int_of(s, p, "rows"))) &&
           int_of(s, p, "cols") > 2 && kiln::gen::is_prime(static_cast<std::uint64_t>(int_of(s, p, "cols")));
  }));
}

TEST_CASE("sampling is deterministic: the same space gives the same points and the same manifest", "[domain]") {
  const Space a = domain_space();
  const Space b = domain_space();
  CHECK(keys(a, a.coverage) == keys(b, b.coverage));
  CHECK(keys(a, a.held_out) == keys(b, b.held_out));
  kiln_test::TempDir tmp("kiln-gen-domain");
  const auto first = run_generate(good_space("domain_cpu.space.json"), device("cpu"), tmp / "one");
  const auto second = run_generate(good_space("domain_cpu.space.json"), device("cpu"), tmp / "two");
  REQUIRE(first.rc == 0);
  REQUIRE(second.rc == 0);
  const std::string manifest = kiln_test::read_file(tmp / "one/manifest.json");
  CHECK(manifest == kiln_test::read_file(tmp / "two/manifest.json"));
  const auto m = ordered_json::parse(manifest);
  CHECK(m.at("coverage").size() == 48);
  CHECK(m.at("held_out").size() == 24);
  CHECK(m.at("problem").at("domain_constraints").size() == 2);
  CHECK(m.at("problem").at("dims").at("rows").at("domain").at("scale") == "log");
  CHECK(m.at("tuning").at("regret_tolerance") == 1.05);
}

TEST_CASE("another kernel name draws other held-out points, and a linear scale stays in its range", "[domain]") {
  kiln_test::TempDir tmp("kiln-gen-domain");
  ordered_json j = read_json(good_space("domain_cpu.space.json"));
  j["kernel"] = "domain_other";
  j["problem"]["dims"]["cols"]["domain"] = {{"min", 100}, {"max", 300}, {"scale", "linear"}};
  j["problem"].erase("domain_constraints");
  j["problems"][0]["cols"] = 200;
  const Space other = load_space(write_json(tmp / "other.space.json", j), load_device(device("cpu")));
  const Space s = domain_space();
  CHECK(keys(other, other.held_out) != keys(s, s.held_out));
  for (const auto* set : {&other.coverage, &other.held_out}) {
    for (const auto& p : *set) {
      CHECK(int_of(other, p, "cols") >= 100);
      CHECK(int_of(other, p, "cols") <= 300);
    }
  }
}

TEST_CASE("a space without a domain has no domain keys in its manifest", "[domain]") {
  kiln_test::TempDir tmp("kiln-gen-domain");
  REQUIRE(run_generate(good_space("toy_cpu.space.json"), device("cpu"), tmp / "out").rc == 0);
  const auto m = read_json(tmp / "out/manifest.json");
  CHECK_FALSE(m.contains("coverage"));
  CHECK_FALSE(m.contains("held_out"));
  CHECK_FALSE(m.at("problem").contains("domain_constraints"));
  CHECK(m.at("tuning").size() == 2);
  CHECK(m.at("problem").at("dims").at("n") == "int");
}

TEST_CASE("primes and odd sizes", "[domain]") {
  for (std::uint64_t p : {2ull, 3ull, 5ull, 7919ull, 2147483647ull, 281474976710597ull}) CHECK(kiln::gen::is_prime(p));
  for (std::uint64_t c : {0ull, 1ull, 4ull, 561ull, 7917ull, 3215031751ull, 281474976710656ull}) {
    CHECK_FALSE(kiln::gen::is_prime(c));
  }
  CHECK(kiln::gen::odd_size(1024, 1, 4096) == 1031);
  CHECK(kiln::gen::odd_size(1, 1, 4096) == 1);
  CHECK(kiln::gen::odd_size(4096, 1, 4096) == 4093);  // no prime up to max: the largest below
  CHECK(kiln::gen::odd_size(8, 8, 10) == 8);          // no prime in the range at all
}

TEST_CASE("alternating symbolic dims take their values in turn: the crossed ones still share the points equally",
          "[domain]") {
  const Space s = load_space(good_space("domain_alternate_cpu.space.json"), load_device(device("cpu")));
  REQUIRE(s.tuning.alternate == std::vector<std::string>{"layout", "mask"});
  REQUIRE(s.coverage.size() == 48);
  REQUIRE(s.held_out.size() == 24);
  auto count = [&](const std::vector<ProblemInstance>& set, std::size_t dim, const std::string& value) {
    return std::count_if(set.begin(), set.end(),
                         [&](const ProblemInstance& p) { return std::get<std::string>(p.values[dim]) == value; });
  };
  // dims: rows, cols, dtype (crossed), layout, mask (alternating: six combinations).
  for (const auto* set : {&s.coverage, &s.held_out}) {
    CHECK(static_cast<std::size_t>(count(*set, 2, "bf16")) * 2 == set->size());
    // Each dtype's share (24 or 12 points) holds every layout-and-mask combination equally often.
    for (const std::string dtype : {"fp32", "bf16"}) {
      std::map<std::string, int> seen;
      for (const auto& p : *set) {
        if (std::get<std::string>(p.values[2]) != dtype) continue;
        ++seen[std::get<std::string>(p.values[3]) + "/" + std::get<std::string>(p.values[4])];
      }
      REQUIRE(seen.size() == 6);
      for (const auto& [combination, n] : seen) CHECK(n * 6 * 2 == static_cast<int>(set->size()));
    }
  }
  // The corners are there for each crossed combination, whatever layout and mask they drew.
  auto has = [&](auto predicate) { return std::any_of(s.coverage.begin(), s.coverage.end(), predicate); };
  CHECK(has([&](const ProblemInstance& p) { return int_of(s, p, "rows") == 4194304; }));
  CHECK(has([&](const ProblemInstance& p) { return int_of(s, p, "cols") == 262144; }));
  // And drawing them is deterministic.
  const Space again = load_space(good_space("domain_alternate_cpu.space.json"), load_device(device("cpu")));
  CHECK(keys(s, s.coverage) == keys(again, again.coverage));
  CHECK(keys(s, s.held_out) == keys(again, again.held_out));
}

TEST_CASE("tuning.reach is evaluated for every variant and travels in the manifest", "[domain]") {
  const Space s = load_space(good_space("domain_reach_cpu.space.json"), load_device(device("cpu")));
  REQUIRE(s.tuning.reach.size() == 1);
  CHECK(s.tuning.reach[0].dim == "cols");
  kiln_test::TempDir tmp("kiln-gen-reach");
  REQUIRE(run_generate(good_space("domain_reach_cpu.space.json"), device("cpu"), tmp / "out").rc == 0);
  const auto m = read_json(tmp / "out/manifest.json");
  CHECK(m.at("tuning").at("reach") == ordered_json{{"cols", "VEC * 16"}});
  std::map<std::int64_t, std::int64_t> reach_by_vec;
  for (const auto& v : m.at("variants")) {
    reach_by_vec[v.at("params").at("VEC").get<std::int64_t>()] = v.at("reach").at("cols").get<std::int64_t>();
  }
  CHECK(reach_by_vec == std::map<std::int64_t, std::int64_t>{{4, 64}, {8, 128}, {16, 256}});
  // The manifest reads back as written, reach included.
  const kiln::model::Manifest read = kiln::model::load_manifest(tmp / "out/manifest.json");
  REQUIRE(read.tuning.reach.size() == 1);
  CHECK(read.tuning.reach[0].expr.text() == "VEC * 16");
  for (const auto& v : read.variants) CHECK(v.reach.at("cols") == 16 * std::get<std::int64_t>(v.params[0]));

  // A space without it: no reach in the manifest's variants.
  REQUIRE(run_generate(good_space("domain_cpu.space.json"), device("cpu"), tmp / "plain").rc == 0);
  const auto plain = read_json(tmp / "plain/manifest.json");
  CHECK_FALSE(plain.at("tuning").contains("reach"));
  for (const auto& v : plain.at("variants")) CHECK_FALSE(v.contains("reach"));
}

TEST_CASE("tuning.tree_fit travels in the manifest, and without it the manifest says nothing and reads as served", "[domain]") {
  kiln_test::TempDir tmp("kiln-gen-tree-fit");
  auto space = read_json(good_space("domain_cpu.space.json"));
  space["tuning"]["tree_fit"] = "regret";
  const auto path = tmp / "domain_cpu.space.json";
  {
    std::ofstream(path) << space.dump(2);
  }
  CHECK(load_space(path, load_device(device("cpu"))).tuning.tree_fit == kiln::model::TreeFit::regret);
  REQUIRE(run_generate(path, device("cpu"), tmp / "out").rc == 0);
  CHECK(read_json(tmp / "out/manifest.json").at("tuning").at("tree_fit") == "regret");
  CHECK(kiln::model::load_manifest(tmp / "out/manifest.json").tuning.tree_fit == kiln::model::TreeFit::regret);
  // A manifest naming another fit is refused at its place, as the space file is (bad/domain_tree_fit_unknown).
  auto manifest = read_json(tmp / "out/manifest.json");
  manifest["tuning"]["tree_fit"] = "median";
  {
    std::ofstream(tmp / "bad_manifest.json") << manifest.dump(2);
  }
  CHECK_THROWS_WITH(kiln::model::load_manifest(tmp / "bad_manifest.json"),
                    kiln_test::ContainsSubstring("/tuning/tree_fit: expected \"served\" or \"regret\", got \"median\""));

  REQUIRE(run_generate(good_space("domain_cpu.space.json"), device("cpu"), tmp / "plain").rc == 0);
  CHECK_FALSE(read_json(tmp / "plain/manifest.json").at("tuning").contains("tree_fit"));
  CHECK(kiln::model::load_manifest(tmp / "plain/manifest.json").tuning.tree_fit == kiln::model::TreeFit::served);
}
