#include "kiln/model/value.hpp"

namespace kiln::model {

std::string value_text(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

}  // namespace kiln::model
