// Search strategies replayed offline on results recorded by a real tuning run: the H200 worklog
// committed in presets/records/h200 (exhaustive measurements of softmax_cuda and nbody_cuda).
#include <filesystem>

#include "committed_worklog.hpp"
#include "kiln/gen/generate.hpp"
#include "kiln_catch.hpp"
#include "replay.hpp"
#include "search.hpp"
#include "temp_dir.hpp"

using namespace kiln::tuner;

namespace {

struct Recorded {
  kiln_test::TempDir dir{"kiln-replay"};
  Manifest manifest;
  std::map<std::size_t, std::optional<double>> scores;

  // `space`: the space as the worklog recorded it, from the source tree.
  explicit Recorded(const std::string& space, const std::string& kernel) {
    const std::filesystem::path root = KILN_SOURCE_DIR;
    kiln::gen::generate(root / space, root / "presets/devices/h200.json", dir / kernel);
    manifest = load_manifest(dir / kernel / "manifest.json");
    // Opening a worklog switches it to WAL: work on a copy, never on the committed file.
    std::filesystem::copy_file(kiln_test::committed_h200_worklog(), dir / "worklog.sqlite");
    auto log = kiln::worklog::Worklog::open(dir / "worklog.sqlite", kiln::worklog::OpenMode::existing);
    scores = recorded_scores(log, manifest);
  }

  double best() const {
    double b = 1e300;
    for (const auto& [v, s] : scores) {
      if (s && *s < b) b = *s;
    }
    return b;
  }
};

// Fraction of seeds for which annealing with `budget` lands within `slack` of the best.
double hit_rate(const Recorded& r, std::size_t budget, double slack, int seeds) {
  SearchSpace space = SearchSpace::from(r.manifest);
  int hits = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    auto s = make_searcher("anneal", space, StrategyOptions{{"budget", std::to_string(budget)}}, static_cast<std::uint64_t>(seed));
    auto result = replay(*s, [&](std::size_t v) { return r.scores.at(v); });
    REQUIRE(result.evaluations.size() == budget);
    REQUIRE(result.best.has_value());
    if (*r.scores.at(*result.best) <= r.best() * (1 + slack)) ++hits;
  }
  return static_cast<double>(hits) / seeds;
}

}  // namespace

TEST_CASE("the recorded runs cover every variant") {
  Recorded softmax("presets/records/h200/softmax_cuda_2026-11-24.space.json", "softmax_cuda");
  CHECK(softmax.scores.size() == softmax.manifest.variants.size());
  Recorded nbody("kernels/nbody/nbody_cuda.space.json", "nbody_cuda");
  CHECK(nbody.scores.size() == nbody.manifest.variants.size());
}

TEST_CASE("annealing on a third of softmax_cuda's space usually finds its best") {
  Recorded softmax("presets/records/h200/softmax_cuda_2026-11-24.space.json", "softmax_cuda");
  std::size_t budget = softmax.manifest.variants.size() / 3;
  CHECK(hit_rate(softmax, budget, 0.01, 10) >= 0.7);
  CHECK(hit_rate(softmax, budget, 0.10, 10) == 1.0);
}

TEST_CASE("annealing on a third of nbody_cuda's space stays within 15% of its best") {
  Recorded nbody("kernels/nbody/nbody_cuda.space.json", "nbody_cuda");
  CHECK(hit_rate(nbody, nbody.manifest.variants.size() / 3, 0.15, 5) == 1.0);
}
