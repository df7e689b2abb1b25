// Writing the protocol's JSON: what the sources that write its objects share.
#pragma once
#include <optional>

#include <nlohmann/json.hpp>

namespace kiln::model::protocol_write {

// An optional field is written only when it holds a value.
template <class T>
void put(nlohmann::ordered_json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

}  // namespace kiln::model::protocol_write
