#include "kiln/model/space_parts.hpp"

#include <algorithm>
#include <limits>

namespace kiln::model {

bool Parameter::symbolic() const { return !values.empty() && std::holds_alternative<std::string>(values.front()); }

bool Parameter::wide() const {
  return std::any_of(values.begin(), values.end(), [](const Value& v) {
    const auto* i = std::get_if<std::int64_t>(&v);
    return i != nullptr &&
           (*i < std::numeric_limits<std::int32_t>::min() || *i > std::numeric_limits<std::int32_t>::max());
  });
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

bool is_search_budget(double value, bool integer) { return value > 0 && (integer ? value >= 1 : value < 1); }

}  // namespace kiln::model
