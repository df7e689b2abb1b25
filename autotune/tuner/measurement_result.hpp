// What the tuner stores as a measurement's result (the worklog's measurements.result), written and
// read through the protocol's types (kiln/model/protocol.hpp): a check is the harness's check event
// as it came; a timing is its bench event with what the tuner adds to it. Reading is strict: a
// stored result that does not read is an InputError naming the row and the place.
//
// One fallback, for rows stored before worklog schema version 2: the harness of that time reported
// neither its repetitions nor its run times, which the protocol requires. Such a row is known by
// what it lacks ("samples_s" in a timing, "run_s" in a check) and is used for its columns alone
// (status, median_s): it reads as nothing here, so it pools no repetitions, counts as not
// interleaved, and a failed check's reason is not known.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/model/protocol.hpp"
#include "kiln/worklog/records.hpp"

namespace kiln::tuner {

// Beside the harness's event, what the tuner keeps of a timing's conditions is kept as it was
// stored and not read: the machine's quietness, the device, and the timing it replaced.
struct StoredTiming {
  model::BenchEvent bench;
  // How busy the machine was while it ran (Quietness::to_json); {} when not known.
  nlohmann::ordered_json quietness = nlohmann::ordered_json::object();
  // The device as the variant's process reported it (stored as "threads": the protocol's
  // DeviceInfo, in an older form in rows of before it); {} when it reported none.
  nlohmann::ordered_json device = nlohmann::ordered_json::object();
  // The stored result this timing replaced, as it was stored: a quieter machine's timing replaces
  // a busier one's and keeps it.
  std::optional<nlohmann::ordered_json> superseded;
  std::vector<std::string> interleaved_with;  // the rivals it was timed in turns with, sorted; empty: none
  std::optional<int> interleaved_rounds;
};

nlohmann::ordered_json to_json(const StoredTiming& timing);

// The timing `m` stores, or nothing for a row stored before schema version 2 (above).
std::optional<StoredTiming> stored_timing(const worklog::Measurement& m);

// The check `m` stores, or nothing for a row stored before schema version 2 (above).
std::optional<model::CheckEvent> stored_check(const worklog::Measurement& m);

}  // namespace kiln::tuner
