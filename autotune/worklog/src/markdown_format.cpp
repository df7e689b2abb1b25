#include "markdown_format.hpp"

#include <charconv>
#include <cmath>

#include "kiln/text.hpp"

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

namespace {

// Worklog text in markdown: every byte escaped as kiln::escape_controls does (so no control
// character or invalid UTF-8 reaches the reader), and `<` as `&lt;` (so no HTML tag is rendered;
// `->` stays readable). `line_break` replaces each newline; `pipe` each '|'.
std::string escaped(std::string_view text, std::string_view line_break, std::string_view pipe) {
  std::string out;
  std::size_t start = 0;
  auto flush = [&](std::size_t end) {
    for (char c : kiln::escape_controls(text.substr(start, end - start))) {
      switch (c) {
        case '<': out += "&lt;"; break;
        case '|': out += pipe; break;
        default: out += c;
      }
    }
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != '\r') continue;
    flush(i);
    if (text[i] == '\n') out += line_break;
    start = i + 1;
  }
  flush(text.size());
  return out;
}

}  // namespace

std::string cell(std::string_view text) { return escaped(text, "<br>", "\\|"); }

std::string inline_text(std::string_view text) { return escaped(text, " ", "|"); }

std::string code(std::string_view text) {
  const std::string safe = kiln::escape_controls(text);
  // A backtick would end the code span early: such text is shown as plain text instead.
  if (safe.find('`') != std::string::npos) return inline_text(text);
  return "`" + safe + "`";
}

}  // namespace kiln::worklog::markdown
