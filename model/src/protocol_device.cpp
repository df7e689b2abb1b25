// What the probes print about the device (autotune/harness/probe_*), what a variant process says
// about its device when it starts, and what `<variant> info` prints.
#include "kiln/model/backend.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/model/protocol.hpp"
#include "kiln/model/protocol_read.hpp"
#include "protocol_write.hpp"

namespace kiln::model {
namespace {

using nlohmann::ordered_json;
namespace read = protocol_read;

using protocol_write::put;

}  // namespace

ordered_json to_json(const DeviceInfo& d) {
  ordered_json j = {{"backend", d.backend}, {"name", d.name}};
  put(j, "compute_capability", d.compute_capability);
  put(j, "driver", d.driver);
  put(j, "cuda_driver_api", d.cuda_driver_api);
  put(j, "cuda_runtime", d.cuda_runtime);
  put(j, "sm_count", d.sm_count);
  put(j, "threads", d.threads);
  put(j, "cache_bytes", d.cache_bytes);
  put(j, "max_smem_per_block", d.max_smem_per_block);
  put(j, "memory_bytes", d.memory_bytes);
  put(j, "cpus", d.cpus);
  put(j, "proc_bind", d.proc_bind);
  put(j, "places", d.places);
  put(j, "isa", d.isa);
  if (!d.measured.empty()) {
    ordered_json measured = ordered_json::object();
    for (const auto& [rate, value] : d.measured) measured[rate] = value;
    j["measured"] = measured;
  }
  return j;
}

DeviceInfo device_info_from_json(const JsonNode& node) {
  node.require_object({"backend", "name", "compute_capability", "driver", "cuda_driver_api", "cuda_runtime", "sm_count",
                       "threads", "cache_bytes", "max_smem_per_block", "memory_bytes", "cpus", "proc_bind", "places",
                       "isa", "measured"},
                      {"backend", "name"});
  DeviceInfo d;
  d.backend = std::string(backend_of(node["backend"]).name);
  d.name = node["name"].string();
  auto text = [](const JsonNode& n) { return n.string(); };
  auto number = [](const JsonNode& n) { return read::non_negative_integer(n); };
  d.compute_capability = read::optional(node, "compute_capability", text);
  d.driver = read::optional(node, "driver", text);
  d.cuda_driver_api = read::optional(node, "cuda_driver_api", text);
  d.cuda_runtime = read::optional(node, "cuda_runtime", text);
  d.sm_count = read::optional(node, "sm_count", number);
  d.threads = read::optional(node, "threads", number);
  d.cache_bytes = read::optional(node, "cache_bytes", number);
  d.max_smem_per_block = read::optional(node, "max_smem_per_block", number);
  d.memory_bytes = read::optional(node, "memory_bytes", number);
  d.cpus = read::optional(node, "cpus", read::integers);
  d.proc_bind = read::optional(node, "proc_bind", text);
  d.places = read::optional(node, "places", [](const JsonNode& n) { return n.integer(); });
  d.isa = read::optional(node, "isa", text);
  if (node.has("measured")) {
    for (const JsonNode& rate : node["measured"].members()) {
      if (!is_identifier(rate.key())) rate.fail("a rate's name must be an identifier");
      d.measured.emplace_back(rate.key(), read::non_negative(rate));
    }
  }
  return d;
}

DeviceInfo parse_device_info(const std::string& text, const std::string& label) {
  const JsonFile json = parse_json_text(label, text);
  return device_info_from_json(JsonNode::root(json));
}

ordered_json to_json(const VariantInfo& info) {
  return {{"kernel", info.kernel}, {"variant", info.variant}, {"backend", info.backend}, {"params", info.params}};
}

VariantInfo variant_info_from_json(const JsonNode& node) {
  node.require_object({"kernel", "variant", "backend", "params"}, {"kernel", "variant", "backend", "params"});
  VariantInfo info;
  info.kernel = node["kernel"].identifier();
  info.variant = node["variant"].identifier();
  info.backend = std::string(backend_of(node["backend"]).name);
  node["params"].require_object();
  info.params = node["params"].json();
  return info;
}

}  // namespace kiln::model
