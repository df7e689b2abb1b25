#include "kiln/model/space_parts.hpp"

#include <algorithm>
#include <limits>

#include "kiln/model/json_reader.hpp"

namespace kiln::model {

bool Parameter::symbolic() const { return !values.empty() && std::holds_alternative<std::string>(values.front()); }

bool Parameter::wide() const {
  return std::any_of(values.begin(), values.end(), [](const Value& v) {
    const auto* i = std::get_if<std::int64_t>(&v);
    return i != nullptr &&
           (*i < std::numeric_limits<std::int32_t>::min() || *i > std::numeric_limits<std::int32_t>::max());
  });
}

const char* to_string(TreeFit fit) { return fit == TreeFit::regret ? "regret" : "served"; }

TreeFit tree_fit_of(const JsonNode& node) {
  const std::string& name = node.string();
  for (TreeFit fit : {TreeFit::served, TreeFit::regret}) {
    if (name == to_string(fit)) return fit;
  }
  node.fail("expected \"served\" or \"regret\", got " + describe_json(node.json()));
}

Tolerance default_tolerance() { return {{"fp32", 1e-5}, {"fp16", 2e-3}, {"bf16", 1e-2}}; }

bool is_search_strategy(const std::string& name) {
  for (const char* known : kSearchStrategies) {
    if (name == known) return true;
  }
  return false;
}

std::string search_strategy_names() {
  std::string names;
  for (const char* known : kSearchStrategies) names += (names.empty() ? "" : ", ") + std::string(known);
  return names;
}

const std::vector<SearchOptionNames>& search_option_names() {
  static const std::vector<SearchOptionNames> names = {
      {"exhaustive", {}},
      {"anneal", {}},
      {"random", {}},
      {"genetic", {"population", "tournament", "mutation"}},
      {"forest", {"initial", "trees", "batch"}},
  };
  return names;
}

std::string search_options_of(const std::string& strategy) {
  std::string out;
  for (const auto& s : search_option_names()) {
    if (strategy != s.strategy) continue;
    for (const char* o : s.options) out += (out.empty() ? "" : ", ") + std::string(o);
  }
  return out.empty() ? "none" : out;
}

bool is_search_option(const std::string& strategy, const std::string& option) {
  for (const auto& s : search_option_names()) {
    if (strategy != s.strategy) continue;
    for (const char* o : s.options) {
      if (option == o) return true;
    }
  }
  return false;
}

bool is_search_budget(double value, bool integer) { return value > 0 && (integer ? value >= 1 : value < 1); }

}  // namespace kiln::model
