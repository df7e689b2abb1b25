// Usage errors: every subcommand exits 2 with one message that names the word that is wrong (an
// unknown subcommand or option, a misspelt option, a value out of range), and does nothing else.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln_catch.hpp"
#include "kiln_command.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;
using kiln_test::run_kiln;

namespace {

struct Case {
  std::vector<std::string> args;
  std::string names;  // what the message must contain
};

// A path that exists, so that only the word under test is wrong.
const std::string kFile = KILN_SOURCE_DIR "/README.md";
const std::string kSpace = KILN_SOURCE_DIR "/tests/generator/good/toy_cpu.space.json";
const std::string kDevice = KILN_SOURCE_DIR "/presets/devices/cpu.json";

}  // namespace

TEST_CASE("usage errors exit 2 with one message naming the wrong word", "[cli]") {
  kiln_test::TempDir tmp("kiln-cli-usage");
  const std::string out = (tmp / "out").string();
  const std::vector<Case> cases = {
      {{}, "a subcommand is required"},
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"frobnicate"}, "unknown subcommand 'frobnicate'"},
      {{"generate", "--spaec", kSpace, "--target", kDevice, "--out", out}, "unknown option '--spaec'"},
      {{"generate", "--space", kSpace, "--target", kDevice, "--out", out, "stray"}, "unexpected argument 'stray'"},
      {{"generate", "--space", kSpace, "--target", kDevice, "--out", ""}, "--out: an empty path"},
      {{"generate", "--space", kSpace, "--target", kDevice}, "--out is required"},
      {{"header", "--manifest", kFile, "--out", ""}, "--out: an empty path"},
      {{"tune", "--timeout", "-5"}, "--timeout"},
      {{"tune", "--timeout", "0"}, "--timeout"},
      {{"tune", "--budget", "-1"}, "--budget: '-1'"},
      {{"tune", "--seed", "-5"}, "--seed: '-5'"},
      {{"tune", "--repetitions", "0"}, "--repetitions"},
      {{"tune", "--repetition-seconds", "0"}, "--repetition-seconds"},
      {{"tune", "--repetition-seconds", "-0.01"}, "--repetition-seconds"},
      {{"tune", "--sanitize-timeout", "0"}, "--sanitize-timeout"},
      {{"tune", "--manifest", kFile, "--variants-dir", out, "--build-records", out, "--worklog", (tmp / "w.sqlite").string(),
        "--device", kFile, "--probe", kFile, "--depfile", (tmp / "tune.d").string()},
       "--depfile requires --depfile-target"},
      {{"tune", "--include-dir", (tmp / "no-such-dir").string()}, "--include-dir"},
      {{"compile", "--manifest", kFile, "--compile-command", kFile, "--link-command", kFile, "--template-source", kFile,
        "--variants-dir", out, "--objects-dir", out, "--build-records", out, "--depfile-target", (tmp / "stamp").string()},
       "--depfile-target requires --depfile"},
      {{"replay", "--worklog", kFile, "--manifest", kFile, "--seed", "18446744073709551616"}, "--seed"},
      {{"replay", "--worklog", kFile, "--manifest", kFile, "--table", "--budget", "5"}, "--budget excludes --table"},
      {{"replay", "--worklog", kFile, "--manifest", kFile, "--table", "--fractions", "0.1,0"},
       "--fractions: a fraction of the space: more than 0, at most 1"},
      {{"replay", "--worklog", kFile, "--manifest", kFile, "--table", "--fractions", "1.5"}, "--fractions"},
      {{"replay", "--worklog", kFile, "--manifest", kFile, "--table", "--seeds", "0"}, "--seeds"},
      {{"replay", "--worklog", kFile, "--manifest", kFile, "--seeds", "3"}, "--seeds requires --table"},
      {{"log", "--worklog", kFile, "--session", "-5"}, "--session: '-5'"},
      {{"log", "--worklog", kFile, "--session", "0"}, "--session: '0'"},
      {{"log", "--worklog", kFile, "--verdict", "kept"}, "--verdict"},
      {{"log", "--worklog", kFile, "--author", "robot"}, "--author"},
      {{"log", "--wroklog", kFile}, "unknown option '--wroklog'"},
      {{"report"}, "--worklog or --record is required"},
      {{"profile"}, "--build is required"},
      {{"profile", "--build", KILN_SOURCE_DIR, "--runners-up", "-1"}, "--runners-up"},
      {{"profile", "--build", KILN_SOURCE_DIR, "--timeout", "0"}, "--timeout"},
      {{"profile", "--build", KILN_SOURCE_DIR, "--ncu", (tmp / "no-ncu").string()}, "--ncu"},
      {{"profile", "--build", KILN_SOURCE_DIR, "--kernal", "k"}, "unknown option '--kernal'"},
      {{"report", "--worklog", kFile, "--session", "x"}, "--session: 'x'"},
      {{"link", "--worklog", kFile, "--from", "9223372036854775808", "--to", "1", "--kind", "enables"},
       "--from: '9223372036854775808'"},
      {{"link", "--worklog", kFile, "--from", "1", "--to", "-2", "--kind", "enables"}, "--to: '-2'"},
      {{"link", "--worklog", kFile, "--from", "1", "--to", "2", "--kind", "likes"}, "--kind"},
      {{"attempt", "--worklog", (tmp / "w.sqlite").string(), "--kernel", "k", "--hypothesis", "h", "--change", "c",
        "--verdict", "keep", "--baseline", "nan"},
       "--baseline: 'nan'"},
      {{"attempt", "--worklog", (tmp / "w.sqlite").string(), "--kernel", "k", "--hypothesis", "h", "--change", "c",
        "--verdict", "keep", "--result", "inf"},
       "--result: 'inf'"},
      {{"attempt", "--worklog", (tmp / "w.sqlite").string(), "--kernel", "k", "--hypothesis", "h", "--change", "c",
        "--verdict", "won"},
       "--verdict"},
  };
  for (const Case& c : cases) {
    std::string line = "kiln";
    for (const std::string& a : c.args) line += " '" + a + "'";
    INFO(line);
    const kiln_test::KilnRun r = run_kiln(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, ContainsSubstring(c.names));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // Nothing was created by any of them.
  CHECK_FALSE(std::filesystem::exists(tmp / "out"));
  CHECK_FALSE(std::filesystem::exists(tmp / "w.sqlite"));
  CHECK_FALSE(std::filesystem::exists(tmp / "tune.d"));
}

TEST_CASE("help and version still exit 0", "[cli]") {
  CHECK(run_kiln({"--version"}).exit_code == 0);
  CHECK(run_kiln({"--help"}).exit_code == 0);
  CHECK(run_kiln({"generate", "--help"}).exit_code == 0);
}
