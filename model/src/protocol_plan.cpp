// The plan file: written by the tuner (autotune/tuner/evaluate.cpp, write_plan), read by the
// harness (autotune/harness/variant_main.cpp).
#include <set>

#include "kiln/hash.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/model/protocol.hpp"
#include "kiln/problem_json.hpp"
#include "kiln/model/protocol_read.hpp"

namespace kiln::model {
namespace {

using nlohmann::ordered_json;
namespace read = protocol_read;

// A plan lists every problem, coverage points included: larger than a space file may be.
constexpr std::size_t kMaxPlanBytes = kMaxManifestBytes;

ordered_json problems_json(const std::vector<Problem>& problems) {
  ordered_json out = ordered_json::array();
  for (const auto& p : problems) out.push_back(problem_to_json(p));
  return out;
}

std::vector<Problem> problems_from(const JsonNode& node) {
  std::vector<Problem> out;
  for (const JsonNode& p : node.elements()) out.push_back(read::problem(p));
  return out;
}

}  // namespace

std::uint64_t plan_seed(std::uint64_t run_seed, const std::string& variant) {
  return run_seed ^ Fnv1a64().field(variant).value();
}

ordered_json to_json(const Plan& plan) {
  ordered_json tolerance = ordered_json::object();
  for (const auto& [dtype, tol] : plan.tolerance) tolerance[dtype] = tol;
  ordered_json stop_above = ordered_json::object();
  for (const auto& [key, seconds] : plan.stop_above_s) stop_above[key] = seconds;
  return {{"seed", plan.seed},
          {"check_seed", plan.check_seed},
          {"check", problems_json(plan.check)},
          {"bench", problems_json(plan.bench)},
          {"checks_per_problem", plan.checks_per_problem},
          {"tolerance", tolerance},
          {"repetitions", plan.repetitions},
          {"min_repetitions", plan.min_repetitions},
          {"settled_spread", plan.settled_spread},
          {"repetition_seconds", plan.repetition_seconds},
          {"max_rotation_bytes", plan.max_rotation_bytes},
          {"stop_above_s", stop_above}};
}

Plan plan_from_json(const JsonNode& node) {
  // Every key, every time: the tuner writes them all through to_json.
  node.require_object({"seed", "check_seed", "check", "bench", "checks_per_problem", "tolerance", "repetitions",
                       "min_repetitions", "settled_spread", "repetition_seconds", "max_rotation_bytes", "stop_above_s"},
                      {"seed", "check_seed", "check", "bench", "checks_per_problem", "tolerance", "repetitions",
                       "min_repetitions", "settled_spread", "repetition_seconds", "max_rotation_bytes", "stop_above_s"});
  Plan plan;
  plan.seed = read::count(node["seed"]);
  plan.check_seed = read::count(node["check_seed"]);
  plan.check = problems_from(node["check"]);
  plan.bench = problems_from(node["bench"]);
  plan.checks_per_problem = read::positive_int(node["checks_per_problem"]);
  for (const JsonNode& tol : node["tolerance"].members()) plan.tolerance[tol.key()] = tol.positive_number();
  plan.repetitions = read::positive_int(node["repetitions"]);
  plan.min_repetitions = read::positive_int(node["min_repetitions"]);
  if (plan.min_repetitions > plan.repetitions) {
    node["min_repetitions"].fail("more than the " + std::to_string(plan.repetitions) + " repetitions");
  }
  plan.settled_spread = read::non_negative(node["settled_spread"]);
  plan.repetition_seconds = node["repetition_seconds"].positive_number();
  plan.max_rotation_bytes = read::count(node["max_rotation_bytes"]);
  if (plan.max_rotation_bytes == 0) node["max_rotation_bytes"].fail("expected a positive number of bytes, got 0");
  std::set<std::string> bench_keys;
  for (const auto& p : plan.bench) bench_keys.insert(p.key());
  for (const JsonNode& bound : node["stop_above_s"].members()) {
    if (bench_keys.count(bound.key()) == 0) bound.fail("not the key of a bench problem of the plan");
    plan.stop_above_s[bound.key()] = bound.positive_number();
  }
  return plan;
}

Plan read_plan(const std::filesystem::path& file) {
  const JsonFile json = read_json_file(file, kMaxPlanBytes);
  return plan_from_json(JsonNode::root(json));
}

double tolerance_for(const Plan& plan, const std::string& dtype) {
  if (auto it = plan.tolerance.find(dtype); it != plan.tolerance.end()) return it->second;
  throw Error("the plan has no tolerance for output dtype '" + dtype + "' (set tolerance." + dtype + " in the space)");
}

}  // namespace kiln::model
