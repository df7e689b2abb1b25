#include "noise.hpp"

#include <algorithm>

#include "kiln/quantile.hpp"

namespace kiln::tuner {

Spread spread_of(const std::vector<double>& seconds) {
  return {quantile(seconds, 0.5), quantile(seconds, 0.75) - quantile(seconds, 0.25)};
}

std::optional<double> relative_noise(const std::vector<double>& medians, const std::vector<std::optional<double>>& spreads) {
  if (medians.empty() || medians.size() != spreads.size()) return std::nullopt;
  double worst = 0;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    if (!spreads[i] || medians[i] <= 0) return std::nullopt;
    worst = std::max(worst, *spreads[i] / medians[i]);
  }
  return worst;
}

bool within_noise(double a, std::optional<double> noise_a, double b, std::optional<double> noise_b, double floor) {
  double noise = std::max({floor, noise_a.value_or(floor), noise_b.value_or(floor)});
  double lo = std::min(a, b), hi = std::max(a, b);
  return hi <= lo * (1 + noise);
}

}  // namespace kiln::tuner
