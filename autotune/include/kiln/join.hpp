// Lists written as text: names in a message ("cpu, cuda"), the tags of an attempt ("a,b"). One
// helper, so that every list Kiln prints is written the same way.
#pragma once
#include <string>
#include <string_view>

namespace kiln {

// The items in order with `separator` between them: join(names, ", ") is "a, b"; no items give "".
// An item is anything a std::string_view is made from (std::string, std::string_view, a literal).
template <class Items>
std::string join(const Items& items, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    out += std::string_view(item);
    first = false;
  }
  return out;
}

}  // namespace kiln
