// `kiln profile`: Nsight Compute on each bucket's winner (and, when asked, its runners-up), on
// every problem of its bucket, in a build tree that tuned, for the kernels of the backends it
// measures (the backends' table says which: kiln/model/backend.hpp); the metrics go into the
// worklog's profiles, and the bottleneck table (report.hpp) is printed.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tuner {

struct ProfileOptions {
  std::filesystem::path build_dir;   // a build tree that tuned: <build>/kiln/<kernel>/...
  std::vector<std::string> kernels;  // empty: every kernel tuned there that Nsight Compute measures
  int runners_up = 0;                // also profile this many runners-up of each bucket
  std::optional<std::filesystem::path> worklog;  // default: the build's KILN_WORKLOG
  std::optional<std::filesystem::path> ncu;      // default: found like compute-sanitizer
  double timeout_s = 600;            // the longest ncu may stay silent on one run
};

// A tuned kernel of a build tree: where its manifest, record and variants are.
struct TunedKernel {
  std::string name;
  std::filesystem::path manifest;
  std::filesystem::path record;
  std::filesystem::path variants_dir;
};

// The kernels of `build_dir` whose backend Nsight Compute measures and that have a record (kernels
// named in `only`, each required). Throws kiln::Error naming what is missing.
std::vector<TunedKernel> kernels_to_profile(const std::filesystem::path& build_dir, const std::vector<std::string>& only);

// The build's worklog: KILN_WORKLOG from its CMakeCache.txt, else <build>/kiln/worklog.sqlite.
std::filesystem::path build_worklog(const std::filesystem::path& build_dir);

// Profiles every candidate, each said on `out`; throws kiln::Error when some could not be (each
// said why above). Without ncu, prints the table from the launch shapes recorded while tuning and
// throws kiln::Error saying ncu is missing; ncu without permission for the GPU's counters is one
// kiln::Error too.
void profile(const ProfileOptions& options, std::ostream& out);

}  // namespace kiln::tuner
