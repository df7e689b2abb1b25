// The Config struct a kernel sees: one `static constexpr` member per parameter plus `kiln_name`.
// The variant sources (generator) and the dispatch headers (tuner) print it with the same
// function, so a member's type is derived in one place: kiln::Choice for identifiers, long long
// when any of the parameter's values needs more than 32 bits, int otherwise.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/model/space_parts.hpp"

namespace kiln::model {

std::string cpp_string(const std::string& s);  // a C++ string literal
std::string integer_literal(std::int64_t v);   // "4096LL"
std::string member_type(const Parameter& param);

// "struct <struct_name> {\n" ... "};\n" with the members of `variant`'s parameter values.
std::string config_struct(const std::string& struct_name, const std::vector<Parameter>& parameters,
                          const Variant& variant);

}  // namespace kiln::model
