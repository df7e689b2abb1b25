// Helpers shared by the sources that move values in and out of SQL.
#pragma once
#include <optional>
#include <string>

// The current time as the schema stores it: UTC, ISO 8601 with milliseconds. A macro so that it
// joins the string literals of a statement at compile time.
#define KILN_SQL_NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

namespace kiln::worklog::detail {

// Empty text stands for "not given" in the value structs; SQL then supplies the default.
inline std::optional<std::string> null_if_empty(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return text;
}

}  // namespace kiln::worklog::detail
