#include "measurement_result.hpp"

#include <variant>

#include "kiln/model/json_reader.hpp"

namespace kiln::tuner {
namespace {

using nlohmann::ordered_json;

// Kiln writes these rows itself; a timing keeps the ones it superseded, so it may outgrow an event.
constexpr std::size_t kMaxResultBytes = 16u << 20;

// What the tuner adds to the harness's bench event, in the order it writes them.
constexpr const char* kAdded[] = {"quietness", "threads", "superseded", "interleaved_with", "interleaved_rounds"};

// "the worklog's timing of V on P (context C)": how messages name the row.
std::string row_label(const worklog::Measurement& m) {
  return std::string("the worklog's ") + (m.key.phase == worklog::Phase::bench ? "timing" : "check") + " of " +
         m.key.variant + " on " + m.key.problem_key + " (context " + m.key.context_key + ")";
}

// The harness's event in `file`, read by the protocol; the tuner's own keys are left out.
model::Event event_of(const model::JsonFile& file) {
  model::JsonFile event = file;
  for (const char* key : kAdded) event.root.erase(key);
  return model::event_from_json(model::JsonNode::root(event));
}

void read_added(const model::JsonNode& root, StoredTiming& t) {
  if (root.has("quietness")) {
    root["quietness"].require_object();
    t.quietness = root["quietness"].json();
  }
  if (root.has("threads")) {
    root["threads"].require_object();
    t.device = root["threads"].json();
  }
  if (root.has("superseded")) {
    root["superseded"].require_object();
    t.superseded = root["superseded"].json();
  }
  if (root.has("interleaved_with")) {
    for (const model::JsonNode& rival : root["interleaved_with"].elements()) {
      t.interleaved_with.push_back(rival.string());
    }
  }
  if (root.has("interleaved_rounds")) {
    t.interleaved_rounds = static_cast<int>(root["interleaved_rounds"].positive_integer());
  }
}

// Fails unless `root` is the harness's event of `kind`.
void require_event(const model::JsonNode& root, const char* kind) {
  root.require_object();
  if (!root.has("event")) model::fail_at(root.label(), "/event", "required key is missing");
  const model::JsonNode event = root["event"];
  if (event.json() != kind) {
    event.fail(std::string("expected a ") + kind + " event, got " + model::describe_json(event.json()));
  }
}

}  // namespace

ordered_json to_json(const StoredTiming& t) {
  ordered_json j = model::to_json(model::Event{t.bench});
  j["quietness"] = t.quietness;
  j["threads"] = t.device;
  if (t.superseded) j["superseded"] = *t.superseded;
  if (!t.interleaved_with.empty()) j["interleaved_with"] = t.interleaved_with;
  if (t.interleaved_rounds) j["interleaved_rounds"] = *t.interleaved_rounds;
  return j;
}

std::optional<StoredTiming> stored_timing(const worklog::Measurement& m) {
  const model::JsonFile file = model::parse_json_text(row_label(m), m.result, kMaxResultBytes);
  const model::JsonNode root = model::JsonNode::root(file);
  require_event(root, "bench");
  if (!root.has("samples_s")) return std::nullopt;  // stored before schema version 2
  StoredTiming t;
  t.bench = std::get<model::BenchEvent>(event_of(file));
  read_added(root, t);
  return t;
}

std::optional<model::CheckEvent> stored_check(const worklog::Measurement& m) {
  const model::JsonFile file = model::parse_json_text(row_label(m), m.result, kMaxResultBytes);
  const model::JsonNode root = model::JsonNode::root(file);
  require_event(root, "check");
  if (!root.has("run_s")) return std::nullopt;  // stored before schema version 2
  return std::get<model::CheckEvent>(model::event_from_json(root));
}

}  // namespace kiln::tuner
