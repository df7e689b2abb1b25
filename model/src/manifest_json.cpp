// The manifest's JSON in both directions, side by side: a key written here and not read back (or
// read and not written) fails the round trip of tests/model/manifest_test.cpp.
#include <algorithm>

#include "kiln/model/backend.hpp"
#include "kiln/model/domain_read.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/model/manifest.hpp"
#include "kiln/model/names.hpp"
#include "kiln/model/protocol_read.hpp"
#include "kiln/problem_json.hpp"

// The reading half reads field by field through JsonNode: a manifest of a wrong type, a missing
// key or a bad expression is one error naming the file and the field's JSON pointer.
namespace kiln::model {
namespace {

using ordered_json = nlohmann::ordered_json;
namespace read = protocol_read;

Expr expr_at(const JsonNode& node) {
  try {
    return Expr::parse(node.string());
  } catch (const ExprError& e) {
    node.fail(e.what());
  }
}

std::vector<JsonNode> array_at(const JsonNode& node) {
  node.require_array();
  return node.elements();
}

std::vector<JsonNode> object_at(const JsonNode& node) {
  node.require_object();
  return node.members();
}

// A variant's canonical name joins the kernel's and every parameter's: an identifier that may be
// longer than the ones a space file names.
const std::string& name_at(const JsonNode& node) {
  const std::string& name = node.string();
  if (!is_identifier(name)) node.fail("expected a name ([A-Za-z_][A-Za-z0-9_]*), got " + describe_json(node.json()));
  return name;
}

// The members of an object whose keys name things that become C++ names in generated code
// (derived values, features, dims; `what` says which), checked as the space's names were.
std::vector<JsonNode> named_at(const JsonNode& node, const std::string& what) {
  std::vector<JsonNode> members = object_at(node);
  for (const JsonNode& m : members) check_name(m, m.key(), what);
  return members;
}

// A parameter's value or a symbol: an integer, or an identifier of up to kMaxIdentifierBytes.
Value value_from_node(const JsonNode& node) {
  if (node.is_integer()) return node.integer();
  if (!node.json().is_string() || !is_identifier(node.json().get_ref<const std::string&>())) {
    node.fail("expected an integer or an identifier, got " + describe_json(node.json()));
  }
  check_identifier_length(node, node.string());
  return node.string();
}

ordered_json value_json(const Value& v) {
  return std::visit([](const auto& x) { return ordered_json(x); }, v);
}

ordered_json problems_json(const std::vector<Problem>& problems) {
  ordered_json out = ordered_json::array();
  for (const Problem& p : problems) out.push_back(problem_to_json(p));
  return out;
}

std::vector<Problem> problems_from_node(const JsonNode& list) {
  std::vector<Problem> out;
  for (const JsonNode& p : array_at(list)) {
    p.require_object();
    out.push_back(read::problem(p));
  }
  return out;
}

std::vector<Problem> optional_problems(const JsonNode& root, const char* key) {
  return root.has(key) ? problems_from_node(root[key]) : std::vector<Problem>{};
}

ordered_json parameters_json(const std::vector<Parameter>& parameters) {
  ordered_json out = ordered_json::array();
  for (const Parameter& p : parameters) {
    ordered_json values = ordered_json::array();
    for (const Value& v : p.values) values.push_back(value_json(v));
    out.push_back({{"name", p.name}, {"values", values}, {"default", value_json(p.default_value())}});
  }
  return out;
}

Parameter parameter_from_node(const JsonNode& j) {
  Parameter p;
  p.name = j["name"].string();
  check_name(j["name"], p.name, "parameter");
  if (has_reserved_prefix(p.name)) j["name"].fail("parameter names may not start with 'kiln' (in any letter case)");
  for (const JsonNode& v : array_at(j["values"])) {
    p.values.push_back(value_from_node(v));
    if (p.values.front().index() != p.values.back().index()) {
      v.fail("a parameter's values are all integers or all identifiers, got " + describe_json(v.json()));
    }
  }
  if (p.values.empty()) j["values"].fail("a parameter needs at least one value");
  const Value default_value = value_from_node(j["default"]);
  const auto it = std::find(p.values.begin(), p.values.end(), default_value);
  if (it == p.values.end()) {
    j["default"].fail("the default of parameter " + p.name + " is not one of its values");
  }
  p.default_index = static_cast<std::size_t>(it - p.values.begin());
  return p;
}

ordered_json variants_json(const Manifest& m) {
  ordered_json out = ordered_json::array();
  for (const Variant& v : m.variants) {
    ordered_json params = ordered_json::object();
    for (std::size_t i = 0; i < v.params.size(); ++i) params[m.parameters[i].name] = value_json(v.params[i]);
    ordered_json one = {{"name", v.name}, {"params", params}, {"source", v.source.generic_string()}};
    if (!v.reach.empty()) one["reach"] = v.reach;  // only with tuning.reach: other manifests stay as they were
    out.push_back(std::move(one));
  }
  return out;
}

ordered_json dim_json(const Dim& dim) {
  if (dim.symbolic) return ordered_json(dim.domain);
  if (!dim.range) return "int";
  return {{"type", "int"},
          {"domain", {{"min", dim.range->min}, {"max", dim.range->max}, {"scale", dim.range->log ? "log" : "linear"}}}};
}

// "int", ["a", "b"] (symbolic) or {"type": "int", "domain": {"min", "max", "scale"}}.
Dim dim_from_node(const JsonNode& type) {
  Dim d;
  d.name = type.key();
  const auto& j = type.json();
  if (j.is_array()) {
    d.symbolic = true;
    for (const JsonNode& symbol : type.elements()) {
      const std::string& value = symbol.identifier();
      if (std::find(d.domain.begin(), d.domain.end(), value) != d.domain.end()) symbol.fail("duplicate value " + value);
      d.domain.push_back(value);
    }
    if (d.domain.empty()) type.fail("a symbolic dim needs at least one value");
  } else if (j.is_object()) {
    type.require_object({"type", "domain"}, {"type", "domain"});
    if (type["type"].string() != "int") type["type"].fail("expected \"int\", got " + describe_json(type["type"].json()));
    d.range = read_int_range(type["domain"]);
  } else if (!j.is_string() || j.get<std::string>() != "int") {
    type.fail("expected \"int\", a list of symbols or an int domain, got " + describe_json(j));
  }
  return d;
}

ordered_json problem_json(const Manifest& m) {
  ordered_json dims = ordered_json::object();
  for (const Dim& dim : m.dims) dims[dim.name] = dim_json(dim);
  ordered_json work = ordered_json::object();
  for (const WorkTerm& term : m.work) work[term.name] = term.expr.text();
  ordered_json out = {{"dims", dims}};
  if (!m.domain_constraints.empty()) {
    ordered_json constraints = ordered_json::array();
    for (const Expr& c : m.domain_constraints) constraints.push_back(c.text());
    out["domain_constraints"] = constraints;
  }
  if (!m.features.empty()) {
    ordered_json features = ordered_json::object();
    for (const Feature& f : m.features) features[f.name] = f.expr.text();
    out["features"] = features;
  }
  out["work"] = work;
  return out;
}

void problem_section_from_node(const JsonNode& problem, Manifest& m) {
  problem.require_object();
  for (const JsonNode& type : named_at(problem["dims"], "dim")) m.dims.push_back(dim_from_node(type));
  if (problem.has("domain_constraints")) {
    for (const JsonNode& c : array_at(problem["domain_constraints"])) m.domain_constraints.push_back(expr_at(c));
  }
  if (problem.has("features")) {
    for (const JsonNode& f : named_at(problem["features"], "feature")) m.features.push_back(Feature{f.key(), expr_at(f)});
  }
  for (const JsonNode& term : object_at(problem["work"])) {
    if (!is_identifier(term.key())) term.fail("a work term's name must be an identifier");
    m.work.push_back(WorkTerm{term.key(), expr_at(term)});
  }
}

ordered_json pruned_json(const Manifest& m) {
  ordered_json by_constraint = ordered_json::array();
  for (std::size_t c = 0; c < m.constraints.size(); ++c) {
    by_constraint.push_back({{"constraint", m.constraints[c].expr.text()}, {"count", m.pruned.by_constraint[c]}});
  }
  return {{"total", m.pruned.total}, {"feasible", m.pruned.feasible}, {"by_constraint", by_constraint}};
}

Pruned pruned_from_node(const JsonNode& j) {
  j.require_object();
  Pruned p;
  p.total = read::count(j["total"]);
  p.feasible = read::count(j["feasible"]);
  if (p.feasible > p.total) j["feasible"].fail("more than the total (" + std::to_string(p.total) + ")");
  for (const JsonNode& c : array_at(j["by_constraint"])) {
    c.require_object();
    p.by_constraint.push_back(read::count(c["count"]));
  }
  return p;
}

ordered_json tuning_json(const Manifest& m) {
  ordered_json t = {{"max_variants", m.tuning.max_variants}, {"timeout_s", m.tuning.timeout_s}};
  if (m.has_domain()) {
    t["coverage"] = m.tuning.coverage;
    t["held_out"] = m.tuning.held_out;
    t["regret_tolerance"] = m.tuning.regret_tolerance;
    // Only when set, so the manifests of spaces without it stay as they were.
    if (m.tuning.min_leaf_points != 1) t["min_leaf_points"] = m.tuning.min_leaf_points;  // 0: auto
    if (m.tuning.tree_fit != TreeFit::served) t["tree_fit"] = to_string(m.tuning.tree_fit);
    if (m.tuning.screen != 0) t["screen"] = m.tuning.screen;
    if (m.tuning.refine != 0) t["refine"] = m.tuning.refine;
    if (!m.tuning.alternate.empty()) t["alternate"] = m.tuning.alternate;
    if (!m.tuning.reach.empty()) {
      ordered_json r = ordered_json::object();
      for (const Reach& reach : m.tuning.reach) r[reach.dim] = reach.expr.text();
      t["reach"] = r;
    }
  }
  if (!m.tuning.search.empty()) t["search"] = m.tuning.search;
  if (!m.tuning.budget.empty()) t["budget"] = ordered_json::parse(m.tuning.budget);
  if (!m.tuning.search_options.empty()) {
    ordered_json o = ordered_json::object();
    for (const auto& [key, value] : m.tuning.search_options) o[key] = ordered_json::parse(value);
    t["search_options"] = o;
  }
  return t;
}

// The tuning section as the generator wrote it from a checked space (generator/src/space.cpp,
// load_tuning): the same ranges, read again because a manifest is a file like any other.
Tuning tuning_from_node(const JsonNode& j) {
  j.require_object();
  Tuning t;
  t.max_variants = j["max_variants"].positive_integer();
  t.timeout_s = j["timeout_s"].positive_integer();
  if (j.has("coverage")) t.coverage = read::non_negative_integer(j["coverage"]);
  if (j.has("held_out")) t.held_out = read::non_negative_integer(j["held_out"]);
  if (j.has("regret_tolerance")) {
    t.regret_tolerance = j["regret_tolerance"].positive_number();
    if (t.regret_tolerance < 1 || t.regret_tolerance > 10) {
      j["regret_tolerance"].fail("expected a ratio of times from 1 to 10, got " + describe_json(j["regret_tolerance"].json()));
    }
  }
  if (j.has("min_leaf_points")) t.min_leaf_points = read::non_negative_integer(j["min_leaf_points"]);  // 0: auto
  if (j.has("tree_fit")) t.tree_fit = tree_fit_of(j["tree_fit"]);
  if (j.has("screen")) t.screen = read::non_negative_integer(j["screen"]);
  if (j.has("refine")) t.refine = read::non_negative_integer(j["refine"]);
  if (j.has("alternate")) {
    for (const JsonNode& name : array_at(j["alternate"])) t.alternate.push_back(name.identifier());
  }
  if (j.has("reach")) {
    const JsonNode r = j["reach"];
    if (!r.json().is_object() || r.json().empty()) {
      r.fail("expected an object of int dims and expressions, at least one, got " + (r.json().is_object() ? std::string("none") : describe_json(r.json())));
    }
    for (const JsonNode& reach : named_at(r, "dim")) t.reach.push_back(Reach{reach.key(), expr_at(reach)});
  }
  if (j.has("search")) {
    t.search = j["search"].string();
    if (!is_search_strategy(t.search)) j["search"].fail("unknown search strategy '" + t.search + "'");
  }
  if (j.has("budget")) {
    const JsonNode b = j["budget"];
    if (!b.json().is_number() || !is_search_budget(b.json().get<double>(), b.json().is_number_integer())) {
      b.fail("expected a count of variants or a fraction of the space below 1, got " + describe_json(b.json()));
    }
    t.budget = b.json().dump();
  }
  if (j.has("search_options")) {
    const JsonNode o = j["search_options"];
    if (!o.json().is_object()) o.fail("expected an object, got " + describe_json(o.json()));
    for (const JsonNode& option : o.members()) {
      if (!is_search_option(t.search, option.key())) option.fail("search '" + t.search + "' has no option '" + option.key() + "'");
      option.positive_number();
      t.search_options.emplace_back(option.key(), option.json().dump());
    }
  }
  return t;
}

Manifest fields_from_node(const JsonNode& j, const std::filesystem::path& base_dir) {
  Manifest m;
  m.kernel = j["kernel"].string();
  check_name(j["kernel"], m.kernel, "kernel");  // it names the dispatch header's namespace
  const JsonNode backend = j["backend"];
  try {
    m.backend = std::string(backend_named(backend.string()).name);
  } catch (const kiln::Error& e) {
    backend.fail(e.what());
  }
  m.description = one_line_text(j["description"], "the description");
  m.space_file = one_line_text(j["space_file"], "the space file's path");
  m.space_hash = one_line_text(j["space_hash"], "the space's hash");
  m.target = one_line_text(j["target"], "the target's name");
  const JsonNode harness = j["harness"];
  harness.require_object();
  m.harness = Harness{harness["include"].string(), harness["workload"].string()};
  if (!is_safe_include(m.harness.include)) {
    harness["include"].fail("expected a relative path of letters, digits and _ . / - without '..', got " +
                            describe_json(harness["include"].json()));
  }
  if (!is_qualified_name(m.harness.workload)) {
    harness["workload"].fail("expected a qualified C++ class name such as a::b::Workload, got " +
                             describe_json(harness["workload"].json()));
  }
  for (const JsonNode& p : array_at(j["parameters"])) {
    p.require_object();
    m.parameters.push_back(parameter_from_node(p));
  }
  for (const JsonNode& d : named_at(j["derived"], "derived")) m.derived.push_back(Derived{d.key(), expr_at(d)});
  for (const JsonNode& c : array_at(j["constraints"])) {
    c.require_object();
    m.constraints.push_back(Constraint{expr_at(c["expr"]), c["why"].string()});
  }
  for (const JsonNode& v : array_at(j["variants"])) {
    v.require_object();
    Variant variant;
    variant.name = name_at(v["name"]);
    const JsonNode params = v["params"];
    params.require_object();
    for (const Parameter& p : m.parameters) variant.params.push_back(value_from_node(params[p.name]));
    const JsonNode source = v["source"];
    if (source.string().empty()) source.fail("an empty path");
    variant.source = source.string();
    if (variant.source.is_relative()) variant.source = base_dir / variant.source;
    if (v.has("reach")) {
      for (const JsonNode& reach : named_at(v["reach"], "dim")) {
        if (!reach.is_integer() || reach.integer() < 1) {
          reach.fail("expected a whole number >= 1, got " + describe_json(reach.json()));
        }
        variant.reach[reach.key()] = reach.integer();
      }
    }
    m.variants.push_back(std::move(variant));
  }
  m.default_variant = name_at(j["default_variant"]);
  m.pruned = pruned_from_node(j["pruned"]);
  problem_section_from_node(j["problem"], m);
  m.problems = problems_from_node(j["problems"]);
  m.checks = problems_from_node(j["checks"]);
  m.coverage = optional_problems(j, "coverage");
  m.held_out = optional_problems(j, "held_out");
  m.refine_candidates = optional_problems(j, "refine_candidates");
  for (const JsonNode& b : array_at(j["buckets"])) {
    b.require_object();
    const std::string& name = b["name"].identifier();  // an enumerator of the dispatch header
    if (is_cpp_keyword(name)) b["name"].fail("'" + name + "' is a C++ keyword or standard macro and cannot name a bucket");
    m.buckets.push_back(Bucket{name, expr_at(b["when"])});
  }
  const JsonNode tolerance = j["tolerance"];
  tolerance.require_object();
  for (const char* dtype : {"fp32", "fp16", "bf16"}) m.tolerance[dtype] = read::non_negative(tolerance[dtype]);
  m.tuning = tuning_from_node(j["tuning"]);
  return m;
}

}  // namespace

ordered_json to_json(const Manifest& m) {
  ordered_json j = ordered_json::object();
  j["kiln_manifest"] = 1;
  j["kernel"] = m.kernel;
  j["backend"] = m.backend;
  j["description"] = m.description;
  j["space_file"] = m.space_file.generic_string();
  j["space_hash"] = m.space_hash;
  j["target"] = m.target;
  j["harness"] = {{"include", m.harness.include}, {"workload", m.harness.workload}};
  j["parameters"] = parameters_json(m.parameters);
  j["derived"] = ordered_json::object();
  for (const Derived& d : m.derived) j["derived"][d.name] = d.expr.text();
  j["constraints"] = ordered_json::array();
  for (const Constraint& c : m.constraints) j["constraints"].push_back({{"expr", c.expr.text()}, {"why", c.why}});
  j["variants"] = variants_json(m);
  j["default_variant"] = m.default_variant;
  j["pruned"] = pruned_json(m);
  j["problem"] = problem_json(m);
  j["problems"] = problems_json(m.problems);
  j["checks"] = problems_json(m.checks);
  if (m.has_domain()) {
    j["coverage"] = problems_json(m.coverage);
    j["held_out"] = problems_json(m.held_out);
    if (!m.refine_candidates.empty()) j["refine_candidates"] = problems_json(m.refine_candidates);
  }
  j["buckets"] = ordered_json::array();
  for (const Bucket& b : m.buckets) j["buckets"].push_back({{"name", b.name}, {"when", b.when.text()}});
  j["tolerance"] = ordered_json::object();
  for (const char* dtype : {"fp32", "fp16", "bf16"}) j["tolerance"][dtype] = m.tolerance.at(dtype);
  j["tuning"] = tuning_json(m);
  return j;
}

// Every problem of a set gives each dim of the problem section a value of its kind (an integer, or
// a symbol of the dim's values) and nothing else: the tuner, the floors and the dispatch read them
// by dim, and a problem of another shape would stop one of them half way.
void check_problem_set(const Manifest& m, const std::vector<Problem>& set, const std::string& where) {
  for (std::size_t i = 0; i < set.size(); ++i) {
    const Problem& p = set[i];
    const std::string at = "/" + where + "/" + std::to_string(i) + " (" + p.key() + "): ";
    for (const auto& [name, value] : p.dims()) {
      const bool known = std::any_of(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == name; });
      if (!known) throw InputError(at + "'" + name + "' is not a dim of the problem section");
    }
    for (const Dim& d : m.dims) {
      if (!p.has(d.name)) throw InputError(at + "no value for the dim '" + d.name + "'");
      const auto& value = std::find_if(p.dims().begin(), p.dims().end(), [&](const auto& kv) { return kv.first == d.name; })->second;
      if (d.symbolic) {
        const auto* symbol = std::get_if<std::string>(&value);
        if (symbol == nullptr) throw InputError(at + "'" + d.name + "' is a symbolic dim, got an integer");
        if (!d.domain.empty() && std::find(d.domain.begin(), d.domain.end(), *symbol) == d.domain.end()) {
          throw InputError(at + "'" + *symbol + "' is not a value of the dim '" + d.name + "'");
        }
      } else if (std::get_if<std::int64_t>(&value) == nullptr) {
        throw InputError(at + "'" + d.name + "' is an int dim, got a symbol");
      }
    }
  }
}

