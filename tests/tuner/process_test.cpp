// The child-process runner: real processes, real signals, real time limits.
#include <signal.h>
#include <unistd.h>
#include <cstdio>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <thread>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln_catch.hpp"
#include "process.hpp"

using kiln::tuner::ChildResult;
using kiln::tuner::run_child;
using kiln::tuner::running_children;

namespace {

ChildResult sh(const std::string& script, double limit_s, std::vector<std::string>* lines = nullptr) {
  return run_child({"/bin/sh", "-c", script}, std::chrono::duration<double>(limit_s), [&](const std::string& line) {
    if (lines != nullptr) lines->push_back(line);
  });
}

ChildResult sh_throwing(const std::string& script) {
  return run_child({"/bin/sh", "-c", script}, std::chrono::seconds(60),
                   [](const std::string&) { throw std::runtime_error("handler failed"); });
}

// Gone, or a zombie waiting for whoever adopted it to reap it: either way no longer running.
bool dead_within(pid_t pid, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, comm, state;
    if (stat >> pid_field >> comm >> state && state == "Z") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("lines arrive in order and the exit code is kept") {
  std::vector<std::string> lines;
  ChildResult r = sh("echo one; echo two >&2; printf 'three\\nfour'; exit 3", 10, &lines);
  REQUIRE(lines == std::vector<std::string>{"one", "three", "four"});
  CHECK(r.exit_code == 3);
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == 0);
  CHECK(r.stderr_tail == "two\n");
  CHECK(r.describe() == "exit code 3");
  CHECK_FALSE(r.exited_cleanly());
}

TEST_CASE("a crash is reported with its signal") {
  ChildResult r = sh("kill -SEGV $$", 10);
  CHECK(r.signal == SIGSEGV);
  CHECK(r.describe() == "killed by SIGSEGV");
}

TEST_CASE("a silent child is killed at the limit, with what it started") {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> lines;
  ChildResult r = sh("sleep 30 & echo $!; sleep 30", 0.5, &lines);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.timed_out);
  CHECK(took < 10);
  REQUIRE(lines.size() == 1);
  pid_t grandchild = std::stoi(lines[0]);
  CHECK(dead_within(grandchild, std::chrono::seconds(5)));  // killed with its process group
}

TEST_CASE("output resets the silence limit") {
  std::vector<std::string> lines;
  ChildResult r = sh("for i in 1 2 3 4 5 6; do echo $i; sleep 0.2; done", 0.8, &lines);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exited_cleanly());
  CHECK(lines.size() == 6);
}

TEST_CASE("a missing executable is an error of the child, not of the runner") {
  ChildResult r = run_child({"/nonexistent/kiln-variant"}, std::chrono::seconds(5), [](const std::string&) {});
  CHECK(r.exit_code == 127);
}

TEST_CASE("a limit asked again after every line fits the step the child reports") {
  // The child says it enters a long step; the runner then allows that step more than the first
  // limit, which would have killed it.
  std::vector<std::string> lines;
  double allowed = 0.5;
  auto limit = [&] { return std::chrono::duration<double>(allowed); };
  ChildResult r = run_child({"/bin/sh", "-c", "echo long-step; sleep 1.5; echo done"}, kiln::tuner::SilenceLimit(limit),
                            [&](const std::string& line) {
                              lines.push_back(line);
                              if (line == "long-step") allowed = 3;
                            });
  CHECK(r.exited_cleanly());
  CHECK(lines.size() == 2);

  allowed = 0.5;
  ChildResult killed = run_child({"/bin/sh", "-c", "echo short-step; sleep 3; echo done"}, kiln::tuner::SilenceLimit(limit),
                                 [&](const std::string&) {});
  CHECK(killed.timed_out);
  CHECK(killed.limit_seconds == 0.5);
  CHECK_THAT(killed.describe(), Catch::Matchers::StartsWith("hung: no progress reported for 1 s"));
}

TEST_CASE("nonsense time limits are refused with the accepted range, before a process starts") {
  using kiln::tuner::checked_time_limit;
  CHECK(checked_time_limit(1, "--timeout") == 1);
  CHECK(checked_time_limit(kiln::tuner::kMaxTimeLimitSeconds, "--timeout") == kiln::tuner::kMaxTimeLimitSeconds);
  for (double bad : {-5.0, 0.0, 1e300, kiln::tuner::kMaxTimeLimitSeconds * 2, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    CHECK_THROWS_WITH(checked_time_limit(bad, "--timeout"),
                      Catch::Matchers::StartsWith("--timeout: ") && kiln_test::ContainsSubstring("not a usable time limit"));
  }
  bool started = false;
  CHECK_THROWS(run_child({"/bin/sh", "-c", "echo started"}, std::chrono::duration<double>(1e300),
                         [&](const std::string&) { started = true; }));
  CHECK_FALSE(started);
}

TEST_CASE("the child gets the environment it is given, on top of the tuner's") {
  std::vector<std::string> lines;
  setenv("KILN_TEST_INHERITED", "kept", 1);
  auto limit = [] { return std::chrono::duration<double>(5); };
  ChildResult r = run_child({"/bin/sh", "-c", "echo $KILN_TEST_INHERITED $OMP_PROC_BIND"}, kiln::tuner::SilenceLimit(limit),
                            [&](const std::string& line) { lines.push_back(line); }, {{"OMP_PROC_BIND", "close"}});
  CHECK(r.exited_cleanly());
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "kept close");
}

TEST_CASE("children run from several threads at once are each watched, and each ends with its own result") {
  // kiln tune --gpus runs one variant process per GPU, each from its own thread. The children wait
  // for a file the test creates only once it has seen all three running, however slow the start.
  const std::string go = "/tmp/kiln-process-test-go-" + std::to_string(getpid());
  std::remove(go.c_str());
  std::vector<ChildResult> results(3);
  std::vector<std::vector<std::string>> lines(3);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      const std::string script = "while [ ! -e " + go + " ]; do sleep 0.02; done; echo child " + std::to_string(i) +
                                 "; exit " + std::to_string(i);
      results[i] = run_child({"/bin/sh", "-c", script}, std::chrono::seconds(60),
                             [&, i](const std::string& l) { lines[i].push_back(l); });
    });
  }
  std::size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((seen = running_children().size()) < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ofstream(go).put('\n');
  for (auto& t : threads) t.join();
  std::remove(go.c_str());
  CHECK(seen == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(results[i].exit_code == i);
    CHECK(lines[i] == std::vector<std::string>{"child " + std::to_string(i)});
  }
  CHECK(running_children().empty());
}

TEST_CASE("a child left by an exception from its line handler is killed and reaped") {
  auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(sh_throwing("echo first; exec sleep 30"), "handler failed");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(running_children().empty());
}
