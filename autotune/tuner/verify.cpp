#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "device_spec.hpp"
#include "evaluate.hpp"
#include "manifest.hpp"
#include "record.hpp"

namespace kiln::tuner {
namespace {

struct Remeasured {
  std::string variant;
  double recorded_s = 0;
  std::optional<double> now_s;
  double noise = 0;  // relative: twice the worst stddev/median over the problems
  std::string failure;
};

std::string us(double s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  return buf;
}

Remeasured remeasure(const VerifyOptions& o, const Manifest& m, const RecordedBucket& b, const std::string& variant,
                     double recorded) {
  Remeasured r{variant, recorded, std::nullopt, 0, {}};
  nlohmann::ordered_json plan = {{"seed", 7}, {"repetitions", o.repetitions}, {"check", nlohmann::ordered_json::array()},
                                 {"bench", nlohmann::ordered_json::array()}, {"tolerance", nlohmann::ordered_json::object()}};
  for (const auto& p : b.problems) {
    plan["check"].push_back(problem_to_json(p.problem));
    plan["bench"].push_back(problem_to_json(p.problem));
  }
  for (const auto& [dtype, tol] : m.tolerance) plan["tolerance"][dtype] = tol;
  std::vector<double> times;
  std::string reason;
  ChildResult child = run_plan(o.variants_dir / variant, plan, o.scratch_dir, m.timeout_s, [&](const nlohmann::ordered_json& e) {
    std::string kind = e.value("event", std::string{});
    if (kind == "bench") {
      double median = e.at("median_s").get<double>();
      times.push_back(median);
      r.noise = std::max(r.noise, 2.0 * e.value("stddev_s", 0.0) / median);
    } else if (kind == "check" && !e.value("passed", false)) {
      reason = e.value("reason", std::string("check failed"));
    } else if (kind == "error") {
      reason = e.value("message", std::string("error"));
    }
  });
  if (!child.exited_cleanly() || times.size() != b.problems.size()) {
    r.failure = reason.empty() ? child.describe() : reason;
    return r;
  }
  r.now_s = geomean(times);
  return r;
}

}  // namespace

int verify(const VerifyOptions& o, std::ostream& out, std::ostream& err) {
  try {
    Manifest m = load_manifest(o.manifest);
    Record record = load_record(o.record);
    DeviceSpec spec = load_device_spec(o.device_spec);
    Probe probe = run_probe(o.probe);
    if (auto why = mismatch(spec, probe)) throw std::runtime_error(*why);
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
          if (!rows[k].now_s) continue;
          double noise = std::max({o.min_noise, w.noise, rows[k].noise});
          if (*rows[k].now_s * (1 + noise) < *w.now_s) {
            verdict = "changed: " + rows[k].variant + " is now faster beyond noise";
            holds = false;
          }
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
    return holds ? 0 : 1;
  } catch (const std::exception& e) {
    err << "kiln: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace kiln::tuner
