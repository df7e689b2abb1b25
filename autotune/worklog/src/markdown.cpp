// The markdown report of one tuning session.
#include "kiln/worklog/markdown.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/text.hpp"
#include "markdown_format.hpp"

namespace kiln::worklog {

namespace {

using markdown::cell;
using markdown::inline_text;
using markdown::percent;
using markdown::quantity;
using markdown::significant;

constexpr const char* none = "—";

// The text up to its first line break, with "…" when more follows.
std::string first_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const std::size_t end = t.find('\n');
  return end == std::string::npos ? t : t.substr(0, end) + " …";
}

// Text as a fenced code block, indented under a list item; the fence is longer than any run of
// backticks inside, so nothing in the text can close it; control characters and bytes that are
// not UTF-8 are escaped as everywhere else.
std::string fenced(const std::string& text, const std::string& indent) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string out = "\n" + indent + fence + "\n";
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out += indent + kiln::escape_controls(line) + "\n";
    start = end + 1;
  }
  return out + indent + fence + "\n\n";
}

std::string json_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// "NVIDIA H200 (compute capability 9.0, driver 580.159.04, CUDA runtime 13.0, 132 SMs, ...;
// measured: copy 4.23 TB/s, FP32 63.7 TFLOP/s, launch 0.51 µs)", from what the probes write
// (autotune/harness/probe_*.cpp). Keys it does not know follow in the file's order.
std::string device_line(const std::string& device_json) {
  const nlohmann::json device = nlohmann::json::parse(device_json, nullptr, false);
  if (!device.is_object()) return inline_text(device_json);
  if (device.empty()) return "not recorded";
  auto number = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : 0.0; };
  const std::vector<std::pair<std::string, std::string>> labelled{
      {"compute_capability", "compute capability "}, {"driver", "driver "}, {"cuda_runtime", "CUDA runtime "},
      {"cuda_driver_api", "CUDA driver API "}, {"cuda", "CUDA "}, {"threads", "threads "}};
  std::vector<std::string> details;
  for (const auto& [key, label] : labelled) {
    if (device.contains(key)) details.push_back(label + json_text(device.at(key)));
  }
  if (device.contains("sm_count")) details.push_back(json_text(device.at("sm_count")) + " SMs");
  if (device.contains("memory_bytes")) details.push_back(significant(number(device.at("memory_bytes")) / (1u << 30), 4) + " GiB");
  if (device.contains("cache_bytes")) details.push_back("cache " + significant(number(device.at("cache_bytes")) / (1u << 20), 4) + " MiB");
  for (const auto& [key, value] : device.items()) {
    const bool shown = key == "name" || key == "backend" || key == "measured" || key == "sm_count" ||
                       key == "memory_bytes" || key == "cache_bytes" || key == "max_smem_per_block" ||
                       std::any_of(labelled.begin(), labelled.end(), [&](const auto& l) { return l.first == key; });
    if (!shown) details.push_back(key + " " + json_text(value));
  }
  std::string line = device.contains("name") ? json_text(device.at("name")) : "unnamed device";
  if (!details.empty()) {
    line += " (";
    for (std::size_t i = 0; i < details.size(); ++i) line += (i ? ", " : "") + details[i];
    line += ")";
  }
  if (device.contains("measured") && device.at("measured").is_object()) {
    const nlohmann::json& m = device.at("measured");
    std::vector<std::string> rates;
    if (m.contains("dram_bytes_per_s")) rates.push_back("copy " + significant(number(m.at("dram_bytes_per_s")) / 1e12, 3) + " TB/s");
    if (m.contains("fp32_flops_per_s")) rates.push_back("FP32 " + significant(number(m.at("fp32_flops_per_s")) / 1e12, 3) + " TFLOP/s");
    if (m.contains("launch_s")) rates.push_back("launch " + quantity(number(m.at("launch_s")), "s"));
    for (const auto& [key, value] : m.items()) {
      if (key != "dram_bytes_per_s" && key != "fp32_flops_per_s" && key != "launch_s") rates.push_back(key + " " + json_text(value));
    }
    if (!rates.empty()) {
      line += "; measured: ";
      for (std::size_t i = 0; i < rates.size(); ++i) line += (i ? ", " : "") + rates[i];
    }
  }
  return inline_text(line);
}

std::string code(const std::optional<std::string>& name) {
  return name ? markdown::code(*name) : std::string(none);
}

std::string problem_name(const std::optional<std::string>& problem) {
  return problem ? *problem : "all problems";
}

