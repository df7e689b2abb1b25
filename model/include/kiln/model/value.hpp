// The values of a space: what a parameter, a problem dim or a name in an expression takes.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace kiln::model {

// An integer, or a symbol (an identifier such as "bf16"). The same alternatives as
// kiln::Problem::Value, so a problem's dims are values of this type.
using Value = std::variant<std::int64_t, std::string>;

// The integer in decimal, or the symbol as it is.
std::string value_text(const Value& v);

}  // namespace kiln::model
