// The names a space declares. Parameters, derived names, problem dims and target limits share one
// namespace, and parameter and dim names become C++ members of generated structs, so they must be
// usable there.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/gen/model.hpp"
#include "kiln/model/names.hpp"

namespace kiln::gen {

// The rules themselves are the model's: a manifest and a record are read by them too.
using model::check_identifier_length;
using model::check_name;
using model::has_reserved_prefix;
using model::is_cpp_keyword;
using model::is_qualified_name;
using model::is_reserved_identifier;
using model::is_safe_include;

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
