// Enumeration: odometer order, pruning counted under the first violated constraint, canonical
// names, the default variant, and the errors of an unusable space. Expected values are worked out
// by hand in the comments, not by re-running the algorithm.
#include <chrono>
#include <vector>

#include "gen_test_support.hpp"
#include "kiln/gen/enumerate.hpp"
#include "kiln_catch.hpp"

using namespace gen_test;
using kiln::gen::enumerate_variants;
using kiln::gen::Enumeration;
using kiln::gen::load_space;
using kiln::gen::load_device;
using kiln_test::ContainsSubstring;

namespace {

// A minimal CPU space; tests replace parameters, derived and constraints.
ordered_json small_space() {
  return ordered_json::parse(R"({
    "kiln_space": 1,
    "kernel": "k",
    "backend": "cpu",
    "harness": { "include": "k.hpp", "workload": "k::Workload" },
    "parameters": { "A": { "values": [1, 2] } },
    "problem": { "dims": { "n": "int" }, "work": {} },
    "problems": [ { "n": 1 } ],
    "buckets": [ { "name": "all", "when": "1" } ]
  })");
}

Enumeration enumerate(const ordered_json& space, const std::string& device_name = "cpu") {
  kiln_test::TempDir dir("kiln-gen-enum");
  const fs::path path = write_json(dir / "k.space.json", space);
  const auto target = load_device(device(device_name));
  return enumerate_variants(load_space(path, target), target);
}

std::string enumeration_error(const ordered_json& space, fs::path* path_out = nullptr) {
  kiln_test::TempDir dir("kiln-gen-enum");
  const fs::path path = write_json(dir / "k.space.json", space);
  if (path_out != nullptr) *path_out = path;
  const auto target = load_device(device("cpu"));
  return generator_error([&] { enumerate_variants(load_space(path, target), target); });
}

std::vector<std::string> names_of(const Enumeration& e) {
  std::vector<std::string> names;
  for (const auto& v : e.variants) names.push_back(v.name);
  return names;
}

}  // namespace

TEST_CASE("the odometer runs over parameters in declared order, last fastest", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({
    "A": { "values": [1, 2] },
    "B": { "values": ["x", "y"] },
    "C": { "values": [-3, 0] }
  })");
  const Enumeration e = enumerate(space);
  CHECK(e.total == 8);
  CHECK(names_of(e) == std::vector<std::string>{"k__A1_Bx_Cm3", "k__A1_Bx_C0", "k__A1_By_Cm3", "k__A1_By_C0",
                                                "k__A2_Bx_Cm3", "k__A2_Bx_C0", "k__A2_By_Cm3", "k__A2_By_C0"});
  REQUIRE(e.variants[2].params.size() == 3);
  CHECK(std::get<std::int64_t>(e.variants[2].params[0]) == 1);
  CHECK(std::get<std::string>(e.variants[2].params[1]) == "y");
  CHECK(std::get<std::int64_t>(e.variants[2].params[2]) == -3);
  CHECK(e.default_index == 0);  // no defaults: the first value of each parameter
}

TEST_CASE("a pruned combination counts under the first constraint it violates", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({
    "A": { "values": [1, 2, 3, 4] },
    "B": { "values": [1, 2, 3, 4], "default": 2 }
  })");
  // A + B > 6: (3,4) (4,3) (4,4). Of the rest, A == B: (1,1) (2,2) (3,3). 16 - 6 = 10 feasible.
  space["constraints"] = ordered_json::parse(R"(["A + B <= 6", { "expr": "A != B", "why": "no squares" }])");
  const Enumeration e = enumerate(space);
  CHECK(e.total == 16);
  CHECK(e.pruned == std::vector<std::uint64_t>{3, 3});
  CHECK(e.variants[e.default_index].name == "k__A1_B2");
  CHECK(names_of(e) == std::vector<std::string>{"k__A1_B2", "k__A1_B3", "k__A1_B4", "k__A2_B1", "k__A2_B3",
                                                "k__A2_B4", "k__A3_B1", "k__A3_B2", "k__A4_B1", "k__A4_B2"});
}

TEST_CASE("derived values and target limits feed the constraints", "[enumerate]") {
  ordered_json space = small_space();
  space["backend"] = "cuda";
  space["parameters"] = ordered_json::parse(R"({ "WARPS": { "values": [8, 16, 32, 64], "default": 16 } })");
  space["derived"] = ordered_json::parse(R"({ "THREADS": "WARPS * warp_size", "HALF": "THREADS / 2" })");
  // h100: warp_size 32, max_threads_per_block 1024, so WARPS <= 32; HALF >= 256 needs WARPS >= 16.
  space["constraints"] = ordered_json::parse(R"(["THREADS <= max_threads_per_block", "HALF >= 256"])");
  const Enumeration e = enumerate(space, "h100");
  CHECK(names_of(e) == std::vector<std::string>{"k__WARPS16", "k__WARPS32"});
  CHECK(e.pruned == std::vector<std::uint64_t>{1, 1});
}

TEST_CASE("the default variant is the combination of defaults", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({
    "A": { "values": [1, 2, 3], "default": 3 },
    "MODE": { "values": ["slow", "fast"], "default": "fast" }
  })");
  space["constraints"] = ordered_json::parse(R"(["A != 2"])");
  const Enumeration e = enumerate(space);
  // Feasible: A1 slow, A1 fast, A3 slow, A3 fast; the default A3 fast is the fourth.
  REQUIRE(e.variants.size() == 4);
  CHECK(e.default_index == 3);
  CHECK(e.variants[e.default_index].name == "k__A3_MODEfast");
}

