#include "kiln/gen/enumerate.hpp"

#include <algorithm>
#include <map>

namespace kiln::gen {
namespace {

std::string combination_text(const Space& space, const std::vector<Value>& params) {
  std::string out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += space.parameters[i].name + "=" + value_text(params[i]);
  }
  return out;
}

// Counted before enumerating, so that a space too large to enumerate fails at once.
std::uint64_t count_combinations(const Space& space) {
  std::uint64_t total = 1;
  bool overflow = false;
  for (const Parameter& p : space.parameters) {
    overflow = overflow || __builtin_mul_overflow(total, static_cast<std::uint64_t>(p.values.size()), &total);
  }
  if (overflow || total > kMaxCombinations) {
    fail_at(space.label, "/parameters",
            (overflow ? std::string("more than 2^64") : std::to_string(total)) +
                " combinations of parameter values, more than the " + std::to_string(kMaxCombinations) +
                " the generator enumerates");
  }
  std::uint64_t nodes = 1;  // the odometer's own step
  for (const Derived& d : space.derived) nodes += d.expr.node_count();
  for (const Constraint& c : space.constraints) nodes += c.expr.node_count();
  for (const model::Reach& r : space.tuning.reach) nodes += r.expr.node_count();
  check_evaluation_cost(space.label, "/parameters", total, nodes, "combinations");
  return total;
}

// Evaluates one combination: derived values, then constraints in order. Returns the index of the
// first violated constraint, or constraints.size() when the combination is feasible.
class CombinationChecker {
 public:
  CombinationChecker(const Space& space, const Device& target) : space_(space) {
    for (const auto& [name, value] : target.limits) env_.set(name, value);
  }

  std::size_t first_violated(const std::vector<Value>& params) {
    set_combination(space_, params, env_);
    for (std::size_t c = 0; c < space_.constraints.size(); ++c) {
      const Constraint& constraint = space_.constraints[c];
      try {
        if (constraint.expr.evaluate(env_) == 0) return c;
      } catch (const ExprError& e) {
        fail_expr(space_, constraint.expr_pointer, e, combination_text(space_, params));
      }
    }
    return space_.constraints.size();
  }

  // tuning.reach for the combination first_violated last saw feasible: a whole number >= 1 each.
  std::map<std::string, std::int64_t> reach(const std::vector<Value>& params) {
    std::map<std::string, std::int64_t> out;
    for (const model::Reach& r : space_.tuning.reach) {
      const std::string pointer = "/tuning/reach/" + r.dim;
      std::int64_t value = 0;
      try {
        value = r.expr.evaluate(env_);
      } catch (const ExprError& e) {
        fail_expr(space_, pointer, e, combination_text(space_, params));
      }
      if (value < 1) {
        fail_at(space_.label, pointer,
                "the reach of " + combination_text(space_, params) + " is " + std::to_string(value) +
                    "; a reach is the largest " + r.dim + " a variant serves on its fast path, at least 1");
      }
      out[r.dim] = value;
    }
    return out;
  }

 private:
  const Space& space_;
  Environment env_;
};

std::vector<Value> values_at(const Space& space, const std::vector<std::size_t>& digits) {
  std::vector<Value> params;
  params.reserve(digits.size());
  for (std::size_t i = 0; i < digits.size(); ++i) params.push_back(space.parameters[i].values[digits[i]]);
  return params;
}

// Advances the odometer, last parameter fastest; false after the last combination.
bool advance(const Space& space, std::vector<std::size_t>& digits) {
  for (std::size_t i = digits.size(); i-- > 0;) {
    if (++digits[i] < space.parameters[i].values.size()) return true;
    digits[i] = 0;
  }
  return false;
}

void check_unique_names(const Space& space, const std::vector<Variant>& variants) {
  std::map<std::string, const Variant*> seen;
  for (const Variant& v : variants) {
    const auto [it, inserted] = seen.emplace(v.name, &v);
    if (!inserted) {
      fail_at(space.label, "/parameters",
              "the variants " + combination_text(space, it->second->params) + " and " +
                  combination_text(space, v.params) + " both get the name " + v.name +
                  " (rename values so that names stay distinct)");
    }
  }
}

std::string describe_constraint(const Constraint& c) {
  std::string out = c.pointer + " \"" + c.expr.text() + "\"";
  if (!c.why.empty()) out += " (" + c.why + ")";
  return out;
}

}  // namespace

