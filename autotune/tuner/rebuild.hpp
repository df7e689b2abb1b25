// `kiln record`: the record (and dispatch header) of a kernel, rebuilt from what a worklog holds
// for the kernel's latest tuning context, without measuring anything. Used to turn a worklog
// brought back from a GPU machine into committed records.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <vector>

namespace kiln::tuner {

struct RebuildOptions {
  std::filesystem::path manifest;
  std::filesystem::path worklog;
  std::filesystem::path device_spec;
  std::filesystem::path record_out;
  std::optional<std::filesystem::path> header_out;
};

// Throws kiln::Error (and the readers' errors) when the worklog has no session of the kernel.
void rebuild_record(const RebuildOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kiln::tuner
