#include "kiln/model/config_struct.hpp"

#include <limits>

namespace kiln::model {
namespace {

std::string member(const Parameter& param, const Value& v) {
  std::string out = "  static constexpr " + member_type(param) + " " + param.name;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return out + " = " + (param.wide() ? integer_literal(*i) : std::to_string(*i)) + ";\n";
  return out + "{" + cpp_string(std::get<std::string>(v)) + "};\n";
}

}  // namespace

std::string cpp_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      // Three octal digits: a control character can neither end the literal's line nor merge
      // with the characters after it.
      const char octal[] = {'\\', static_cast<char>('0' + (byte >> 6)), static_cast<char>('0' + ((byte >> 3) & 7)),
                            static_cast<char>('0' + (byte & 7)), '\0'};
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string integer_literal(std::int64_t v) {
  // The most negative value has no literal of its own in C++.
  if (v == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + "LL";
}

std::string member_type(const Parameter& param) {
  if (param.symbolic()) return "::kiln::Choice";
  return param.wide() ? "long long" : "int";
}

std::string config_struct(const std::string& struct_name, const std::vector<Parameter>& parameters,
                          const Variant& variant) {
  std::string out = "struct " + struct_name + " {\n";
  out += "  static constexpr const char* kiln_name = " + cpp_string(variant.name) + ";\n";
  for (std::size_t k = 0; k < parameters.size(); ++k) out += member(parameters[k], variant.params[k]);
  return out + "};\n";
}

}  // namespace kiln::model