TEST_CASE("canonical names write negative integers with m", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({
    "OFF": { "values": [-9223372036854775808, -1, 9223372036854775807] },
    "FAULT": { "values": ["none", "crash"] }
  })");
  const Enumeration e = enumerate(space);
  CHECK(names_of(e) == std::vector<std::string>{"k__OFFm9223372036854775808_FAULTnone",
                                                "k__OFFm9223372036854775808_FAULTcrash", "k__OFFm1_FAULTnone",
                                                "k__OFFm1_FAULTcrash", "k__OFF9223372036854775807_FAULTnone",
                                                "k__OFF9223372036854775807_FAULTcrash"});
}

TEST_CASE("an infeasible default names the constraint it violates", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({ "A": { "values": [1, 2, 3], "default": 3 } })");
  space["constraints"] = ordered_json::parse(R"(["A > 0", { "expr": "A < 3", "why": "three is too many" }])");
  fs::path path;
  const std::string msg = enumeration_error(space, &path);
  CHECK(msg == path.string() +
                   ": /parameters: the default variant k__A3 violates /constraints/1 \"A < 3\" (three is too many)");
}

TEST_CASE("an empty feasible set names the constraint that prunes most", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({ "A": { "values": [1, 2, 3, 4, 5] } })");
  // A > 1 prunes 1 combination; of the other four, A < 2 prunes all four.
  space["constraints"] = ordered_json::parse(R"(["A > 1", "A < 2"])");
  fs::path path;
  const std::string msg = enumeration_error(space, &path);
  CHECK(msg == path.string() +
                   ": no feasible variant: all 5 combinations violate a constraint (most often /constraints/1)");
}

TEST_CASE("more feasible variants than tuning.max_variants is an error", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({ "A": { "values": [1, 2, 3, 4, 5] } })");
  space["constraints"] = ordered_json::parse(R"(["A != 3"])");
  space["tuning"] = {{"max_variants", 3}};
  fs::path path;
  const std::string msg = enumeration_error(space, &path);
  CHECK(msg == path.string() + ": 4 feasible variants, more than tuning.max_variants (3)");
  space["tuning"] = {{"max_variants", 4}};
  CHECK(enumerate(space).variants.size() == 4);
}

TEST_CASE("too many combinations fail before enumerating", "[enumerate]") {
  ordered_json space = small_space();
  ordered_json values = ordered_json::array();
  for (int i = 0; i < 1001; ++i) values.push_back(i);
  // 1001^2 = 1,002,001 combinations, just above the limit; 1000^2 would be allowed.
  space["parameters"] = {{"A", {{"values", values}}}, {"B", {{"values", values}}}};
  // Evaluating this for every combination would divide by zero; the count check comes first.
  space["constraints"] = ordered_json::array({"A / 0"});
  fs::path path;
  const std::string msg = enumeration_error(space, &path);
  CHECK(msg == path.string() + ": /parameters: 1002001 combinations of parameter values, more than the 1000000 the "
                        "generator enumerates");

  ordered_json wide = small_space();
  wide["parameters"] = ordered_json::object();
  // 16^17 = 2^68 combinations; the names stay under the variant-name limit.
  ordered_json sixteen = ordered_json::array();
  for (int v = 0; v < 16; ++v) sixteen.push_back(v);
  for (char name = 'A'; name < 'A' + 17; ++name) wide["parameters"][std::string(1, name)] = {{"values", sixteen}};
  CHECK_THAT(enumeration_error(wide), ContainsSubstring("more than 2^64 combinations"));
}

TEST_CASE("the evaluation a space asks for is bounded before anything is evaluated", "[enumerate]") {
  // 1,000,000 combinations (at the combination limit) times a constraint of about 200 nodes:
  // minutes of evaluation before the bound.
  ordered_json space = small_space();
  ordered_json values = ordered_json::array();
  for (int i = 0; i < 1000; ++i) values.push_back(i);
  space["parameters"] = {{"A", {{"values", values}}}, {"B", {{"values", values}}}};
  std::string heavy = "A";
  for (int i = 0; i < 100; ++i) heavy += " + B";
  space["constraints"] = ordered_json::array({heavy + " > 0"});
  fs::path path;
  const auto started = std::chrono::steady_clock::now();
  const std::string msg = enumeration_error(space, &path);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(1));
  CHECK(msg == path.string() + ": /parameters: 1000000 combinations times 204 expression nodes is more evaluation "
                               "than the 50000000 nodes the generator does");
}

TEST_CASE("evaluation errors name the expression and the combination", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({ "A": { "values": [2, 1, 0] }, "B": { "values": [5] } })");
  space["constraints"] = ordered_json::parse(R"([{ "expr": "B / A >= 1" }])");
  fs::path path;
  const std::string msg = enumeration_error(space, &path);
  CHECK(msg == path.string() + ": /constraints/0/expr: division by zero in \"B / A >= 1\" (column 3) for A=0 B=5");
}

TEST_CASE("two variants with one name are an error", "[enumerate]") {
  ordered_json space = small_space();
  space["parameters"] = ordered_json::parse(R"({ "A": { "values": ["p_Bq", "p"] }, "B": { "values": ["r", "q_Br"] } })");
  CHECK_THAT(enumeration_error(space), ContainsSubstring("both get the name k__Ap_Bq_Br"));
}
