// `kiln verify`: re-measures a record's winners and contenders on this machine and says whether
// the recorded ranking still holds within the noise of the measurements.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <optional>

namespace kiln::tuner {

struct VerifyOptions {
  std::filesystem::path manifest;
  std::filesystem::path record;
  std::filesystem::path variants_dir;
  std::filesystem::path device_spec;
  std::filesystem::path probe;
  std::filesystem::path scratch_dir;
  int repetitions = 9;
  double min_noise = 0.02;  // rankings closer than this fraction are a tie
  // Regression gate: a winner now slower than recorded by more than its noise plus this
  // percentage fails the verification. Unset: only the ranking is judged.
  std::optional<double> max_regression_pct;
};

// True when every bucket's winner is still fastest within noise (and, with max_regression_pct, no
// slower than recorded beyond noise plus that margin); false when a ranking changed, a winner
// regressed or a variant failed. Errors (a probe for another device, a missing file) are thrown.
bool verify(const VerifyOptions& options, std::ostream& out);

}  // namespace kiln::tuner
