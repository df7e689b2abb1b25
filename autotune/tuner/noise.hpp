// The noise of a timing: the interquartile range of its repetitions, relative to the median.
// Two variants closer than their noise are a tie; a variant must beat the space's default by
// more than the noise to replace it.
#pragma once
#include <optional>
#include <vector>

namespace kiln::tuner {

// Median and interquartile range of a set of timings.
struct Spread {
  double median_s = 0;
  double iqr_s = 0;
};
Spread spread_of(const std::vector<double>& seconds);

// Relative noise of a score: IQR / median, the worst over the problems; nothing when any is
// unknown (timings recorded before spreads were).
std::optional<double> relative_noise(const std::vector<double>& medians, const std::vector<std::optional<double>>& spreads);

// Whether `a` and `b` (seconds) differ by no more than the larger of their relative noises
// and `floor` (a fraction); an unknown noise counts as `floor`.
bool within_noise(double a, std::optional<double> noise_a, double b, std::optional<double> noise_b, double floor = 0.0);

}  // namespace kiln::tuner
