// Runs the real `kiln` executable (its path is KILN_EXECUTABLE, set by the test's CMake) as a child
// process with a time limit, for tests of what a user sees: exit code, output, messages.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "process.hpp"

namespace kiln_test {

struct KilnRun {
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;
  std::vector<std::string> out;  // stdout lines
  std::string err;               // the last few kilobytes of stderr
};

inline KilnRun run_kiln(const std::vector<std::string>& args, double limit_s = 10) {
  std::vector<std::string> argv = {KILN_EXECUTABLE};
  argv.insert(argv.end(), args.begin(), args.end());
  KilnRun run;
  const kiln::tuner::ChildResult r = kiln::tuner::run_child(
      argv, std::chrono::duration<double>(limit_s), [&](const std::string& line) { run.out.push_back(line); });
  run.exit_code = r.exit_code;
  run.signal = r.signal;
  run.timed_out = r.timed_out;
  run.seconds = r.wall_seconds;
  run.err = r.stderr_tail;
  return run;
}

}  // namespace kiln_test
