// The names a space declares. Parameters, derived names, problem dims and target limits share one
// namespace, and parameter and dim names become C++ members of generated structs, so they must be
// usable there.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/gen/model.hpp"

namespace kiln::gen {

// True for the keywords and alternative operator tokens of C++20 (`class`, `int`, `and`...), the
// identifiers with special meaning (`final`, `import`...), and the standard library's object-like
// macros (`NULL`, `errno`...): none of them can name a generated struct member or namespace.
bool is_cpp_keyword(std::string_view name);

// True for identifiers C++ reserves to the implementation: any containing `__`, or starting with
// `_` and a capital letter. (`__` also separates a variant name's kernel from its parameters.)
bool is_reserved_identifier(std::string_view name);

// Rejects (at `at`) a name longer than kMaxIdentifierBytes.
void check_identifier_length(const JsonNode& at, const std::string& name);

// True when `name` starts with "kiln" in any letter case: Config's `kiln_name` and the KILN_*
// macros are taken.
bool has_reserved_prefix(std::string_view name);

// Rejects a declared name (at `at`) that is too long, not an identifier, a C++ keyword or reserved; `what` is the
// kind of name for the message ("parameter", "derived", "dim").
void check_name(const JsonNode& at, const std::string& name, const std::string& what);

// Remembers where each name was declared, and rejects a second declaration.
class DeclaredNames {
 public:
  // `node` is where the new name is declared (its pointer is used in the error);
  // `description` says what it is, e.g. "a parameter" or "a limit of target h100".
  void declare(const JsonNode& node, const std::string& name, const std::string& description);
  void declare_external(const std::string& name, const std::string& description);

 private:
  std::map<std::string, std::string, std::less<>> declared_;  // name -> description with place
};

}  // namespace kiln::gen
