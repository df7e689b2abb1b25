// How quiet the machine is: the CPU time that processes other than the tuner and its variant
// used, from /proc. A measurement taken while other processes compete for the cores measures
// them as much as the variant, so the tuner waits for quiet before measuring, watches during,
// and records what it saw with every measurement.
#pragma once
#include <chrono>
#include <optional>
#include <utility>
#include <string>

#include <nlohmann/json.hpp>

namespace kiln::tuner {

// One reading of the machine's and our own CPU time.
struct CpuReading {
  std::chrono::steady_clock::time_point at;
  double machine_busy_s = 0;  // every core's non-idle time (/proc/stat)
  double own_s = 0;           // the tuner, its reaped children, and the children running now
};

// Cores (not a fraction) that other processes kept busy between two readings.
struct Quietness {
  double others_cores = 0;   // average number of cores other processes used
  double load_average = 0;   // /proc/loadavg, one minute
  double seconds = 0;        // length of the window
  double waited_s = 0;       // how long the tuner waited for quiet before measuring
  bool quiet = true;         // others_cores at most the threshold

  nlohmann::ordered_json to_json() const;
  std::string describe() const;  // "2.0 other cores busy (load 2.4)"
};

class ContentionWatch {
 public:
  // Other processes using more than `threshold_cores` make the machine busy.
  explicit ContentionWatch(double threshold_cores = 0.25) : threshold_(threshold_cores) {}

  static int cores();
  // Reads the CPU times now; the variants running now (on every GPU measured on) are ours.
  static CpuReading read();
  Quietness between(const CpuReading& from, const CpuReading& to) const;

  // Samples half-second windows until one is quiet or `max_wait_s` has passed; returns the last
  // window, with the time waited. A run noted quiet (note_run) that ended under a second ago
  // stands for the window: the machine was watched all along, and a half second per variant
  // process would be a quarter of a GPU tuning's time.
  Quietness wait_for_quiet(double max_wait_s) const;
  // The quietness measured over a variant process that just ended.
  void note_run(const Quietness& q) const;

  double threshold() const { return threshold_; }

 private:
  double threshold_;
  mutable std::optional<std::pair<std::chrono::steady_clock::time_point, Quietness>> last_run_;
};

double load_average();

}  // namespace kiln::tuner
