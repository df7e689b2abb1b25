// Runs one child process with a time limit, streaming its standard output line by line.
// A crash, a hang or a device fault in the child costs the tuner only that child.
#pragma once
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kiln::tuner {

struct ChildResult {
  int exit_code = -1;       // valid when neither signaled nor timed out
  int signal = 0;           // the signal that ended the child, 0 if it exited
  bool timed_out = false;   // killed by us after the silence limit
  double wall_seconds = 0;
  double limit_seconds = 0;  // the silence limit in force when the child was killed as hung
  std::string stderr_tail;  // the last few kilobytes the child wrote to standard error

  bool exited_cleanly() const { return !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit code 3", "killed by SIGSEGV", "no progress for 60 s, killed..."
};

// The longest a time limit may be: a week. Larger values are a mistake (and, as a clock
// duration, overflow into "already expired").
constexpr double kMaxTimeLimitSeconds = 7 * 24 * 3600.0;

// Returns `seconds` when it is a usable time limit (finite, > 0, at most a week); otherwise throws
// kiln::Error naming `what` and the accepted range.
double checked_time_limit(double seconds, const std::string& what);

// The silence allowed before the next line, asked again after every line: a child that reports
// where it is can be given a limit that fits the step it is in.
using SilenceLimit = std::function<std::chrono::duration<double>()>;

// Variables added to (or replacing those of) the child's environment.
using Environment = std::vector<std::pair<std::string, std::string>>;

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
ChildResult run_child(const std::vector<std::string>& argv, const SilenceLimit& silence_limit,
                      const std::function<void(const std::string&)>& on_line, const Environment& environment = {});

// The pids of the children run_child runs now (from any thread): for watching their CPU time.
std::vector<int> running_children();

}  // namespace kiln::tuner
