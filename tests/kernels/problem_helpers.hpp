// Problems for the kernel tests, built the way the harness builds them from a space file.
#pragma once
#include <cstdint>
#include <string>

#include "kiln/problem.hpp"

namespace kiln_test {

inline kiln::Problem softmax_problem(std::int64_t rows, std::int64_t cols, const std::string& dtype) {
  kiln::Problem p;
  p.set("rows", rows);
  p.set("cols", cols);
  p.set("dtype", dtype);
  return p;
}

inline kiln::Problem nbody_problem(std::int64_t n) {
  kiln::Problem p;
  p.set("n", n);
  return p;
}

inline kiln::Problem topk_problem(std::int64_t rows, std::int64_t n, std::int64_t k, const std::string& mode,
                                  const std::string& input) {
  kiln::Problem p;
  p.set("rows", rows);
  p.set("n", n);
  p.set("k", k);
  p.set("mode", mode);
  p.set("input", input);
  return p;
}

// The harness's default relative L2 tolerances by output dtype.
inline double tolerance(const std::string& dtype) { return dtype == "bf16" ? 1e-2 : 1e-5; }

}  // namespace kiln_test
