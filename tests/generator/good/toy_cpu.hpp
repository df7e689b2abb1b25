// The harness header of toy_cpu.space.json: a workload whose run<Config>() records what the
// generated Config carried, so that a test can compile one generated variant and look inside,
// and takes n nanoseconds, so that a test of the harness chooses how long a run is.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/workload.hpp"

namespace kiln_toy {

struct Seen {
  std::string name;
  bool safe_mode = false;
  long long shift = 0;
  long long span = 0;
  bool span_is_long_long = false;
  int runs = 0;
};

inline Seen& seen() {
  static Seen s;
  return s;
}

class ToyWorkload final : public kiln::Workload {
 public:
  ToyWorkload(const kiln::Problem& problem, std::uint64_t) : n_(problem.i("n")), runs_at_make_(seen().runs) {}

  template <class Config>
  void run() {
    Seen& s = seen();
    s.name = Config::kiln_name;
    s.safe_mode = Config::MODE == "safe";
    s.shift = Config::SHIFT;
    s.span = Config::SPAN;
    s.span_is_long_long = sizeof(Config::SPAN) == sizeof(long long);
    ++s.runs;
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(n_);
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  void poison() override {}
  // Its one output is whether a run happened since the workload was made: unwritten otherwise.
  std::vector<kiln::CheckResult> check() override {
    kiln::CheckResult r;
    r.output = "out";
    r.dtype = "fp32";
    r.elements = 1;
    r.compared = 1;
    r.unwritten = seen().runs > runs_at_make_ ? 0 : 1;
    if (r.unwritten > 0) r.first_unwritten_at = 0;
    return {r};
  }
  std::size_t footprint_bytes() const override { return static_cast<std::size_t>(n_) * 8; }

 private:
  std::int64_t n_;
  int runs_at_make_;
};

}  // namespace kiln_toy
