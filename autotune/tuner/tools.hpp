// External tools the tuner drives (nvidia-smi, compute-sanitizer, ncu): finding them and running
// them as child processes with a time limit, so that a missing or stuck tool is a clear message.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tuner {

// The executable `name`: searched on PATH, then in $CUDA_HOME/bin and /usr/local/cuda/bin (where
// the CUDA toolkit puts compute-sanitizer and ncu without adding them to PATH).
std::optional<std::filesystem::path> find_tool(const std::string& name);

struct ToolOutput {
  int exit_code = -1;
  bool finished = false;     // exited by itself (not killed, not signaled)
  std::vector<std::string> lines;  // standard output
  std::string error;         // standard error's tail, or why it did not finish
  std::string describe() const;    // "exit code 4: <stderr>"
};

// Runs argv (argv[0] a path) and collects its output; killed when silent for `limit_s`.
ToolOutput run_tool(const std::vector<std::string>& argv, double limit_s);

}  // namespace kiln::tuner
