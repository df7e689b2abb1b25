// Quantiles of timings, shared by the harness (which reports them) and the tuner (which pools
// repeated measurements): linear interpolation between order statistics.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace kiln {

// The q-quantile of `values` (q = 0.5: the median); throws for an empty list.
inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  std::sort(values.begin(), values.end());
  double pos = q * static_cast<double>(values.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

// Whether repetitions agree: their range (max - min) within `spread` of their median. Never with
// spread 0 or no values, so a spread of 0 asks for every repetition.
inline bool settled(const std::vector<double>& values, double spread) {
  if (spread <= 0 || values.empty()) return false;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return *hi - *lo <= spread * quantile(values, 0.5);
}

}  // namespace kiln
