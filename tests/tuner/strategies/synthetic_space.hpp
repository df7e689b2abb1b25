// A grid of a few thousand points with constraints, failures and a rugged landscape, for the
// budgeted strategies' tests: large enough that a search has to choose, made by hand so that it
// costs nothing to build.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "search.hpp"

namespace kiln_test {

struct SyntheticSpace {
  kiln::tuner::SearchSpace space;
  std::vector<std::optional<double>> scores;  // per variant; nothing where it failed

  // Five parameters of 8, 6, 5, 4 and 3 values; points with c0 + c1 + c2 > 13 are pruned.
  // `failing` of the variants (every n-th by a fixed hash) fail.
  explicit SyntheticSpace(double failing = 0.1) {
    space.value_counts = {8, 6, 5, 4, 3};
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 6; ++b)
        for (int c = 0; c < 5; ++c)
          for (int d = 0; d < 4; ++d)
            for (int e = 0; e < 3; ++e) {
              if (a + b + c > 13) continue;
              std::vector<int> point{a, b, c, d, e};
              space.positions.emplace(point, space.coordinates.size());
              space.coordinates.push_back(point);
              // A valley with interacting parameters, a step, and ripples of a few percent.
              const std::uint64_t h = (static_cast<std::uint64_t>(a * 1000 + b * 100 + c * 10 + d) * 3 + e) * 0x9E3779B97F4A7C15ull;
              const double ripple = 0.05 * static_cast<double>(h >> 40) / static_cast<double>(1ull << 24);
              const double log_time = 0.15 * (a - 5) * (a - 5) + 0.3 * (b - 2) * (b - 2) + 0.1 * (a - 5) * (b - 2) +
                                      0.2 * std::abs(c - 3) + (d == 1 ? 0.0 : 0.25) + 0.1 * e + ripple;
              const bool failed = static_cast<double>((h >> 20) % 1000) < failing * 1000;
              scores.push_back(failed ? std::nullopt : std::optional<double>(std::exp(log_time)));
            }
    space.default_variant = space.coordinates.size() / 2;
  }

  double optimum() const {
    double best = 1e300;
    for (const auto& s : scores) {
      if (s && *s < best) best = *s;
    }
    return best;
  }
};

}  // namespace kiln_test

namespace kiln_test {

// A space shaped like the tree N-body's: METHOD (tree, allpairs) and WALK (warp, body) are
// categorical; the tree has every WALK x THETA (4) x LEAF (4) x QUAD (2) point, all-pairs one
// variant (the constraints pin the tree's knobs). The default is a tree variant; all-pairs scores
// worst on average, so nothing but covering the categorical values proposes it early.
struct AlgorithmSpace {
  kiln::tuner::SearchSpace space;
  std::vector<double> scores;
  std::size_t allpairs = 0;

  AlgorithmSpace() {
    space.value_counts = {2, 2, 4, 4, 2};
    space.categorical = {true, true, false, false, false};
    auto add = [&](std::vector<int> point, double score) {
      space.positions.emplace(point, space.coordinates.size());
      space.coordinates.push_back(std::move(point));
      scores.push_back(score);
    };
    for (int walk = 0; walk < 2; ++walk)
      for (int theta = 0; theta < 4; ++theta)
        for (int leaf = 0; leaf < 4; ++leaf)
          for (int quad = 0; quad < 2; ++quad) add({0, walk, theta, leaf, quad}, 1.0 + 0.1 * theta + 0.05 * leaf + 0.2 * walk);
    allpairs = space.coordinates.size();
    add({1, 0, 0, 0, 0}, 10.0);
    space.default_variant = 0;  // the tree, warp walk
  }
};

}  // namespace kiln_test
