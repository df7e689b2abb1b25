// Loading a space file: the top level, the harness and the parameter half (parameters, derived,
// constraints), plus tolerance and tuning. The problem half is in space_problems.cpp.
#include <algorithm>
#include <limits>

#include "kiln/gen/enumerate.hpp"
#include "kiln/gen/space_sections.hpp"
#include "kiln/hash.hpp"

namespace kiln::gen {
namespace {

constexpr std::int64_t kSpaceVersion = 1;

void check_version(const JsonNode& root) {
  if (!root.has("kiln_space")) fail_at(root.label(), "/kiln_space", "required key is missing");
  const JsonNode version = root["kiln_space"];
  if (!version.is_integer() || version.integer() != kSpaceVersion) {
    version.fail("unsupported format version " + describe_json(version.json()) + " (this generator reads " +
                 std::to_string(kSpaceVersion) + ")");
  }
}

// One element of `values` (or the default): an integer or a plain identifier, nothing else, so
// that no text from the space file reaches generated code unchecked.
Value parameter_value(const JsonNode& node) {
  if (node.is_integer()) return node.integer();
  if (node.json().is_string() && is_identifier(node.json().get_ref<const std::string&>())) {
    check_identifier_length(node, node.json().get_ref<const std::string&>());
    return node.json().get<std::string>();
  }
  node.fail("expected an integer or an identifier, got " + describe_json(node.json()));
}

void check_same_kind(const JsonNode& node, const Value& value, bool symbolic) {
  if (std::holds_alternative<std::string>(value) != symbolic) {
    node.fail(std::string("expected ") + (symbolic ? "an identifier" : "an integer") +
              " like the first value (a parameter's values are all integers or all identifiers), got " +
              describe_json(node.json()));
  }
}

Parameter load_parameter(const JsonNode& node) {
  node.require_object({"values", "default"}, {"values"});
  Parameter p;
  p.name = node.key();
  check_name(node, p.name, "parameter");
  if (has_reserved_prefix(p.name)) node.fail("parameter names may not start with 'kiln' (in any letter case)");

  node["values"].require_at_most(kMaxValues, "values");
  const std::vector<JsonNode> values = node["values"].elements();
  if (values.empty()) node["values"].fail("a parameter needs at least one value");
  for (const JsonNode& element : values) {
    Value v = parameter_value(element);
    check_same_kind(element, v, p.values.empty() ? std::holds_alternative<std::string>(v) : p.symbolic());
    const auto same = std::find(p.values.begin(), p.values.end(), v);
    if (same != p.values.end()) {
      element.fail("duplicate value " + value_text(v) + " (also " + values[same - p.values.begin()].pointer() + ")");
    }
    p.values.push_back(std::move(v));
  }

  if (node.has("default")) {
    const JsonNode element = node["default"];
    const Value v = parameter_value(element);
    check_same_kind(element, v, p.symbolic());
    const auto it = std::find(p.values.begin(), p.values.end(), v);
    if (it == p.values.end()) element.fail("default " + value_text(v) + " is not one of the values");
    p.default_index = static_cast<std::size_t>(it - p.values.begin());
  }
  return p;
}

void load_parameters(const JsonNode& node, DeclaredNames& declared, NameTable& visible, Space& space) {
  node.require_at_most(kMaxParameters, "parameters");
  const std::vector<JsonNode> members = node.members();
  if (members.empty()) node.fail("a space needs at least one parameter");
  for (const JsonNode& member : members) {
    Parameter p = load_parameter(member);
    declared.declare(member, p.name, "a parameter");
    if (p.symbolic()) {
      std::vector<std::string> domain;
      for (const Value& v : p.values) domain.push_back(std::get<std::string>(v));
      visible.add_symbol(p.name, std::move(domain));
    } else {
      visible.add_integer(p.name);
    }
    space.parameters.push_back(std::move(p));
  }
}

// Each derived name sees the parameters, the limits and the derived names before it.
void load_derived(const JsonNode& node, DeclaredNames& declared, NameTable& visible, Space& space) {
  node.require_at_most(kMaxDerived, "derived names");
  for (const JsonNode& member : node.members()) {
    check_name(member, member.key(), "derived");
    declared.declare(member, member.key(), "a derived name");
    Expr expr = sections::load_expression(space, member, visible);
    visible.add_integer(member.key());
    space.derived.push_back(Derived{{member.key(), std::move(expr)}, member.pointer()});
  }
}

void load_constraints(const JsonNode& node, const NameTable& visible, Space& space) {
  node.require_at_most(kMaxConstraints, "constraints");
  for (const JsonNode& element : node.elements()) {
    if (element.json().is_object()) {
      element.require_object({"expr", "why"}, {"expr"});
      const JsonNode expr = element["expr"];
      std::string why = element.has("why") ? element["why"].string() : "";
      space.constraints.push_back(
          Constraint{{sections::load_expression(space, expr, visible), std::move(why)}, element.pointer(), expr.pointer()});
    } else if (element.json().is_string()) {
      space.constraints.push_back(
          Constraint{{sections::load_expression(space, element, visible), ""}, element.pointer(), element.pointer()});
    } else {
      element.fail("expected an expression string or {\"expr\", \"why\"}, got " + describe_json(element.json()));
    }
  }
}

void load_harness(const JsonNode& node, Space& space) {
  node.require_object({"include", "workload"}, {"include", "workload"});
  const JsonNode include = node["include"];
  space.harness.include = include.string();
  if (!is_safe_include(space.harness.include)) {
    include.fail("unsafe include path " + describe_json(include.json()) +
                 " (a relative path of letters, digits, '_', '.', '/', '-', without '..')");
  }
  const JsonNode workload = node["workload"];
  space.harness.workload = workload.string();
  if (!is_qualified_name(space.harness.workload)) {
    workload.fail("expected a qualified C++ class name such as a::b::Workload, got " + describe_json(workload.json()));
  }
}

// The longest canonical name any combination could get, checked before enumerating so that no
// file name is too long half-way through writing.
void check_variant_name_length(const JsonNode& parameters, const Space& space) {
  std::size_t longest = space.kernel.size() + 2;
  for (const Parameter& p : space.parameters) {
    std::size_t value = 0;
    for (const Value& v : p.values) value = std::max(value, variant_name_part(v).size());
    longest += p.name.size() + value + 1;
  }
  --longest;  // no '_' after the last parameter
  if (longest > kMaxVariantNameBytes) {
    parameters.fail("variant names of up to " + std::to_string(longest) + " bytes (kernel, parameter names and " +
                    "values), longer than the " + std::to_string(kMaxVariantNameBytes) +
                    " allowed (they become file names)");
  }
}

std::string load_description(const JsonNode& node) { return model::one_line_text(node, "the description"); }

Tolerance load_tolerance(const JsonNode& node) {
  node.require_object({"fp32", "fp16", "bf16"}, {});
  Tolerance t = model::default_tolerance();
  for (const JsonNode& dtype : node.members()) t[dtype.key()] = dtype.positive_number();
  return t;
}

std::int64_t domain_point_count(const JsonNode& node) {
  const std::int64_t n = node.positive_integer();
  if (n > kMaxDomainPoints) {
    node.fail(std::to_string(n) + " points, more than the " + std::to_string(kMaxDomainPoints) + " a domain may sample");
  }
  return n;
}

Tuning load_tuning(const JsonNode& node) {
  node.require_object(
      {"max_variants", "timeout_s", "coverage", "held_out", "regret_tolerance", "min_leaf_points", "tree_fit", "screen",
       "refine", "alternate", "search", "budget", "search_options", "reach"},
      {});
  Tuning t;
  if (node.has("max_variants")) t.max_variants = node["max_variants"].positive_integer();
  if (node.has("timeout_s")) t.timeout_s = node["timeout_s"].positive_integer();
  if (node.has("coverage")) t.coverage = domain_point_count(node["coverage"]);
  if (node.has("held_out")) t.held_out = domain_point_count(node["held_out"]);
  if (node.has("regret_tolerance")) {
    t.regret_tolerance = node["regret_tolerance"].positive_number();
    if (t.regret_tolerance < 1 || t.regret_tolerance > 10) {
      node["regret_tolerance"].fail("expected a ratio of times from 1 to 10 (1.05: within 5 % of the best), got " +
                                    describe_json(node["regret_tolerance"].json()));
    }
  }
  if (node.has("screen")) {
    t.screen = node["screen"].positive_integer();
    if (t.coverage > 0 && t.screen > t.coverage) {
      node["screen"].fail("cannot screen more points than the coverage set has (" + std::to_string(t.coverage) +
                          "), got " + std::to_string(t.screen));
    }
  }
  if (node.has("refine")) {
    t.refine = node["refine"].positive_integer();
    if (t.coverage > 0 && t.refine > t.coverage) {
      node["refine"].fail("cannot add more refinement points than the coverage set has (" + std::to_string(t.coverage) +
                          "), got " + std::to_string(t.refine));
    }
  }
  if (node.has("alternate")) {
    // Which dims they name is checked with the problem's dims (sections::check_domain).
    const JsonNode n = node["alternate"];
    n.require_array();
    for (const JsonNode& element : n.elements()) {
      const std::string& name = element.identifier();
      if (std::find(t.alternate.begin(), t.alternate.end(), name) != t.alternate.end()) {
        element.fail("\"" + name + "\" is named twice");
      }
      t.alternate.push_back(name);
    }
    if (t.alternate.empty()) n.fail("an empty list: leave the key out instead");
  }
  if (node.has("search")) {
    const JsonNode n = node["search"];
    t.search = n.string();
    if (!model::is_search_strategy(t.search)) {
      n.fail("unknown search strategy " + describe_json(n.json()) + " (strategies: " + model::search_strategy_names() + ")");
    }
  }
  if (node.has("budget")) {
    const JsonNode n = node["budget"];
    if (t.search.empty() || t.search == "exhaustive") {
      n.fail("a budget needs a budgeted search: tuning.search anneal, random, genetic or forest");
    }
    const double value = n.positive_number();
    if (!model::is_search_budget(value, n.json().is_number_integer())) {
      n.fail("expected a count of variants (an integer) or a fraction of the space below 1 (0.15), got " +
             describe_json(n.json()));
    }
    t.budget = n.json().dump();
  }
  if (node.has("search_options")) {
    const JsonNode n = node["search_options"];
    if (!n.json().is_object()) n.fail("expected an object of the search's options, got " + describe_json(n.json()));
    if (t.search.empty()) n.fail("search options need a search: tuning.search");
    for (const auto& [key, value] : n.json().items()) {
      const JsonNode option = n[key];
      if (key == "budget") option.fail("the budget is tuning.budget");
      if (!model::is_search_option(t.search, key)) {
        option.fail("search " + t.search + " has no option \"" + key + "\" (its options: " +
                    model::search_options_of(t.search) + ")");
      }
      option.positive_number();
      t.search_options.emplace_back(key, value.dump());
    }
  }
  if (node.has("tree_fit")) t.tree_fit = model::tree_fit_of(node["tree_fit"]);
  if (node.has("min_leaf_points")) {
    const JsonNode n = node["min_leaf_points"];
    if (n.json().is_string()) {
      if (n.string() != "auto") n.fail("expected a positive integer or \"auto\", got " + describe_json(n.json()));
      t.min_leaf_points = 0;
      return t;
    }
    t.min_leaf_points = n.positive_integer();
    if (t.coverage > 0 && t.min_leaf_points > t.coverage) {
      node["min_leaf_points"].fail("a leaf cannot hold more points than the coverage set has (" +
                                   std::to_string(t.coverage) + "), got " + std::to_string(t.min_leaf_points));
    }
  }
  return t;
}

// tuning.reach: {"<int dim>": "<expression>"}, each expression over what derived values see.
// Which dims it names is checked with the problem's dims (sections::check_domain), its value for
// each variant when the variants are enumerated (it must be a whole number >= 1).
void load_reach(const JsonNode& node, const NameTable& visible, Space& space) {
  if (!node.json().is_object()) node.fail("expected an object of int dims and expressions, got " + describe_json(node.json()));
  for (const JsonNode& member : node.members()) {
    const std::string& dim = member.key();
    space.tuning.reach.push_back(model::Reach{dim, sections::load_expression(space, member, visible)});
  }
  if (space.tuning.reach.empty()) node.fail("an empty object: leave the key out instead");
}

void load_backend(const JsonNode& node, const Device& target, Space& space) {
  space.backend = std::string(backend_of(node).name);
  if (space.backend != target.backend) {
    node.fail("the space is for backend \"" + space.backend + "\" but target " + target.label() + " (" + target.name +
              ") is a \"" + target.backend + "\" device");
  }
}

}  // namespace

namespace sections {

Expr load_expression(const Space& space, const JsonNode& node, const NameTable& names) {
  if (!node.json().is_string()) node.fail("expected an expression string, got " + describe_json(node.json()));
  try {
    Expr expr = Expr::parse(node.json().get<std::string>());
    expr.check(names);
    return expr;
  } catch (const ExprError& e) {
    fail_expr(space, node.pointer(), e);
  }
}

}  // namespace sections

void check_evaluation_cost(const std::string& label, const std::string& pointer, std::uint64_t count,
                           std::uint64_t nodes, const std::string& what) {
  std::uint64_t cost = 0;
  if (__builtin_mul_overflow(count, nodes, &cost) || cost > kMaxEvaluatedNodes) {
    fail_at(label, pointer,
            std::to_string(count) + " " + what + " times " + std::to_string(nodes) +
                " expression nodes is more evaluation than the " + std::to_string(kMaxEvaluatedNodes) +
                " nodes the generator does");
  }
}

void fail_expr(const Space& space, const std::string& pointer, const ExprError& error, const std::string& context) {
  fail_at(space.label, pointer, context.empty() ? error.what() : std::string(error.what()) + " for " + context);
}

Space load_space(const std::filesystem::path& file, const Device& target) {
  return load_space(read_json_file(file), file, target);
}

Space load_space(const JsonFile& json, const std::filesystem::path& file, const Device& target) {
  const JsonNode root = JsonNode::root(json);
  if (!root.json().is_object()) root.fail("expected a space object at the top level, got " + describe_json(json.root));
  check_version(root);
  // "$schema" names the JSON Schema editors check the file against (generator/space.schema.json);
  // the generator checks the file itself and only requires the key to be a string.
  if (root.has("$schema")) root["$schema"].string();
  root.require_object({"$schema", "kiln_space", "kernel", "backend", "description", "harness", "parameters", "derived",
                       "constraints", "problem", "problems", "checks", "buckets", "tolerance", "tuning"},
                      {"kernel", "backend", "harness", "parameters", "problem", "problems"});

  Space space;
  space.label = json.label;
  space.file = file;
  space.hash = fnv1a64_hex(json.bytes);
  space.kernel = root["kernel"].identifier();
  check_name(root["kernel"], space.kernel, "kernel");  // it names the dispatch header's namespace
  load_backend(root["backend"], target, space);
  if (root.has("description")) space.description = load_description(root["description"]);
  load_harness(root["harness"], space);

  DeclaredNames declared;
  NameTable visible;  // to derived values and constraints
  for (const auto& [name, value] : target.limits) {
    declared.declare_external(name, "a limit of target " + target.name + " (" + target.label() + ")");
    visible.add_integer(name);
  }
  load_parameters(root["parameters"], declared, visible, space);
  check_variant_name_length(root["parameters"], space);
  if (root.has("derived")) load_derived(root["derived"], declared, visible, space);
  if (root.has("constraints")) load_constraints(root["constraints"], visible, space);

  sections::load_problem(root["problem"], declared, space);
  space.problems = sections::load_instances(root["problems"], space);
  if (space.problems.empty()) root["problems"].fail("a space needs at least one problem");
  if (root.has("checks")) space.checks = sections::load_instances(root["checks"], space);
  if (root.has("tolerance")) space.tolerance = load_tolerance(root["tolerance"]);
  if (root.has("tuning")) {
    space.tuning = load_tuning(root["tuning"]);
    if (root["tuning"].has("reach")) load_reach(root["tuning"]["reach"], visible, space);
  }
  // Buckets are required unless the space has a domain (the tuner then learns the dispatch).
  sections::check_domain(root, space);
  if (root.has("buckets")) sections::load_buckets(root["buckets"], space);
  sections::evaluate_domain_work(space);
  sections::assign_buckets(space);
  return space;
}

}  // namespace kiln::gen
