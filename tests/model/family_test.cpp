// Kernel families (kiln/model/family.hpp): the family file read strictly and joined with its
// members' manifests. A fault of the family file is reported there; what a family needs of a
// member's space is reported in that space file, at the place to fix.
#include <filesystem>
#include <string>

#include "kiln/model/family.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln_catch.hpp"
#include "toy_family.hpp"

namespace fs = std::filesystem;
using kiln_test::ContainsSubstring;

namespace {

std::string error_of(const fs::path& file) {
  try {
    kiln::model::load_family(file);
  } catch (const kiln::model::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a family file joins its members' manifests, each with its value of the key", "[family]") {
  kiln_test::ToyFamily toy;
  toy.generate();
  const fs::path file = toy.write_family(toy.family_json());
  const kiln::model::Family f = kiln::model::load_family(file);
  CHECK(f.file == file);
  CHECK(f.name == "poly");
  CHECK(f.key == "DEGREE");
  CHECK(f.backend == "cpu");
  REQUIRE(f.members.size() == 2);
  CHECK(f.members[0].kernel == "poly_d2");
  CHECK(f.members[0].key == 2);
  CHECK(f.members[0].manifest.kernel == "poly_d2");
  CHECK(f.members[1].kernel == "poly_d3");
  CHECK(f.members[1].key == 3);
  REQUIRE(f.dims().size() == 2);
  CHECK(f.dims()[0].name == "n");
  CHECK(f.dims()[1].domain == std::vector<std::string>{"fp32", "bf16"});

  // A relative manifest path is relative to the family file.
  auto j = toy.family_json();
  j["members"][1]["manifest"] = "poly_d3/manifest.json";
  CHECK(kiln::model::load_family(toy.write_family(j)).members[1].manifest.kernel == "poly_d3");
}

TEST_CASE("a fault of the family file names the family file and the place", "[family]") {
  kiln_test::ToyFamily toy;
  toy.generate();
  const auto good = toy.family_json();
  const std::string label = (toy.dir / "family.json").string();

  auto j = good;
  j.erase("key");
  CHECK(error_of(toy.write_family(j)) == label + ": /key: required key is missing");

  j = good;
  j["kiln_family"] = 2;
  CHECK_THAT(error_of(toy.write_family(j)), ContainsSubstring(label + ": /kiln_family: not a Kiln family file"));

  j = good;
  j["members_of"] = j["members"];
  CHECK_THAT(error_of(toy.write_family(j)), ContainsSubstring(label + ": /members_of: unknown key"));

  j = good;
  j["family"] = "poly-family";
  CHECK_THAT(error_of(toy.write_family(j)), ContainsSubstring(label + ": /family: "));

  j = good;
  j["members"] = nlohmann::ordered_json::array();
  CHECK(error_of(toy.write_family(j)) == label + ": /members: a family has at least one member");

  j = good;
  j["members"][1]["kernel"] = "poly_d2";
  CHECK(error_of(toy.write_family(j)) == label + ": /members/1/kernel: poly_d2 is a member already");

  j = good;
  j["members"][0]["manifest"] = toy.manifest_file(1).string();
  CHECK(error_of(toy.write_family(j)) == label + ": /members/0/manifest: the manifest " +
                                             toy.manifest_file(1).string() + " is kernel poly_d3's, not poly_d2's");

  j = good;
  j["members"][1].erase("manifest");
  CHECK(error_of(toy.write_family(j)) == label + ": /members/1/manifest: required key is missing");

  j = good;
  j["members"][1]["manifest"] = (toy.dir / "nowhere/manifest.json").string();
  CHECK_THAT(error_of(toy.write_family(j)), ContainsSubstring("nowhere/manifest.json: no manifest"));
}

TEST_CASE("what the family needs of a member's space is reported in that space file", "[family]") {
  auto error_with = [](auto change) {
    kiln_test::ToyFamily toy;
    change(toy.spaces[1]);
    toy.generate();
    return std::make_pair(error_of(toy.write_family(toy.family_json())), toy.space_file(1).string());
  };

  SECTION("no key parameter") {
    auto [error, space] = error_with([](auto& s) { s["parameters"].erase("DEGREE"); });
    CHECK_THAT(error, ContainsSubstring(space + ": /parameters: no parameter DEGREE, the key of family poly ("));
  }
  SECTION("several values of the key") {
    auto [error, space] = error_with([](auto& s) { s["parameters"]["DEGREE"]["values"] = {3, 4}; });
    CHECK_THAT(error, ContainsSubstring(space + ": /parameters/DEGREE/values: DEGREE is the key of family poly"));
    CHECK_THAT(error, ContainsSubstring("a member's space gives it one value, not 2 (3, 4)"));
  }
  SECTION("a key of identifiers") {
    auto [error, space] = error_with([](auto& s) { s["parameters"]["DEGREE"]["values"] = {"cubic"}; });
    CHECK_THAT(error, ContainsSubstring(space + ": /parameters/DEGREE/values: "));
    CHECK_THAT(error, ContainsSubstring("its value must be an integer"));
  }
  SECTION("the key of another member") {
    auto [error, space] = error_with([](auto& s) { s["parameters"]["DEGREE"]["values"] = {2}; });
    CHECK_THAT(error, ContainsSubstring(space + ": /parameters/DEGREE/values: DEGREE = 2 is the key of member poly_d2 ("));
    CHECK_THAT(error, ContainsSubstring("each member of family poly has a value of its own"));
  }
  SECTION("other problem dims") {
    auto [error, space] = error_with([](auto& s) { s["problem"]["dims"]["dtype"] = {"fp32", "fp16"}; });
    CHECK_THAT(error, ContainsSubstring(space + ": /problem/dims: the dims n, dtype (fp32|fp16) differ from n, dtype "
                                                "(fp32|bf16) of member poly_d2"));
  }
  SECTION("dims in another order") {
    auto [error, space] = error_with([](auto& s) {
      s["problem"]["dims"] = nlohmann::ordered_json::parse(R"({ "dtype": ["fp32", "bf16"], "n": "int" })");
    });
    CHECK_THAT(error, ContainsSubstring(space + ": /problem/dims: "));
  }
}

TEST_CASE("the members of a family share one backend", "[family]") {
  kiln_test::ToyFamily toy;
  toy.generate();
  // poly_d3 again, as a CUDA space for the H200.
  auto cuda = toy.spaces[1];
  cuda["backend"] = "cuda";
  const fs::path space = toy.dir / "cuda/poly_d3.space.json";
  kiln_test::write_file(space, cuda.dump(2));
  kiln::gen::generate(space, fs::path(KILN_SOURCE_DIR) / "presets/devices/h200.json", toy.dir / "cuda/poly_d3");
  auto j = toy.family_json();
  j["members"][1]["manifest"] = (toy.dir / "cuda/poly_d3/manifest.json").string();
  CHECK_THAT(error_of(toy.write_family(j)),
             ContainsSubstring(space.string() + ": /backend: \"cuda\", where member poly_d2 ("));
}
