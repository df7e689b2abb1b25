#include "evaluate.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "kiln/hash.hpp"
#include "process.hpp"
#include "record.hpp"

namespace kiln::tuner {
namespace {

using worklog::FailureKind;
using worklog::MeasurementKey;
using worklog::MeasurementStatus;
using worklog::Phase;

std::string first_lines(const std::string& text, std::size_t max_lines, std::size_t max_chars = 2000) {
  std::string out;
  std::size_t lines = 0;
  for (char c : text) {
    if (out.size() >= max_chars) break;
    out += c;
    if (c == '\n' && ++lines >= max_lines) break;
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

MeasurementKey key_for(const EvaluationContext& ctx, std::size_t index, const std::string& hash, const Problem& p,
                       Phase phase) {
  return {ctx.context_key, ctx.manifest->kernel, ctx.manifest->variants[index].name, hash, p.key(), phase};
}

void note_newest(VariantOutcome& out, const std::string& created_at) {
  if (created_at > out.newest_measurement) out.newest_measurement = created_at;
}

// kiln compile's verdict on the variant, if it failed to build.
std::optional<std::string> build_failure(const EvaluationContext& ctx, const std::string& variant) {
  std::filesystem::path exe = ctx.variants_dir / variant;
  std::filesystem::path rec = ctx.build_records_dir / (variant + ".json");
  if (std::filesystem::exists(rec)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_text(rec));
    } catch (const nlohmann::json::exception& e) {
      return "unreadable build record " + rec.string() + ": " + e.what();
    }
    if (j.value("status", std::string{}) != "ok") return first_lines(j.value("log", std::string{}), 12);
  }
  if (!std::filesystem::exists(exe)) return "no executable at " + exe.string() + " (the variant was not built)";
  return std::nullopt;
}

}  // namespace

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

ChildResult run_plan(const std::filesystem::path& executable, const nlohmann::ordered_json& plan,
                     const std::filesystem::path& scratch_dir, double timeout_s,
                     const std::function<void(const nlohmann::ordered_json&)>& on_event) {
  std::filesystem::create_directories(scratch_dir);
  std::filesystem::path plan_file =
      scratch_dir / (executable.filename().string() + ".plan." + std::to_string(getpid()) + ".json");
  write_if_changed(plan_file, plan.dump(2));
  auto on_line = [&](const std::string& line) {
    nlohmann::ordered_json event;
    try {
      event = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::exception&) {
      return;  // not an event
    }
    if (event.is_object() && event.contains("event")) on_event(event);
  };
  ChildResult r;
  try {
    r = run_child({executable.string(), "run", "--plan", plan_file.string()}, std::chrono::duration<double>(timeout_s),
                  on_line);
  } catch (...) {
    std::filesystem::remove(plan_file);
    throw;
  }
  std::filesystem::remove(plan_file);
  return r;
}

Problem problem_from_event(const nlohmann::ordered_json& event) { return problem_from_json(event.at("problem")); }

std::string variant_hash(const EvaluationContext& ctx, std::size_t index) {
  return fnv1a64_hex(read_text(ctx.manifest->variants[index].source));
}

VariantOutcome evaluate_variant(const EvaluationContext& ctx, std::size_t index) {
  const Manifest& m = *ctx.manifest;
  const std::string& name = m.variants[index].name;
  const std::string hash = variant_hash(ctx, index);
  worklog::VariantKey vkey{ctx.context_key, m.kernel, name, hash};
  VariantOutcome out;
  out.index = index;

  if (auto failure = ctx.log->variant_failure(vkey)) {
    out.failure = failure->kind;
    out.detail = failure->detail;
    return out;
  }
  if (!ctx.measure) {
    // Reading the worklog only: compile failures are in it as variant failures already.
  } else if (auto failed = build_failure(ctx, name)) {
    out.failure = FailureKind::compile;
    out.detail = *failed;
    ctx.log->put_variant_failure({vkey, FailureKind::compile, out.detail, ctx.session_id, {}});
    return out;
  }

  // What the worklog already holds for this context.
  std::vector<Problem> to_check, to_bench;
  std::vector<Problem> all_checks = m.problems;
  all_checks.insert(all_checks.end(), m.checks.begin(), m.checks.end());
  for (const auto& p : all_checks) {
    auto cached = ctx.log->measurement(key_for(ctx, index, hash, p, Phase::check));
    if (!cached) {
      to_check.push_back(p);
      continue;
    }
    note_newest(out, cached->created_at);
    if (cached->status == MeasurementStatus::failed) {
      out.failure = FailureKind::correctness;
      out.detail = nlohmann::json::parse(cached->result).value("reason", std::string("check failed"));
      return out;
    }
  }
  for (const auto& p : m.problems) {
    auto cached = ctx.log->measurement(key_for(ctx, index, hash, p, Phase::bench));
    if (!cached) {
      to_bench.push_back(p);
      continue;
    }
    note_newest(out, cached->created_at);
    out.median_s[p.key()] = nlohmann::json::parse(cached->result).at("median_s").get<double>();
  }

  if ((!to_check.empty() || !to_bench.empty()) && !ctx.measure) {
    out.complete = false;
    return out;
  }
  if (!to_check.empty() || !to_bench.empty()) {
    out.ran = true;
    nlohmann::ordered_json plan = {{"seed", ctx.seed ^ std::hash<std::string>{}(name)},
                                   {"checks_per_problem", ctx.checks_per_problem},
                                   {"repetitions", ctx.repetitions},
                                   {"check", nlohmann::ordered_json::array()},
                                   {"bench", nlohmann::ordered_json::array()},
                                   {"tolerance", nlohmann::ordered_json::object()}};
    for (const auto& p : to_check) plan["check"].push_back(problem_to_json(p));
    for (const auto& p : to_bench) plan["bench"].push_back(problem_to_json(p));
    for (const auto& [dtype, tol] : m.tolerance) plan["tolerance"][dtype] = tol;
    std::optional<FailureKind> reported;
    std::string reported_detail;
    auto on_event = [&](const nlohmann::ordered_json& event) {
      std::string kind = event.value("event", std::string{});
      if (kind == "check" || kind == "bench") {
        Problem p = problem_from_event(event);
        bool passed = kind == "bench" || event.value("passed", false);
        worklog::Measurement meas{key_for(ctx, index, hash, p, kind == "check" ? Phase::check : Phase::bench),
                                  passed ? MeasurementStatus::ok : MeasurementStatus::failed, event.dump(),
                                  ctx.session_id, {}};
        ctx.log->put_measurement(meas);
        if (kind == "bench") out.median_s[p.key()] = event.at("median_s").get<double>();
        if (!passed && !reported) {
          reported = FailureKind::correctness;
          reported_detail = p.key() + ": " + event.value("reason", std::string("check failed"));
        }
      } else if (kind == "error" && !reported) {
        std::string what = event.value("kind", std::string("runtime"));
        reported = what == "compile" ? FailureKind::compile : FailureKind::runtime;
        reported_detail = event.value("message", std::string{});
      }
    };
    ChildResult r = run_plan(ctx.variants_dir / name, plan, ctx.scratch_dir, ctx.timeout_s, on_event);

    if (r.timed_out) {
      out.failure = FailureKind::timeout;
      out.detail = r.describe();
    } else if (r.signal != 0) {
      out.failure = FailureKind::crash;
      out.detail = r.describe() + (r.stderr_tail.empty() ? "" : ": " + first_lines(r.stderr_tail, 6));
    } else if (reported) {
      out.failure = reported;
      out.detail = reported_detail;
    } else if (r.exit_code != 0) {
      out.failure = FailureKind::runtime;
      out.detail = r.describe() + (r.stderr_tail.empty() ? "" : ": " + first_lines(r.stderr_tail, 6));
    }
    if (out.failure) {
      // A correctness failure is cached as a failed check; the others disqualify the variant.
      if (*out.failure != FailureKind::correctness) {
        ctx.log->put_variant_failure({vkey, *out.failure, out.detail, ctx.session_id, {}});
      }
      return out;
    }
  }

  std::vector<double> medians;
  for (const auto& p : m.problems) {
    auto it = out.median_s.find(p.key());
    if (it == out.median_s.end()) {
      out.failure = FailureKind::runtime;
      out.detail = "the variant exited without timing " + p.key();
      return out;
    }
    medians.push_back(it->second);
  }
  out.score = geomean(medians);
  return out;
}

}  // namespace kiln::tuner
