// Records and dispatch headers: deterministic text, the fallback chain compiled and checked by a
// real compiler, and records that no longer fit the space.
#include <chrono>
#include <string>
#include <vector>

#include "header.hpp"
#include "kiln_catch.hpp"
#include "process.hpp"
#include "record.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;

namespace {

Record toy_record() {
  Record r;
  r.kernel = "toy";
  r.backend = "cpu";
  r.space_hash = "0123456789abcdef";
  r.context_key = "fedcba9876543210";
  r.preset = "cpu";
  r.device_name = "Test CPU";
  r.date = "2026-11-21";
  r.strategy = "exhaustive";
  r.rates = {{"dram_bytes_per_s", 2e10}};
  r.counts = {{"feasible", 11}, {"evaluated", 11}, {"passed", 11}, {"invalid", 0}, {"failed", 0}};
  RecordedBucket small{"small", std::string("toy__TILE4_VEC16"), "", 1e-6, 4e-7, {}, {{"toy__TILE2_VEC8", 1.2e-6}}};
  kiln::Problem p1;
  p1.set("n", std::int64_t{1024});
  p1.set("dtype", std::string("fp32"));
  small.problems.push_back({p1, 1e-6, 4e-7, "memory bandwidth"});
  RecordedBucket bf16{"big_bf16", std::string("toy__TILE1_VEC16"), "", 2e-5, 1.3e-5, {}, {}};
  kiln::Problem p2;
  p2.set("n", std::int64_t{65536});
  p2.set("dtype", std::string("bf16"));
  bf16.problems.push_back({p2, 2e-5, 1.3e-5, "memory bandwidth"});
  RecordedBucket rest{"rest", std::nullopt, "no variant passed validation and timing", 0, 0, {}, {}};
  r.buckets = {small, bf16, rest};
  return r;
}

}  // namespace

TEST_CASE("a record survives its text form unchanged") {
  Record r = toy_record();
  std::string text = record_text(r);
  Record back = record_from_json(nlohmann::ordered_json::parse(text), "test");
  CHECK(record_text(back) == text);
  CHECK(back.buckets.at(0).contenders.at(0).variant == "toy__TILE2_VEC8");
  CHECK_FALSE(back.buckets.at(2).winner.has_value());
}

TEST_CASE("the same record gives the same header, byte for byte") {
  kiln_test::GeneratedToy toy;
  std::vector<std::string> warnings;
  std::string a = dispatch_header(toy.manifest, toy_record(), warnings);
  std::string b = dispatch_header(toy.manifest, record_from_json(nlohmann::ordered_json::parse(record_text(toy_record())), "t"), warnings);
  CHECK(a == b);
  CHECK(warnings.empty());
  CHECK_THAT(a, kiln_test::ContainsSubstring("struct TILE4_VEC16 {"));
  CHECK_THAT(a, kiln_test::ContainsSubstring("using DefaultConfig = TILE2_VEC8;"));
}

TEST_CASE("the generated header compiles, and its fallback chain is exact -> nearest -> default") {
  kiln_test::GeneratedToy toy;
  std::vector<std::string> warnings;
  kiln_test::write_file(toy.dir / "include/kiln/tuned/toy.hpp", dispatch_header(toy.manifest, toy_record(), warnings));
  kiln_test::write_file(toy.dir / "use.cpp", R"(
#include <cstring>
#include "kiln/tuned/toy.hpp"
using namespace kiln::tuned::toy;
constexpr Problem small{1024, kiln::Choice{"fp32"}};
constexpr Problem big_bf16{65536, kiln::Choice{"bf16"}};
constexpr Problem big_fp32{65536, kiln::Choice{"fp32"}};
static_assert(tuned_bucket(small) == Bucket::small, "exact bucket");
static_assert(tuned_bucket(big_bf16) == Bucket::big_bf16, "exact bucket");
// 'rest' has no winner: the nearest measured problem with the same dtype is n=1024 fp32.
static_assert(bucket_of(big_fp32) == Bucket::rest, "own bucket");
static_assert(tuned_bucket(big_fp32) == Bucket::small, "nearest tuned bucket");
static_assert(provenance(big_fp32).tuned, "tuned by proxy");
static_assert(provenance(small).ratio > 2.4 && provenance(small).ratio < 2.6, "ratio");
int main() {
  int tile = dispatch(big_bf16, [](auto config) { return decltype(config)::TILE; });
  int vec = dispatch(small, [](auto config) { return decltype(config)::VEC; });
  bool nearest = std::strcmp(provenance(big_fp32).selection, "nearest tuned bucket") == 0;
  return tile == 1 && vec == 16 && nearest ? 0 : 1;
}
)");
  std::string output;
  auto sink = [&](const std::string& line) { output += line + "\n"; };
  ChildResult built = run_child({"/bin/sh", "-c",
                                 "exec \"$0\" \"$@\" 2>&1",
                                 "c++", "-std=c++17", "-Wall", "-Werror", "-I" + (toy.dir / "include").string(),
                                 "-I" + std::string(KILN_SOURCE_DIR) + "/autotune/include", (toy.dir / "use.cpp").string(),
                                 "-o", (toy.dir / "use").string()},
                                std::chrono::seconds(120), sink);
  INFO(output);
  REQUIRE(built.exited_cleanly());
  ChildResult ran = run_child({(toy.dir / "use").string()}, std::chrono::seconds(10), sink);
  CHECK(ran.exited_cleanly());
}

