// The rules for names and texts that reach generated C++ code (struct members, namespaces,
// #include lines, string literals, comments). A space file is checked by them when it is read, and
// so is every file Kiln writes from it and reads back later (a manifest, a tuning record): such a
// file may come from another machine, and nothing in it may reach generated code unchecked.
#pragma once
#include <string>
#include <string_view>

#include "kiln/model/json_reader.hpp"

namespace kiln::model {

// True for the keywords and alternative operator tokens of C++20 (`class`, `int`, `and`...), the
// identifiers with special meaning (`final`, `import`...), and the standard library's object-like
// macros (`NULL`, `errno`...): none of them can name a generated struct member or namespace.
bool is_cpp_keyword(std::string_view name);

// True for identifiers C++ reserves to the implementation: any containing `__`, or starting with
// `_` and a capital letter. (`__` also separates a variant name's kernel from its parameters.)
bool is_reserved_identifier(std::string_view name);

// True when `name` starts with "kiln" in any letter case: Config's `kiln_name` and the KILN_*
// macros are taken.
bool has_reserved_prefix(std::string_view name);

// Rejects (at `at`) a name longer than kMaxIdentifierBytes.
void check_identifier_length(const JsonNode& at, const std::string& name);

// Rejects a declared name (at `at`) that is too long, not an identifier, a C++ keyword or reserved; `what` is the
// kind of name for the message ("parameter", "derived", "dim").
void check_name(const JsonNode& at, const std::string& name, const std::string& what);

// A relative path of plain characters: nothing in it can escape an #include's quotes or climb out
// of the kernel's include directories.
bool is_safe_include(const std::string& path);

// `a::b::C`, optionally with a leading `::`; every part an identifier and not a keyword.
bool is_qualified_name(std::string_view name);

// The string at `node`, which must be one line without control characters (it is written into
// generated comments and messages); `what` names it in the error ("the description").
const std::string& one_line_text(const JsonNode& node, const std::string& what);

}  // namespace kiln::model
