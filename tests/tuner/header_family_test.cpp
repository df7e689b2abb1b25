// The header of a kernel family (kiln/tuned/<family>.hpp): compiled and run by a real compiler
// over its members' headers (each key reaches its own member, a key without one throws), and the
// attention family's header from the shipped spaces, byte for byte as committed.
#include <chrono>
#include <string>
#include <vector>

#include "header.hpp"
#include "kiln_catch.hpp"
#include "process.hpp"
#include "toy_family.hpp"

using namespace kiln::tuner;
namespace fs = std::filesystem;

TEST_CASE("the family header switches on the key and hands the problem to the member's header") {
  kiln_test::ToyFamily toy;
  toy.generate();
  const kiln::model::Family family = kiln::model::load_family(toy.write_family(toy.family_json()));
  const fs::path include = toy.dir / "include";
  std::vector<std::string> warnings;
  for (const auto& member : family.members) {
    kiln_test::write_file(include / ("kiln/tuned/" + member.kernel + ".hpp"),
                          dispatch_header(member.manifest, std::nullopt, warnings));
  }
  const std::string header = family_header(family);
  CHECK(header == family_header(family));
  CHECK_THAT(header, kiln_test::ContainsSubstring("namespace kiln::tuned::poly {"));
  CHECK_THAT(header, kiln_test::ContainsSubstring("#include \"kiln/tuned/poly_d2.hpp\"\n#include \"kiln/tuned/poly_d3.hpp\"\n"));
  CHECK_THAT(header, kiln_test::ContainsSubstring(
                         "constexpr ::kiln::tuned::poly_d3::Problem poly_d3_problem(const Problem& p) {\n"
                         "  return {p.n, p.dtype};\n}\n"));
  CHECK_THAT(header, kiln_test::ContainsSubstring(
                         "    case 3:\n      return ::kiln::tuned::poly_d3::dispatch(poly_d3_problem(p), launch);\n"));
  kiln_test::write_file(include / "kiln/tuned/poly.hpp", header);
  kiln_test::write_file(toy.dir / "use.cpp", R"cpp(
#include <cstring>
#include <stdexcept>
#include <string>
#include "kiln/tuned/poly.hpp"
namespace poly = kiln::tuned::poly;
constexpr poly::Problem p{4096, kiln::Choice{"bf16"}};
static_assert(poly::has_key(2) && poly::has_key(3) && !poly::has_key(4), "one key per member");
static_assert(sizeof(poly::keys) / sizeof(poly::keys[0]) == 2 && poly::keys[0] == 2 && poly::keys[1] == 3, "in order");
static_assert(!poly::provenance(3, p).tuned, "the members are not tuned");
int main() {
  // A member's configurations carry its key: DEGREE says which member dispatch reached.
  if (poly::dispatch(2, p, [](auto config) { return decltype(config)::DEGREE; }) != 2) return 1;
  if (poly::dispatch(3, p, [](auto config) { return decltype(config)::DEGREE; }) != 3) return 2;
  if (std::strncmp(poly::provenance(3, p).variant, "poly_d3__", 9) != 0) return 3;
  // The member's default configuration, whatever the problem.
  if (poly::dispatch_default(3, [](auto config) { return decltype(config)::DEGREE; }) != 3) return 7;
  if (std::strcmp(poly::dispatch_default(2, [](auto config) { return decltype(config)::kiln_name; }),
                  kiln::tuned::poly_d2::provenance(kiln::tuned::poly_d2::Problem{1, kiln::Choice{"bf16"}}).variant) != 0) {
    return 8;
  }
  int calls = 0;
  poly::dispatch(2, p, [&](auto) { ++calls; });  // a launch that returns nothing
  if (calls != 1) return 4;
  std::string message;
  try {
    poly::dispatch(4, p, [](auto) { return 0; });
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  if (message != "kiln::tuned::poly: no member for DEGREE = 4 (members: 2, 3)") return 5;
  return std::strcmp(poly::keys_text, "2, 3") == 0 && std::strcmp(poly::key_name, "DEGREE") == 0 ? 0 : 6;
}
)cpp");
  std::string output;
  auto sink = [&](const std::string& line) { output += line + "\n"; };
  ChildResult built = run_child({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", "c++", "-std=c++17", "-Wall", "-Wextra",
                                 "-Werror", "-I" + include.string(), "-I" + std::string(KILN_SOURCE_DIR) + "/autotune/include",
                                 (toy.dir / "use.cpp").string(), "-o", (toy.dir / "use").string()},
                                std::chrono::seconds(120), sink);
  INFO(output);
  REQUIRE(built.exited_cleanly());
  ChildResult ran = run_child({(toy.dir / "use").string()}, std::chrono::seconds(10), sink);
  CHECK(ran.exited_cleanly());
}

TEST_CASE("the attention family's header from the shipped spaces, byte for byte") {
  kiln_test::TempDir dir("kiln-family-attention");
  const fs::path root(KILN_SOURCE_DIR);
  nlohmann::ordered_json j;
  j["kiln_family"] = 1;
  j["family"] = "attention";
  j["key"] = "HEAD_DIM";
  j["members"] = nlohmann::ordered_json::array();
  for (const std::string member : {"attention_d64", "attention_d128", "attention_d256"}) {
    kiln::gen::generate(root / "kernels/attention" / (member + ".space.json"), root / "presets/devices/h200.json",
                        dir / member);
    j["members"].push_back({{"kernel", member}, {"manifest", (dir / member / "manifest.json").string()}});
  }
  kiln_test::write_file(dir / "family.json", j.dump(2));
  const std::string header = family_header(kiln::model::load_family(dir / "family.json"));
  // tests/tuner/data/attention_family.hpp is this header; a change to the emitter shows there.
  CHECK(header == kiln_test::read_file(root / "tests/tuner/data/attention_family.hpp"));
}
