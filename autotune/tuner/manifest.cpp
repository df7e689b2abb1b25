#include "manifest.hpp"

#include "process.hpp"

namespace kiln::tuner {

Manifest load_manifest(const std::filesystem::path& file) {
  Manifest m = model::load_manifest(file);
  checked_time_limit(static_cast<double>(m.tuning.timeout_s), file.string() + ": tuning.timeout_s");
  return m;
}

}  // namespace kiln::tuner
