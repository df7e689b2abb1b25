#include "plan.hpp"

#include <algorithm>

#include <fstream>

#include "kiln/error.hpp"
#include "kiln/problem_json.hpp"

namespace kiln::harness {

Plan load_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open plan file " + path);
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": malformed plan: " + e.what());
  }
  Plan plan;
  plan.seed = j.value("seed", plan.seed);
  for (const auto& p : j.value("check", nlohmann::ordered_json::array())) plan.check.push_back(problem_from_json(p));
  for (const auto& p : j.value("bench", nlohmann::ordered_json::array())) plan.bench.push_back(problem_from_json(p));
  plan.checks_per_problem = j.value("checks_per_problem", plan.checks_per_problem);
  const nlohmann::ordered_json tolerance_section = j.value("tolerance", nlohmann::ordered_json::object());
  for (const auto& [dtype, tol] : tolerance_section.items()) {
    plan.tolerance[dtype] = tol.get<double>();
  }
  plan.repetitions = j.value("repetitions", plan.repetitions);
  plan.min_repetitions = std::min(j.value("min_repetitions", plan.repetitions), plan.repetitions);
  plan.settled_spread = j.value("settled_spread", plan.settled_spread);
  plan.repetition_seconds = j.value("repetition_seconds", plan.repetition_seconds);
  plan.max_rotation_bytes = j.value("max_rotation_bytes", plan.max_rotation_bytes);
  if (plan.checks_per_problem < 1 || plan.repetitions < 1 || plan.min_repetitions < 1 || plan.repetition_seconds <= 0 ||
      plan.settled_spread < 0) {
    throw Error(path + ": checks_per_problem, repetitions and min_repetitions must be >= 1, repetition_seconds > 0, "
                       "settled_spread >= 0");
  }
  return plan;
}

double tolerance_for(const Plan& plan, const std::string& dtype) {
  if (auto it = plan.tolerance.find(dtype); it != plan.tolerance.end()) return it->second;
  if (dtype == "fp32") return 1e-5;
  if (dtype == "fp16") return 2e-3;
  if (dtype == "bf16") return 1e-2;
  throw Error("no tolerance for output dtype '" + dtype + "' (set tolerance." + dtype + " in the space)");
}

}  // namespace kiln::harness
