#include "sanitize.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include "cache_key.hpp"

namespace kiln::tuner {
namespace {

// compute-sanitizer's exit code when it found errors (--error-exitcode): one no variant uses.
constexpr int kErrorExit = 86;

const std::vector<Problem>& sanitized_problems(const Manifest& m) { return m.checks.empty() ? m.problems : m.checks; }

}  // namespace

std::string sanitized_problems_of(const Manifest& m, int checks_per_problem, KeyVersion version) {
  KeyHasher h(version);
  for (const auto& p : sanitized_problems(m)) h.field("check").field(p.key());
  h.field(std::to_string(checks_per_problem));
  return h.hex();
}

std::string sanitizer_errors(const std::string& log, std::size_t max_lines) {
  std::istringstream in(log);
  std::string line, out;
  std::size_t kept = 0;
  while (std::getline(in, line) && kept < max_lines) {
    // Its report lines start with "========= "; the harness's own output does not.
    if (line.rfind("========= ", 0) != 0) continue;
    std::string text = line.substr(10);
    auto first = text.find_first_not_of(' ');
    if (first == std::string::npos || text.rfind("COMPUTE-SANITIZER", 0) == 0) continue;
    text = text.substr(first);
    // The first line of each error, where it was and the summary; not the host backtrace.
    bool useful = text.rfind("Invalid", 0) == 0 || text.find("hazard") != std::string::npos ||
                  text.rfind("Race", 0) == 0 || text.rfind("Error", 0) == 0 || text.rfind("at ", 0) == 0 ||
                  text.rfind("by thread", 0) == 0 || text.rfind("Address", 0) == 0 ||
                  text.rfind("ERROR SUMMARY", 0) == 0 || text.rfind("RACECHECK SUMMARY", 0) == 0 ||
                  text.rfind("Uninitialized", 0) == 0;
    if (!useful) continue;
    if (!out.empty()) out += "\n";
    out += text;
    ++kept;
  }
  return out;
}

double sanitizer_silence_s(const EvaluationContext& ctx) {
  if (ctx.sanitize_timeout_s > 0) return ctx.sanitize_timeout_s;
  // The sanitizer slows a kernel down by one or two orders of magnitude; within ten minutes of
  // silence by default, against the slowest gate runs seen (softmax_cuda's 8-block cluster rows on
  // an H200: 100 s alone, over 150 s beside other runs), so that a run that hangs holds the build
  // minutes, not hours.
  return std::min({100 * ctx.timeout_s, kDefaultSanitizeSilenceSeconds, kMaxTimeLimitSeconds});
}

SanitizerResult sanitize_variant(const EvaluationContext& ctx, std::size_t index, const std::filesystem::path& sanitizer) {
  const Manifest& m = *ctx.manifest;
  const std::string& name = m.variants[index].name;
  const std::vector<Problem>& checks = sanitized_problems(m);
  SanitizerResult result;
  for (const char* tool : {"memcheck", "racecheck"}) {
    std::filesystem::create_directories(ctx.scratch_dir);
    const std::filesystem::path log = ctx.scratch_dir / (name + "." + tool + ".log");
    std::filesystem::remove(log);
    auto limit = [&] { return std::chrono::duration<double>(sanitizer_silence_s(ctx)); };
    // A run whose device could not be set up ran nothing of the variant, whatever the sanitizer
    // makes of it: run again as in the search, and a device that stays unusable stops the tuning.
    ChildResult r;
    retry_device_setup(ctx, name + ": compute-sanitizer --tool " + tool, [&] {
      std::optional<std::string> device_fault;
      auto on_event = [&](const model::Event& event) {
        if (const auto* e = std::get_if<model::ErrorEvent>(&event); e != nullptr && e->kind == model::HarnessFailure::device) {
          device_fault = e->message;
        }
      };
      std::filesystem::remove(log);
      r = run_plan(executable_of(ctx, index), plan_for(ctx, name, checks, {}), ctx.scratch_dir, SilenceLimit(limit), on_event,
                   ctx.environment,
                   {sanitizer.string(), "--tool", tool, "--error-exitcode", std::to_string(kErrorExit), "--log-file",
                    log.string()});
      return device_fault;
    });
    std::string text;
    if (std::filesystem::exists(log)) text = read_text(log);
    if (!r.timed_out && r.signal == 0 && r.exit_code == kErrorExit) {
      result.ran = true;
      result.clean = false;
      result.detail = std::string(tool) + ": " + sanitizer_errors(text);
      return result;
    }
    if (!r.exited_cleanly()) {
      result.ran = false;
      result.timed_out = r.timed_out;
      // The sanitizer's log names its errors; when it names none (no log: the sanitizer stopped
      // before the first launch; or a log without errors: the variant itself failed, a launch it
      // refused under instrumentation, say), the reason is on stderr, the sanitizer's or the variant's.
      std::string why = sanitizer_errors(text, 4);
      if (why.empty() || why.rfind("ERROR SUMMARY: 0 errors", 0) == 0) why = r.stderr_tail;
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      if (why.size() > 600) why = "..." + why.substr(why.size() - 600);
      result.detail = std::string("compute-sanitizer --tool ") + tool + " did not finish the checks (" + r.describe() + ")" +
                      (why.empty() ? "" : ": " + why);
      return result;
    }
    result.ran = true;
    result.tools += (result.tools.empty() ? "" : ",") + std::string(tool);
  }
  result.detail = "memcheck and racecheck found nothing";
  return result;
}

std::size_t sanitizer_lanes(int jobs) { return jobs > 0 ? static_cast<std::size_t>(jobs) : 1; }

std::vector<std::string> dispatched_variants(const Record& record, int runners_up) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto& rb : record.buckets) {
    if (!rb.winner) continue;
    add(*rb.winner);
    for (std::size_t k = 0; k < rb.contenders.size() && k < static_cast<std::size_t>(runners_up); ++k) {
      add(rb.contenders[k].variant);
    }
  }
  if (record.domain && record.domain->tree) {
    for (const auto& node : record.domain->tree->nodes) {
      if (node.is_leaf()) add(node.variant);
    }
    for (const auto& l : record.domain->listed) add(l.variant);
  }
  return names;
}

}  // namespace kiln::tuner
