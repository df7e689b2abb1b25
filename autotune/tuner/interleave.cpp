#include "interleave.hpp"

#include <algorithm>
#include <map>

#include "kiln/quantile.hpp"
#include "measurement_result.hpp"
#include "noise.hpp"

namespace kiln::tuner {
namespace {

std::vector<std::string> rivals_of(const Manifest& m, const std::vector<std::size_t>& variants) {
  std::vector<std::string> names;
  for (std::size_t v : variants) names.push_back(m.variants[v].name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::size_t remeasure_interleaved(const EvaluationContext& ctx, const std::vector<std::size_t>& variants,
                                  const std::vector<Problem>& problems, int rounds) {
  const Manifest& m = *ctx.manifest;
  const std::vector<std::string> rivals = rivals_of(m, variants);
  bool done = true;
  for (std::size_t v : variants) {
    for (const auto& p : problems) {
      auto meas = ctx.log->measurement(measurement_key(ctx, v, variant_hash(ctx, v), p, worklog::Phase::bench));
      const std::optional<StoredTiming> stored = meas ? stored_timing(*meas) : std::nullopt;
      // Interleaved with these rivals and maybe more: a tie set that shrank once the pooled
      // timings separated some of its members is settled, and a re-run measures nothing again.
      std::vector<std::string> with = stored ? stored->interleaved_with : std::vector<std::string>{};
      std::sort(with.begin(), with.end());
      if (!stored || !std::includes(with.begin(), with.end(), rivals.begin(), rivals.end())) done = false;
    }
  }
  if (done) return 0;

  // variant -> problem key -> the repetitions of every turn, and the last turn's event (what a
  // pooled timing is stored as when the worklog's own does not read); the busiest turn's contention.
  std::map<std::size_t, std::map<std::string, std::vector<double>>> samples;
  std::map<std::size_t, std::map<std::string, model::BenchEvent>> last;
  std::map<std::size_t, double> others;
  std::size_t ran = 0;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t v : variants) {
      Quietness before = ctx.quiet_wait_s > 0 ? ctx.watch.wait_for_quiet(ctx.quiet_wait_s) : Quietness{};
      CpuReading start = ContentionWatch::read();
      // Every repetition of every turn: no early stop once a few agree.
      model::Plan plan = plan_for(ctx, m.variants[v].name, {}, problems);
      plan.min_repetitions = plan.repetitions;
      ChildResult r = run_plan(executable_of(ctx, v), plan, ctx.scratch_dir, ctx.timeout_s * (1 + before.others_cores),
                               [&](const model::Event& event) {
                                 const auto* e = std::get_if<model::BenchEvent>(&event);
                                 if (e == nullptr) return;
                                 auto& into = samples[v][e->problem.key()];
                                 into.insert(into.end(), e->samples_s.begin(), e->samples_s.end());
                                 last[v][e->problem.key()] = *e;
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
      std::optional<StoredTiming> pooled_timing = previous ? stored_timing(*previous) : std::nullopt;
      std::vector<double> pooled = samples[v][p.key()];
      if (pooled_timing) {
        pooled.insert(pooled.end(), pooled_timing->bench.samples_s.begin(), pooled_timing->bench.samples_s.end());
      } else if (auto turn = last[v].find(p.key()); turn != last[v].end()) {
        pooled_timing.emplace();
        pooled_timing->bench = turn->second;
      }
      if (pooled.empty() || !pooled_timing) continue;
      Spread spread = spread_of(pooled);
      pooled_timing->bench.median_s = spread.median_s;
      pooled_timing->bench.q1_s = kiln::quantile(pooled, 0.25);
      pooled_timing->bench.q3_s = kiln::quantile(pooled, 0.75);
      pooled_timing->bench.samples_s = pooled;
      pooled_timing->interleaved_with = rivals;
      pooled_timing->interleaved_rounds = rounds;
      worklog::Measurement meas;
      meas.key = key;
      meas.status = worklog::MeasurementStatus::ok;
      meas.result = to_json(*pooled_timing).dump();
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