void set_combination(const Space& space, const std::vector<Value>& params, model::Environment& env) {
  for (std::size_t i = 0; i < params.size(); ++i) env.set(space.parameters[i].name, params[i]);
  for (const Derived& d : space.derived) {
    try {
      env.set(d.name, d.expr.evaluate(env));
    } catch (const ExprError& e) {
      fail_expr(space, d.pointer, e, combination_text(space, params));
    }
  }
}

model::Environment combination_environment(const Space& space, const Device& target, const std::vector<Value>& params) {
  model::Environment env;
  for (const auto& [name, value] : target.limits) env.set(name, value);
  set_combination(space, params, env);
  return env;
}

std::filesystem::path variant_source_path(const Space& space, const std::string& name) {
  return std::filesystem::path("variants") / (name + std::string(backend_named(space.backend).source_extension));
}

// Digits of an integer for a name: `-` is not an identifier character, so -3 is written m3.
std::string variant_name_part(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  const std::int64_t i = std::get<std::int64_t>(v);
  if (i >= 0) return std::to_string(i);
  return "m" + std::to_string(0 - static_cast<std::uint64_t>(i));
}

std::string variant_name(const Space& space, const std::vector<Value>& params) {
  std::string out = space.kernel + "_";
  for (std::size_t i = 0; i < params.size(); ++i) out += "_" + space.parameters[i].name + variant_name_part(params[i]);
  return out;
}

Enumeration enumerate_variants(const Space& space, const Device& target) {
  Enumeration result;
  result.total = count_combinations(space);
  result.pruned.assign(space.constraints.size(), 0);

  std::vector<std::size_t> defaults;
  for (const Parameter& p : space.parameters) defaults.push_back(p.default_index);
  std::size_t default_violation = space.constraints.size();

  CombinationChecker checker(space, target);
  const auto limit = static_cast<std::uint64_t>(space.tuning.max_variants);
  std::uint64_t feasible = 0;
  std::vector<std::size_t> digits(space.parameters.size(), 0);
  do {
    std::vector<Value> params = values_at(space, digits);
    const std::size_t violated = checker.first_violated(params);
    if (digits == defaults) {
      default_violation = violated;
      result.default_index = result.variants.size();
    }
    if (violated < space.constraints.size()) {
      ++result.pruned[violated];
    } else if (++feasible <= limit) {
      // Beyond tuning.max_variants only the count is kept: the space is refused below, and a
      // million names would cost memory for nothing.
      std::string name = variant_name(space, params);
      std::filesystem::path source = variant_source_path(space, name);
      std::map<std::string, std::int64_t> reach = checker.reach(params);
      result.variants.push_back(Variant{std::move(name), std::move(params), std::move(source), std::move(reach)});
    }
  } while (advance(space, digits));

  if (result.variants.empty()) {
    const auto most = std::max_element(result.pruned.begin(), result.pruned.end()) - result.pruned.begin();
    fail_at(space.label, "",
            "no feasible variant: all " + std::to_string(result.total) + " combinations violate a constraint (most often " +
                space.constraints[static_cast<std::size_t>(most)].pointer + ")");
  }
  if (default_violation < space.constraints.size()) {
    fail_at(space.label, "/parameters",
            "the default variant " + variant_name(space, values_at(space, defaults)) + " violates " +
                describe_constraint(space.constraints[default_violation]));
  }
  if (feasible > limit) {
    fail_at(space.label, "",
            std::to_string(feasible) + " feasible variants, more than tuning.max_variants (" +
                std::to_string(space.tuning.max_variants) + ")");
  }
  check_unique_names(space, result.variants);
  return result;
}

}  // namespace kiln::gen
