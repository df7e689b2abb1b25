#include "code_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace kiln::tuner {

namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'; }

class Reader {
 public:
  explicit Reader(std::string_view source) : s_(source) {}

  std::string run() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      const char next = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
      if (c == '/' && next == '/') {
        skip_line_comment();
      } else if (c == '/' && next == '*') {
        skip_block_comment();
      } else if (c == '\n') {
        // A newline ends a preprocessor directive (unless a backslash continues it); in code it is
        // one more space.
        if (directive_) {
          newline_ = true;
          directive_ = !out_.empty() && out_.back() == '\\';
        } else {
          space_ = true;
        }
        line_start_ = !directive_;
        word_.clear();
        ++i_;
      } else if (is_space(c)) {
        space_ = true;
        word_.clear();
        ++i_;
      } else if (c == '"') {
        if (!raw_string()) literal('"');
      } else if (c == '\'' && word_.size() > 0 && std::isdigit(static_cast<unsigned char>(word_[0])) &&
                 is_identifier_char(next)) {
        emit(c);  // a digit separator: 1'000'000
        word_ += c;
        ++i_;
      } else if (c == '\'') {
        literal('\'');
      } else {
        emit(c);
        if (is_identifier_char(c)) {
          word_ += c;
        } else {
          word_.clear();
        }
        ++i_;
      }
    }
    return std::move(out_);
  }

 private:
  // The whitespace (or comments) before `c` become one space, or one newline after a directive
  // and before one.
  void emit(char c) {
    const bool opens_directive = line_start_ && c == '#';
    if (!out_.empty() && (newline_ || space_)) out_ += newline_ || opens_directive ? '\n' : ' ';
    newline_ = space_ = false;
    if (opens_directive) directive_ = true;
    line_start_ = false;
    out_ += c;
  }

  // To the end of the line, which a backslash right before it continues.
  void skip_line_comment() {
    i_ += 2;
    while (i_ < s_.size()) {
      if (s_[i_] == '\n' && s_[i_ - 1] != '\\' && !(s_[i_ - 1] == '\r' && i_ >= 2 && s_[i_ - 2] == '\\')) break;
      ++i_;
    }
    space_ = true;
    word_.clear();
  }

  void skip_block_comment() {
    const std::size_t end = s_.find("*/", i_ + 2);
    i_ = end == std::string_view::npos ? s_.size() : end + 2;
    space_ = true;
    word_.clear();
  }

  // "..." or '...' byte for byte, escapes included; an unterminated one ends with its line.
  void literal(char quote) {
    emit(s_[i_++]);
    while (i_ < s_.size() && s_[i_] != '\n') {
      const char c = s_[i_++];
      out_ += c;
      if (c == '\\' && i_ < s_.size()) {
        out_ += s_[i_++];
      } else if (c == quote) {
        break;
      }
    }
    word_.clear();
  }

  // R"delim( ... )delim" (with a u8, u, U or L prefix or none) byte for byte; false when the
  // quote at i_ does not open one.
  bool raw_string() {
    static constexpr std::array<std::string_view, 5> prefixes{"R", "u8R", "uR", "UR", "LR"};
    if (std::find(prefixes.begin(), prefixes.end(), std::string_view(word_)) == prefixes.end()) return false;
    const std::size_t open = s_.find('(', i_ + 1);
    if (open == std::string_view::npos || open - i_ - 1 > 16) return false;
    const std::string_view delimiter = s_.substr(i_ + 1, open - i_ - 1);
    for (char c : delimiter) {
      if (is_space(c) || c == ')' || c == '\\' || c == '"') return false;
    }
    std::string closing(1, ')');
    closing.append(delimiter);
    closing += '"';
    const std::size_t close = s_.find(closing, open + 1);
    const std::size_t end = close == std::string_view::npos ? s_.size() : close + closing.size();
    emit(s_[i_]);
    out_.append(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end;
    word_.clear();
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string out_;
  std::string word_;  // the identifier or number the output ends in, with nothing after it
  bool space_ = false;
  bool newline_ = false;
  bool line_start_ = true;  // nothing but whitespace and comments since the last newline
  bool directive_ = false;  // in a preprocessor directive's line
};

}  // namespace

std::string code_text(std::string_view source) { return Reader(source).run(); }

bool is_c_family_source(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static constexpr std::array<std::string_view, 13> c_family{".c",   ".cc", ".cpp", ".cxx", ".h",   ".hh",  ".hpp",
                                                             ".hxx", ".cu", ".cuh", ".inl", ".ipp", ".tpp"};
  return std::find(c_family.begin(), c_family.end(), std::string_view(ext)) != c_family.end();
}

}  // namespace kiln::tuner
