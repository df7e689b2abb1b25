#include "kiln/model/json_reader.hpp"

#include "kiln/join.hpp"
#include "kiln/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

namespace kiln::model {
namespace {

using ordered_json = nlohmann::ordered_json;

// Reads little more than kMaxJsonBytes (what is over tells a larger file): /dev/zero, a FIFO or a huge
// file costs a bounded read, never unbounded memory. Opening does not wait for a FIFO's writer.
std::string read_bytes(const std::filesystem::path& path, const std::string& label, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail_at(label, "", std::string("cannot read the file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) fail_at(label, "", std::string("cannot read the file: ") + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) fail_at(label, "", "cannot read the file: it is a directory");
  // Blocking reads again, so that a pipe whose writer is slow is read to its end.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char chunk[65536];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_at(label, "", std::string("cannot read the file: ") + std::strerror(errno));
    }
    text.append(chunk, static_cast<std::size_t>(n));
  }
  return text;  // parse_json_text refuses it when it is over the limit
}

// nlohmann reports how many bytes it had read when it found the error; the offending byte is the
// last of them.
std::pair<std::size_t, std::size_t> line_and_column(const std::string& bytes, std::size_t bytes_read) {
  const std::size_t index = std::min(bytes_read == 0 ? 0 : bytes_read - 1, bytes.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < index; ++i) {
    if (bytes[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, index - line_start + 1};
}

// nlohmann's message starts "[json.exception.parse_error.101] parse error at line 1, column 5: "
// and the place is already in our prefix; keep the reason.
std::string parser_reason(const std::string& what) {
  const std::size_t column = what.find("column ");
  if (column != std::string::npos) {
    const std::size_t colon = what.find(": ", column);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const std::size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// The offset of the first bracket that opens more than kMaxJsonDepth nested containers, or npos.
// A byte scan, before any parser builds (and later destroys, recursively) a tree that deep.
std::size_t too_deep_at(const std::string& bytes) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

// A SAX pass that finds the first syntax error (with the parser's position: numbers out of range
// such as 1e400 included) and the first key repeated within one object.
class DuplicateKeyFinder : public nlohmann::json_sax<ordered_json> {
 public:
  std::string duplicate_pointer;

  bool null() override { return element(); }
  bool boolean(bool) override { return element(); }
  bool number_integer(number_integer_t) override { return element(); }
  bool number_unsigned(number_unsigned_t) override { return element(); }
  bool number_float(number_float_t, const string_t&) override { return element(); }
  bool string(string_t&) override { return element(); }
  bool binary(binary_t&) override { return element(); }
  bool start_object(std::size_t) override {
    element();
    frames_.push_back(Frame{});
    return true;
  }
  bool key(string_t& key) override {
    Frame& frame = frames_.back();
    frame.segment = key;
    if (!frame.keys.insert(key).second) {
      duplicate_pointer = pointer();
      return false;
    }
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    element();
    frames_.push_back(Frame{true, 0, {}, {}});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error_position = position;
    error_reason = parser_reason(e.what());
    return false;
  }

  std::size_t error_position = 0;
  std::string error_reason;  // empty when the text is valid JSON

 private:
  struct Frame {
    bool is_array = false;
    std::size_t next_index = 0;
    std::string segment;  // current key, or index of the current element
    std::set<std::string> keys;
  };

  // Every value starts here; inside an array it is the next element.
  bool element() {
    if (!frames_.empty() && frames_.back().is_array) {
      frames_.back().segment = std::to_string(frames_.back().next_index++);
    }
    return true;
  }

  std::string pointer() const {
    std::string out;
    for (const Frame& frame : frames_) out = pointer_append(out, frame.segment);
    return out;
  }

  std::vector<Frame> frames_;
};

const char* type_name(const ordered_json& value) {
  switch (value.type()) {
    case ordered_json::value_t::object: return "an object";
    case ordered_json::value_t::array: return "an array";
    case ordered_json::value_t::string: return "a string";
    case ordered_json::value_t::boolean: return "a boolean";
    case ordered_json::value_t::null: return "null";
    default: return "a number";
  }
}

}  // namespace

JsonFile read_json_file(const std::filesystem::path& path, std::size_t max_bytes) {
  const std::string label = path.string();
  return parse_json_text(label, read_bytes(path, label, max_bytes), max_bytes);
}

JsonFile parse_json_text(std::string label, std::string bytes, std::size_t max_bytes) {
  JsonFile file;
  file.label = std::move(label);
  file.bytes = std::move(bytes);
  if (file.bytes.size() > max_bytes) {
    fail_at(file.label, "", "the file is larger than " + std::to_string(max_bytes) + " bytes, the most Kiln reads");
  }
  auto fail_at_byte = [&](std::size_t bytes_read, const std::string& what) {
    const auto [line, column] = line_and_column(file.bytes, bytes_read);
    fail_at(file.label + ":" + std::to_string(line) + ":" + std::to_string(column), "", what);
  };
  if (const std::size_t at = too_deep_at(file.bytes); at != std::string::npos) {
    fail_at_byte(at + 1, "JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  DuplicateKeyFinder finder;
  ordered_json::sax_parse(file.bytes, &finder);
  if (!finder.error_reason.empty()) fail_at_byte(finder.error_position, "malformed JSON: " + finder.error_reason);
  if (!finder.duplicate_pointer.empty()) fail_at(file.label, finder.duplicate_pointer, "duplicate key");
  file.root = ordered_json::parse(file.bytes);
  return file;
}

void fail_at(const std::string& label, const std::string& pointer, const std::string& what) {
  if (pointer.empty()) throw InputError(escape_controls(label + ": " + what));
  throw InputError(escape_controls(label + ": " + pointer + ": " + what));
}

std::string pointer_append(const std::string& pointer, std::string_view key) {
  std::string out = pointer + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string pointer_append(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

bool is_identifier(std::string_view text) {
  if (text.empty()) return false;
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!letter(text[0])) return false;
  return std::all_of(text.begin(), text.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

std::string describe_json(const ordered_json& value) {
  if (value.is_object() || value.is_array()) return type_name(value);
  constexpr std::size_t kLongest = 80;
  std::string text = value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  if (text.size() > kLongest) text = text.substr(0, kLongest) + "...";
  return text;
}

JsonNode::JsonNode(const JsonFile& file, const ordered_json& value, std::string pointer, std::string key)
    : file_(&file), value_(&value), pointer_(std::move(pointer)), key_(std::move(key)) {}

void JsonNode::fail(const std::string& what) const { fail_at(file_->label, pointer_, what); }

void JsonNode::require_object() const {
  if (!value_->is_object()) fail(std::string("expected an object, got ") + describe_json(*value_));
}

void JsonNode::require_object(std::initializer_list<std::string_view> known,
                              std::initializer_list<std::string_view> required) const {
  require_object();
  for (const auto& [key, value] : value_->items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail_at(file_->label, pointer_append(pointer_, key), "unknown key (known keys: " + join(known, ", ") + ")");
    }
  }
  for (std::string_view key : required) {
    if (!has(key)) fail_at(file_->label, pointer_append(pointer_, key), "required key is missing");
  }
}

bool JsonNode::has(std::string_view key) const { return value_->is_object() && value_->contains(key); }

JsonNode JsonNode::operator[](std::string_view key) const {
  // Readers that checked the object first never fail here; those that read as they go get the
  // same message as require_object's.
  if (!value_->is_object()) fail(std::string("expected an object, got ") + describe_json(*value_));
  const auto it = value_->find(std::string(key));
  if (it == value_->end()) fail_at(file_->label, pointer_append(pointer_, key), "required key is missing");
  return JsonNode(*file_, *it, pointer_append(pointer_, key), std::string(key));
}

void JsonNode::require_at_most(std::size_t limit, const std::string& what) const {
  if ((value_->is_object() || value_->is_array()) && value_->size() > limit) {
    fail(std::to_string(value_->size()) + " " + what + ", more than the " + std::to_string(limit) + " allowed");
  }
}

std::vector<JsonNode> JsonNode::members() const {
  require_object();
  std::vector<JsonNode> out;
  for (const auto& [key, value] : value_->items()) out.emplace_back(*file_, value, pointer_append(pointer_, key), key);
  return out;
}

void JsonNode::require_array() const {
  if (!value_->is_array()) fail(std::string("expected an array, got ") + describe_json(*value_));
}

std::vector<JsonNode> JsonNode::elements() const {
  require_array();
  std::vector<JsonNode> out;
  for (std::size_t i = 0; i < value_->size(); ++i) out.emplace_back(*file_, (*value_)[i], pointer_append(pointer_, i));
  return out;
}

bool JsonNode::is_integer() const {
  if (value_->is_number_unsigned()) {
    return value_->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  }
  return value_->is_number_integer();
}

std::int64_t JsonNode::integer() const {
  if (value_->is_number_unsigned() && !is_integer()) fail("integer does not fit in 64 bits");
  if (!is_integer()) fail("expected an integer, got " + describe_json(*value_));
  return value_->get<std::int64_t>();
}

std::int64_t JsonNode::positive_integer() const {
  if (!is_integer()) fail("expected a positive integer, got " + describe_json(*value_));
  const std::int64_t v = integer();
  if (v <= 0) fail("expected a positive integer, got " + std::to_string(v));
  return v;
}

double JsonNode::positive_number() const {
  if (!value_->is_number()) fail("expected a positive number, got " + describe_json(*value_));
  const double v = value_->get<double>();
  if (!(v > 0) || !std::isfinite(v)) fail("expected a positive number, got " + describe_json(*value_));
  return v;
}

const std::string& JsonNode::string() const {
  if (!value_->is_string()) fail("expected a string, got " + describe_json(*value_));
  return value_->get_ref<const std::string&>();
}

const std::string& JsonNode::identifier() const {
  if (value_->is_string() && value_->get_ref<const std::string&>().size() > kMaxIdentifierBytes) {
    fail("a name of " + std::to_string(value_->get_ref<const std::string&>().size()) +
         " bytes, longer than the " + std::to_string(kMaxIdentifierBytes) + " allowed");
  }
  if (!value_->is_string() || !is_identifier(value_->get_ref<const std::string&>())) {
    fail("expected an identifier ([A-Za-z_][A-Za-z0-9_]*), got " + describe_json(*value_));
  }
  return value_->get_ref<const std::string&>();
}

}  // namespace kiln::model
