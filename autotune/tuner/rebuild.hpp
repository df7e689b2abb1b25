// `kiln record`: the record (and dispatch header) of a kernel, rebuilt from what a worklog holds
// for one tuning context of the kernel, without measuring anything. Used to turn a worklog
// brought back from a GPU machine into committed records.
#pragma once
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tuner {

struct RebuildOptions {
  std::filesystem::path manifest;
  std::filesystem::path worklog;
  std::filesystem::path device_spec;
  std::filesystem::path record_out;
  std::optional<std::filesystem::path> header_out;
  // The tuning context to rebuild (a record's context_key); without one, the newest context of
  // the kernel on the device file's device, named on `err` when the worklog holds others.
  std::optional<std::string> context;
};

// Throws kiln::Error (and the readers' errors) when the worklog has no session of the kernel on the
// device file's device, or none in the context asked for.
void rebuild_record(const RebuildOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kiln::tuner
