// Number and text formatting for the markdown reports. Locale-independent (std::to_chars), so the
// same values always give the same bytes.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kiln::worklog::markdown {

// `digits` significant digits, shortest form: 0.001234, 1.5e+09.
std::string significant(double value, int digits = 4);
// `decimals` digits after the point: 12.30.
std::string fixed(double value, int decimals);
// A value with its unit; seconds are scaled to s, ms, µs or ns. Empty optional: "—".
std::string quantity(const std::optional<double>& value, std::string_view unit);
// A signed percentage, one decimal: "+4.2 %", "-38.5 %", "0.0 %". Empty optional: "—".
std::string percent(const std::optional<double>& value);
// Worklog text made safe for one table cell: pipes escaped, line breaks as <br>, control
// characters and bytes that are not UTF-8 escaped (kiln::escape_controls), `<` as `&lt;`.
std::string cell(std::string_view text);
// The same for one list line: line breaks become spaces.
std::string inline_text(std::string_view text);
// Text in a code span (`...`), escaped likewise; plain text when it holds a backtick.
std::string code(std::string_view text);

}  // namespace kiln::worklog::markdown
