// Runs one child process with a time limit, streaming its standard output line by line.
// A crash, a hang or a device fault in the child costs the tuner only that child.
#pragma once
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::tuner {

struct ChildResult {
  int exit_code = -1;       // valid when neither signaled nor timed out
  int signal = 0;           // the signal that ended the child, 0 if it exited
  bool timed_out = false;   // killed by us after the silence limit
  double wall_seconds = 0;
  std::string stderr_tail;  // the last few kilobytes the child wrote to standard error

  bool exited_cleanly() const { return !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit code 3", "killed by SIGSEGV", "silent for 60 s, killed"
};

// Starts argv[0] (a path) with argv, in its own process group so that a hang is killed with
// everything it started. on_line receives each complete stdout line as it arrives. The child is
// killed as hung when it prints no line for `silence_limit`: a variant reports after every check
// and every timed problem, so the limit bounds one step, not the whole run.
// Thrown by run_child when the tuner itself is asked to stop (Ctrl-C, SIGTERM, SIGHUP): the
// child is killed first; whatever it reported before is already stored.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal) : std::runtime_error("interrupted by signal " + std::to_string(signal)), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Makes SIGINT, SIGTERM and SIGHUP kill the running child and end run_child with Interrupted.
void install_interrupt_handlers();
bool interrupted();

ChildResult run_child(const std::vector<std::string>& argv, std::chrono::duration<double> silence_limit,
                      const std::function<void(const std::string&)>& on_line);

}  // namespace kiln::tuner
