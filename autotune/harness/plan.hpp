// The work the tuner hands one variant process: which problems to validate, which to time, how.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/problem.hpp"

namespace kiln::harness {

struct Plan {
  std::uint64_t seed = 1;
  std::vector<Problem> check;         // validated first; any failure stops the process
  std::vector<Problem> bench;         // then timed, in order
  int checks_per_problem = 1;         // fresh random inputs for each
  std::map<std::string, double> tolerance;  // relative L2 per output dtype
  int repetitions = 7;
  // Repetitions stop after min_repetitions when their range (max - min) is within settled_spread
  // of their median: more would not move the median past the noise, and a coverage of many
  // points costs repetitions times points. 0: always `repetitions`.
  int min_repetitions = 7;
  double settled_spread = 0;
  double repetition_seconds = 0.02;   // timed work per repetition
  std::uint64_t max_rotation_bytes = std::uint64_t{4} << 30;
};

Plan load_plan(const std::string& path);
double tolerance_for(const Plan& plan, const std::string& dtype);

}  // namespace kiln::harness
