// manifest.json: the validated space with defaults filled in, plus what enumeration found. The
// tuner and the dispatch-header writer read only this file, never the space file itself.
#include "kiln/gen/emit.hpp"

namespace kiln::gen {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json value_json(const Value& v) {
  return std::visit([](const auto& x) { return ordered_json(x); }, v);
}

ordered_json parameters_json(const Space& space) {
  ordered_json out = ordered_json::array();
  for (const Parameter& p : space.parameters) {
    ordered_json values = ordered_json::array();
    for (const Value& v : p.values) values.push_back(value_json(v));
    out.push_back({{"name", p.name}, {"values", values}, {"default", value_json(p.values[p.default_index])}});
  }
  return out;
}

ordered_json problems_json(const Space& space, const std::vector<ProblemInstance>& problems) {
  ordered_json out = ordered_json::array();
  for (const ProblemInstance& problem : problems) {
    ordered_json dims = ordered_json::object();
    for (std::size_t i = 0; i < space.dims.size(); ++i) dims[space.dims[i].name] = value_json(problem.values[i]);
    out.push_back(dims);
  }
  return out;
}

ordered_json dim_json(const Dim& dim) {
  if (dim.symbolic) return ordered_json(dim.domain);
  if (!dim.range) return "int";
  return {{"type", "int"},
          {"domain", {{"min", dim.range->min}, {"max", dim.range->max}, {"scale", dim.range->log ? "log" : "linear"}}}};
}

// Without a domain, the keys and bytes of manifests made before domains existed.
ordered_json problem_json(const Space& space) {
  ordered_json dims = ordered_json::object();
  for (const Dim& dim : space.dims) dims[dim.name] = dim_json(dim);
  ordered_json work = ordered_json::object();
  for (const WorkTerm& term : space.work) work[term.name] = term.expr.text();
  ordered_json out = {{"dims", dims}};
  if (!space.domain_constraints.empty()) {
    ordered_json constraints = ordered_json::array();
    for (const Constraint& c : space.domain_constraints) constraints.push_back(c.expr.text());
    out["domain_constraints"] = constraints;
  }
  out["work"] = work;
  return out;
}

ordered_json tuning_json(const Space& space) {
  ordered_json t = {{"max_variants", space.tuning.max_variants}, {"timeout_s", space.tuning.timeout_s}};
  if (has_domain(space)) {
    t["coverage"] = space.tuning.coverage;
    t["held_out"] = space.tuning.held_out;
    t["regret_tolerance"] = space.tuning.regret_tolerance;
  }
  return t;
}

ordered_json variants_json(const Space& space, const Enumeration& enumeration) {
  ordered_json out = ordered_json::array();
  for (const Variant& v : enumeration.variants) {
    ordered_json params = ordered_json::object();
    for (std::size_t i = 0; i < v.params.size(); ++i) params[space.parameters[i].name] = value_json(v.params[i]);
    out.push_back({{"name", v.name}, {"params", params}, {"source", variant_source_path(space, v).generic_string()}});
  }
  return out;
}

ordered_json pruned_json(const Space& space, const Enumeration& enumeration) {
  ordered_json by_constraint = ordered_json::array();
  for (std::size_t c = 0; c < space.constraints.size(); ++c) {
    by_constraint.push_back({{"constraint", space.constraints[c].expr.text()}, {"count", enumeration.pruned[c]}});
  }
  return {{"total", enumeration.total}, {"feasible", enumeration.variants.size()}, {"by_constraint", by_constraint}};
}

}  // namespace

ordered_json manifest(const Space& space, const Target& target, const Enumeration& enumeration) {
  ordered_json m = ordered_json::object();
  m["kiln_manifest"] = 1;
  m["kernel"] = space.kernel;
  m["backend"] = space.backend;
  m["description"] = space.description;
  m["space_file"] = std::filesystem::absolute(space.file).lexically_normal().generic_string();
  m["space_hash"] = space.hash;
  m["target"] = target.name;
  m["harness"] = {{"include", space.harness_include}, {"workload", space.harness_workload}};
  m["parameters"] = parameters_json(space);
  m["derived"] = ordered_json::object();
  for (const Derived& d : space.derived) m["derived"][d.name] = d.expr.text();
  m["constraints"] = ordered_json::array();
  for (const Constraint& c : space.constraints) m["constraints"].push_back({{"expr", c.expr.text()}, {"why", c.why}});
  m["variants"] = variants_json(space, enumeration);
  m["default_variant"] = enumeration.variants[enumeration.default_index].name;
  m["pruned"] = pruned_json(space, enumeration);
  m["problem"] = problem_json(space);
  m["problems"] = problems_json(space, space.problems);
  m["checks"] = problems_json(space, space.checks);
  if (has_domain(space)) {
    m["coverage"] = problems_json(space, space.coverage);
    m["held_out"] = problems_json(space, space.held_out);
  }
  m["buckets"] = ordered_json::array();
  for (const Bucket& b : space.buckets) m["buckets"].push_back({{"name", b.name}, {"when", b.when.text()}});
  m["tolerance"] = {{"fp32", space.tolerance.fp32}, {"fp16", space.tolerance.fp16}, {"bf16", space.tolerance.bf16}};
  m["tuning"] = tuning_json(space);
  return m;
}

}  // namespace kiln::gen