Manifest from_json(const JsonFile& file, const std::filesystem::path& base_dir) {
  const std::string& label = file.label;
  const auto& j = file.root;
  const auto format = j.is_object() ? j.find("kiln_manifest") : j.end();
  if (!j.is_object() || format == j.end() || !format->is_number_integer() || format->get<std::int64_t>() != 1) {
    throw InputError(label + ": not a Kiln manifest (kiln_manifest: 1)");
  }
  Manifest m = fields_from_node(JsonNode::root(file), base_dir);
  try {
    check_problem_set(m, m.problems, "problems");
    check_problem_set(m, m.checks, "checks");
    check_problem_set(m, m.coverage, "coverage");
    check_problem_set(m, m.held_out, "held_out");
    check_problem_set(m, m.refine_candidates, "refine_candidates");
  } catch (const InputError& e) {
    throw InputError(label + ": " + e.what());
  }
  const NameTable dim_names = names_of(m.dims);
  // Work terms, domain constraints, bucket conditions and features are typed as the generator
  // typed them: the tuner evaluates them at every problem and point, where an error could no
  // longer name its place.
  auto typed = [&](const Expr& e, const std::string& at) {
    try {
      e.check(dim_names);
    } catch (const ExprError& error) {
      throw InputError(label + ": " + at + ": " + error.what());
    }
  };
  for (const WorkTerm& w : m.work) typed(w.expr, "/problem/work/" + w.name);
  for (std::size_t i = 0; i < m.domain_constraints.size(); ++i) {
    typed(m.domain_constraints[i], "/problem/domain_constraints/" + std::to_string(i));
  }
  for (std::size_t i = 0; i < m.buckets.size(); ++i) typed(m.buckets[i].when, "/buckets/" + std::to_string(i) + "/when");
  for (const Feature& f : m.features) {
    if (std::any_of(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == f.name; })) {
      throw InputError(label + ": /problem/features/" + f.name + ": also a dim");
    }
    typed(f.expr, "/problem/features/" + f.name);
  }
  for (const std::string& name : m.tuning.alternate) {
    const auto dim = std::find_if(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == name; });
    if (dim == m.dims.end() || !dim->symbolic) {
      throw InputError(label + ": /tuning/alternate: names \"" + name + "\", not a symbolic dim of the problem");
    }
  }
  for (const Reach& r : m.tuning.reach) {
    const auto dim = std::find_if(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == r.dim; });
    if (dim == m.dims.end() || dim->symbolic) {
      throw InputError(label + ": /tuning/reach/" + r.dim + ": not an int dim of the problem");
    }
  }
  // Every variant has a value for each reach and none besides: the learned dispatch reads them.
  for (const Variant& v : m.variants) {
    bool same = v.reach.size() == m.tuning.reach.size();
    for (const Reach& r : m.tuning.reach) same = same && v.reach.count(r.dim) > 0;
    if (!same) {
      throw InputError(label + ": variant " + v.name + ": its reach does not name the dims of tuning.reach");
    }
  }
  if (!m.variant_index(m.default_variant)) {
    throw InputError(label + ": /default_variant: " + m.default_variant + " is not among the variants");
  }
  if (m.pruned.by_constraint.size() != m.constraints.size()) {
    throw InputError(label + ": /pruned/by_constraint: " + std::to_string(m.pruned.by_constraint.size()) +
                     " entries for " + std::to_string(m.constraints.size()) + " constraints");
  }
  return m;
}

Manifest from_json(const ordered_json& j, const std::string& label, const std::filesystem::path& base_dir) {
  const JsonFile file{label, "", j};
  return from_json(file, base_dir);
}

Manifest load_manifest(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) throw InputError(file.string() + ": no manifest (run `kiln generate` first)");
  Manifest m = from_json(read_json_file(file, kMaxManifestBytes), file.parent_path());
  m.file = file;
  return m;
}

}  // namespace kiln::model
