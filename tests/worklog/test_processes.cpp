// Several processes on one worklog file: two writers at once, and a writer killed with SIGKILL
// in the middle of its transactions. Children are forked; they report through pipes and files,
// never through timing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using namespace kiln::worklog;

namespace {

// Runs `body` in a child process. The child exits 0 when body returns, and 1 after writing the
// exception's message to `error_file`. It never returns into the test framework.
pid_t spawn(const std::filesystem::path& error_file, const std::function<void()>& body) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid > 0) return pid;
  int status = 0;
  try {
    body();
  } catch (const std::exception& e) {
    std::ofstream(error_file) << e.what();
    status = 1;
  } catch (...) {
    std::ofstream(error_file) << "unknown exception";
    status = 1;
  }
  _exit(status);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  return status;
}

std::string error_of(const std::filesystem::path& file) {
  return std::filesystem::exists(file) ? kiln_test::read_file(file) : std::string("(no message)");
}

// Blocks until the parent closes the write end: both children then start together.
void wait_for_start(int start_fd) {
  char byte = 0;
  while (read(start_fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("write to the parent failed");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

constexpr int rows_per_writer = 300;

// One tuner's worth of writes: a session, attempts, cached measurements, links, a failure.
void write_as_tuner(const std::filesystem::path& path, const std::string& name) {
  Worklog log = Worklog::open(path);
  const std::int64_t session = log.start_session(worklog_test::make_session(name));
  std::int64_t previous = 0;
  for (int i = 0; i < rows_per_writer; ++i) {
    const std::string variant = name + "__V" + std::to_string(i);
    Attempt a = worklog_test::make_attempt(name, variant);
    a.session_id = session;
    a.explanation = "written by " + name;
    const std::int64_t id = log.add_attempt(a);
    Measurement m;
    m.key = {"ctx", name, variant, "h", "rows=1024", Phase::bench};
    m.result = "{\"median_s\":" + std::to_string(i) + "}";
    m.session_id = session;
    log.put_measurement(m);
    if (previous != 0) log.add_link(previous, id, LinkKind::refines);
    previous = id;
  }
  VariantFailure f;
  f.key = {"ctx", name, name + "__BROKEN", "h"};
  f.detail = "does not compile";
  f.session_id = session;
  log.put_variant_failure(f);
  log.end_session(session);
}

}  // namespace

TEST_CASE("two processes write one new worklog at once without losing or locking anything") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "shared.kiln.db";
  int start[2];
  REQUIRE(pipe(start) == 0);

  const std::vector<std::string> names{"writer_a", "writer_b"};
  std::vector<pid_t> children;
  for (const std::string& name : names) {
    children.push_back(spawn(dir / (name + ".err"), [&] {
      close(start[1]);
      wait_for_start(start[0]);
      write_as_tuner(path, name);  // both open the file while it does not exist yet
    }));
  }
  close(start[0]);
  close(start[1]);  // go

  for (std::size_t i = 0; i < children.size(); ++i) {
    const int status = wait_for(children[i]);
    INFO(names[i] << ": " << error_of(dir / (names[i] + ".err")));
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }

  Worklog log = Worklog::open(path);
  CHECK(log.integrity_problems().empty());
  CHECK(worklog_test::query_text(path, "PRAGMA integrity_check") == "ok");
  REQUIRE(log.sessions().size() == 2);
  for (const Session& s : log.sessions()) CHECK(s.ended_at);
  CHECK(log.count_measurements("ctx") == 2 * rows_per_writer);
  for (const std::string& name : names) {
    AttemptFilter f;
    f.kernel = name;
    const std::vector<Attempt> attempts = log.attempts(f);
    REQUIRE(attempts.size() == rows_per_writer);
    std::set<std::string> variants;
    for (const Attempt& a : attempts) variants.insert(*a.variant);
    CHECK(variants.size() == rows_per_writer);
    CHECK(log.measurements("ctx", name).size() == rows_per_writer);
    CHECK(log.variant_failures("ctx", name).size() == 1);
    AttemptFilter text;
    text.text = name;
    CHECK(log.attempts(text).size() == rows_per_writer);
  }
  CHECK(worklog_test::query_int(path, "SELECT count(*) FROM links") == 2 * (rows_per_writer - 1));
}

TEST_CASE("a writer killed with SIGKILL mid-transaction leaves a sound file with every commit") {
  kiln_test::TempDir dir("kiln-worklog");
  const auto path = dir / "killed.kiln.db";
  Worklog::open(path);
  int report[2];
  REQUIRE(pipe(report) == 0);

  // The child commits forever: an attempt, then a group of three measurements in one
  // transaction, then tells the parent the round it finished.
  const pid_t child = spawn(dir / "child.err", [&] {
    close(report[0]);
    Worklog log = Worklog::open(path);
    for (std::int64_t round = 0;; ++round) {
      const std::string variant = "k__R" + std::to_string(round);
      log.add_attempt(worklog_test::make_attempt("k", variant));
      sqlite::Transaction group(log.database(), "add a group");
      for (const char* problem : {"p1", "p2", "p3"}) {
        Measurement m;
        m.key = {"ctx", "k", variant, "h", problem, Phase::bench};
        sqlite::Statement insert = log.database().prepare(
            "INSERT INTO measurements (context_key, kernel, variant, variant_hash, problem_key, "
            "phase, status, result) VALUES (?, ?, ?, ?, ?, 'bench', 'ok', '{}')",
            "add a measurement of the group");
        insert.bind(1, m.key.context_key).bind(2, m.key.kernel).bind(3, variant).bind(4, "h");
        insert.bind(5, problem).run();
      }
      group.commit();
      write_all(report[1], &round, sizeof round);
    }
  });
  close(report[1]);

  constexpr std::int64_t rounds_before_kill = 200;
  std::int64_t last_reported = -1;
  while (last_reported + 1 < rounds_before_kill) {
    std::int64_t round = 0;
    if (!read_all(report[0], &round, sizeof round)) break;  // the child died on its own
    last_reported = round;
  }
  kill(child, SIGKILL);
  const int status = wait_for(child);
  close(report[0]);
  INFO("child: " << error_of(dir / "child.err"));
  REQUIRE(last_reported + 1 == rounds_before_kill);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);

  Worklog log = Worklog::open(path);
  CHECK(log.integrity_problems().empty());
  CHECK(worklog_test::query_text(path, "PRAGMA integrity_check") == "ok");

  // Every reported round is there in full; rounds are committed in order, so the attempts are
  // R0..R(n-1) with no gap, and each group of measurements is whole or absent.
  const std::vector<Attempt> attempts = log.attempts();
  REQUIRE(static_cast<std::int64_t>(attempts.size()) >= rounds_before_kill);
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    CHECK(*attempts[i].variant == "k__R" + std::to_string(i));
  }
  std::map<std::string, int> group_sizes;
  for (const Measurement& m : log.measurements("ctx", "k")) ++group_sizes[m.key.variant];
  for (std::int64_t round = 0; round < rounds_before_kill; ++round) {
    CHECK(group_sizes["k__R" + std::to_string(round)] == 3);
  }
  for (const auto& [variant, size] : group_sizes) {
    INFO(variant);
    CHECK(size == 3);
  }
  // The killed writer's file still takes new writes.
  CHECK(log.add_attempt(worklog_test::make_attempt("k", "after")) > 0);
}
