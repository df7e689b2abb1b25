// Text from files and worklogs made safe to show: one line, valid UTF-8, no terminal controls.
// Space files, worklogs and records travel between machines, so a message or a listing that
// quotes them must not let their bytes forge lines or send escape sequences to a terminal.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

// The length of the valid UTF-8 sequence that starts `text`, or 0 when it does not start with one
// (a stray continuation byte, an overlong form, a UTF-16 surrogate, beyond U+10FFFF) or when the
// sequence is a C1 control character (U+0080-U+009F: terminal controls too).
inline std::size_t utf8_sequence_length(std::string_view text) {
  if (text.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(text[0]);
  if (b0 < 0x80) return 1;
  std::size_t length = 0;
  unsigned min = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2, min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3, min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  unsigned code = b0 & (0x7fu >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const auto b = static_cast<unsigned char>(text[k]);
    if ((b & 0xc0) != 0x80) return 0;
    code = (code << 6) | (b & 0x3f);
  }
  if (code < min || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff || code <= 0x9f) return 0;
  return length;
}

// `text` as one line of printable UTF-8: a newline, carriage return and tab are written `\n`,
// `\r`, `\t`; other control characters (C0, DEL) `\u00XX`; a byte that is not part of valid
// UTF-8, or of a C1 control, `\xXX`. Everything else is kept as it is.
inline std::string escape_controls(std::string_view text) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (byte >= 0x20 && byte != 0x7f && length > 0) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else {
      out += byte < 0x20 || byte == 0x7f ? "\\u00" : "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    }
    ++i;
  }
  return out;
}

// `text` as one markdown table cell or line: escaped as above, the table separator escaped, and
// no HTML (a record or worklog from another machine must not add markup to a report).
inline std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : escape_controls(text)) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {
      out += "&lt;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kiln
