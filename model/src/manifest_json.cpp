// The manifest's JSON in both directions, side by side: a key written here and not read back (or
// read and not written) fails the round trip of tests/model/manifest_test.cpp.
#include <algorithm>

#include "kiln/model/backend.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/model/manifest.hpp"
#include "kiln/problem_json.hpp"

namespace kiln::model {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json value_json(const Value& v) {
  return std::visit([](const auto& x) { return ordered_json(x); }, v);
}

Value value_from_json(const ordered_json& j) {
  if (j.is_number_integer()) return j.get<std::int64_t>();
  return j.get<std::string>();
}

ordered_json problems_json(const std::vector<Problem>& problems) {
  ordered_json out = ordered_json::array();
  for (const Problem& p : problems) out.push_back(problem_to_json(p));
  return out;
}

std::vector<Problem> problems_from_json(const ordered_json& list) {
  std::vector<Problem> out;
  for (const auto& p : list) out.push_back(problem_from_json(p));
  return out;
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

Parameter parameter_from_json(const ordered_json& j, const std::string& label) {
  Parameter p;
  p.name = j.at("name").get<std::string>();
  for (const auto& v : j.at("values")) p.values.push_back(value_from_json(v));
  const Value default_value = value_from_json(j.at("default"));
  const auto it = std::find(p.values.begin(), p.values.end(), default_value);
  if (it == p.values.end()) {
    throw InputError(label + ": the default of parameter " + p.name + " is not one of its values");
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

Dim dim_from_json(const std::string& name, const ordered_json& type) {
  Dim d;
  d.name = name;
  if (type.is_array()) {
    d.symbolic = true;
    d.domain = type.get<std::vector<std::string>>();
  } else if (type.is_object()) {
    const auto& range = type.at("domain");
    d.range = IntRange{range.at("min").get<std::int64_t>(), range.at("max").get<std::int64_t>(),
                       range.at("scale").get<std::string>() == "log"};
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

void problem_section_from_json(const ordered_json& problem, Manifest& m) {
  for (const auto& [name, type] : problem.at("dims").items()) m.dims.push_back(dim_from_json(name, type));
  for (const auto& c : problem.value("domain_constraints", ordered_json::array())) {
    m.domain_constraints.push_back(Expr::parse(c.get<std::string>()));
  }
  const ordered_json features = problem.value("features", ordered_json::object());
  if (!features.is_object()) throw InputError("problem.features: expected an object of named expressions");
  for (const auto& [name, text] : features.items()) {
    m.features.push_back(Feature{name, Expr::parse(text.get<std::string>())});
  }
  for (const auto& [name, text] : problem.at("work").items()) {
    m.work.push_back(WorkTerm{name, Expr::parse(text.get<std::string>())});
  }
}

ordered_json pruned_json(const Manifest& m) {
  ordered_json by_constraint = ordered_json::array();
  for (std::size_t c = 0; c < m.constraints.size(); ++c) {
    by_constraint.push_back({{"constraint", m.constraints[c].expr.text()}, {"count", m.pruned.by_constraint[c]}});
  }
  return {{"total", m.pruned.total}, {"feasible", m.pruned.feasible}, {"by_constraint", by_constraint}};
}

Pruned pruned_from_json(const ordered_json& j) {
  Pruned p;
  p.total = j.at("total").get<std::uint64_t>();
  p.feasible = j.at("feasible").get<std::uint64_t>();
  for (const auto& c : j.at("by_constraint")) p.by_constraint.push_back(c.at("count").get<std::uint64_t>());
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

Tuning tuning_from_json(const ordered_json& j) {
  Tuning t;
  t.max_variants = j.at("max_variants").get<std::int64_t>();
  t.timeout_s = j.at("timeout_s").get<std::int64_t>();
  t.coverage = j.value("coverage", t.coverage);
  t.held_out = j.value("held_out", t.held_out);
  t.regret_tolerance = j.value("regret_tolerance", t.regret_tolerance);
  t.min_leaf_points = j.value("min_leaf_points", t.min_leaf_points);
  t.screen = j.value("screen", t.screen);
  t.refine = j.value("refine", t.refine);
  t.alternate = j.value("alternate", t.alternate);
  if (j.contains("reach")) {
    const ordered_json& r = j.at("reach");
    if (!r.is_object() || r.empty()) throw InputError("tuning.reach: expected an object of int dims and expressions, got " + r.dump());
    for (const auto& [dim, text] : r.items()) t.reach.push_back(Reach{dim, Expr::parse(text.get<std::string>())});
  }
  if (j.contains("search")) {
    t.search = j.at("search").get<std::string>();
    if (!is_search_strategy(t.search)) throw InputError("tuning.search: unknown search strategy '" + t.search + "'");
  }
  if (j.contains("budget")) {
    const ordered_json& b = j.at("budget");
    if (!b.is_number() || !is_search_budget(b.get<double>(), b.is_number_integer())) {
      throw InputError("tuning.budget: expected a count of variants or a fraction of the space below 1, got " + b.dump());
    }
    t.budget = b.dump();
  }
  if (j.contains("search_options")) {
    const ordered_json& o = j.at("search_options");
    if (!o.is_object()) throw InputError("tuning.search_options: expected an object, got " + o.dump());
    for (const auto& [key, value] : o.items()) {
      if (!is_search_option(t.search, key)) {
        throw InputError("tuning.search_options: search '" + t.search + "' has no option '" + key + "'");
      }
      if (!value.is_number() || value.get<double>() <= 0) {
        throw InputError("tuning.search_options." + key + ": expected a positive number, got " + value.dump());
      }
      t.search_options.emplace_back(key, value.dump());
    }
  }
  return t;
}

Manifest fields_from_json(const ordered_json& j, const std::string& label, const std::filesystem::path& base_dir) {
  Manifest m;
  m.kernel = j.at("kernel").get<std::string>();
  m.backend = std::string(backend_named(j.at("backend").get<std::string>()).name);
  m.description = j.at("description").get<std::string>();
  m.space_file = j.at("space_file").get<std::string>();
  m.space_hash = j.at("space_hash").get<std::string>();
  m.target = j.at("target").get<std::string>();
  m.harness = Harness{j.at("harness").at("include").get<std::string>(), j.at("harness").at("workload").get<std::string>()};
  for (const auto& p : j.at("parameters")) m.parameters.push_back(parameter_from_json(p, label));
  for (const auto& [name, text] : j.at("derived").items()) {
    m.derived.push_back(Derived{name, Expr::parse(text.get<std::string>())});
  }
  for (const auto& c : j.at("constraints")) {
    m.constraints.push_back(Constraint{Expr::parse(c.at("expr").get<std::string>()), c.at("why").get<std::string>()});
  }
  for (const auto& v : j.at("variants")) {
    Variant variant;
    variant.name = v.at("name").get<std::string>();
    for (const Parameter& p : m.parameters) variant.params.push_back(value_from_json(v.at("params").at(p.name)));
    variant.source = v.at("source").get<std::string>();
    if (variant.source.is_relative()) variant.source = base_dir / variant.source;
    if (v.contains("reach")) {
      for (const auto& [dim, value] : v.at("reach").items()) {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 1) {
          throw InputError("variant " + variant.name + ": reach." + dim + ": expected a whole number >= 1, got " + value.dump());
        }
        variant.reach[dim] = value.get<std::int64_t>();
      }
    }
    m.variants.push_back(std::move(variant));
  }
  m.default_variant = j.at("default_variant").get<std::string>();
  m.pruned = pruned_from_json(j.at("pruned"));
  problem_section_from_json(j.at("problem"), m);
  m.problems = problems_from_json(j.at("problems"));
  m.checks = problems_from_json(j.at("checks"));
  m.coverage = problems_from_json(j.value("coverage", ordered_json::array()));
  m.held_out = problems_from_json(j.value("held_out", ordered_json::array()));
  m.refine_candidates = problems_from_json(j.value("refine_candidates", ordered_json::array()));
  for (const auto& b : j.at("buckets")) {
    m.buckets.push_back(Bucket{b.at("name").get<std::string>(), Expr::parse(b.at("when").get<std::string>())});
  }
  const ordered_json& tolerance = j.at("tolerance");
  for (const char* dtype : {"fp32", "fp16", "bf16"}) m.tolerance[dtype] = tolerance.at(dtype).get<double>();
  m.tuning = tuning_from_json(j.at("tuning"));
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
    const std::string at = where + "[" + std::to_string(i) + "] (" + p.key() + "): ";
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

Manifest from_json(const ordered_json& j, const std::string& label, const std::filesystem::path& base_dir) {
  if (!j.is_object() || j.value("kiln_manifest", 0) != 1) {
    throw InputError(label + ": not a Kiln manifest (kiln_manifest: 1)");
  }
  Manifest m;
  try {
    m = fields_from_json(j, label, base_dir);
  } catch (const InputError& e) {
    // The file named once: a field's message (tuning.search: ...) gets it here.
    const std::string what = e.what();
    if (what.rfind(label + ": ", 0) == 0) throw;
    throw InputError(label + ": " + what);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(label + ": manifest field missing or of the wrong type: " + e.what());
  } catch (const ExprError& e) {
    throw InputError(label + ": " + e.what());
  } catch (const kiln::Error& e) {  // a problem that is not an object of integers and symbols
    throw InputError(label + ": " + e.what());
  }
  try {
    check_problem_set(m, m.problems, "problems");
    check_problem_set(m, m.checks, "checks");
    check_problem_set(m, m.coverage, "coverage");
    check_problem_set(m, m.held_out, "held_out");
    check_problem_set(m, m.refine_candidates, "refine_candidates");
  } catch (const InputError& e) {
    throw InputError(label + ": " + e.what());
  }
  for (const Feature& f : m.features) {
    if (std::any_of(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == f.name; })) {
      throw InputError(label + ": problem.features: \"" + f.name + "\" is also a dim");
    }
    for (const auto& name : f.expr.names()) {
      const auto dim = std::find_if(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == name; });
      if (dim == m.dims.end() || dim->symbolic) {
        throw InputError(label + ": problem.features." + f.name + " reads \"" + std::string(name) + "\", not an int dim");
      }
    }
  }
  for (const std::string& name : m.tuning.alternate) {
    const auto dim = std::find_if(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == name; });
    if (dim == m.dims.end() || !dim->symbolic) {
      throw InputError(label + ": tuning.alternate names \"" + name + "\", not a symbolic dim of the problem");
    }
  }
  for (const Reach& r : m.tuning.reach) {
    const auto dim = std::find_if(m.dims.begin(), m.dims.end(), [&](const Dim& d) { return d.name == r.dim; });
    if (dim == m.dims.end() || dim->symbolic) {
      throw InputError(label + ": tuning.reach names \"" + r.dim + "\", not an int dim of the problem");
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
    throw InputError(label + ": default variant " + m.default_variant + " is not among the variants");
  }
  if (m.pruned.by_constraint.size() != m.constraints.size()) {
    throw InputError(label + ": pruned.by_constraint has " + std::to_string(m.pruned.by_constraint.size()) +
                     " entries for " + std::to_string(m.constraints.size()) + " constraints");
  }
  return m;
}

Manifest load_manifest(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) throw InputError(file.string() + ": no manifest (run `kiln generate` first)");
  Manifest m = from_json(read_json_file(file, kMaxManifestBytes).root, file.string(), file.parent_path());
  m.file = file;
  return m;
}

}  // namespace kiln::model
