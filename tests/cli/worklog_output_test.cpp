// `kiln log` and `kiln report` read a worklog without writing anything, and show its text escaped:
// a newline in an attempt cannot forge a line, an escape sequence cannot reach the terminal, and
// bytes that are not UTF-8 cannot make the JSON output invalid.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "committed_worklog.hpp"
#include "kiln_catch.hpp"
#include "kiln_command.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;
using kiln_test::run_kiln;

namespace fs = std::filesystem;

namespace {

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

}  // namespace

TEST_CASE("kiln log escapes worklog text and its JSON stays valid", "[cli]") {
  kiln_test::TempDir tmp("kiln-cli-log");
  const std::string worklog = (tmp / "w.sqlite").string();
  const kiln_test::KilnRun added =
      run_kiln({"attempt", "--worklog", worklog, "--kernel", "k\x1b[31m", "--hypothesis", "h", "--change",
                "line one\n#99 keep  forged  -  -\n    change: none", "--verdict", "keep", "--explanation",
                "bytes \xff\xfe and \xc2\x9b" "2J"});
  REQUIRE(added.exit_code == 0);
  const auto before = files_in(tmp.path());

  const kiln_test::KilnRun log = run_kiln({"log", "--worklog", worklog});
  REQUIRE(log.exit_code == 0);
  const std::string text = joined(log.out);
  CHECK(log.out.size() == 4);  // three lines for the attempt, one count
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\xff') == std::string::npos);
  CHECK(text.find("\xc2\x9b") == std::string::npos);
  CHECK_THAT(text, ContainsSubstring("change: line one\\n#99 keep  forged  -  -\\n    change: none"));
  CHECK_THAT(text, ContainsSubstring("bytes \\xff\\xfe and \\xc2\\x9b2J"));

  const kiln_test::KilnRun json = run_kiln({"log", "--worklog", worklog, "--json"});
  REQUIRE(json.exit_code == 0);
  const nlohmann::json parsed = nlohmann::json::parse(joined(json.out));  // throws on invalid UTF-8
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0]["change"] == "line one\n#99 keep  forged  -  -\n    change: none");
  CHECK(parsed[0]["explanation"] == "bytes \xef\xbf\xbd\xef\xbf\xbd and \xc2\x9b" "2J");

  CHECK(files_in(tmp.path()) == before);
}

TEST_CASE("reading commands write nothing into an empty or foreign file", "[cli]") {
  kiln_test::TempDir tmp("kiln-cli-ro");
  const fs::path empty = tmp / "empty.sqlite";
  kiln_test::write_file(empty, "");
  const fs::path notes = tmp / "notes.txt";
  kiln_test::write_file(notes, "a file of notes\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"log", "--worklog", empty.string()},
        std::vector<std::string>{"log", "--worklog", empty.string(), "--json"},
        std::vector<std::string>{"report", "--worklog", empty.string()},
        std::vector<std::string>{"log", "--worklog", notes.string()}}) {
    INFO(args[0] << " " << args[2]);
    const kiln_test::KilnRun r = run_kiln(args);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, ContainsSubstring(args[2] + ": not a Kiln worklog"));
  }
  CHECK(fs::file_size(empty) == 0);
  CHECK(kiln_test::read_file(notes) == "a file of notes\n");
  CHECK(files_in(tmp.path()) == std::set<std::string>{"empty.sqlite", "notes.txt"});
}

