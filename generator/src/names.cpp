#include "kiln/gen/names.hpp"

#include <algorithm>
#include <iterator>
#include <cctype>

namespace kiln::gen {

void DeclaredNames::declare(const JsonNode& node, const std::string& name, const std::string& description) {
  auto it = declared_.find(name);
  if (it != declared_.end()) node.fail("'" + name + "' is already declared as " + it->second);
  declared_.emplace(name, description + " (" + node.pointer() + ")");
}

void DeclaredNames::declare_external(const std::string& name, const std::string& description) {
  declared_.emplace(name, description);
}

}  // namespace kiln::gen
