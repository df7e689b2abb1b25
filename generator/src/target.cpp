// Device files: the generator needs the name (recorded in the manifest), the backend (which must
// match the space's) and the integer limits (names visible to derived values and constraints).
#include <algorithm>

#include "kiln/gen/space.hpp"

namespace kiln::gen {
namespace {

// Device names end up in manifests, reports and file names chosen by other tools.
bool is_device_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

}  // namespace

Target load_target(const std::filesystem::path& file) {
  const JsonFile json = read_json_file(file);
  const JsonNode root = JsonNode::root(json);
  if (!root.json().is_object()) root.fail("expected a device object, got " + describe_json(root.json()));
  for (const char* key : {"name", "backend", "limits"}) {
    if (!root.has(key)) fail_at(json.label, pointer_append("", key), "required key is missing");
  }

  Target target;
  target.label = json.label;
  const JsonNode name = root["name"];
  target.name = name.string();
  if (!is_device_name(target.name)) name.fail("a device name uses letters, digits, '_', '-' and '.'");

  const JsonNode backend = root["backend"];
  target.backend = backend.string();
  if (target.backend != "cpu" && target.backend != "cuda") {
    backend.fail("expected \"cpu\" or \"cuda\", got " + describe_json(backend.json()));
  }

  for (const JsonNode& limit : root["limits"].members()) {
    if (!is_identifier(limit.key())) limit.fail("a limit's name must be an identifier");
    target.limits.emplace_back(limit.key(), limit.integer());
  }
  return target;
}

}  // namespace kiln::gen
