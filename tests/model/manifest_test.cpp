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
#include "kiln/model/config_struct.hpp"
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

TEST_CASE("a wrong, missing or out-of-range field of a manifest is one error naming the file and its JSON pointer",
          "[manifest]") {
  const nlohmann::ordered_json plain =
      kiln::model::to_json(generated({source_dir() / "tests/generator/good/toy_cpu.space.json", "cpu"}));
  const nlohmann::ordered_json domain =
      kiln::model::to_json(generated({source_dir() / "tests/generator/good/domain_reach_cpu.space.json", "cpu"}));
  REQUIRE(domain.contains("coverage"));
  REQUIRE(domain["tuning"].contains("reach"));
  const struct {
    bool with_domain;
    const char* pointer;
    nlohmann::ordered_json value;  // null: the field removed
    const char* said;
  } cases[] = {
      {false, "/harness", nullptr, "/harness: required key is missing"},
      {false, "/harness/workload", 3, "/harness/workload: expected a string"},
      {false, "/derived", nullptr, "/derived: required key is missing"},
      {false, "/derived", "x", "/derived: expected an object"},
      {false, "/constraints", nullptr, "/constraints: required key is missing"},
      {false, "/pruned", nullptr, "/pruned: required key is missing"},
      {false, "/pruned/total", -1, "/pruned/total: expected a whole number >= 0"},
      {false, "/tolerance", nullptr, "/tolerance: required key is missing"},
      {false, "/tolerance/bf16", "tight", "/tolerance/bf16: expected a number"},
      {false, "/tuning", nullptr, "/tuning: required key is missing"},
      {false, "/tuning/max_variants", nullptr, "/tuning/max_variants: required key is missing"},
      {false, "/tuning/timeout_s", 0, "/tuning/timeout_s: "},
      {false, "/checks", nullptr, "/checks: required key is missing"},
      {false, "/kernel", nullptr, "/kernel: required key is missing"},
      {false, "/kernel", 5, "/kernel: expected a string"},
      {false, "/backend", "fpga", "/backend: "},
      {false, "/variants/0/name", 5, "/variants/0/name: expected a string"},
      {false, "/variants/0/name", nullptr, "/variants/0/name: required key is missing"},
      {false, "/variants/0/name", "a b", "/variants/0/name: expected a name"},
      {false, "/variants/0/params", "all", "/variants/0/params: expected an object"},
      {false, "/variants/0/source", "", "/variants/0/source: an empty path"},
      {false, "/variants", nullptr, "/variants: required key is missing"},
      {false, "/parameters/0/values", "4", "/parameters/0/values: expected an array"},
      {false, "/parameters/0/values/0", 1.5, "/parameters/0/values/0: expected an integer or an identifier"},
      {false, "/parameters/0/default", "nope", "/parameters/0/default: the default of parameter"},
      {false, "/buckets/0/when", "1 +", "/buckets/0/when: "},
      {false, "/buckets/0/when", "n > depth", "/buckets/0/when: unknown name 'depth'"},
      {false, "/buckets/0/when", "dtype", "/buckets/0/when: 'dtype' is symbolic"},
      {false, "/problem/work/bytes", "8 * m", "/problem/work/bytes: unknown name 'm'"},
      {false, "/problems/0", "rows", "/problems/0: expected an object"},
      {false, "/problems/0/n", 2.5, "/problems/0/n: expected an integer or a symbol"},
      {false, "/problem/work", nullptr, "/problem/work: required key is missing"},
      {false, "/problem/dims", 1, "/problem/dims: expected an object"},
      {false, "/default_variant", nullptr, "/default_variant: required key is missing"},
      {false, "/default_variant", "nope", "/default_variant: nope is not among the variants"},
      {true, "/coverage/0", 7, "/coverage/0: expected an object"},
      {true, "/tuning/coverage", "many", "/tuning/coverage: expected an integer"},
      {true, "/tuning/regret_tolerance", 0.5, "/tuning/regret_tolerance: expected a ratio of times from 1 to 10"},
      {true, "/tuning/reach", "none", "/tuning/reach: expected an object"},
      {true, "/problem/domain_constraints/1", "rows * cols <= dtype", "/problem/domain_constraints/1: 'dtype' is symbolic"},
      {true, "/problem/work/bytes", "rows * (dtype == 'fp16' ? 2 : 4)", "/problem/work/bytes: 'fp16' is not a value of 'dtype'"},
      {true, "/variants/0/reach", 3, "/variants/0/reach: expected an object"},
      {true, "/problem/dims/rows/domain/scale", "cubic", "/problem/dims/rows/domain/scale: expected \"log\" or \"linear\""},
      {true, "/problem/dims/rows/domain/min", nullptr, "/problem/dims/rows/domain/min: required key is missing"},
      {true, "/problem/dims/rows/domain/min", 0, "/problem/dims/rows/domain/min: min 0 is not positive"},
      {true, "/problem/dims/rows/domain/max", 1 + (std::int64_t{1} << 48), "/problem/dims/rows/domain/max: the domain is too large"},
  };
  for (const auto& c : cases) {
    INFO(c.pointer);
    nlohmann::ordered_json bad = c.with_domain ? domain : plain;
    const nlohmann::ordered_json::json_pointer at(c.pointer);
    REQUIRE(bad.contains(at));
    if (c.value.is_null()) {
      bad[at.parent_pointer()].erase(at.back());
    } else {
      bad[at] = c.value;
    }
    try {
      (void)kiln::model::from_json(bad, "m.json", "");
      FAIL("read without an error");
    } catch (const kiln::model::InputError& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.rfind("m.json: ", 0) == 0);
      CHECK(what.find(c.said) != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find("[json.exception") == std::string::npos);
    }
  }
  nlohmann::ordered_json j = plain;
  j["kiln_manifest"] = "1";
  CHECK_THROWS_WITH(kiln::model::from_json(j, "m.json", ""), ContainsSubstring("not a Kiln manifest"));
  j = plain;
  j["kiln_manifest"] = 2;
  CHECK_THROWS_WITH(kiln::model::from_json(j, "m.json", ""), ContainsSubstring("not a Kiln manifest"));
}

TEST_CASE("a C++ string literal of any text stays one literal on one line", "[manifest]") {
  CHECK(kiln::model::cpp_string("plain") == "\"plain\"");
  CHECK(kiln::model::cpp_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  // Octal escapes of three digits: "\0011" would otherwise read as one escape with the digit after it.
  CHECK(kiln::model::cpp_string(std::string("x\ny\r\x7f") + '\0' + "1") == "\"x\\012y\\015\\177\\0001\"");
}

