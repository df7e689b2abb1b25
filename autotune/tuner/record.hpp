// The tuning record: the winners per bucket and their measurements, as deterministic JSON meant
// to be committed (presets/records/<device>/<kernel>.record.json). A build without a GPU, or with
// tuning off, makes its dispatch header from the record, byte for byte as the tuning run did.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/problem.hpp"

namespace kiln::tuner {

struct RecordedProblem {
  Problem problem;
  double time_s = 0;
  double floor_s = 0;   // 0 when the space declares no work the device has a rate for
  std::string bound;    // resource that sets the floor
};

struct RecordedContender {
  std::string variant;
  double time_s = 0;  // geometric mean over the bucket's problems
  // Relative noise (IQR / median, the worst over the problems) and whether it ties with the
  // winner; absent when the timings carry no spread (records and worklogs made before).
  std::optional<double> noise;
  std::optional<bool> within_noise;
};

struct RecordedBucket {
  std::string name;
  std::optional<std::string> winner;  // nothing: no variant passed on this bucket's problems
  std::string reason;                 // why there is no winner
  double time_s = 0;                  // winner's geometric mean over the bucket's problems
  double floor_s = 0;                 // geometric mean of the floors
  std::vector<RecordedProblem> problems;
  std::vector<RecordedContender> contenders;  // the next best variants, best first
  std::optional<double> noise;                // the winner's relative noise, when known
  // Why the winner is not simply the fastest median: the space's default kept because the
  // fastest beat it by less than the noise. Empty otherwise.
  std::string choice;
};

struct Record {
  std::string kernel;
  std::string backend;
  std::string space_hash;
  std::string context_key;
  std::string preset;  // device file name ("h200", "cpu")
  std::string device_name;
  std::string compute_capability;
  std::string driver;
  std::string cuda_runtime;
  std::string date;  // UTC day of the newest measurement the record uses
  std::string strategy;
  std::map<std::string, double> rates;
  nlohmann::ordered_json counts;  // feasible, measured, failed, invalid...
  std::vector<RecordedBucket> buckets;
};

nlohmann::ordered_json record_to_json(const Record& r);
Record record_from_json(const nlohmann::ordered_json& j, const std::string& origin);
Record load_record(const std::filesystem::path& file);
std::string record_text(const Record& r);  // what is written to the file

// Writes `content` unless the file already holds exactly it: the file's time stamp changes only
// when its bytes do, so nothing downstream rebuilds. Writes a temporary file and renames it, so
// a reader never sees half a file.
bool write_if_changed(const std::filesystem::path& file, const std::string& content);

}  // namespace kiln::tuner