// The committed H200 worklog and records, reported and replayed: the output below and in
// tests/cli/data/h200_report.md is what Kiln printed before the worklog's rows were read through the
// protocol's types: the records of both domains (softmax_cuda's as tuned on 2026-11-24, whose
// measurements this worklog holds), nbody_cuda's record of before its domain (its
// buckets' winners have Nsight Compute metrics in the worklog), and a session with its device.
TEST_CASE("kiln report and kiln replay on the committed worklog print what they printed before", "[cli]") {
  const fs::path source(KILN_SOURCE_DIR);
  const std::string worklog = kiln_test::committed_h200_worklog().string();
  const fs::path records = source / "presets/records/h200";
  const kiln_test::KilnRun report =
      run_kiln({"report", "--worklog", worklog, "--record", (source / "tests/cli/data/nbody_cuda_buckets.record.json").string(),
                "--record", (records / "nbody_cuda.record.json").string(), "--record",
                (source / "tests/cli/data/softmax_cuda_h200_2026-11-24.record.json").string(), "--kernel", "nbody_cuda"},
               60);
  REQUIRE(report.exit_code == 0);
  CHECK(joined(report.out) == kiln_test::read_file(source / "tests/cli/data/h200_report.md"));

  kiln_test::TempDir tmp("kiln-cli-replay");
  const kiln_test::KilnRun generated =
      run_kiln({"generate", "--space", (source / "presets/records/h200/softmax_cuda_2026-11-24.space.json").string(), "--target",
                (source / "presets/devices/h200.json").string(), "--out", (tmp / "softmax_cuda").string()},
               60);
  REQUIRE(generated.exit_code == 0);
  const kiln_test::KilnRun replay =
      run_kiln({"replay", "--worklog", worklog, "--manifest", (tmp / "softmax_cuda/manifest.json").string(), "--strategy",
                "anneal", "--budget", "15", "--seed", "3"},
               60);
  REQUIRE(replay.exit_code == 0);
  CHECK(joined(replay.out) ==
        "kiln: replayed anneal (seed 3) on softmax_cuda: 15 of 179 variants measured\n"
        "  best of the space: softmax_cuda__THREADS128_ROW_THREADS128_SPLIT1_CACHE8_VEC_BYTES16_STAGE0 184.707 us\n"
        "  found:             softmax_cuda__THREADS256_ROW_THREADS128_SPLIT1_CACHE8_VEC_BYTES16_STAGE0 194.145 us "
        "(5.11023% slower)\n");

  // The strategy table, as the README shows it (tests/tuner/replay_table_test.cpp checks every figure).
  const kiln_test::KilnRun table =
      run_kiln({"replay", "--worklog", worklog, "--manifest", (tmp / "softmax_cuda/manifest.json").string(), "--table"}, 60);
  REQUIRE(table.exit_code == 0);
  const std::string readme = kiln_test::read_file(source / "README.md");
  const std::string open = "<!-- replay table: softmax_cuda on H200 -->\n";
  const auto begin = readme.find(open);
  REQUIRE(begin != std::string::npos);
  CHECK(joined(table.out) == readme.substr(begin + open.size(), readme.find("<!-- end replay table -->", begin) - begin - open.size()));
  const kiln_test::KilnRun refused = run_kiln({"replay", "--worklog", worklog, "--manifest",
                                               (tmp / "softmax_cuda/manifest.json").string(), "--table", "--strategy", "exhaustive"},
                                              60);
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, ContainsSubstring("strategy 'exhaustive' takes no budget"));
}

// Replayed with bucket scores (attention_d256 of the committed worklog-xxh3: 45 variants, every one
// measured, four buckets holding listed problems): each bucket's best found is reported against the
// space's, and a budget of the whole space finds every bucket's winner.
TEST_CASE("kiln replay --buckets reports each bucket's best against the space's", "[cli]") {
  const fs::path source(KILN_SOURCE_DIR);
  kiln_test::TempDir tmp("kiln-cli-replay-buckets");
  kiln_test::unpack_xz_worklog("presets/records/h200/worklog-xxh3.sqlite.xz", tmp / "worklog.sqlite");
  const std::string worklog = (tmp / "worklog.sqlite").string();
  const kiln_test::KilnRun generated =
      run_kiln({"generate", "--space", (source / "kernels/attention/attention_d256.space.json").string(), "--target",
                (source / "presets/devices/h200.json").string(), "--out", (tmp / "d256").string()},
               60);
  REQUIRE(generated.exit_code == 0);
  const std::string manifest = (tmp / "d256/manifest.json").string();
  for (const char* budget : {"8", "45"}) {
    const kiln_test::KilnRun r = run_kiln(
        {"replay", "--worklog", worklog, "--manifest", manifest, "--strategy", "forest", "--budget", budget, "--seed", "2",
         "--buckets"},
        60);
    INFO(joined(r.out) << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string out = joined(r.out);
    for (const char* bucket : {"tiny", "few_rows", "causal", "full"}) {
      CHECK_THAT(out, ContainsSubstring(std::string("  bucket ") + bucket + ": "));
    }
    if (std::string(budget) == "45") {
      CHECK_THAT(out, ContainsSubstring("45 of 45 variants measured"));
      std::size_t whole = 0;
      for (std::size_t at = out.find("the best (1 of it)"); at != std::string::npos; at = out.find("the best (1 of it)", at + 1)) {
        ++whole;
      }
      CHECK(whole == 4);
    }
  }
  const kiln_test::KilnRun refused =
      run_kiln({"replay", "--worklog", worklog, "--manifest", manifest, "--table", "--buckets"}, 60);
  CHECK(refused.exit_code != 0);
}
