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

#include "dispatch_tree.hpp"
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

// One held-out point of a domain: what the dispatch chose there against the fastest finalist.
struct HeldOutPoint {
  Problem problem;
  std::string dispatched;
  double dispatched_s = 0;
  std::string best;      // the fastest finalist at this point
  double best_s = 0;
  double floor_s = 0;    // 0 when the space declares no work the device has a rate for
  std::string bound;

  double regret() const { return dispatched_s / best_s; }
  double ratio() const { return floor_s > 0 ? dispatched_s / floor_s : 0.0; }
};

// What a tuning with a problem domain adds to the record (README, "Problem domains").
// A listed problem where the learned tree's variant is slower than the tolerance allows: the
// dispatch names the fastest variant measured there for exactly that problem, before the tree.
// The tree is fitted to the coverage, which spreads over the domain; the listed problems are the
// shapes the space's author named, and every variant was timed on them.
struct ListedPoint {
  Problem problem;
  std::string variant;       // the fastest variant measured at the problem
  double time_s = 0;
  std::string tree_variant;  // the tree's variant there, and its time
  double tree_s = 0;
  double floor_s = 0;        // 0 when the space declares no work the device has a rate for
};

struct RecordedDomain {
  double tolerance = 1.05;            // the space's tuning.regret_tolerance
  std::size_t coverage_points = 0;    // points the dispatch was fitted to (refinement points included)
  std::size_t refine_points = 0;      // of them, the refinement points added (tuning.refine)
  double coverage_worst_regret = 1;   // of the dispatch over them
  double coverage_median_regret = 1;
  std::optional<DispatchTree> tree;   // the learned dispatch; absent when the space has buckets
  std::vector<ListedPoint> listed;    // listed problems dispatched exactly, ahead of the tree
  std::vector<std::string> finalists; // the variants timed on the held-out points
  std::vector<HeldOutPoint> held_out;
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
  std::optional<RecordedDomain> domain;  // only for spaces with a problem domain
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
