// The strategy table (replay_table.hpp): its mechanics on a synthetic landscape, and the tables the
// README publishes, recomputed from the recorded spaces listed in presets/records/replay.json, so
// that the README cannot drift from the data.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kiln/gen/generate.hpp"
#include "kiln_catch.hpp"
#include "replay.hpp"
#include "replay_table.hpp"
#include "temp_dir.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The README's table for `name`: the lines between "<!-- replay table: NAME -->" and the next
// "<!-- end replay table -->", or "" when the README has none.
std::string readme_table(const std::string& readme, const std::string& name) {
  const std::string open = "<!-- replay table: " + name + " -->\n";
  const auto begin = readme.find(open);
  if (begin == std::string::npos) return "";
  const auto end = readme.find("<!-- end replay table -->", begin);
  if (end == std::string::npos) return "";
  return readme.substr(begin + open.size(), end - begin - open.size());
}

}  // namespace

TEST_CASE("a strategy table replays every budgeted strategy at every budget over its seeds") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  // Scores 1..11 by variant index, variant 4 failing: the optimum is variant 0.
  auto landscape = [](std::size_t v) -> std::optional<double> {
    if (v == 4) return std::nullopt;
    return 1.0 + static_cast<double>(v);
  };
  TableSettings settings;
  settings.fractions = {0.2, 1.0};
  settings.seeds = 5;
  const auto rows = replay_table(space, landscape, settings);
  const auto names = budgeted_strategies();
  CHECK(std::find(names.begin(), names.end(), "exhaustive") == names.end());
  for (const char* n : {"anneal", "random", "genetic", "forest"}) CHECK(std::find(names.begin(), names.end(), n) != names.end());
  REQUIRE(rows.size() == 2 * names.size());
  for (const auto& r : rows) {
    INFO(r.strategy << " " << r.fraction);
    CHECK(r.budget == (r.fraction < 1 ? 3u : 11u));  // 20 % of 11, rounded up; all of it
    REQUIRE(r.reached.size() == 5);
    for (std::size_t k = 0; k < 5; ++k) {
      CHECK(r.evaluations[k] == r.budget);
      CHECK(r.reached[k] > 0);
      CHECK(r.reached[k] <= 1);
      // The whole space always finds the optimum.
      if (r.fraction == 1.0) CHECK(r.reached[k] == 1.0);
    }
  }
  // The figures are the searches': a row is the replay of its strategy with its seeds.
  const TableRow& random_row = rows[2 * static_cast<std::size_t>(std::find(names.begin(), names.end(), "random") - names.begin())];
  for (std::size_t k = 0; k < 5; ++k) {
    auto s = make_searcher("random", space, StrategyOptions{{"budget", "3"}}, 1 + k);
    auto r = replay(*s, landscape);
    REQUIRE(r.best.has_value());
    CHECK(random_row.reached[k] == 1.0 / *landscape(*r.best));
  }
  // Same settings, same table; the seeds run from the first seed on.
  CHECK(format_table(replay_table(space, landscape, settings)) == format_table(rows));
  settings.first_seed = 3;
  settings.strategies = {"random"};
  settings.fractions = {0.2};
  settings.seeds = 3;
  const auto shifted = replay_table(space, landscape, settings);
  REQUIRE(shifted.size() == 1);
  CHECK(shifted[0].reached == std::vector<double>(random_row.reached.begin() + 2, random_row.reached.end()));
}

TEST_CASE("a strategy table is printed as Markdown with the quartiles of the fraction reached") {
  TableRow row{"random", 0.05, 9, {1.0, 0.5, 0.75, 0.25}, {9, 9, 8, 9}};
  CHECK(format_table({row}) ==
        "| strategy | budget | evaluations | median | quartiles | worst |\n"
        "|---|---:|---:|---:|---:|---:|\n"
        "| random | 5 % (9) | 8–9 | 0.625 | 0.438–0.812 | 0.250 |\n");
}

TEST_CASE("a strategy table refuses what it cannot compute") {
  kiln_test::GeneratedToy toy;
  SearchSpace space = SearchSpace::from(toy.manifest);
  auto passing = [](std::size_t v) -> std::optional<double> { return 1.0 + static_cast<double>(v); };
  TableSettings settings;
  settings.strategies = {"exhaustive"};
  CHECK_THROWS_WITH(replay_table(space, passing, settings),
                    kiln_test::ContainsSubstring("strategy 'exhaustive' takes no budget (budgeted strategies: anneal"));
  settings.strategies = {"random"};
  settings.fractions = {0.0};
  CHECK_THROWS_WITH(replay_table(space, passing, settings), kiln_test::ContainsSubstring("is not in (0, 1]"));
  settings.fractions = {0.5};
  settings.seeds = 0;
  CHECK_THROWS_WITH(replay_table(space, passing, settings), kiln_test::ContainsSubstring("at least one seed"));
  settings.seeds = 3;
  CHECK_THROWS_WITH(replay_table(space, [](std::size_t) -> std::optional<double> { return std::nullopt; }, settings),
                    kiln_test::ContainsSubstring("no variant of the space passed"));
}

// Every recorded space of presets/records/replay.json, replayed as `kiln replay --table` does by
// default, gives the table the README shows for it, figure for figure.
TEST_CASE("the README's strategy tables are those of the recorded spaces") {
  const fs::path root = KILN_SOURCE_DIR;
  const auto list = nlohmann::json::parse(read_text(root / "presets/records/replay.json"));
  const std::string readme = read_text(root / "README.md");
  REQUIRE(list.at("spaces").size() >= 2);
  kiln_test::TempDir dir{"kiln-replay-table"};
  for (std::size_t i = 0; i < list.at("spaces").size(); ++i) {
    const auto& entry = list.at("spaces").at(i);
    const std::string name = entry.at("name");
    INFO(name);
    const fs::path out = dir / std::to_string(i);
    kiln::gen::generate(root / entry.at("space").get<std::string>(), root / entry.at("target").get<std::string>(), out);
    const Manifest manifest = load_manifest(out / "manifest.json");
    // A large recorded space's worklog is committed as a .tar.gz of one SQLite file: unpacked here.
    fs::path worklog = root / entry.at("worklog").get<std::string>();
    if (worklog.extension() == ".gz") {
      const fs::path unpacked = out / "worklog";
      fs::create_directories(unpacked);
      const std::string command = "tar -xzf '" + worklog.string() + "' -C '" + unpacked.string() + "'";
      REQUIRE(std::system(command.c_str()) == 0);
      worklog = unpacked / worklog.stem().stem().concat(".sqlite");
    }
    auto log = kiln::worklog::Worklog::open(worklog, kiln::worklog::OpenMode::read_only);
    const auto scores = recorded_scores(log, manifest);
    REQUIRE(scores.size() == manifest.variants.size());
    const auto rows = replay_table(SearchSpace::from(manifest), [&](std::size_t v) { return scores.at(v); }, TableSettings{});
    CHECK(readme_table(readme, name) == format_table(rows));
  }
}
