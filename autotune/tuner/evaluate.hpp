// Measuring one variant: from the worklog's cache when this context already has it, otherwise in
// a child process (validation first, then timing), storing each result the moment it arrives so
// that an interrupted run resumes where it stopped.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "kiln/worklog/worklog.hpp"
#include "manifest.hpp"
#include "process.hpp"

namespace kiln::tuner {

struct EvaluationContext {
  const Manifest* manifest = nullptr;
  worklog::Worklog* log = nullptr;
  std::int64_t session_id = 0;
  std::string context_key;
  std::filesystem::path variants_dir;       // executables, named after the variants
  std::filesystem::path build_records_dir;  // kiln compile's <variant>.json
  std::filesystem::path scratch_dir;        // plan files
  std::uint64_t seed = 1;
  int repetitions = 7;
  int checks_per_problem = 1;
  double timeout_s = 120;
  // Off: only what the worklog holds; a variant with anything missing comes back incomplete.
  bool measure = true;
};

struct VariantOutcome {
  std::size_t index = 0;
  std::optional<worklog::FailureKind> failure;
  std::string detail;                        // why it failed
  std::map<std::string, double> median_s;    // problem key -> median seconds per call
  std::optional<double> score;               // geometric mean over the space's problems
  std::string newest_measurement;            // created_at of the newest result used
  bool ran = false;                          // a child process ran (not all from the worklog)
  bool complete = true;                      // false: not measured (and measuring was off)
};

std::string variant_hash(const EvaluationContext& ctx, std::size_t index);

// A whole file as bytes (sources for the cache keys, build records); throws when it cannot be read.
std::string read_text(const std::filesystem::path& file);

// Runs one variant executable on a plan (see autotune/harness/plan.hpp), handing each event the
// harness prints to on_event as it arrives. The plan file lives in scratch_dir while it runs.
ChildResult run_plan(const std::filesystem::path& executable, const nlohmann::ordered_json& plan,
                     const std::filesystem::path& scratch_dir, double timeout_s,
                     const std::function<void(const nlohmann::ordered_json&)>& on_event);

Problem problem_from_event(const nlohmann::ordered_json& event);

VariantOutcome evaluate_variant(const EvaluationContext& ctx, std::size_t index);

// Geometric mean; nothing for an empty list.
std::optional<double> geomean(const std::vector<double>& values);

}  // namespace kiln::tuner
