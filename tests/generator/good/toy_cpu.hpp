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
  ToyWorkload(const kiln::Problem& problem, std::uint64_t) : n_(problem.i("n")) {}

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
  std::vector<kiln::CheckResult> check() override { return {}; }
  std::size_t footprint_bytes() const override { return static_cast<std::size_t>(n_) * 8; }

 private:
  std::int64_t n_;
};

}  // namespace kiln_toy
