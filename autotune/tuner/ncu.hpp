// Nsight Compute (ncu): the metrics kiln profile asks for, the command line that measures one
// variant's run, and the CSV ncu writes, parsed.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/model/json_reader.hpp"

namespace kiln::tuner {

// Throughputs as % of peak (SM, memory, DRAM, L2, L1), achieved and theoretical occupancy,
// registers, launch shape (grid, block, shared memory, waves, CTAs per SM, SM count), local
// memory instructions (spills and local arrays), and the warp stall reasons. Names as Nsight
// Compute 2025 prints them on sm_90 (tests/tuner/data/README.md).
const std::vector<std::string>& ncu_metrics();

// The stall reasons among ncu_metrics(): "long_scoreboard" for
// smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio.
const std::vector<std::string>& ncu_stall_reasons();
std::string ncu_stall_metric(const std::string& reason);

// The arguments before the variant's own: ncu, CSV of the raw page in base units into `log_file`,
// only the kernels between cudaProfilerStart and cudaProfilerStop, child processes included.
std::vector<std::string> ncu_command(const std::filesystem::path& ncu, const std::filesystem::path& log_file);

struct MetricValue {
  double value = 0;
  std::string unit;  // as ncu printed it: "%", "ns", "byte/block", "" ...
};

// One profiled kernel launch: its name as ncu prints it, and its numeric metrics.
struct NcuLaunch {
  std::string kernel;
  std::map<std::string, MetricValue> metrics;
};

// Parses what ncu --csv writes: the raw page (one row per launch, a column per metric, a second
// row of units) or the details page (one row per metric: "Metric Name", "Metric Unit", "Metric
// Value"), between ncu's own "==PROF==" lines. Numbers may carry thousands separators ("1,980");
// values that are not numbers ("n/a", "PolicySpread") are left out. Launches come in ncu's order
// (its "ID" column). Throws kiln::Error naming `origin` when no header row is found or a row is cut.
std::vector<NcuLaunch> parse_ncu_csv(const std::string& text, const std::string& origin);

// As the worklog stores them: [{"kernel", "metrics": {name: {"value", "unit"}}}], only the
// metrics of ncu_metrics() (the raw page carries every device attribute besides).
nlohmann::json launches_to_json(const std::vector<NcuLaunch>& launches);
// What launches_to_json wrote, read back strictly from `text`: anything else is an InputError
// naming `label` and the place ("<label>: /0/metrics/x/value: expected a number, got \"n/a\"").
std::vector<NcuLaunch> parse_stored_launches(const std::string& text, const std::string& label);

// ncu's complaint in its log or standard error, as one message: the missing permission for the
// GPU's performance counters (ERR_NVGPUCTRPERM) as what to do about it, any other "==ERROR=="
// line as it is. Nothing when there is none.
std::optional<std::string> ncu_error(const std::string& log, const std::string& stderr_text);

// A time in seconds from a value and ncu's unit ("ns", "nsecond", "usecond", "msecond", "s").
std::optional<double> seconds_from(const MetricValue& v);

}  // namespace kiln::tuner
