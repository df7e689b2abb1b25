// The manifest in both directions through the model's one to_json and one from_json: what the
// generator writes is what the tuner reads. A key the writer gains without the reader (or a
// member of Manifest that one of them leaves out) makes one of these checks fail.
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/gen/emit.hpp"
#include "kiln/gen/enumerate.hpp"
#include "kiln/gen/generate.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/model/manifest.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using kiln_test::ContainsSubstring;

namespace {

fs::path source_dir() { return fs::path(KILN_SOURCE_DIR); }

struct Case {
  fs::path space;
  std::string device;
};

// Every shipped space and every valid test space: with and without a problem domain, with
// identifier, negative and wide values, with and without buckets.
std::vector<Case> spaces() {
  std::vector<Case> out;
  for (const fs::path& dir : {source_dir() / "kernels/softmax", source_dir() / "kernels/nbody",
                              source_dir() / "kernels/attention", source_dir() / "tests/generator/good"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.size() < 11 || name.substr(name.size() - 11) != ".space.json") continue;
      const bool cuda = kiln::model::read_json_file(entry.path()).root.at("backend") == "cuda";
      out.push_back({entry.path(), cuda ? "h200" : "cpu"});
    }
  }
  return out;
}

kiln::model::Manifest generated(const Case& c) {
  const auto device = kiln::model::load_device(source_dir() / "presets/devices" / (c.device + ".json"));
  const auto space = kiln::gen::load_space(c.space, device);
  return kiln::gen::manifest(space, device, kiln::gen::enumerate_variants(space, device));
}

}  // namespace

TEST_CASE("a manifest read back from its JSON equals the one written", "[manifest]") {
  const std::vector<Case> cases = spaces();
  REQUIRE(cases.size() >= 10);
  bool with_domain = false, without_domain = false;
  for (const Case& c : cases) {
    INFO(c.space.string());
    const kiln::model::Manifest m = generated(c);
    (m.has_domain() ? with_domain : without_domain) = true;
    const nlohmann::ordered_json j = kiln::model::to_json(m);
    const kiln::model::Manifest back = kiln::model::from_json(j, "manifest", "");
    CHECK(back == m);
    CHECK(kiln::model::to_json(back).dump(2) == j.dump(2));
  }
  CHECK(with_domain);
  CHECK(without_domain);
}

TEST_CASE("every key of a written manifest.json is read: rewriting what was read gives the same bytes",
          "[manifest]") {
  kiln_test::TempDir tmp("kiln-model-manifest");
  for (const Case& c : spaces()) {
    INFO(c.space.string());
    const fs::path out = tmp / c.space.stem().stem().string();
    kiln::gen::generate(c.space, source_dir() / "presets/devices" / (c.device + ".json"), out);
    const std::string bytes = kiln_test::read_file(out / "manifest.json");
    const auto json = kiln::model::parse_json_text("manifest.json", bytes, kiln::model::kMaxManifestBytes).root;
    CHECK(kiln::model::to_json(kiln::model::from_json(json, "manifest.json", "")).dump(2) + "\n" == bytes);

    // Read as the tuner reads it: sources resolved against the manifest's directory.
    const kiln::model::Manifest loaded = kiln::model::load_manifest(out / "manifest.json");
    REQUIRE_FALSE(loaded.variants.empty());
    CHECK(fs::exists(loaded.variants.front().source));
    CHECK(loaded.file == out / "manifest.json");
  }
}

TEST_CASE("a manifest missing a key, or with one of the wrong type, is refused with its name", "[manifest]") {
  const kiln::model::Manifest m = generated({source_dir() / "tests/generator/good/toy_cpu.space.json", "cpu"});
  const nlohmann::ordered_json good = kiln::model::to_json(m);
  for (const char* key : {"harness", "derived", "constraints", "pruned", "tolerance", "tuning", "checks"}) {
    INFO(key);
    nlohmann::ordered_json j = good;
    j.erase(key);
    CHECK_THROWS_WITH(kiln::model::from_json(j, "m.json", ""), ContainsSubstring("m.json: manifest field missing"));
  }
  nlohmann::ordered_json j = good;
  j["buckets"][0]["when"] = "1 +";
  CHECK_THROWS_WITH(kiln::model::from_json(j, "m.json", ""), ContainsSubstring("m.json: "));
  j = good;
  j["default_variant"] = "nope";
  CHECK_THROWS_WITH(kiln::model::from_json(j, "m.json", ""),
                    ContainsSubstring("m.json: default variant nope is not among the variants"));
  j = good;
  j["kiln_manifest"] = 2;
  CHECK_THROWS_WITH(kiln::model::from_json(j, "m.json", ""), ContainsSubstring("not a Kiln manifest"));
}
