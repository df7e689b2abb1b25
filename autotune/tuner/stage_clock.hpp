// Where a tuning's wall time goes: each stage's seconds, in the order the stages ran, printed
// when the run ends and written to its worklog session (schema version 7). The stages of `kiln
// tune`: open (preflight, probe, worklog), compile (what the run compiled, on demand), search
// (the search's wall time outside those compiles: measuring, and waiting for the GPUs), near-ties
// (close winners measured again in turns), coverage (a domain's coverage points on the
// finalists), domain (the learned dispatch fitted, and timed at the held-out points), gate (the
// sanitizer on what the dispatch names), publish (record and header written).
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "kiln/worklog/records.hpp"

namespace kiln::tuner {

class StageClock {
 public:
  StageClock() : last_(std::chrono::steady_clock::now()) {}

  // The time since the previous lap (or since the clock started) belongs to `stage`; a stage
  // lapped again adds to its time and keeps its place.
  void lap(const std::string& stage) {
    const auto now = std::chrono::steady_clock::now();
    add(stage, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

  // Moves `seconds` (at most what `from` has) of `from`'s time to `to`: the compiles done inside
  // the search, counted by the compiler, out of the search's wall time.
  void move(const std::string& from, const std::string& to, double seconds) {
    worklog::StageSeconds& source = at(from);
    const double moved = seconds < source.seconds ? (seconds > 0 ? seconds : 0) : source.seconds;
    source.seconds -= moved;
    add(to, moved);
  }

  // Adds `seconds` to `stage`; a stage added with 0 takes its place in the order now.
  void add(const std::string& stage, double seconds) { at(stage).seconds += seconds; }

  const std::vector<worklog::StageSeconds>& stages() const { return stages_; }

 private:
  worklog::StageSeconds& at(const std::string& stage) {
    for (auto& s : stages_) {
      if (s.stage == stage) return s;
    }
    return stages_.emplace_back(worklog::StageSeconds{stage, 0});
  }
  std::chrono::steady_clock::time_point last_;
  std::vector<worklog::StageSeconds> stages_;
};

}  // namespace kiln::tuner
