// What the genetic and the forest strategies share: random draws that give the same numbers with
// every standard library (the std:: distributions are implementation-defined, and a replayed table
// must not change with the compiler), and the bookkeeping of which variants were proposed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "search.hpp"

namespace kiln::tuner::grid {

// A uniform index in [0, n), n > 0, by rejection so that no value is favoured.
inline std::size_t draw(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = top - top % n;
  std::uint64_t x = rng();
  while (x >= limit) x = rng();
  return static_cast<std::size_t>(x % n);
}

// A uniform number in [0, 1) with 53 random bits.
inline double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// The variants proposed so far, and the draws that avoid them: a budgeted strategy never proposes
// a variant twice.
class Proposals {
 public:
  explicit Proposals(const SearchSpace& space) : space_(space), taken_(space.size(), false) {
    for (int n : space.value_counts) covered_.emplace_back(static_cast<std::size_t>(n), false);
  }
  bool taken(std::size_t v) const { return taken_[v]; }
  std::size_t count() const { return count_; }
  bool exhausted() const { return count_ == taken_.size(); }
  std::size_t take(std::size_t v) {
    if (!taken_[v]) ++count_;
    taken_[v] = true;
    for (std::size_t p = 0; p < covered_.size(); ++p) covered_[p][static_cast<std::size_t>(space_.coordinates[v][p])] = true;
    return v;
  }
  // A variant not proposed yet with a value of a categorical parameter (SearchSpace::categorical)
  // that no proposal has had: the first such value (parameters, then values, in order), a variant
  // with it drawn at random. Nothing once every value of every categorical parameter that some
  // variant has was proposed.
  std::optional<std::size_t> uncovered_free(std::mt19937_64& rng) const {
    for (std::size_t p = 0; p < covered_.size(); ++p) {
      if (p >= space_.categorical.size() || !space_.categorical[p]) continue;
      for (std::size_t k = 0; k < covered_[p].size(); ++k) {
        if (covered_[p][k]) continue;
        std::vector<std::size_t> with;
        for (std::size_t v = 0; v < taken_.size(); ++v) {
          if (!taken_[v] && static_cast<std::size_t>(space_.coordinates[v][p]) == k) with.push_back(v);
        }
        if (!with.empty()) return with[draw(rng, with.size())];
      }
    }
    return std::nullopt;
  }
  // A variant not proposed yet, uniformly at random; the space must not be exhausted.
  std::size_t random_free(std::mt19937_64& rng) const {
    std::size_t k = draw(rng, taken_.size() - count_);
    for (std::size_t v = 0; v < taken_.size(); ++v) {
      if (!taken_[v] && k-- == 0) return v;
    }
    return 0;
  }
  // The variant not proposed yet nearest to `coords` in grid steps (city-block distance), the
  // lowest index among equals; the space must not be exhausted.
  std::size_t nearest_free(const std::vector<int>& coords) const {
    std::size_t best = 0;
    long best_distance = std::numeric_limits<long>::max();
    for (std::size_t v = 0; v < taken_.size(); ++v) {
      if (taken_[v]) continue;
      long d = 0;
      for (std::size_t p = 0; p < coords.size(); ++p) d += std::abs(space_.coordinates[v][p] - coords[p]);
      if (d < best_distance) {
        best_distance = d;
        best = v;
      }
    }
    return best;
  }

 private:
  const SearchSpace& space_;
  std::vector<bool> taken_;
  std::vector<std::vector<bool>> covered_;  // [parameter][value]: some proposal had it
  std::size_t count_ = 0;
};

}  // namespace kiln::tuner::grid
