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
