#include "interleave.hpp"

#include <algorithm>
#include <map>

#include "kiln/quantile.hpp"
#include "noise.hpp"

namespace kiln::tuner {
namespace {

nlohmann::ordered_json rivals_of(const Manifest& m, const std::vector<std::size_t>& variants) {
  std::vector<std::string> names;
  for (std::size_t v : variants) names.push_back(m.variants[v].name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::size_t remeasure_interleaved(const EvaluationContext& ctx, const std::vector<std::size_t>& variants,
                                  const std::vector<Problem>& problems, int rounds) {
  const Manifest& m = *ctx.manifest;
  const nlohmann::ordered_json rivals = rivals_of(m, variants);
  bool done = true;
  for (std::size_t v : variants) {
    for (const auto& p : problems) {
      auto meas = ctx.log->measurement(measurement_key(ctx, v, variant_hash(ctx, v), p, worklog::Phase::bench));
      if (!meas || nlohmann::json::parse(meas->result).value("interleaved_with", nlohmann::json()) != rivals) done = false;
    }
  }
  if (done) return 0;

  // variant -> problem key -> the repetitions of every turn; and the busiest turn's contention.
  std::map<std::size_t, std::map<std::string, std::vector<double>>> samples;
  std::map<std::size_t, double> others;
  std::size_t ran = 0;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t v : variants) {
      Quietness before = ctx.quiet_wait_s > 0 ? ctx.watch.wait_for_quiet(ctx.quiet_wait_s) : Quietness{};
      CpuReading start = ContentionWatch::read();
      // Every repetition of every turn: no early stop once a few agree.
      model::Plan plan = plan_for(ctx, m.variants[v].name, {}, problems);
      plan.min_repetitions = plan.repetitions;
      ChildResult r = run_plan(ctx.variants_dir / m.variants[v].name, plan, ctx.scratch_dir, ctx.timeout_s * (1 + before.others_cores),
                               [&](const model::Event& event) {
                                 const auto* e = std::get_if<model::BenchEvent>(&event);
                                 if (e == nullptr) return;
                                 auto& into = samples[v][e->problem.key()];
                                 into.insert(into.end(), e->samples_s.begin(), e->samples_s.end());
                               });
      ++ran;
      if (!r.exited_cleanly()) return ran;  // the earlier timings stand; nothing is replaced
      double busy = std::max(ctx.watch.between(start, ContentionWatch::read()).others_cores, before.others_cores);
      others[v] = std::max(others[v], busy);
    }
  }
  for (std::size_t v : variants) {
    const std::string hash = variant_hash(ctx, v);
    for (const auto& p : problems) {
      worklog::MeasurementKey key = measurement_key(ctx, v, hash, p, worklog::Phase::bench);
      auto previous = ctx.log->measurement(key);
      std::vector<double> pooled = samples[v][p.key()];
      nlohmann::ordered_json result = previous ? nlohmann::ordered_json::parse(previous->result) : nlohmann::ordered_json::object();
      for (double s : result.value("samples_s", std::vector<double>{})) pooled.push_back(s);
      if (pooled.empty()) continue;
      Spread spread = spread_of(pooled);
      result["median_s"] = spread.median_s;
      result["q1_s"] = kiln::quantile(pooled, 0.25);
      result["q3_s"] = kiln::quantile(pooled, 0.75);
      result["samples_s"] = pooled;
      result["interleaved_with"] = rivals;
      result["interleaved_rounds"] = rounds;
      worklog::Measurement meas;
      meas.key = key;
      meas.status = worklog::MeasurementStatus::ok;
      meas.result = result.dump();
      meas.session_id = ctx.session_id;
      meas.median_s = spread.median_s;
      meas.spread_s = spread.iqr_s;
      meas.others_cores = std::max(others[v], previous && previous->others_cores ? *previous->others_cores : 0.0);
      ctx.log->put_measurement(meas);
    }
  }
  return ran;
}

}  // namespace kiln::tuner
