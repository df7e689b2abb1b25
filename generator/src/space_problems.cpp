// Loading the problem half of a space file: dims, work terms, problems, checks and buckets.
#include <algorithm>

#include "kiln/gen/space_sections.hpp"
#include "kiln/join.hpp"

namespace kiln::gen {
namespace {

Dim load_dim(const JsonNode& node) {
  check_name(node, node.key(), "dim");
  const auto& value = node.json();
  if (value.is_object()) return sections::load_int_dim(node);  // with its domain
  Dim dim;
  dim.name = node.key();
  dim.pointer = node.pointer();
  if (value.is_string() && value.get_ref<const std::string&>() == "int") return dim;
  if (!value.is_array() || value.empty()) {
    node.fail("expected \"int\", {\"type\": \"int\", \"domain\": ...} or a non-empty list of identifiers, got " +
              describe_json(value));
  }
  dim.symbolic = true;
  for (const JsonNode& element : node.elements()) {
    const std::string& symbol = element.identifier();
    if (std::find(dim.domain.begin(), dim.domain.end(), symbol) != dim.domain.end()) {
      element.fail("duplicate value " + symbol);
    }
    dim.domain.push_back(symbol);
  }
  return dim;
}

std::vector<std::string> dim_list(const Space& space) {
  std::vector<std::string> names;
  for (const Dim& dim : space.dims) names.push_back(dim.name);
  return names;
}

ProblemInstance load_instance(const JsonNode& node, const Space& space) {
  node.require_object();
  for (const JsonNode& member : node.members()) {
    const bool known = std::any_of(space.dims.begin(), space.dims.end(),
                                   [&](const Dim& dim) { return dim.name == member.key(); });
    if (!known) member.fail("unknown dim (dims: " + join(dim_list(space), ", ") + ")");
  }
  ProblemInstance instance;
  instance.pointer = node.pointer();
  for (const Dim& dim : space.dims) {
    if (!node.has(dim.name)) node.fail("missing dim '" + dim.name + "'");
    const JsonNode value = node[dim.name];
    if (!dim.symbolic) {
      // A size of zero or less would make every variant fail when tuning, far from its cause.
      instance.values.emplace_back(value.positive_integer());
      continue;
    }
    const auto& json = value.json();
    if (!json.is_string() ||
        std::find(dim.domain.begin(), dim.domain.end(), json.get_ref<const std::string&>()) == dim.domain.end()) {
      value.fail("expected one of " + join(dim.domain, ", ") + ", got " + describe_json(json));
    }
    instance.values.emplace_back(json.get<std::string>());
  }
  return instance;
}

}  // namespace

NameTable dim_names(const Space& space) { return model::names_of(space.dims); }

Environment problem_environment(const Space& space, const ProblemInstance& problem) {
  Environment env;
  for (std::size_t i = 0; i < space.dims.size(); ++i) env.set(space.dims[i].name, problem.values[i]);
  return env;
}

std::string problem_key(const Space& space, const ProblemInstance& problem) {
  std::string out;
  for (std::size_t i = 0; i < space.dims.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += space.dims[i].name + "=";
    const Value& v = problem.values[i];
    out += std::holds_alternative<std::int64_t>(v) ? std::to_string(std::get<std::int64_t>(v)) : std::get<std::string>(v);
  }
  return out;
}

namespace sections {

void load_problem(const JsonNode& problem, DeclaredNames& names, Space& space) {
  problem.require_object({"dims", "domain_constraints", "features", "work"}, {"dims", "work"});
  problem["dims"].require_at_most(kMaxDims, "dims");
  for (const JsonNode& member : problem["dims"].members()) {
    Dim dim = load_dim(member);
    names.declare(member, dim.name, "a problem dim");
    space.dims.push_back(std::move(dim));
  }
  const NameTable visible = dim_names(space);
  const JsonNode work = problem["work"];
  work.require_object({"bytes", "fp32_flops", "tensor_flops", "sfu_ops", "launches"}, {});
  for (const JsonNode& term : work.members()) {
    space.work.push_back(WorkTerm{{term.key(), load_expression(space, term, visible)}, term.pointer()});
  }
  if (problem.has("domain_constraints")) load_domain_constraints(problem["domain_constraints"], space);
  if (problem.has("features")) {
    // An integer over the dims, symbolic ones included (a row's bytes: `cols * (dtype == 'bf16' ? 2
    // : 4)`): the learned dispatch splits on a feature as on an int dim.
    const JsonNode features = problem["features"];
    features.require_object();
    features.require_at_most(kMaxFeatures, "features");
    for (const JsonNode& member : features.members()) {
      check_name(member, member.key(), "feature");  // the learned dispatch's header names it
      names.declare(member, member.key(), "a problem feature");
      space.features.push_back(model::Feature{member.key(), load_expression(space, member, visible)});
    }
    if (space.features.empty()) features.fail("an empty object: leave the key out instead");
  }
}

std::vector<ProblemInstance> load_instances(const JsonNode& list, const Space& space) {
  list.require_at_most(kMaxProblems, "problems");
  std::vector<ProblemInstance> out;
  for (const JsonNode& element : list.elements()) out.push_back(load_instance(element, space));
  return out;
}

void load_buckets(const JsonNode& buckets, Space& space) {
  buckets.require_at_most(kMaxBuckets, "buckets");
  const NameTable visible = dim_names(space);
  for (const JsonNode& element : buckets.elements()) {
    element.require_object({"name", "when"}, {"name", "when"});
    const JsonNode name = element["name"];
    const std::string& text = name.identifier();  // an enumerator of the dispatch header
    if (is_cpp_keyword(text)) name.fail("'" + text + "' is a C++ keyword or standard macro and cannot name a bucket");
    for (const Bucket& other : space.buckets) {
      if (other.name == text) name.fail("bucket name '" + text + "' is already used");
    }
    const JsonNode when = element["when"];
    space.buckets.push_back(Bucket{{text, load_expression(space, when, visible)}, when.pointer()});
  }
}

namespace {

// The tuner evaluates the work terms of every problem it times; an overflow is reported here instead.
void evaluate_work(const Space& space, const ProblemInstance& problem, const std::string& context) {
  const Environment env = problem_environment(space, problem);
  for (const WorkTerm& term : space.work) {
    try {
      term.expr.evaluate(env);
    } catch (const ExprError& e) {
      fail_expr(space, term.pointer, e, context);
    }
  }
}

}  // namespace

void evaluate_domain_work(const Space& space) {
  std::uint64_t nodes = 0;
  for (const WorkTerm& term : space.work) nodes += term.expr.node_count();
  check_evaluation_cost(space.label, "/tuning/coverage",
                        space.coverage.size() + space.held_out.size() + space.refine_candidates.size(), nodes,
                        "domain points");
  for (const auto* set : {&space.coverage, &space.held_out, &space.refine_candidates}) {
    for (const ProblemInstance& point : *set) evaluate_work(space, point, "domain point " + problem_key(space, point));
  }
}

void assign_buckets(Space& space) {
  std::uint64_t nodes = 0;
  for (const WorkTerm& term : space.work) nodes += term.expr.node_count();
  for (const Bucket& bucket : space.buckets) nodes += bucket.when.node_count();
  check_evaluation_cost(space.label, "/problems", space.problems.size(), nodes, "problems");
  space.problem_buckets.clear();
  for (const ProblemInstance& problem : space.problems) {
    const std::string context = problem.pointer + " (" + problem_key(space, problem) + ")";
    evaluate_work(space, problem, context);
    if (space.buckets.empty()) continue;  // a domain without buckets: the tuner learns the dispatch
    const Environment env = problem_environment(space, problem);
    std::size_t found = space.buckets.size();
    for (std::size_t b = 0; b < space.buckets.size() && found == space.buckets.size(); ++b) {
      try {
        if (space.buckets[b].when.evaluate(env) != 0) found = b;
      } catch (const ExprError& e) {
        fail_expr(space, space.buckets[b].pointer, e, context);
      }
    }
    if (found == space.buckets.size()) {
      fail_at(space.label, problem.pointer,
              "problem " + problem_key(space, problem) + " belongs to no bucket (no bucket's 'when' holds for it)");
    }
    space.problem_buckets.push_back(found);
  }
}

}  // namespace sections
}  // namespace kiln::gen
