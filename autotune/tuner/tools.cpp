#include "tools.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "process.hpp"

namespace kiln::tuner {
namespace {

bool executable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::filesystem::path> find_tool(const std::string& name) {
  std::vector<std::filesystem::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream parts(path);
    std::string dir;
    while (std::getline(parts, dir, ':')) {
      if (!dir.empty()) dirs.emplace_back(dir);
    }
  }
  if (const char* cuda = std::getenv("CUDA_HOME")) dirs.push_back(std::filesystem::path(cuda) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const auto& dir : dirs) {
    if (executable(dir / name)) return dir / name;
  }
  return std::nullopt;
}

std::string ToolOutput::describe() const {
  std::string s = finished ? "exit code " + std::to_string(exit_code) : error;
  if (finished && !error.empty()) {
    std::string tail = error;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    s += ": " + tail;
  }
  return s;
}

ToolOutput run_tool(const std::vector<std::string>& argv, double limit_s) {
  ToolOutput out;
  ChildResult r = run_child(argv, std::chrono::duration<double>(limit_s),
                            [&](const std::string& line) { out.lines.push_back(line); });
  out.finished = !r.timed_out && r.signal == 0;
  out.exit_code = r.exit_code;
  out.error = out.finished ? r.stderr_tail : r.describe();
  return out;
}

}  // namespace kiln::tuner
