#include "kiln/model/names.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace kiln::model {

bool is_cpp_keyword(std::string_view name) {
  static constexpr std::string_view kKeywords[] = {
      "alignas",   "alignof",   "and",        "and_eq",       "asm",          "auto",      "bitand",
      "bitor",     "bool",      "break",      "case",         "catch",        "char",      "char8_t",
      "char16_t",  "char32_t",  "class",      "compl",        "concept",      "const",     "consteval",
      "constexpr", "constinit", "const_cast", "continue",     "co_await",     "co_return", "co_yield",
      "decltype",  "default",   "delete",     "do",           "double",       "dynamic_cast",
      "else",      "enum",      "explicit",   "export",       "extern",       "false",     "float",
      "for",       "friend",    "goto",       "if",           "inline",       "int",       "long",
      "mutable",   "namespace", "new",        "noexcept",     "not",          "not_eq",    "nullptr",
      "operator",  "or",        "or_eq",      "private",      "protected",    "public",    "register",
      "reinterpret_cast",       "requires",   "return",       "short",        "signed",    "sizeof",
      "static",    "static_assert",           "static_cast",  "struct",       "switch",    "template",
      "this",      "thread_local",            "throw",        "true",         "try",       "typedef",
      "typeid",    "typename",  "union",      "unsigned",     "using",        "virtual",   "void",
      "volatile",  "wchar_t",   "while",      "xor",          "xor_eq",       "final",     "override",
      "import",    "module",    "reflexpr",   "synchronized", "atomic_cancel", "atomic_commit",
      "atomic_noexcept",        "transaction_safe",           "transaction_safe_dynamic",
      // Object-like macros of the C and C++ standard libraries: a member named after one would be
      // replaced by the preprocessor in any generated file that includes the library.
      "NULL",      "errno",     "EOF",        "stdin",        "stdout",       "stderr",    "assert",
      "offsetof",  "CHAR_BIT",  "INT_MAX",    "INT_MIN",      "SIZE_MAX",     "UINT_MAX",  "LLONG_MAX",
      "LLONG_MIN", "RAND_MAX",  "EXIT_SUCCESS",               "EXIT_FAILURE", "BUFSIZ",    "FILENAME_MAX",
      "INFINITY",  "NAN",       "HUGE_VAL",   "FLT_MAX",      "DBL_MAX", "unix",     "linux"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

bool is_reserved_identifier(std::string_view name) {
  if (name.size() >= 2 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))) return true;
  return name.find("__") != std::string_view::npos;
}

bool has_reserved_prefix(std::string_view name) {
  constexpr std::string_view kPrefix = "kiln";
  if (name.size() < kPrefix.size()) return false;
  for (std::size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) != kPrefix[i]) return false;
  }
  return true;
}

void check_identifier_length(const JsonNode& at, const std::string& name) {
  if (name.size() > kMaxIdentifierBytes) {
    at.fail("a name of " + std::to_string(name.size()) + " bytes, longer than the " + std::to_string(kMaxIdentifierBytes) +
            " allowed");
  }
}

void check_name(const JsonNode& at, const std::string& name, const std::string& what) {
  check_identifier_length(at, name);
  if (!is_identifier(name)) at.fail("a " + what + " name must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  if (is_cpp_keyword(name)) at.fail("'" + name + "' is a C++ keyword or standard macro and cannot be a " + what + " name");
  if (is_reserved_identifier(name)) {
    at.fail("'" + name + "' is reserved in C++ (a name containing '__' or starting with '_' and a capital letter) "
            "and cannot be a " + what + " name");
  }
}

bool is_safe_include(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find("..") != std::string::npos) return false;
  return std::all_of(path.begin(), path.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '/' || c == '-';
  });
}

bool is_qualified_name(std::string_view name) {
  if (name.substr(0, 2) == "::") name.remove_prefix(2);
  while (true) {
    const std::size_t sep = name.find("::");
    const std::string_view part = name.substr(0, sep);
    if (!is_identifier(part) || is_cpp_keyword(part)) return false;
    if (sep == std::string_view::npos) return true;
    name.remove_prefix(sep + 2);
  }
}

const std::string& one_line_text(const JsonNode& node, const std::string& what) {
  const std::string& text = node.string();
  if (std::any_of(text.begin(), text.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x20 || byte == 0x7f;
      })) {
    node.fail(what + " must be one line without control characters");
  }
  return text;
}

}  // namespace kiln::model
