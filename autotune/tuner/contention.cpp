#include "contention.hpp"
#include "process.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace kiln::tuner {
namespace {

double ticks_per_second() {
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return ticks > 0 ? ticks : 100.0;
}

// The aggregate "cpu" line of /proc/stat: every field but idle and iowait is busy time.
double machine_busy_seconds() {
  std::ifstream in("/proc/stat");
  std::string label;
  in >> label;
  if (label != "cpu") return 0;
  double busy = 0;
  for (int field = 0; field < 8; ++field) {
    double v = 0;
    if (!(in >> v)) break;
    if (field != 3 && field != 4) busy += v;  // 3: idle, 4: iowait
  }
  return busy / ticks_per_second();
}

// utime + stime of a running process (fields 14 and 15 of /proc/<pid>/stat), every thread of it.
double process_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string skip;
  for (int f = 3; f < 14; ++f) fields >> skip;
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) / ticks_per_second();
}

double rusage_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

nlohmann::ordered_json Quietness::to_json() const {
  return {{"others_cores", others_cores}, {"load_average", load_average}, {"window_s", seconds}, {"waited_s", waited_s},
          {"quiet", quiet}};
}

std::string Quietness::describe() const {
  return fixed1(others_cores) + " other core" + (others_cores >= 0.95 && others_cores < 1.05 ? "" : "s") + " busy (load " +
         fixed1(load_average) + ")";
}

int ContentionWatch::cores() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

CpuReading ContentionWatch::read() {
  CpuReading r;
  r.at = std::chrono::steady_clock::now();
  r.machine_busy_s = machine_busy_seconds();
  r.own_s = rusage_seconds(RUSAGE_SELF) + rusage_seconds(RUSAGE_CHILDREN);
  for (int child : running_children()) r.own_s += process_seconds(child);
  return r;
}

Quietness ContentionWatch::between(const CpuReading& from, const CpuReading& to) const {
  Quietness q;
  q.seconds = std::chrono::duration<double>(to.at - from.at).count();
  double others = (to.machine_busy_s - from.machine_busy_s) - (to.own_s - from.own_s);
  // /proc/stat counts in ticks: a window much shorter than a second cannot be judged finely.
  q.others_cores = q.seconds > 0 ? std::clamp(others / q.seconds, 0.0, static_cast<double>(cores())) : 0.0;
  q.load_average = load_average();
  q.quiet = q.others_cores <= threshold_;
  return q;
}

void ContentionWatch::note_run(const Quietness& q) const { last_run_ = std::make_pair(std::chrono::steady_clock::now(), q); }

Quietness ContentionWatch::wait_for_quiet(double max_wait_s) const {
  auto start = std::chrono::steady_clock::now();
  if (last_run_ && last_run_->second.quiet && start - last_run_->first < std::chrono::seconds(1)) {
    Quietness q = last_run_->second;
    q.waited_s = 0;
    last_run_.reset();  // one run stands for the next one's window only
    return q;
  }
  while (true) {
    CpuReading before = read();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    Quietness q = between(before, read());
    q.waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (q.quiet || q.waited_s >= max_wait_s) return q;
  }
}

}  // namespace kiln::tuner
