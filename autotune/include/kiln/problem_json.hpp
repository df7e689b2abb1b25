// A problem as JSON, {"rows": 16384, "dtype": "bf16"}, in both directions, dimension order kept:
// the form plans, manifests, records and the harness's events share.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/error.hpp"
#include "kiln/problem.hpp"

namespace kiln {

inline Problem problem_from_json(const nlohmann::ordered_json& j) {
  if (!j.is_object()) throw Error("a problem must be a JSON object, got " + j.dump());
  Problem p;
  for (const auto& [name, value] : j.items()) {
    if (value.is_number_integer()) {
      p.set(name, value.get<std::int64_t>());
    } else if (value.is_string()) {
      p.set(name, value.get<std::string>());
    } else {
      throw Error("problem dimension '" + name + "' must be an integer or a symbol, got " + value.dump());
    }
  }
  return p;
}

inline nlohmann::ordered_json problem_to_json(const Problem& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, value] : p.dims()) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      j[name] = *i;
    } else {
      j[name] = std::get<std::string>(value);
    }
  }
  return j;
}

}  // namespace kiln
