// The generator's manifest.json, as the tuner and the header writer read it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/gen/expr.hpp"
#include "kiln/problem.hpp"
#include "kiln/problem_json.hpp"

namespace kiln::tuner {

struct Parameter {
  std::string name;
  std::vector<gen::Value> values;
  gen::Value default_value;
};

struct VariantInfo {
  std::string name;
  std::vector<gen::Value> params;  // in parameter order
  std::filesystem::path source;
};

struct Dim {
  std::string name;
  bool symbolic = false;
  std::vector<std::string> domain;
  // An int dim's problem domain, when the space declares one.
  std::optional<std::int64_t> min, max;
  bool log_scale = true;
};

struct BucketRule {
  std::string name;
  gen::Expr when;
};

struct Manifest {
  std::filesystem::path file;
  std::string kernel;
  std::string backend;
  std::string description;
  std::filesystem::path space_file;
  std::string space_hash;
  std::string target;
  std::vector<Parameter> parameters;
  std::vector<VariantInfo> variants;
  std::string default_variant;
  nlohmann::ordered_json pruned;
  std::vector<Dim> dims;
  std::vector<std::pair<std::string, gen::Expr>> work;  // resource -> expression over dims
  std::vector<Problem> problems;
  std::vector<Problem> checks;
  std::vector<BucketRule> buckets;
  std::map<std::string, double> tolerance;
  double timeout_s = 120;
  // The problem domain's points (generator/README.md, "Problem domains"); both empty without one.
  std::vector<Problem> coverage;  // timed on the finalists; the learned dispatch is fitted to them
  std::vector<Problem> held_out;  // never tuned on: the dispatch is judged on them
  double regret_tolerance = 1.05;

  bool has_domain() const { return !coverage.empty(); }

  std::optional<std::size_t> variant_index(const std::string& name) const;
  // Index of the first bucket whose condition holds for the problem, if any.
  std::optional<std::size_t> bucket_of(const Problem& p) const;
  // Work per resource for one problem, as the space's expressions give it.
  std::map<std::string, double> work_of(const Problem& p) const;
};

Manifest load_manifest(const std::filesystem::path& file);

gen::Environment environment_of(const Problem& p);
std::string value_text(const gen::Value& v);

}  // namespace kiln::tuner
