// out = a*x + y, computed PASSES times over the same data: the variants' speeds differ by known
// factors (1, 3, 9) so a winner is clear on any machine, and UNROLL 1 and 2 of one PASSES are
// the same work, a tie. START == "slow" spends 4 s in its first call without reporting (a
// first-touch or JIT cost): slow, not hung; it does the nine passes, so that it is never in the
// winner's near-tie, whose re-measurement in turns would pay its 4 s in every turn.
// START == "broken" does not compile.
#pragma once
#include <chrono>
#include <cstdint>
#include <thread>

#include "saxpy_workload.hpp"

namespace steady {

template <class Config>
void saxpy_passes(float a, const float* x, const float* y, float* out, std::int64_t n) {
  if constexpr (Config::START == "broken") {
    static_assert(Config::PASSES == 0, "planted compile error");
  }
  if constexpr (Config::START == "slow") {
    static bool started = false;
    if (!started) std::this_thread::sleep_for(std::chrono::seconds(4));
    started = true;
  }
  for (int pass = 0; pass < Config::PASSES; ++pass) {
    std::int64_t i = 0;
    for (; i + Config::UNROLL <= n; i += Config::UNROLL) {
      for (int u = 0; u < Config::UNROLL; ++u) out[i + u] = a * x[i + u] + y[i + u];
    }
    for (; i < n; ++i) out[i] = a * x[i] + y[i];
    // Keeps the compiler from merging the passes into one.
    asm volatile("" : : "r"(out) : "memory");
  }
}

struct SaxpyPasses {
  template <class Config>
  static void run(float a, const float* x, const float* y, float* out, std::int64_t n) {
    saxpy_passes<Config>(a, x, y, out, n);
  }
};
using Workload = kiln_test::SaxpyWorkload<SaxpyPasses>;

}  // namespace steady
