// Hostile input to `kiln generate`, run as a real child process. The corpus in hostile/ holds one
// file per class of hostile input and variants of each (its <case>.expect as in bad/: the place on
// line 1, text of the message on line 2); the largest inputs are made here instead of committed.
// Each must be refused with exactly one line naming the file and the place, exit code 1, nothing
// written to --out, within a few seconds. Then --out itself: empty, a file, the current directory,
// a directory holding other files.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gen_test_support.hpp"
#include "kiln_catch.hpp"
#include "kiln_command.hpp"

using namespace gen_test;
using kiln_test::ContainsSubstring;
using kiln_test::KilnRun;
using kiln_test::run_kiln;

namespace {

constexpr double kFewSeconds = 5;

fs::path hostile_dir() { return source_dir() / "tests/generator/hostile"; }

std::string read_line(std::ifstream& in) {
  std::string line;
  std::getline(in, line);
  return line;
}

std::string expected_prefix(const fs::path& space, const std::string& place) {
  if (place == "-") return space.string() + ": ";
  if (!place.empty() && place[0] == ':') return space.string() + place;
  return space.string() + ": " + place + ": ";
}

KilnRun generate(const fs::path& space, const fs::path& out) {
  return run_kiln({"generate", "--space", space.string(), "--target", device("cpu").string(), "--out", out.string()},
                  30);
}

// The refusal every hostile space must get.
void check_refused(const KilnRun& r, const fs::path& space, const std::string& prefix, const std::string& text,
                   const fs::path& out) {
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 1);
  CHECK(r.seconds < kFewSeconds);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, StartsWith(prefix));
  CHECK_THAT(r.err, ContainsSubstring(text));
  CHECK_FALSE(fs::exists(out));
  (void)space;
}

// A space of the toy's shape whose one constraint is `expr`.
std::string space_with_constraint(const std::string& expr) {
  ordered_json space = read_json(good_space("toy_cpu.space.json"));
  space["constraints"] = ordered_json::array({expr});
  return space.dump();
}

}  // namespace

TEST_CASE("every hostile space is refused with one line naming the file and place, writing nothing", "[hostile]") {
  std::vector<fs::path> spaces;
  for (const auto& entry : fs::directory_iterator(hostile_dir())) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 11 && name.substr(name.size() - 11) == ".space.json") spaces.push_back(entry.path());
  }
  std::sort(spaces.begin(), spaces.end());
  REQUIRE(spaces.size() >= 50);
  kiln_test::TempDir tmp("kiln-hostile");
  for (const fs::path& space : spaces) {
    INFO("case " << space.filename().string());
    const std::string stem = space.filename().string().substr(0, space.filename().string().size() - 11);
    std::ifstream expect(hostile_dir() / (stem + ".expect"));
    REQUIRE(expect);
    const std::string place = read_line(expect);
    const std::string text = read_line(expect);
    const fs::path out = tmp / stem;
    check_refused(generate(space, out), space, expected_prefix(space, place), text, out);
  }
}

