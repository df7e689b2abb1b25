// One reader of device files for the generator (name, backend, limits) and the tuner
// (description, match, rates).
#include <filesystem>

#include <nlohmann/json.hpp>

#include "kiln/model/device.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using kiln_test::ContainsSubstring;

namespace {

fs::path device(const std::string& name) { return fs::path(KILN_SOURCE_DIR) / "presets/devices" / (name + ".json"); }

std::string error_of(const fs::path& file) {
  try {
    kiln::model::load_device(file);
  } catch (const kiln::model::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a device file gives the generator's and the tuner's fields at once", "[device]") {
  const kiln::model::Device d = kiln::model::load_device(device("h100"));
  CHECK(d.name == "h100");
  CHECK(d.backend == "cuda");
  CHECK(d.label() == device("h100").string());
  REQUIRE_FALSE(d.limits.empty());
  CHECK(d.limits.front().first == "warp_size");
  CHECK(d.limits.front().second == 32);
  CHECK(d.match_names == std::vector<std::string>{"H100"});
  CHECK(d.match_compute_capability == "9.0");
  CHECK(d.rates.count("dram_bytes_per_s") == 1);
  CHECK_FALSE(d.description.empty());

  const kiln::model::Device cpu = kiln::model::load_device(device("cpu"));
  CHECK(cpu.match_names.empty());
  CHECK(cpu.rates.empty());
}

TEST_CASE("a device file without its version, with a rate that is not positive or a bad match is refused",
          "[device]") {
  kiln_test::TempDir tmp("kiln-model-device");
  const fs::path path = tmp / "dev.json";
  const auto original = nlohmann::ordered_json::parse(kiln_test::read_file(device("h100")));

  auto j = original;
  j.erase("kiln_device");
  kiln_test::write_file(path, j.dump());
  CHECK(error_of(path) == path.string() + ": /kiln_device: required key is missing");

  j = original;
  j["kiln_device"] = 2;
  kiln_test::write_file(path, j.dump());
  CHECK_THAT(error_of(path), ContainsSubstring(": /kiln_device: not a Kiln device file of a known version"));

  j = original;
  j["rates"]["dram_bytes_per_s"] = -1;
  kiln_test::write_file(path, j.dump());
  CHECK_THAT(error_of(path), ContainsSubstring(": /rates/dram_bytes_per_s: expected a positive number"));

  j = original;
  j["match"]["name_contains"] = "H100";
  kiln_test::write_file(path, j.dump());
  CHECK_THAT(error_of(path), ContainsSubstring(": /match/name_contains: expected an array"));
}