std::string verdict_text(const Attempt& a) {
  std::string text(to_string(a.verdict));
  if (a.failure_kind) text += " (" + std::string(to_string(*a.failure_kind)) + ")";
  return text;
}

// Per problem, the last kept attempt: later keeps supersede earlier ones. Ordered by attempt id.
std::vector<const Attempt*> winners(const std::vector<Attempt>& attempts) {
  std::map<std::optional<std::string>, const Attempt*> last_keep;
  for (const Attempt& a : attempts) {
    if (a.verdict == Verdict::keep) last_keep[a.problem] = &a;
  }
  std::vector<const Attempt*> out;
  for (const auto& [problem, attempt] : last_keep) out.push_back(attempt);
  std::sort(out.begin(), out.end(), [](const Attempt* x, const Attempt* y) { return x->id < y->id; });
  return out;
}

std::optional<double> floor_ratio(const Attempt& a) {
  if (!a.result || !a.floor) return std::nullopt;
  return *a.result / *a.floor;
}

void write_header(std::ostream& out, const Session& s, const std::vector<Attempt>& attempts) {
  std::map<Verdict, int> counts;
  for (const Attempt& a : attempts) ++counts[a.verdict];
  out << "# Tuning session " << s.id << ": " << inline_text(s.kernel) << "\n\n";
  out << "- Kernel: " << inline_text(s.kernel) << "\n";
  out << "- Strategy: " << (s.strategy.empty() ? none : inline_text(s.strategy)) << "\n";
  out << "- Device: " << device_line(s.device) << "\n";
  out << "- Context: " << (s.context_key.empty() ? none : markdown::code(s.context_key)) << "\n";
  out << "- Started: " << inline_text(s.started_at) << "\n";
  out << "- Ended: " << (s.ended_at ? inline_text(*s.ended_at) : "not ended (still running, or interrupted)")
      << "\n";
  if (!s.note.empty()) out << "- Note: " << inline_text(s.note) << "\n";
  out << "- Attempts: " << attempts.size() << " (" << counts[Verdict::keep] << " kept, "
      << counts[Verdict::revert] << " reverted, " << counts[Verdict::invalid] << " invalid, "
      << counts[Verdict::failed] << " failed)\n\n";
}

void write_winners(std::ostream& out, const std::vector<const Attempt*>& won) {
  out << "## What won\n\n";
  if (won.empty()) {
    out << "Nothing was kept in this session.\n\n";
    return;
  }
  out << "| problem | attempt | variant | result | baseline | delta | floor | result / floor | "
         "reading |\n";
  out << "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Attempt* a : won) {
    const std::optional<double> ratio = floor_ratio(*a);
    out << "| " << cell(problem_name(a->problem)) << " | #" << a->id << " | " << code(a->variant)
        << " | " << quantity(a->result, a->unit) << " | " << quantity(a->baseline, a->unit)
        << " | " << percent(a->delta_pct) << " | " << quantity(a->floor, a->unit) << " | "
        << (ratio ? markdown::fixed(*ratio, 2) + "×" : none) << " | "
        << (ratio ? std::string(floor_reading(*ratio)) : "no floor recorded") << " |\n";
  }
  out << "\n";
}

void write_attempts(std::ostream& out, const std::vector<Attempt>& attempts) {
  out << "## Attempts\n\n";
  if (attempts.empty()) {
    out << "No attempts were recorded.\n\n";
    return;
  }
  out << "| # | variant | problem | change | baseline | result | delta | verdict | explanation |\n";
  out << "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Attempt& a : attempts) {
    out << "| " << a.id << " | " << code(a.variant) << " | " << cell(problem_name(a.problem))
        << " | " << cell(a.change) << " | " << quantity(a.baseline, a.unit) << " | "
        << quantity(a.result, a.unit) << " | " << percent(a.delta_pct) << " | "
        << verdict_text(a) << " | " << cell(first_line(a.explanation)) << " |\n";
  }
  out << "\n";
}

// A one-line explanation stays on the bullet; a longer one (a compiler's output, say) follows it
// whole, as a fenced block, instead of being squeezed into one line.
void write_dead_end(std::ostream& out, const Attempt& a) {
  out << "- #" << a.id << " " << code(a.variant);
  if (a.problem) out << " on " << inline_text(*a.problem);
  if (a.verdict == Verdict::revert) out << ": " << percent(a.delta_pct);
  const std::string head = first_line(a.explanation);
  if (!head.empty()) out << " — " << inline_text(head);
  out << "\n";
  if (head.size() < a.explanation.size()) out << fenced(a.explanation, "  ");
}

