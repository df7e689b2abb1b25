#include "kiln/model/device.hpp"

#include <algorithm>

#include "kiln/model/backend.hpp"
#include "kiln/model/json_reader.hpp"

namespace kiln::model {
namespace {

constexpr std::int64_t kDeviceVersion = 1;

// Device names end up in manifests, reports and file names chosen by other tools.
bool is_device_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

void load_match(const JsonNode& match, Device& device) {
  match.require_object({"name_contains", "compute_capability"}, {});
  if (match.has("name_contains")) {
    for (const JsonNode& name : match["name_contains"].elements()) device.match_names.push_back(name.string());
  }
  if (match.has("compute_capability")) device.match_compute_capability = match["compute_capability"].string();
}

}  // namespace

Device load_device(const std::filesystem::path& file) {
  const JsonFile json = read_json_file(file);
  const JsonNode root = JsonNode::root(json);
  if (!root.json().is_object()) root.fail("expected a device object, got " + describe_json(root.json()));
  for (const char* key : {"kiln_device", "name", "backend", "limits"}) {
    if (!root.has(key)) fail_at(json.label, pointer_append("", key), "required key is missing");
  }
  const JsonNode version = root["kiln_device"];
  if (!version.is_integer() || version.integer() != kDeviceVersion) {
    version.fail("not a Kiln device file of a known version: expected 1, got " + describe_json(version.json()));
  }

  Device device;
  device.file = file;
  const JsonNode name = root["name"];
  device.name = name.string();
  if (!is_device_name(device.name)) name.fail("a device name uses letters, digits, '_', '-' and '.'");
  device.description = root.has("description") ? root["description"].string() : device.name;

  device.backend = std::string(backend_of(root["backend"]).name);

  for (const JsonNode& limit : root["limits"].members()) {
    if (!is_identifier(limit.key())) limit.fail("a limit's name must be an identifier");
    device.limits.emplace_back(limit.key(), limit.integer());
  }
  if (root.has("match")) load_match(root["match"], device);
  if (root.has("rates")) {
    for (const JsonNode& rate : root["rates"].members()) device.rates[rate.key()] = rate.positive_number();
  }
  return device;
}

}  // namespace kiln::model
