// out = a*x + y, computed PASSES times over the same data: the variants' speeds differ by known
// factors (1, 3, 9, 27), so the winner and the order of the runners-up are the same on any machine
// and in any run. KIND == "wrong" leaves the last element unwritten: a correctness failure.
#pragma once
#include <cstdint>

#include "saxpy_workload.hpp"

namespace passes {

template <class Config>
void saxpy_passes(float a, const float* x, const float* y, float* out, std::int64_t n) {
  const std::int64_t end = Config::KIND == "wrong" ? n - 1 : n;
  for (int pass = 0; pass < Config::PASSES; ++pass) {
    for (std::int64_t i = 0; i < end; ++i) out[i] = a * x[i] + y[i];
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

}  // namespace passes
