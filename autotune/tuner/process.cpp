#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "kiln/error.hpp"

namespace kiln::tuner {
namespace {

volatile sig_atomic_t interrupted_by = 0;

// The children running now, one slot each: several run at once when the tuner measures on
// several GPUs. Lock-free atomics, so that the signal handler may read them.
constexpr std::size_t kChildSlots = 256;
std::atomic<pid_t> running[kChildSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free);

// A running child's slot, for as long as run_child watches it. Left early (an exception from a
// line's handler, poll or waitpid failing), it kills the child's group and reaps it.
class ChildSlot {
 public:
  explicit ChildSlot(pid_t pid) : pid_(pid) {
    for (std::size_t i = 0; i < kChildSlots; ++i) {
      pid_t empty = 0;
      if (running[i].compare_exchange_strong(empty, pid)) {
        slot_ = i;
        return;
      }
    }
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    throw std::runtime_error("more than " + std::to_string(kChildSlots) + " child processes at once");
  }
  ~ChildSlot() {
    if (!reaped_) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    running[slot_].store(0);
  }
  ChildSlot(const ChildSlot&) = delete;
  ChildSlot& operator=(const ChildSlot&) = delete;
  void reaped() { reaped_ = true; }

 private:
  pid_t pid_;
  std::size_t slot_ = 0;
  bool reaped_ = false;
};

void on_interrupt(int signal) {
  interrupted_by = signal;
  for (auto& slot : running) {
    pid_t child = slot.load();
    if (child > 0) kill(-child, SIGKILL);
  }
}

constexpr std::size_t kStderrTail = 8192;

class Pipe {
 public:
  Pipe() {
    if (pipe2(fds_, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void close_read() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    fds_[0] = -1;
  }
  void close_write() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

// The child's environment: ours, with `extra` added or replacing variables of the same name.
// Built before fork, since only async-signal-safe calls may follow it.
std::vector<std::string> environment_with(const Environment& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : extra) replaced = replaced || key == name;
    if (!replaced) out.push_back(std::move(entry));
  }
  for (const auto& [key, value] : extra) out.push_back(key + "=" + value);
  return out;
}

std::string whole_seconds(double s) { return std::to_string(static_cast<long long>(std::llround(s))); }

}  // namespace

double checked_time_limit(double seconds, const std::string& what) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > kMaxTimeLimitSeconds) {
    char shown[64];
    std::snprintf(shown, sizeof shown, "%g", seconds);
    throw Error(what + ": " + shown + " is not a usable time limit (expected seconds, a finite number above 0 and at most " +
                whole_seconds(kMaxTimeLimitSeconds) + ", a week)");
  }
  return seconds;
}

std::string ChildResult::describe() const {
  if (timed_out) {
    return "hung: no progress reported for " + whole_seconds(limit_seconds) + " s (the limit for the step it was in), killed after " +
           whole_seconds(wall_seconds) + " s";
  }
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return std::string("killed by SIG") + (name != nullptr ? name : std::to_string(signal).c_str());
  }
  return "exit code " + std::to_string(exit_code);
}

ChildResult run_child(const std::vector<std::string>& argv, std::chrono::duration<double> silence_limit,
                      const std::function<void(const std::string&)>& on_line) {
  return run_child(argv, SilenceLimit([silence_limit] { return silence_limit; }), on_line);
}

std::vector<int> running_children() {
  std::vector<int> pids;
  for (const auto& slot : running) {
    if (pid_t p = slot.load(); p > 0) pids.push_back(p);
  }
  return pids;
}

ChildResult run_child(const std::vector<std::string>& argv, const SilenceLimit& silence_limit,
                      const std::function<void(const std::string&)>& on_line, const Environment& environment) {
  if (argv.empty()) throw std::invalid_argument("run_child: empty argv");
  Pipe out, err;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_entries = environment_with(environment);
  std::vector<char*> envp;
  for (const auto& e : env_entries) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // Asked before the child starts, so a nonsense limit costs no process.
  double limit_s = checked_time_limit(silence_limit().count(), "the silence limit of " + argv[0]);

  auto start = std::chrono::steady_clock::now();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec. The child gets its own process group
    // (a hang is killed with all it started) and dies with the tuner, even on kill -9.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(out.write_end(), STDOUT_FILENO);
    dup2(err.write_end(), STDERR_FILENO);
    execve(args[0], args.data(), envp.data());
    const char msg[] = "kiln: cannot execute the variant\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before any kill(-pid)
  ChildSlot slot(pid);
  out.close_write();
  err.close_write();

  ChildResult result;
  std::string line_buffer;
  bool out_open = true, err_open = true;
  auto silence = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(limit_s));
  auto deadline = start + silence;
  char buf[65536];
  while (out_open || err_open) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    int wait_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    pollfd fds[2] = {{out_open ? out.read_end() : -1, POLLIN, 0}, {err_open ? err.read_end() : -1, POLLIN, 0}};
    int ready = poll(fds, 2, wait_ms);
    if (interrupted_by != 0) break;
    if (ready < 0) {
      if (errno == EINTR) continue;
      kill(-pid, SIGKILL);
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = read(out.read_end(), buf, sizeof buf);
      if (n <= 0) {
        out_open = false;
      } else {
        line_buffer.append(buf, static_cast<std::size_t>(n));
        std::size_t pos;
        while ((pos = line_buffer.find('\n')) != std::string::npos) {
          on_line(line_buffer.substr(0, pos));
          line_buffer.erase(0, pos + 1);
          limit_s = checked_time_limit(silence_limit().count(), "the silence limit of " + argv[0]);
          silence = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(limit_s));
          deadline = std::chrono::steady_clock::now() + silence;
        }
      }
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = read(err.read_end(), buf, sizeof buf);
      if (n <= 0) {
        err_open = false;
      } else {
        result.stderr_tail.append(buf, static_cast<std::size_t>(n));
        if (result.stderr_tail.size() > 2 * kStderrTail) result.stderr_tail.erase(0, result.stderr_tail.size() - kStderrTail);
      }
    }
  }
  if (!line_buffer.empty() && !result.timed_out) on_line(line_buffer);

  // Both pipes are closed (or the limit passed); a child may still be running without them.
  int status = 0;
  while (true) {
    pid_t done = waitpid(pid, &status, result.timed_out ? 0 : WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    if (!result.timed_out && (interrupted_by != 0 || std::chrono::steady_clock::now() >= deadline)) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      continue;
    }
    if (!result.timed_out) usleep(2000);
  }
  // The group may hold grandchildren that outlived the child; they must not linger.
  kill(-pid, SIGKILL);
  slot.reaped();
  if (interrupted_by != 0) throw Interrupted(interrupted_by);
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.limit_seconds = limit_s;
  if (result.stderr_tail.size() > kStderrTail) result.stderr_tail.erase(0, result.stderr_tail.size() - kStderrTail);
  if (!result.timed_out) {
    if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    }
  }
  return result;
}

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

bool interrupted() { return interrupted_by != 0; }

}  // namespace kiln::tuner
