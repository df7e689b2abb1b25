#include "markdown_format.hpp"

#include <charconv>
#include <cmath>

namespace kiln::worklog::markdown {

std::string significant(double value, int digits) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value,
                                 std::chars_format::general, digits);
  return std::string(buffer, end.ptr);
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  const auto end =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  return std::string(buffer, end.ptr);
}

std::string quantity(const std::optional<double>& value, std::string_view unit) {
  if (!value) return "—";
  if (unit == "s") {
    const double magnitude = std::fabs(*value);
    if (magnitude >= 1.0 || magnitude == 0.0) return significant(*value) + " s";
    if (magnitude >= 1e-3) return significant(*value * 1e3) + " ms";
    if (magnitude >= 1e-6) return significant(*value * 1e6) + " µs";
    return significant(*value * 1e9) + " ns";
  }
  std::string out = significant(*value);
  if (!unit.empty()) {
    out += ' ';
    out += unit;
  }
  return out;
}

std::string percent(const std::optional<double>& value) {
  if (!value) return "—";
  std::string digits = fixed(std::fabs(*value), 1);
  if (digits == "0.0") return "0.0 %";  // no "-0.0" for a change too small to show
  return (*value < 0 ? "-" : "+") + digits + " %";
}

std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += "<br>";
    } else if (c != '\r') {
      out += c;
    }
  }
  return out;
}

std::string inline_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += ' ';
    } else if (c != '\r') {
      out += c;
    }
  }
  return out;
}

}  // namespace kiln::worklog::markdown
