#include "ncu.hpp"

#include <cstdlib>
#include <sstream>

#include "kiln/error.hpp"
#include "kiln/join.hpp"

namespace kiln::tuner {
namespace {

// One CSV record: quoted fields with doubled quotes inside, as ncu writes them.
std::optional<std::vector<std::string>> split_record(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) return std::nullopt;
  fields.push_back(field);
  return fields;
}

// "1,980,000" and "2.34" as numbers; "n/a", "" and words are not.
std::optional<double> number_of(std::string text) {
  std::string digits;
  for (char c : text) {
    if (c != ',') digits += c;
  }
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  return v;
}

int column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

const std::vector<std::string>& ncu_stall_reasons() {
  static const std::vector<std::string> reasons = {
      "barrier",         "branch_resolving", "dispatch_stall", "drain",         "imc_miss",   "lg_throttle",
      "long_scoreboard", "math_pipe_throttle", "membar",      "mio_throttle",  "misc",       "no_instruction",
      "short_scoreboard", "sleeping",        "tex_throttle",  "wait"};
  return reasons;
}

std::string ncu_stall_metric(const std::string& reason) {
  return "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
}

const std::vector<std::string>& ncu_metrics() {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> m = {
        "gpu__time_duration.sum",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "sm__maximum_warps_per_active_cycle_pct",
        "launch__registers_per_thread",
        "launch__grid_size",
        "launch__block_size",
        "launch__shared_mem_per_block_dynamic",
        "launch__shared_mem_per_block_static",
        "launch__waves_per_multiprocessor",
        "launch__occupancy_limit_blocks",
        "device__attribute_multiprocessor_count",
        "smsp__sass_inst_executed_op_local_ld.sum",
        "smsp__sass_inst_executed_op_local_st.sum",
    };
    for (const auto& r : ncu_stall_reasons()) m.push_back(ncu_stall_metric(r));
    return m;
  }();
  return metrics;
}

std::vector<std::string> ncu_command(const std::filesystem::path& ncu, const std::filesystem::path& log_file) {
  return {ncu.string(), "--csv", "--page", "raw", "--print-units", "base", "--metrics", join(ncu_metrics(), ","),
          "--target-processes", "all", "--profile-from-start", "off", "--log-file", log_file.string()};
}

std::vector<NcuLaunch> parse_ncu_csv(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  std::size_t line_number = 0;
  std::vector<NcuLaunch> launches;
  std::vector<std::string> ids;  // details page: the launch each row belongs to
  int id_col = -1, kernel_col = -1, name_col = -1, unit_col = -1, value_col = -1;
  std::vector<std::string> units;
  bool units_pending = false;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty() || line[0] != '"') continue;  // ncu's ==PROF== lines, the program's output
    auto fields = split_record(line);
    const std::string where = origin + ":" + std::to_string(line_number);
    if (!fields) throw Error(where + ": a quoted field of ncu's CSV does not end");
    if (header.empty()) {
      header = *fields;
      id_col = column(header, "ID");
      kernel_col = column(header, "Kernel Name");
      name_col = column(header, "Metric Name");
      unit_col = column(header, "Metric Unit");
      value_col = column(header, "Metric Value");
      if (id_col < 0 || kernel_col < 0) throw Error(where + ": not ncu's CSV header (no \"ID\" and \"Kernel Name\" columns)");
      units_pending = name_col < 0;
      continue;
    }
    if (fields->size() != header.size()) {
      throw Error(where + ": " + std::to_string(fields->size()) + " fields where the header has " +
                  std::to_string(header.size()));
    }
    const std::string& id = (*fields)[static_cast<std::size_t>(id_col)];
    if (units_pending && id.empty()) {  // the raw page's second row: units
      units = *fields;
      units_pending = false;
      continue;
    }
    units_pending = false;
    if (name_col >= 0) {
      // Details page: one metric per row.
      if (value_col < 0) throw Error(where + ": ncu's CSV has \"Metric Name\" but no \"Metric Value\" column");
      if (ids.empty() || ids.back() != id) {
        ids.push_back(id);
        launches.push_back({(*fields)[static_cast<std::size_t>(kernel_col)], {}});
      }
      if (auto v = number_of((*fields)[static_cast<std::size_t>(value_col)])) {
        std::string unit = unit_col >= 0 ? (*fields)[static_cast<std::size_t>(unit_col)] : "";
        launches.back().metrics[(*fields)[static_cast<std::size_t>(name_col)]] = {*v, unit};
      }
      continue;
    }
    // Raw page: one launch per row.
    NcuLaunch launch{(*fields)[static_cast<std::size_t>(kernel_col)], {}};
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (static_cast<int>(i) == id_col || static_cast<int>(i) == kernel_col) continue;
      if (header[i].find("__") == std::string::npos) continue;  // "Block Size", "Device", "CC"...
      if (auto v = number_of((*fields)[i])) launch.metrics[header[i]] = {*v, i < units.size() ? units[i] : ""};
    }
    launches.push_back(std::move(launch));
  }
  if (header.empty()) throw Error(origin + ": no CSV from ncu (no header row)");
  return launches;
}

nlohmann::json launches_to_json(const std::vector<NcuLaunch>& launches) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : launches) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& name : ncu_metrics()) {
      if (auto it = l.metrics.find(name); it != l.metrics.end()) {
        metrics[name] = {{"value", it->second.value}, {"unit", it->second.unit}};
      }
    }
    out.push_back({{"kernel", l.kernel}, {"metrics", metrics}});
  }
  return out;
}

std::vector<NcuLaunch> parse_stored_launches(const std::string& text, const std::string& label) {
  const model::JsonFile file = model::parse_json_text(label, text);
  std::vector<NcuLaunch> out;
  for (const model::JsonNode& l : model::JsonNode::root(file).elements()) {
    l.require_object({"kernel", "metrics"}, {"kernel", "metrics"});
    NcuLaunch launch;
    launch.kernel = l["kernel"].string();
    for (const model::JsonNode& metric : l["metrics"].members()) {
      metric.require_object({"value", "unit"}, {"value", "unit"});
      const model::JsonNode value = metric["value"];
      if (!value.json().is_number()) value.fail("expected a number, got " + model::describe_json(value.json()));
      launch.metrics[metric.key()] = {value.json().get<double>(), metric["unit"].string()};
    }
    out.push_back(std::move(launch));
  }
  return out;
}

std::optional<std::string> ncu_error(const std::string& log, const std::string& stderr_text) {
  const std::string all = log + "\n" + stderr_text;
  if (all.find("ERR_NVGPUCTRPERM") != std::string::npos) {
    return "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): run kiln profile as root, or let "
           "every user profile (the nvidia kernel module's option NVreg_RestrictProfilingToAdminUsers=0; see "
           "https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
  }
  std::istringstream in(all);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("==ERROR==", 0) == 0) return "ncu: " + line.substr(9 + (line.size() > 9 && line[9] == ' ' ? 1 : 0));
  }
  return std::nullopt;
}

std::optional<double> seconds_from(const MetricValue& v) {
  static const std::map<std::string, double> scale = {{"ns", 1e-9}, {"nsecond", 1e-9}, {"us", 1e-6}, {"usecond", 1e-6},
                                                      {"ms", 1e-3}, {"msecond", 1e-3}, {"s", 1},     {"second", 1}};
  auto it = scale.find(v.unit);
  if (it == scale.end()) return std::nullopt;
  return v.value * it->second;
}

}  // namespace kiln::tuner
