#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "device_spec.hpp"
#include "evaluate.hpp"
#include "manifest.hpp"
#include "numbers.hpp"
#include "open_tuning.hpp"
#include "record.hpp"

namespace kiln::tuner {
namespace {

// A verification measures again on fixed inputs: the same ones every time it is run.
constexpr std::uint64_t kVerifySeed = 7;

struct Remeasured {
  std::string variant;
  double recorded_s = 0;
  std::optional<double> now_s;
  double noise = 0;  // relative: the worst IQR / median over the problems
  std::string failure;
};

Remeasured remeasure(const VerifyOptions& o, const Manifest& m, const RecordedBucket& b, const std::string& variant,
                     double recorded) {
  Remeasured r{variant, recorded, std::nullopt, 0, {}};
  std::vector<Problem> problems;
  for (const auto& p : b.problems) problems.push_back(p.problem);
  // Every repetition: the noise it reports decides what counts as a change.
  model::Plan plan = plan_for(kVerifySeed, m, variant, problems, problems);
  plan.repetitions = o.repetitions;
  plan.min_repetitions = o.repetitions;
  std::vector<double> times;
  std::string reason;
  auto on_event = [&](const model::Event& event) {
    if (const auto* e = std::get_if<model::BenchEvent>(&event)) {
      times.push_back(e->median_s);
      r.noise = std::max(r.noise, e->spread_s() / e->median_s);
    } else if (const auto* e = std::get_if<model::CheckEvent>(&event); e != nullptr && !e->passed) {
      reason = e->reason.value_or("check failed");
    } else if (const auto* e = std::get_if<model::ErrorEvent>(&event)) {
      reason = e->kind == model::HarnessFailure::device
                   ? "the device could not be set up, a fault of the machine, not of the variant: " + e->message
                   : e->message;
    }
  };
  ChildResult child = run_plan(o.variants_dir / variant, plan, o.scratch_dir, static_cast<double>(m.tuning.timeout_s), on_event);
  if (!child.exited_cleanly() || times.size() != b.problems.size()) {
    r.failure = reason.empty() ? child.describe() : reason;
    return r;
  }
  r.now_s = geomean(times);
  return r;
}

}  // namespace

bool verify(const VerifyOptions& o, std::ostream& out) {
  const KernelTarget target = load_target(o.manifest, o.device_spec);
  const Manifest& m = target.manifest;
  Record record = load_record(o.record);
  // Only what the device is: verify compares times with the record's, not with floors.
  const DeviceInfo probe = probe_matching(target.spec, o.probe, {}, true);
  if (probe.name != record.device_name) {
    out << "kiln: note: the record was measured on " << record.device_name << ", this machine is " << probe.name << "\n";
  }
  bool holds = true;
  out << "kiln: verifying " << m.kernel << " (record of " << record.date << ") on " << probe.name << "\n";
  for (const auto& b : record.buckets) {
    if (!b.winner) continue;
    std::vector<Remeasured> rows;
    rows.push_back(remeasure(o, m, b, *b.winner, b.time_s));
    for (const auto& c : b.contenders) rows.push_back(remeasure(o, m, b, c.variant, c.time_s));
    const Remeasured& w = rows.front();
    std::string verdict = "holds";
    if (!w.now_s) {
      verdict = "winner failed: " + w.failure;
      holds = false;
    } else {
      for (std::size_t k = 1; k < rows.size(); ++k) {
        // A runner-up the record calls a tie may come out either side of the winner.
        if (!rows[k].now_s || b.contenders[k - 1].within_noise.value_or(false)) continue;
        double noise = std::max({o.min_noise, w.noise, rows[k].noise});
        if (*rows[k].now_s * (1 + noise) < *w.now_s) {
          verdict = "changed: " + rows[k].variant + " is now faster beyond noise";
          holds = false;
        }
      }
    }
    if (o.max_regression_pct && w.now_s) {
      // The recorded noise where the record has it, and today's: either can hide a change.
      double noise = std::max({o.min_noise, w.noise, b.noise.value_or(0.0)});
      double allowed = noise + *o.max_regression_pct / 100;
      double slower = *w.now_s / w.recorded_s - 1;
      if (slower > allowed) {
        char why[160];
        std::snprintf(why, sizeof why, "regressed: the winner is %.1f%% slower than recorded, beyond noise %.1f%% + %.1f%%",
                      slower * 100, noise * 100, *o.max_regression_pct);
        verdict = verdict == "holds" ? std::string(why) : verdict + "; " + why;
        holds = false;
      }
    }
    out << "  " << b.name << ": " << verdict << "\n";
    for (const auto& r : rows) {
      out << "    " << r.variant << ": recorded " << us(r.recorded_s) << ", now ";
      if (r.now_s) {
        char change[32];
        std::snprintf(change, sizeof change, "%+.1f%%", (*r.now_s / r.recorded_s - 1) * 100);
        out << us(*r.now_s) << " (" << change << ", noise " << std::lround(r.noise * 100) << "%)";
      } else {
        out << "failed: " << r.failure;
      }
      out << "\n";
    }
  }
  out << (holds ? "kiln: the recorded ranking holds\n" : "kiln: the recorded ranking does NOT hold\n");
  return holds;
}

}  // namespace kiln::tuner
