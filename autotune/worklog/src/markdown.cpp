// The markdown report of one tuning session.
#include "kiln/worklog/markdown.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/join.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/model/protocol.hpp"
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

// "NVIDIA H200 (compute capability 9.0, driver 580.159.04, CUDA runtime 13.0, 132 SMs, ...;
// measured: copy 4.23 TB/s, FP32 63.7 TFLOP/s, launch 0.51 µs)", from the device info the probes
// write (kiln/model/protocol.hpp). A stored device the protocol cannot read is shown as stored,
// with why.
std::string device_line(const std::string& device_json) {
  if (device_json.empty() || device_json == "{}") return "not recorded";
  model::DeviceInfo d;
  try {
    d = model::parse_device_info(device_json, "the session's device");
  } catch (const model::InputError& e) {
    return inline_text(device_json + " (unread: " + e.what() + ")");
  }
  std::vector<std::string> details;
  auto add = [&](const std::optional<std::string>& value, const std::string& label) {
    if (value) details.push_back(label + *value);
  };
  add(d.compute_capability, "compute capability ");
  add(d.driver, "driver ");
  add(d.cuda_runtime, "CUDA runtime ");
  add(d.cuda_driver_api, "CUDA driver API ");
  if (d.threads) details.push_back("threads " + std::to_string(*d.threads));
  if (d.sm_count) details.push_back(std::to_string(*d.sm_count) + " SMs");
  if (d.memory_bytes) details.push_back(significant(static_cast<double>(*d.memory_bytes) / (1u << 30), 4) + " GiB");
  if (d.cache_bytes) details.push_back("cache " + significant(static_cast<double>(*d.cache_bytes) / (1u << 20), 4) + " MiB");
  if (d.cpus) details.push_back(std::to_string(d.cpus->size()) + " CPUs allowed");
  add(d.proc_bind, "threads bound ");
  if (d.places) details.push_back(std::to_string(*d.places) + " places");
  std::string line = d.name;
  if (!details.empty()) {
    line += " (" + join(details, ", ") + ")";
  }
  std::vector<std::string> rates;
  for (const auto& [rate, value] : d.measured) {
    if (rate == "dram_bytes_per_s") {
      rates.push_back("copy " + significant(value / 1e12, 3) + " TB/s");
    } else if (rate == "fp32_flops_per_s") {
      rates.push_back("FP32 " + significant(value / 1e12, 3) + " TFLOP/s");
    } else if (rate == "launch_s") {
      rates.push_back("launch " + quantity(value, "s"));
    } else {
      rates.push_back(rate + " " + significant(value, 3));
    }
  }
  if (!rates.empty()) {
    line += "; measured: " + join(rates, ", ");
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
  if (!s.stages.empty()) out << "- Time: " << stages_line(s.stages) << "\n";
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

std::string stages_line(const std::vector<StageSeconds>& stages) {
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << total_seconds(stages) << " s";
  const char* separator = ": ";
  for (const StageSeconds& s : stages) {
    if (s.seconds < 0.05) continue;
    line << separator << inline_text(s.stage) << " " << s.seconds << " s";
    separator = ", ";
  }
  return line.str();
}

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
