// out = a*x + y, a CPU kernel with planted faults, to show that each one costs only its own variant and is
// recorded with the right kind: a segfault (crash), an endless loop (timeout), a wrong answer
// and a NaN (correctness), an output left unwritten (correctness), an exception (runtime) and a
// source that does not compile (compile). The FAULT == none variants are correct.
#pragma once
#include <cstdint>

#include "kiln/error.hpp"
#include "saxpy_workload.hpp"

namespace faulty {

template <class Config>
void saxpy(float a, const float* x, const float* y, float* out, std::int64_t n) {
  static_assert(Config::UNROLL >= 1, "UNROLL must be positive");
  if constexpr (Config::FAULT == "compile") {
    static_assert(Config::UNROLL == 0, "planted compile error");
  }
  if constexpr (Config::FAULT == "crash") {
    volatile float* null = nullptr;
    null[n] = a;  // planted segfault
  }
  if constexpr (Config::FAULT == "hang") {
    volatile bool forever = true;
    while (forever) {
    }
  }
  if constexpr (Config::FAULT == "throw") throw kiln::RuntimeError("planted device error");
  std::int64_t end = Config::FAULT == "unwritten" ? n - 1 : n;
  std::int64_t i = 0;
  for (; i + Config::UNROLL <= end; i += Config::UNROLL) {
    for (int u = 0; u < Config::UNROLL; ++u) out[i + u] = a * x[i + u] + y[i + u];
  }
  for (; i < end; ++i) out[i] = a * x[i] + y[i];
  if constexpr (Config::FAULT == "wrong") out[n / 2] += 1.0f;
  if constexpr (Config::FAULT == "nan") out[0] = 0.0f / 0.0f;
}

struct Saxpy {
  template <class Config>
  static void run(float a, const float* x, const float* y, float* out, std::int64_t n) {
    saxpy<Config>(a, x, y, out, n);
  }
};
using SaxpyWorkload = kiln_test::SaxpyWorkload<Saxpy>;

}  // namespace faulty