void write_dead_ends(std::ostream& out, const std::vector<Attempt>& attempts) {
  out << "## Dead ends\n\n";
  // Failures first, then invalid results, each by kind in the schema's order; reverts last.
  using Group = std::pair<Verdict, std::optional<FailureKind>>;
  std::map<Group, std::vector<const Attempt*>> groups;
  std::vector<const Attempt*> reverted;
  for (const Attempt& a : attempts) {
    if (a.verdict == Verdict::failed || a.verdict == Verdict::invalid) {
      groups[{a.verdict, a.failure_kind}].push_back(&a);
    } else if (a.verdict == Verdict::revert) {
      reverted.push_back(&a);
    }
  }
  if (groups.empty() && reverted.empty()) {
    out << "No dead ends.\n\n";
    return;
  }
  for (const Verdict verdict : {Verdict::failed, Verdict::invalid}) {
    for (const auto& [group, members] : groups) {
      if (group.first != verdict) continue;
      out << "### " << (verdict == Verdict::failed ? "Failed" : "Invalid") << ": "
          << (group.second ? to_string(*group.second) : "no kind given") << " ("
          << members.size() << ")\n\n";
      for (const Attempt* a : members) write_dead_end(out, *a);
      out << "\n";
    }
  }
  if (!reverted.empty()) {
    out << "### Reverted (" << reverted.size() << ")\n\n";
    for (const Attempt* a : reverted) write_dead_end(out, *a);
    out << "\n";
  }
}

void write_links(std::ostream& out, const Worklog& worklog, const std::vector<Attempt>& attempts) {
  out << "## Links\n\n";
  std::map<std::int64_t, Link> links;  // by id: each once, in the order they were made
  for (const Attempt& a : attempts) {
    for (Link& link : worklog.links_of(a.id)) links.emplace(link.id, std::move(link));
  }
  if (links.empty()) {
    out << "No links.\n\n";
    return;
  }
  for (const auto& [id, link] : links) {
    out << "- #" << link.from_attempt << " " << to_string(link.kind) << " #" << link.to_attempt;
    if (!link.note.empty()) out << ": " << inline_text(link.note);
    out << "\n";
  }
  out << "\n";
}

void write_headroom(std::ostream& out, const std::vector<const Attempt*>& won) {
  out << "## Headroom\n\n";
  bool any = false;
  for (const Attempt* a : won) {
    const std::optional<double> ratio = floor_ratio(*a);
    if (!ratio) continue;
    any = true;
    const double left = *a->result - *a->floor;
    out << "- " << inline_text(problem_name(a->problem)) << ": " << code(a->variant) << " at "
        << quantity(a->result, a->unit) << " against a floor of " << quantity(a->floor, a->unit)
        << ": ";
    if (left > 0) {
      out << quantity(left, a->unit) << " above it (" << markdown::fixed(100.0 * left / *a->result, 1)
          << " % of the result), " << markdown::fixed(*ratio, 2) << "× the floor: "
          << floor_reading(*ratio) << "\n";
    } else {
      out << floor_reading(*ratio) << "\n";
    }
  }
  if (!any) {
    out << (won.empty() ? "No kept result to compare with a floor.\n"
                        : "No floor was recorded for the kept results; headroom unknown.\n");
  }
}

}  // namespace

std::string_view floor_reading(double ratio) {
  if (ratio < 1.0) return "below the floor: check the floor or the measurement";
  if (ratio <= 1.5) return "near optimal";
  if (ratio <= 3.0) return "scheduling (launch shape, occupancy, overlap)";
  if (ratio <= 10.0) return "architectural (data layout, memory path, instruction mix)";
  return "algorithmic (the method itself does too much work)";
}

std::string session_markdown(const Worklog& worklog, std::int64_t session_id) {
  const std::optional<Session> session = worklog.session(session_id);
  if (!session) throw Error(worklog.path() + ": no session " + std::to_string(session_id));
  AttemptFilter filter;
  filter.session_id = session_id;
  const std::vector<Attempt> attempts = worklog.attempts(filter);
  const std::vector<const Attempt*> won = winners(attempts);

  std::ostringstream out;
  write_header(out, *session, attempts);
  write_winners(out, won);
  write_attempts(out, attempts);
  write_dead_ends(out, attempts);
  write_links(out, worklog, attempts);
  write_headroom(out, won);
  return out.str();
}

}  // namespace kiln::worklog
