// Strict reading of the generator's JSON inputs (space files, device files). Every error is one
// InputError whose message names the file and the place:
//   <file>: <json-pointer>: <what is wrong>
//   <file>:<line>:<column>: malformed JSON: <parser's reason>
#pragma once
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/error.hpp"

namespace kiln::model {

// Limits on every JSON file the generator reads (generator/README.md, "Limits"): its size, and how
// deeply arrays and objects nest (checked on the bytes, before a tree is built).
inline constexpr std::size_t kMaxJsonBytes = 1 << 20;
inline constexpr std::size_t kMaxJsonDepth = 64;
// A manifest lists every variant with its parameters: about 300 bytes each.
inline constexpr std::size_t kMaxManifestBytes = 64u << 20;
// The longest identifier a JSON string may hold where one is expected.
inline constexpr std::size_t kMaxIdentifierBytes = 64;

// The one error type of the generator; what() is the complete message.
class InputError : public kiln::Error {
 public:
  using kiln::Error::Error;
};

// A JSON file read whole. Duplicate keys in an object are an error (a JSON parser would silently
// keep one of them), and so are a file over kMaxJsonBytes, nesting over kMaxJsonDepth and a number
// outside the range of a double.
struct JsonFile {
  std::string label;  // the path as given; every message about this file starts with it
  std::string bytes;
  nlohmann::ordered_json root;
};

// `max_bytes` is larger only for files Kiln writes itself that grow with a space (a manifest).
JsonFile read_json_file(const std::filesystem::path& path, std::size_t max_bytes = kMaxJsonBytes);
// The same checks on bytes already in memory; `label` names them in messages.
JsonFile parse_json_text(std::string label, std::string bytes, std::size_t max_bytes = kMaxJsonBytes);

// "<label>: <what>", or "<label>: <pointer>: <what>" when pointer is not empty, passed through
// kiln::escape_controls: one line of valid UTF-8 whatever the file's name or content.
[[noreturn]] void fail_at(const std::string& label, const std::string& pointer, const std::string& what);

// RFC 6901: `~` becomes `~0` and `/` becomes `~1`.
std::string pointer_append(const std::string& pointer, std::string_view key);
std::string pointer_append(const std::string& pointer, std::size_t index);

// `[A-Za-z_][A-Za-z0-9_]*`
bool is_identifier(std::string_view text);

// A short description of a JSON value for "got ..." in messages: scalars as JSON text
// (long strings shortened), containers as "an array" / "an object".
std::string describe_json(const nlohmann::ordered_json& value);

// One value inside a JsonFile, with its JSON pointer.
class JsonNode {
 public:
  JsonNode(const JsonFile& file, const nlohmann::ordered_json& value, std::string pointer, std::string key = "");
  static JsonNode root(const JsonFile& file) { return JsonNode(file, file.root, ""); }

  const nlohmann::ordered_json& json() const { return *value_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& key() const { return key_; }  // the member name, for object members
  const std::string& label() const { return file_->label; }
  [[noreturn]] void fail(const std::string& what) const;

  // Objects. require_object() rejects a non-object, then the first key not in `known`, then the
  // first key of `required` that is missing.
  void require_object(std::initializer_list<std::string_view> known,
                      std::initializer_list<std::string_view> required) const;
  void require_object() const;  // any keys
  bool has(std::string_view key) const;
  JsonNode operator[](std::string_view key) const;  // the key must exist: else the error names it
  std::vector<JsonNode> members() const;            // in document order
  // Rejects an array or object of more than `limit` entries: "<n> <what>, more than the <limit> allowed".
  void require_at_most(std::size_t limit, const std::string& what) const;

  // Arrays.
  void require_array() const;
  std::vector<JsonNode> elements() const;

  // Scalars; each rejects any other type.
  bool is_integer() const;
  std::int64_t integer() const;
  std::int64_t positive_integer() const;
  double positive_number() const;
  const std::string& string() const;
  const std::string& identifier() const;

 private:
  const JsonFile* file_;
  const nlohmann::ordered_json* value_;
  std::string pointer_;
  std::string key_;
};

}  // namespace kiln::model