TEST_CASE("large hostile inputs are refused at once", "[hostile]") {
  kiln_test::TempDir tmp("kiln-hostile-large");
  const fs::path out = tmp / "out";
  struct Large {
    std::string name;
    std::string content;
    std::string place;
    std::string text;
  };
  std::string chain = "A";
  for (int i = 1; i < 64'000; ++i) chain += "+A";
  std::string deep_arrays(200'000, '[');
  deep_arrays += std::string(200'000, ']');
  std::string deep_objects;
  for (int i = 0; i < 100'000; ++i) deep_objects += "{\"a\":";  // 500 KB, under the size limit
  deep_objects += "1" + std::string(100'000, '}');
  ordered_json problems = read_json(good_space("toy_cpu.space.json"));
  problems["problems"] = ordered_json::array();
  for (int i = 0; i < 4097; ++i) problems["problems"].push_back({{"rows", i + 1}, {"cols", 8}});
  const std::vector<Large> cases = {
      {"chain_64000.space.json", space_with_constraint(chain + " > 0"), ": /constraints/0: ",
       "expression is 128003 bytes, longer than the 4096 allowed"},
      {"nested_arrays_200000.space.json", deep_arrays, ":1:65: ", "JSON nested more than 64 levels deep"},
      {"nested_objects_100000.space.json", deep_objects, ":1:", "JSON nested more than 64 levels deep"},
      {"big.space.json", "{\"description\": \"" + std::string(2 << 20, 'x') + "\"}", ": ",
       "the file is larger than 1048576 bytes"},
      {"problems_4097.space.json", problems.dump(), ": /problems: ", "4097 problems, more than the 4096 allowed"},
  };
  for (const Large& c : cases) {
    INFO(c.name);
    const fs::path space = tmp / c.name;
    kiln_test::write_file(space, c.content);
    check_refused(generate(space, out), space, space.string() + c.place, c.text, out);
  }
}

TEST_CASE("devices, pipes and odd file names are read with a bound", "[hostile]") {
  kiln_test::TempDir tmp("kiln-hostile-special");
  const fs::path out = tmp / "out";
  INFO("/dev/zero");
  check_refused(generate("/dev/zero", out), "/dev/zero", "/dev/zero: ", "larger than 1048576 bytes", out);

  const fs::path fifo = tmp / "fifo.space.json";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  INFO("a FIFO nobody writes");
  check_refused(generate(fifo, out), fifo, fifo.string() + ":1:1: ", "malformed JSON", out);

  // A name that is not UTF-8 is shown escaped, so the message stays valid UTF-8.
  const fs::path odd = tmp / "bad\xff\x1bname.space.json";
  kiln_test::write_file(odd, "{");
  INFO("a file name that is not UTF-8");
  check_refused(generate(odd, out), odd, (tmp / "bad\\xff\\u001bname.space.json").string() + ":1:", "malformed JSON",
                out);
}

namespace {

// `kiln generate` run in `dir` (the current directory of the child).
KilnRun generate_in(const fs::path& dir, const std::string& out) {
  kiln_test::KilnRun run;
  const kiln::tuner::ChildResult r = kiln::tuner::run_child(
      {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir.string(), KILN_EXECUTABLE, "generate", "--space",
       good_space("toy_cpu.space.json").string(), "--target", device("cpu").string(), "--out", out},
      std::chrono::seconds(30), [&](const std::string& line) { run.out.push_back(line); });
  run.exit_code = r.exit_code;
  run.err = r.stderr_tail;
  return run;
}

}  // namespace

TEST_CASE("--out never costs a file Kiln did not write", "[hostile]") {
  kiln_test::TempDir tmp("kiln-hostile-out");

  SECTION("an empty path is a usage error") {
    const KilnRun r = generate_in(tmp.path(), "");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, ContainsSubstring("--out: an empty path"));
    CHECK(fs::is_empty(tmp.path()));
  }
  SECTION("a file is refused and left as it was") {
    kiln_test::write_file(tmp / "notes.txt", "mine\n");
    const KilnRun r = generate_in(tmp.path(), "notes.txt");
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, ContainsSubstring("notes.txt: the output directory exists and is not a directory"));
    CHECK(kiln_test::read_file(tmp / "notes.txt") == "mine\n");
    CHECK(!fs::exists(tmp / "variants"));
  }
  SECTION("a variants entry that is a file is refused") {
    kiln_test::write_file(tmp / "variants", "mine\n");
    const KilnRun r = generate_in(tmp.path(), ".");
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, ContainsSubstring("exists and is not a directory"));
    CHECK(kiln_test::read_file(tmp / "variants") == "mine\n");
    CHECK(!fs::exists(tmp / "manifest.json"));
  }
  SECTION("the current directory, holding a person's sources, twice") {
    kiln_test::write_file(tmp / "variants/mine.cpp", "// mine\n");
    kiln_test::write_file(tmp / "variants/toy_cpu__old.cpp", "// looks generated, is not listed\n");
    kiln_test::write_file(tmp / "main.cpp", "int main() {}\n");
    for (int run = 0; run < 2; ++run) {
      const KilnRun r = generate_in(tmp.path(), ".");
      REQUIRE(r.exit_code == 0);
      CHECK_THAT(r.out.at(0), ContainsSubstring("0 removed"));
    }
    CHECK(kiln_test::read_file(tmp / "variants/mine.cpp") == "// mine\n");
    CHECK(fs::exists(tmp / "variants/toy_cpu__old.cpp"));
    CHECK(fs::exists(tmp / "main.cpp"));
  }
  SECTION("a foreign manifest.json lists nothing to remove") {
    kiln_test::write_file(tmp / "variants/mine.cpp", "// mine\n");
    kiln_test::write_file(tmp / "manifest.json", R"({"variants": [{"source": "variants/mine.cpp"}]})");
    const KilnRun r = generate_in(tmp.path(), ".");
    REQUIRE(r.exit_code == 0);
    CHECK(kiln_test::read_file(tmp / "variants/mine.cpp") == "// mine\n");
  }
}
