// The events a variant process prints, one JSON object a line (autotune/harness/variant_main.cpp),
// and the tuner reads (autotune/tuner/evaluate.cpp and the commands that run variants).
#include "kiln/model/json_reader.hpp"
#include "kiln/problem_json.hpp"
#include "kiln/model/protocol.hpp"
#include "kiln/model/protocol_read.hpp"
#include "protocol_write.hpp"

namespace kiln::model {
namespace {

using nlohmann::ordered_json;
namespace read = protocol_read;

// One event is one line; a bench event's samples and a launch list are its largest parts.
constexpr std::size_t kMaxEventBytes = 4u << 20;

ordered_json number_or_null(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

std::optional<double> read_number_or_null(const JsonNode& node) {
  if (node.json().is_null()) return std::nullopt;
  return read::non_negative(node);
}

ordered_json dims_json(const std::array<std::int64_t, 3>& d) { return ordered_json::array({d[0], d[1], d[2]}); }

std::array<std::int64_t, 3> read_dims(const JsonNode& node) {
  const std::vector<JsonNode> e = node.elements();
  if (e.size() != 3) node.fail("expected 3 numbers [x, y, z], got " + std::to_string(e.size()));
  return {read::non_negative_integer(e[0]), read::non_negative_integer(e[1]), read::non_negative_integer(e[2])};
}

using protocol_write::put;

ordered_json to_json(const OutputCheck& o) {
  return {{"output", o.output},
          {"dtype", o.dtype},
          {"elements", o.elements},
          {"compared", o.compared},
          {"unwritten", o.unwritten},
          {"non_finite", o.non_finite},
          {"rel_l2", number_or_null(o.rel_l2)},
          {"max_abs_err", number_or_null(o.max_abs_err)},
          {"tolerance", o.tolerance},
          {"passed", o.passed}};
}

OutputCheck output_check_from_json(const JsonNode& node) {
  node.require_object({"output", "dtype", "elements", "compared", "unwritten", "non_finite", "rel_l2", "max_abs_err",
                       "tolerance", "passed"},
                      {"output", "dtype", "elements", "compared", "unwritten", "non_finite", "rel_l2", "max_abs_err",
                       "tolerance", "passed"});
  OutputCheck o;
  o.output = node["output"].string();
  o.dtype = node["dtype"].string();
  o.elements = read::count(node["elements"]);
  o.compared = read::count(node["compared"]);
  o.unwritten = read::count(node["unwritten"]);
  o.non_finite = read::count(node["non_finite"]);
  o.rel_l2 = read_number_or_null(node["rel_l2"]);
  o.max_abs_err = read_number_or_null(node["max_abs_err"]);
  o.tolerance = node["tolerance"].positive_number();
  o.passed = read::boolean(node["passed"]);
  return o;
}

ordered_json to_json(const StartEvent& e) {
  return {{"event", "start"}, {"kernel", e.kernel}, {"variant", e.variant}, {"device", to_json(e.device)}};
}

ordered_json to_json(const ProgressEvent& e) {
  return {{"event", "progress"}, {"stage", e.stage}, {"index", e.index}, {"step", e.step}};
}

ordered_json to_json(const CheckEvent& e) {
  ordered_json outputs = ordered_json::array();
  for (const auto& o : e.outputs) outputs.push_back(to_json(o));
  ordered_json j = {{"event", "check"},
                    {"index", e.index},
                    {"problem", problem_to_json(e.problem)},
                    {"key", e.problem.key()},
                    {"seed", e.seed},
                    {"passed", e.passed},
                    {"run_s", e.run_s},
                    {"reference_s", e.reference_s},
                    {"outputs", outputs}};
  put(j, "reason", e.reason);
  return j;
}

ordered_json to_json(const BenchEvent& e) {
  ordered_json j = {{"event", "bench"},
                    {"index", e.index},
                    {"problem", problem_to_json(e.problem)},
                    {"key", e.problem.key()},
                    {"median_s", e.median_s},
                    {"q1_s", e.q1_s},
                    {"q3_s", e.q3_s},
                    {"samples_s", e.samples_s},
                    {"mean_s", e.mean_s},
                    {"min_s", e.min_s},
                    {"stddev_s", e.stddev_s},
                    {"repetitions", e.repetitions},
                    {"iterations", e.iterations},
                    {"batch", e.batch},
                    {"rotation", e.rotation},
                    {"method", e.method}};
  if (e.launches) j["launches"] = to_json(*e.launches);
  put(j, "stopped_above_s", e.stopped_above_s);
  return j;
}

ordered_json to_json(const ProfiledEvent& e) {
  ordered_json j = {
      {"event", "profiled"}, {"index", e.index}, {"problem", problem_to_json(e.problem)}, {"key", e.problem.key()}};
  if (e.launches) j["launches"] = to_json(*e.launches);
  return j;
}

ordered_json to_json(const ErrorEvent& e) {
  ordered_json j = {{"event", "error"}, {"kind", to_string(e.kind)}};
  put(j, "stage", e.stage);
  put(j, "index", e.index);
  j["message"] = e.message;
  return j;
}

ordered_json to_json(const DoneEvent&) { return {{"event", "done"}}; }

StartEvent start_from_json(const JsonNode& node) {
  node.require_object({"event", "kernel", "variant", "device"}, {"kernel", "variant", "device"});
  return {node["kernel"].string(), node["variant"].string(), device_info_from_json(node["device"])};
}

ProgressEvent progress_from_json(const JsonNode& node) {
  node.require_object({"event", "stage", "index", "step"}, {"stage", "index", "step"});
  return {node["stage"].string(), read::count(node["index"]), node["step"].string()};
}

CheckEvent check_from_json(const JsonNode& node) {
  node.require_object({"event", "index", "problem", "key", "seed", "passed", "run_s", "reference_s", "outputs", "reason"},
                      {"index", "problem", "key", "seed", "passed", "run_s", "reference_s", "outputs"});
  CheckEvent e;
  e.index = read::count(node["index"]);
  e.problem = read::problem(node["problem"]);
  read::require_key_of(node["key"], e.problem);
  e.seed = read::count(node["seed"]);
  e.passed = read::boolean(node["passed"]);
  e.run_s = read::non_negative(node["run_s"]);
  e.reference_s = read::non_negative(node["reference_s"]);
  for (const JsonNode& o : node["outputs"].elements()) e.outputs.push_back(output_check_from_json(o));
  e.reason = read::optional(node, "reason", [](const JsonNode& n) { return n.string(); });
  if (!e.passed && !e.reason) node.fail("a failed check without a reason");
  return e;
}

BenchEvent bench_from_json(const JsonNode& node) {
  node.require_object({"event", "index", "problem", "key", "median_s", "q1_s", "q3_s", "samples_s", "mean_s", "min_s",
                       "stddev_s", "repetitions", "iterations", "batch", "rotation", "method", "launches", "stopped_above_s"},
                      {"index", "problem", "key", "median_s", "q1_s", "q3_s", "samples_s", "mean_s", "min_s", "stddev_s",
                       "repetitions", "iterations", "batch", "rotation", "method"});
  BenchEvent e;
  e.index = read::count(node["index"]);
  e.problem = read::problem(node["problem"]);
  read::require_key_of(node["key"], e.problem);
  e.median_s = node["median_s"].positive_number();
  e.q1_s = read::non_negative(node["q1_s"]);
  e.q3_s = read::non_negative(node["q3_s"]);
  if (e.q3_s < e.q1_s) node["q3_s"].fail("the third quartile is below the first");
  e.samples_s = read::non_negative_numbers(node["samples_s"]);
  e.mean_s = read::non_negative(node["mean_s"]);
  e.min_s = read::non_negative(node["min_s"]);
  e.stddev_s = read::non_negative(node["stddev_s"]);
  e.repetitions = read::count(node["repetitions"]);
  e.iterations = read::count(node["iterations"]);
  e.batch = read::count(node["batch"]);
  e.rotation = read::count(node["rotation"]);
  e.method = node["method"].string();
  e.launches = read::optional(node, "launches", launch_shapes_from_json);
  e.stopped_above_s = read::optional(node, "stopped_above_s", [](const JsonNode& n) { return n.positive_number(); });
  return e;
}

ProfiledEvent profiled_from_json(const JsonNode& node) {
  node.require_object({"event", "index", "problem", "key", "launches"}, {"index", "problem", "key"});
  ProfiledEvent e;
  e.index = read::count(node["index"]);
  e.problem = read::problem(node["problem"]);
  read::require_key_of(node["key"], e.problem);
  e.launches = read::optional(node, "launches", launch_shapes_from_json);
  return e;
}

ErrorEvent error_from_json(const JsonNode& node) {
  node.require_object({"event", "kind", "stage", "index", "message"}, {"kind", "message"});
  ErrorEvent e;
  const std::string kind = node["kind"].string();  // a copy: the node is a temporary
  if (kind == "compile") {
    e.kind = HarnessFailure::compile;
  } else if (kind == "runtime") {
    e.kind = HarnessFailure::runtime;
  } else if (kind == "device") {
    e.kind = HarnessFailure::device;
  } else {
    node["kind"].fail("expected \"compile\", \"runtime\" or \"device\", got \"" + kind + "\"");
  }
  e.stage = read::optional(node, "stage", [](const JsonNode& n) { return n.string(); });
  e.index = read::optional(node, "index", read::count);
  e.message = node["message"].string();
  return e;
}

}  // namespace

const char* to_string(HarnessFailure kind) {
  switch (kind) {
    case HarnessFailure::compile: return "compile";
    case HarnessFailure::runtime: return "runtime";
    case HarnessFailure::device: return "device";
  }
  return "runtime";
}

ordered_json to_json(const LaunchShape& s) {
  ordered_json j = {{"kernel", s.kernel},
                    {"grid", dims_json(s.grid)},
                    {"block", dims_json(s.block)},
                    {"ctas", s.ctas},
                    {"threads_per_cta", s.threads_per_cta},
                    {"dynamic_shared_bytes", s.dynamic_shared_bytes}};
  put(j, "static_shared_bytes", s.static_shared_bytes);
  put(j, "registers", s.registers);
  put(j, "local_bytes", s.local_bytes);
  put(j, "ctas_per_sm", s.ctas_per_sm);
  return j;
}

LaunchShape launch_shape_from_json(const JsonNode& node) {
  node.require_object({"kernel", "grid", "block", "ctas", "threads_per_cta", "dynamic_shared_bytes",
                       "static_shared_bytes", "registers", "local_bytes", "ctas_per_sm"},
                      {"kernel", "grid", "block", "ctas", "threads_per_cta", "dynamic_shared_bytes"});
  LaunchShape s;
  s.kernel = node["kernel"].string();
  s.grid = read_dims(node["grid"]);
  s.block = read_dims(node["block"]);
  s.ctas = read::non_negative_integer(node["ctas"]);
  s.threads_per_cta = read::non_negative_integer(node["threads_per_cta"]);
  s.dynamic_shared_bytes = read::non_negative_integer(node["dynamic_shared_bytes"]);
  s.static_shared_bytes = read::optional(node, "static_shared_bytes", read::non_negative_integer);
  s.registers = read::optional(node, "registers", read::non_negative_integer);
  s.local_bytes = read::optional(node, "local_bytes", read::non_negative_integer);
  s.ctas_per_sm = read::optional(node, "ctas_per_sm", read::non_negative_integer);
  return s;
}

ordered_json to_json(const std::vector<LaunchShape>& shapes) {
  ordered_json out = ordered_json::array();
  for (const auto& s : shapes) out.push_back(to_json(s));
  return out;
}

std::vector<LaunchShape> launch_shapes_from_json(const JsonNode& node) {
  std::vector<LaunchShape> out;
  for (const JsonNode& s : node.elements()) out.push_back(launch_shape_from_json(s));
  return out;
}

ordered_json to_json(const Event& event) {
  return std::visit([](const auto& e) { return to_json(e); }, event);
}

Event event_from_json(const JsonNode& node) {
  node.require_object();
  if (!node.has("event")) fail_at(node.label(), pointer_append(node.pointer(), "event"), "required key is missing");
  const std::string kind = node["event"].string();  // a copy: the node is a temporary
  if (kind == "start") return start_from_json(node);
  if (kind == "progress") return progress_from_json(node);
  if (kind == "check") return check_from_json(node);
  if (kind == "bench") return bench_from_json(node);
  if (kind == "profiled") return profiled_from_json(node);
  if (kind == "error") return error_from_json(node);
  if (kind == "done") {
    node.require_object({"event"}, {});
    return DoneEvent{};
  }
  node["event"].fail("unknown event \"" + kind +
                     "\" (known events: start, progress, check, bench, profiled, error, done)");
}

Event parse_event(const std::string& line, const std::string& label) {
  const JsonFile json = parse_json_text(label, line, kMaxEventBytes);
  return event_from_json(JsonNode::root(json));
}

}  // namespace kiln::model
