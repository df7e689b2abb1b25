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
  explicit Proposals(const SearchSpace& space) : space_(space), taken_(space.size(), false) {}
  bool taken(std::size_t v) const { return taken_[v]; }
  std::size_t count() const { return count_; }
  bool exhausted() const { return count_ == taken_.size(); }
  std::size_t take(std::size_t v) {
    if (!taken_[v]) ++count_;
    taken_[v] = true;
    return v;
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
  std::size_t count_ = 0;
};

}  // namespace kiln::tuner::grid