TEST_CASE("without a record every problem takes the default") {
  kiln_test::GeneratedToy toy;
  std::vector<std::string> warnings;
  std::string h = dispatch_header(toy.manifest, std::nullopt, warnings);
  CHECK_THAT(h, kiln_test::ContainsSubstring("Not tuned: every problem uses the space's default configuration."));
  CHECK_THAT(h, kiln_test::ContainsSubstring("return launch(DefaultConfig{});"));
  CHECK(h.find("case Bucket::") == std::string::npos);
}

TEST_CASE("a record that no longer fits the space falls back, with a warning") {
  kiln_test::GeneratedToy toy;
  Record r = toy_record();
  r.buckets[0].winner = "toy__TILE8_VEC16";  // pruned by TILE * VEC <= 64
  r.buckets.push_back({"retired", std::string("toy__TILE1_VEC4"), "", 1e-6, 0, {}, {}});
  std::vector<std::string> warnings;
  std::string h = dispatch_header(toy.manifest, r, warnings);
  REQUIRE(warnings.size() == 2);
  CHECK_THAT(warnings[0], kiln_test::ContainsSubstring("toy__TILE8_VEC16"));
  CHECK_THAT(warnings[1], kiln_test::ContainsSubstring("retired"));
  CHECK(h.find("case Bucket::small:") == std::string::npos);
  CHECK_THAT(h, kiln_test::ContainsSubstring("case Bucket::big_bf16:"));

  Record other = toy_record();
  other.kernel = "softmax_cuda";
  CHECK_THROWS_WITH(dispatch_header(toy.manifest, other, warnings), kiln_test::ContainsSubstring("not toy"));
}

TEST_CASE("text from a record or a manifest cannot become code in the header") {
  // Readers refuse such text (hostile_files_test); the header escapes it anyway, since records and
  // manifests are also built in memory.
  kiln_test::GeneratedToy toy;
  toy.manifest.description = "toy\nint injected_description = 1; \\";
  Record r = toy_record();
  r.device_name = "CPU\nint injected_device = 2;";
  r.driver = "1\r\nint injected_driver = 3; // \\";
  r.date = "2026-11-30\" \"\\";
  std::vector<std::string> warnings;
  const std::string header = dispatch_header(toy.manifest, r, warnings);
  kiln_test::write_file(toy.dir / "include/kiln/tuned/toy.hpp", header);
  kiln_test::write_file(toy.dir / "use.cpp", R"(
#include "kiln/tuned/toy.hpp"
int injected_description = 0, injected_device = 0, injected_driver = 0;  // a second definition would not compile
int main() { return 0; }
)");
  std::string output;
  auto sink = [&](const std::string& line) { output += line + "\n"; };
  ChildResult built = run_child({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", "c++", "-std=c++17", "-Wall", "-Werror",
                                 "-I" + (toy.dir / "include").string(),
                                 "-I" + std::string(KILN_SOURCE_DIR) + "/autotune/include", (toy.dir / "use.cpp").string(),
                                 "-o", (toy.dir / "use").string()},
                                std::chrono::seconds(120), sink);
  INFO(header.substr(0, 600));
  INFO(output);
  CHECK(built.exited_cleanly());
  for (const char* name : {"injected_description", "injected_device", "injected_driver"}) {
    // Each appears on a comment line or inside a string literal only.
    std::size_t at = header.find(name);
    REQUIRE(at != std::string::npos);
    const std::size_t line = header.rfind('\n', at) + 1;
    const bool comment = header.compare(line, 2, "//") == 0;
    const bool literal = header.find('"', line) < at;
    CHECK((comment || literal));
  }
}

