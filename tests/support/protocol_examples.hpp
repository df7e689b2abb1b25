// Protocol events as a harness sends them, for the tests of their readers (tests/model) and of
// what the tuner stores of them (tests/tuner).
#pragma once
#include "kiln/model/protocol.hpp"

namespace kiln_test {

// A timing of `problem`: three repetitions of batches of 12 launches, without launch shapes.
inline kiln::model::BenchEvent example_bench(const kiln::Problem& problem) {
  kiln::model::BenchEvent e;
  e.index = 2;
  e.problem = problem;
  e.median_s = 2.5e-5;
  e.q1_s = 2.4e-5;
  e.q3_s = 2.75e-5;
  e.samples_s = {2.4e-5, 2.5e-5, 2.75e-5};
  e.mean_s = 2.55e-5;
  e.min_s = 2.4e-5;
  e.stddev_s = 1e-6;
  e.repetitions = 3;
  e.iterations = 800;
  e.batch = 12;
  e.rotation = 4;
  e.method = "cuda-graph";
  return e;
}

}  // namespace kiln_test
