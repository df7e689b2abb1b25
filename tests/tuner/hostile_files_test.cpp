// Records, manifests and device files travel between machines: the tuner reads them with the
// same bounded, strict reader as space files, and a report never passes their text through raw.
#include <fstream>
#include <string>

#include "device_spec.hpp"
#include "kiln/error.hpp"
#include "kiln_catch.hpp"
#include "manifest.hpp"
#include "record.hpp"
#include "report.hpp"
#include "temp_dir.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;
using kiln_test::ContainsSubstring;

namespace {
std::filesystem::path write(const kiln_test::TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}
}  // namespace

TEST_CASE("deeply nested, huge or malformed files are refused with the file's name, not a crash") {
  kiln_test::TempDir dir;
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string huge = "{\"kernel\": \"" + std::string(2 << 20, 'x') + "\"}";
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"deep.json", deep},
                                  {"huge.json", huge}, {"broken.json", "{\"kernel\": "}, {"dup.json", "{\"a\":1,\"a\":2}"}}) {
    const auto file = write(dir, name, text);
    INFO(name);
    CHECK_THROWS_WITH(load_record(file), ContainsSubstring(file.string()));
    CHECK_THROWS_WITH(load_manifest(file), ContainsSubstring(file.string()));
    CHECK_THROWS_WITH(load_device(file), ContainsSubstring(file.string()));
  }
  CHECK_THROWS_AS(load_record(dir / "deep.json"), kiln::Error);
}

TEST_CASE("a record's text cannot forge report lines or reach the terminal") {
  Record r;
  r.kernel = "k\n## forged";
  r.device_name = "gpu\x1b[2J";
  r.date = "2026-11-23 | forged |";
  RecordedBucket b;
  b.name = "all<script>";
  b.reason = "no variant passed";
  r.buckets.push_back(b);
  const std::string md = record_markdown(r);
  CHECK(md.find('\x1b') == std::string::npos);
  CHECK(md.find("\n## forged") == std::string::npos);
  CHECK(md.find("<script>") == std::string::npos);
  CHECK_THAT(md, ContainsSubstring("2026-11-23 \\| forged \\|"));
}

TEST_CASE("a record's counts are whole numbers: a negative one is refused, not wrapped around") {
  kiln_test::TempDir dir;
  const std::string record = R"({"kiln_record": 1, "kernel": "k", "backend": "cpu", "space_hash": "0", "context_key": "c",
    "device": {"preset": "cpu", "name": "n"}, "date": "2026-11-29", "strategy": "exhaustive", "rates": {},
    "counts": {}, "buckets": [],
    "domain": {"regret_tolerance": 1.05, "coverage": {"points": COVERAGE, "worst_regret": 1, "median_regret": 1
      REFINE}, "finalists": [], "held_out": []}})";
  auto with = [&](const std::string& coverage, const std::string& refine) {
    std::string text = record;
    text.replace(text.find("COVERAGE"), 8, coverage);
    text.replace(text.find("REFINE"), 6, refine);
    return text;
  };
  const auto good = write(dir, "good.json", with("8", ", \"refinement_points\": 2"));
  CHECK(load_record(good).domain->refine_points == 2);
  for (const auto& [coverage, refine] : {std::pair<std::string, std::string>{"-3", ""}, {"8", ", \"refinement_points\": -1"},
                                        {"8", ", \"refinement_points\": 1.5"}}) {
    const auto bad = write(dir, "bad.json", with(coverage, refine));
    INFO(coverage << refine);
    CHECK_THROWS_WITH(load_record(bad), ContainsSubstring("expected a whole number >= 0"));
    CHECK_THROWS_WITH(load_record(bad), ContainsSubstring(bad.string()));
  }
}

TEST_CASE("a record's or manifest's text that could reach generated code is refused with its place") {
  kiln_test::TempDir dir;
  kiln_test::GeneratedToy toy;
  const nlohmann::ordered_json manifest = nlohmann::ordered_json::parse(kiln_test::read_file(toy.dir / "out/manifest.json"));
  const struct {
    const char* pointer;
    nlohmann::ordered_json value;
    const char* said;
  } manifest_cases[] = {
      {"/description", "toy\nint injected = 1;", "/description: the description must be one line"},
      {"/harness/include", "toy.hpp\"\n#include <cstdlib>", "/harness/include: expected a relative path"},
      {"/harness/include", "../../etc/passwd", "/harness/include: expected a relative path"},
      {"/harness/workload", "W; int x", "/harness/workload: expected a qualified C++ class name"},
      {"/parameters/0/name", "int", "/parameters/0/name: 'int' is a C++ keyword"},
      {"/parameters/0/values/0", "a\"b", "/parameters/0/values/0: expected an integer or an identifier"},
      {"/buckets/0/name", "a b", "/buckets/0/name: "},
      {"/buckets/0/name", "class", "/buckets/0/name: 'class' is a C++ keyword"},
      {"/problem/dims/dtype/0", "fp32\")", "/problem/dims/dtype/0: "},
      {"/space_hash", "00\n#error", "/space_hash: the space's hash must be one line"},
  };
  for (const auto& c : manifest_cases) {
    INFO(c.pointer);
    nlohmann::ordered_json bad = manifest;
    const nlohmann::ordered_json::json_pointer at(c.pointer);
    REQUIRE(bad.contains(at));
    bad[at] = c.value;
    const auto file = write(dir, "manifest.json", bad.dump());
    try {
      (void)load_manifest(file);
      FAIL("read without an error");
    } catch (const std::exception& e) {
      const std::string what = e.what();
      CHECK_THAT(what, ContainsSubstring(file.string() + ": " + c.said));
      CHECK(what.find('\n') == std::string::npos);
    }
  }
  const nlohmann::ordered_json record = nlohmann::ordered_json::parse(
      kiln_test::read_file(std::filesystem::path(KILN_SOURCE_DIR) / "presets/records/h200/topk_cuda.record.json"));
  for (const char* pointer : {"/device/name", "/device/driver", "/date", "/strategy", "/space_hash"}) {
    INFO(pointer);
    nlohmann::ordered_json bad = record;
    bad[nlohmann::ordered_json::json_pointer(pointer)] = "x\nint injected = 1;";
    const auto file = write(dir, "r.json", bad.dump());
    CHECK_THROWS_WITH(load_record(file), ContainsSubstring(file.string() + ": " + pointer + ": a record's text must be one line"));
  }
}

