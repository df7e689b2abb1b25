#include "kiln/gen/names.hpp"

#include <algorithm>
#include <iterator>
#include <cctype>

namespace kiln::gen {

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

void DeclaredNames::declare(const JsonNode& node, const std::string& name, const std::string& description) {
  auto it = declared_.find(name);
  if (it != declared_.end()) node.fail("'" + name + "' is already declared as " + it->second);
  declared_.emplace(name, description + " (" + node.pointer() + ")");
}

void DeclaredNames::declare_external(const std::string& name, const std::string& description) {
  declared_.emplace(name, description);
}

}  // namespace kiln::gen
