#include "choose.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include "domain.hpp"
#include "interleave.hpp"
#include "kiln/error.hpp"
#include "kiln/model/backend.hpp"
#include "measuring_pool.hpp"
#include "sanitize.hpp"
#include "tools.hpp"

namespace kiln::tuner {
namespace {

using worklog::FailureKind;
using worklog::Verdict;

// Buckets whose runners-up are within noise of the winner (or whose default is) get those
// candidates re-measured in turns, A/B/A/B; their outcomes are read again from the worklog.
// `settled` holds, per bucket, every variant interleaved by an earlier pass: a new tie set is
// measured together with them, so once a pass brings no new member, every tie set the pooled
// timings can give is a subset of one set measured together, and a re-run measures nothing.
// Each bucket's turns run on one GPU, so its candidates are compared on one device; with a
// measuring pool each bucket goes to its first free GPU (MeasuringPool::remeasure; a bucket's
// problems are its own, so no two write the same measurement). The lines and the outcomes read
// again follow the buckets' order whatever GPU finished first.
// Returns how many processes ran.
std::size_t settle_near_ties(const EvaluationContext& ctx, const Record& record, std::vector<VariantOutcome>& outcomes,
                             int rounds, std::map<std::string, std::set<std::size_t>>& settled, std::ostream& out) {
  const Manifest& m = *ctx.manifest;
  struct TieSet {
    std::string bucket;
    std::vector<std::size_t> tied;
    std::vector<Problem> problems;
  };
  std::vector<TieSet> sets;
  for (std::size_t b = 0; b < record.buckets.size(); ++b) {
    const RecordedBucket& rb = record.buckets[b];
    if (!rb.winner) continue;
    std::vector<std::size_t> tied = {*m.variant_index(*rb.winner)};
    for (const auto& c : rb.contenders) {
      if (c.within_noise.value_or(false)) tied.push_back(*m.variant_index(c.variant));
    }
    if (tied.size() < 2) continue;
    std::set<std::size_t>& before = settled[rb.name];
    for (std::size_t v : before) {
      if (std::find(tied.begin(), tied.end(), v) == tied.end()) tied.push_back(v);
    }
    before.insert(tied.begin(), tied.end());
    TieSet set{rb.name, std::move(tied), {}};
    for (const auto& p : rb.problems) set.problems.push_back(p.problem);
    sets.push_back(std::move(set));
  }
  std::vector<std::future<std::size_t>> running;
  if (ctx.pool != nullptr) {
    for (const auto& set : sets) running.push_back(ctx.pool->remeasure(set.tied, set.problems, rounds));
  }
  std::size_t ran = 0;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const TieSet& set = sets[i];
    const std::size_t n =
        ctx.pool != nullptr ? running[i].get() : remeasure_interleaved(ctx, set.tied, set.problems, rounds);
    if (n == 0) continue;
    ran += n;
    out << "kiln: " << set.bucket << ": " << set.tied.size() << " variants within noise of each other, re-measured in turns ("
        << n << " runs)\n";
    for (auto& oc : outcomes) {
      if (std::find(set.tied.begin(), set.tied.end(), oc.index) != set.tied.end()) oc = evaluate_variant(ctx, oc.index);
    }
  }
  return ran;
}

// The sanitizer gate: every variant the header dispatches to (and, when asked, each bucket's
// runners-up) runs its checks under compute-sanitizer before it is accepted. One with errors is
// recorded as a sanitizer failure (with an attempt of its own) and the record is chosen again
// without it (`choose`: the winners, and the learned dispatch of a domain), until every choice is
// clean. The runs the gate still needs start at once, `--sanitize-jobs` of them on each GPU (the
// measuring pool's, or the one GPU), in turn over the GPUs: nothing is timed under the sanitizer,
// and under racecheck a variant takes from seconds to minutes (an 8-block cluster row of
// softmax_cuda over 150 s on an H200), which one run at a time spent with the other cores and
// GPUs idle. Their results are taken in the order above, so the log and the choices are those of
// one run at a time.
void sanitize_choices(const EvaluationContext& ctx, const TuneOptions& o, const std::filesystem::path& sanitizer,
                      std::vector<VariantOutcome>& outcomes, Record& record, const std::function<Record()>& choose,
                      std::ostream& out) {
  const Manifest& m = *ctx.manifest;
  const std::string problem_set = sanitized_problems_of(m, ctx.checks_per_problem, ctx.key_version);
  auto key_of = [&](std::size_t v) {
    return worklog::VariantKey{ctx.context_key, m.kernel, m.variants[v].name, variant_hash(ctx, v)};
  };
  std::set<std::size_t> clean;
  // The contexts the runs go to, pinned each to its GPU. Declared before `running`: a run still in
  // flight when the gate ends holds its context and the sanitizer's path.
  std::vector<const EvaluationContext*> gpus;
  if (ctx.pool != nullptr) {
    for (std::size_t g = 0; g < ctx.pool->size(); ++g) gpus.push_back(&ctx.pool->context_of(g));
  } else {
    gpus.push_back(&ctx);
  }
  const std::size_t lanes = sanitizer_lanes(o.sanitize_jobs) * gpus.size();
  std::size_t started = 0;
  std::map<std::size_t, std::shared_future<SanitizerResult>> running;
  auto in_flight = [&] {
    return static_cast<std::size_t>(std::count_if(running.begin(), running.end(), [](const auto& r) {
      return r.second.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
    }));
  };
  while (true) {
    std::vector<std::size_t> pending;
    for (const auto& n : dispatched_variants(record, o.sanitize_runners_up)) {
      std::size_t v = *m.variant_index(n);
      if (!clean.count(v)) pending.push_back(v);
    }
    if (pending.empty()) return;
    if (lanes > 1) {
      for (std::size_t v : pending) {
        if (running.count(v) || in_flight() >= lanes || ctx.log->sanitizer_pass(key_of(v), problem_set)) continue;
        const EvaluationContext* on = gpus[started++ % gpus.size()];
        running.emplace(v, std::async(std::launch::async, [on, &sanitizer, v] {
                             return sanitize_variant(*on, v, sanitizer);
                           }).share());
      }
    }
    const std::size_t next = pending.front();
    const std::string& name = m.variants[next].name;
    const worklog::VariantKey key = key_of(next);
    // The same source, checks and context ran clean before: the sanitizer would only say so again.
    if (auto pass = ctx.log->sanitizer_pass(key, problem_set)) {
      clean.insert(next);
      out << "kiln: " << name << ": compute-sanitizer clean (" << pass->tools << ", from the worklog, "
          << pass->created_at << ")\n";
      continue;
    }
    auto run = running.find(next);
    SanitizerResult s = run != running.end() ? run->second.get() : sanitize_variant(ctx, next, sanitizer);
    if (run != running.end() && !s.ran && !s.timed_out && lanes > 1) {
      // A run beside others that did not finish is run again alone, once every run in flight is
      // over, so that one disturbed by its neighbours is told from one that cannot run at all (on
      // two H200, four of nine gate runs ended with exit code 1 and a log naming no error; whether the
      // neighbours caused it is not known). Not a run stopped at its time limit (up to hours under
      // racecheck), nor one that had no neighbour.
      for (auto& [other, result] : running) result.wait();
      out << "kiln: " << name << ": compute-sanitizer did not finish beside other runs (" << s.detail
          << "); run again alone\n";
      s = sanitize_variant(ctx, next, sanitizer);
    }
    if (s.clean) {
      clean.insert(next);
      out << "kiln: " << name << ": compute-sanitizer " << (s.ran ? "clean (" + s.tools + ")" : "skipped: " + s.detail)
          << "\n";
      // Only a run that finished is a pass; one that could not run is asked again next time.
      if (s.ran) {
        worklog::SanitizerPass pass;
        pass.key = key;
        pass.problem_set = problem_set;
        pass.tools = s.tools;
        pass.session_id = ctx.session_id;
        ctx.log->put_sanitizer_pass(pass);
      }
      continue;
    }
    out << "kiln: " << name << ": compute-sanitizer found errors; the next candidate is taken\n    " << s.detail << "\n";
    worklog::Attempt a;
    a.session_id = ctx.session_id;
    a.kernel = m.kernel;
    a.variant = name;
    a.author = worklog::Author::kiln;
    a.hypothesis = "a winner's checks under compute-sanitizer find no error the output comparison missed";
    a.change = "sanitizer gate";
    a.verdict = Verdict::failed;
    a.failure_kind = FailureKind::sanitizer;
    a.explanation = "sanitizer: " + s.detail;
    a.tags = {"sanitizer", m.backend};
    a.evidence = store_failure(ctx, key, FailureKind::sanitizer, s.detail);
    ctx.log->add_attempt(a);
    for (auto& oc : outcomes) {
      if (oc.index != next) continue;
      oc.failure = FailureKind::sanitizer;
      oc.detail = s.detail;
      oc.score.reset();
    }
    record = choose();
  }
}

}  // namespace

std::size_t add_worklog_outcomes(const EvaluationContext& ctx, std::vector<VariantOutcome>& outcomes) {
  std::vector<bool> proposed(ctx.manifest->variants.size(), false);
  for (const auto& oc : outcomes) proposed[oc.index] = true;
  EvaluationContext reading = ctx;
  reading.measure = false;
  reading.compiler = nullptr;
  reading.pool = nullptr;
  std::size_t added = 0;
  for (std::size_t v = 0; v < proposed.size(); ++v) {
    if (proposed[v]) continue;
    VariantOutcome oc = evaluate_variant(reading, v);
    if (!oc.complete && !oc.failure) continue;  // nothing of it in the worklog
    outcomes.push_back(std::move(oc));
    ++added;
  }
  return added;
}

Record choose_record(const EvaluationContext& ctx, const SelectionInput& in, std::vector<VariantOutcome>& outcomes,
                     std::size_t finalists, std::ostream& out, StageClock* clock) {
  Record record = select_winners(in, outcomes, [&](std::size_t v) { return variant_hash(ctx, v); });
  time_coverage(ctx, outcomes, finalists, out);
  if (clock) clock->lap("coverage");
  fit_domain(ctx, outcomes, in.rates, record, out);
  if (clock) clock->lap("domain");
  return record;
}

Record choose_and_sanitize(const EvaluationContext& ctx, const SelectionInput& in, std::vector<VariantOutcome>& outcomes,
                           const TuneOptions& o, std::ostream& out, StageClock& clock) {
  auto hash_of = [&](std::size_t v) { return variant_hash(ctx, v); };
  // Pooled timings can separate some of a tie set and bring others within noise: settled again,
  // each pass measuring the new tie set with every earlier one, until no tie set has a new member,
  // so that a re-run from the worklog finds every tie settled and measures nothing. The sets only
  // grow, so this ends; the bound only caps the cost on a machine too noisy to separate anything.
  constexpr int kSettlePasses = 8;
  std::map<std::string, std::set<std::size_t>> settled;
  for (int pass = 0; o.interleave_rounds > 0 && pass < kSettlePasses; ++pass) {
    if (settle_near_ties(ctx, select_winners(in, outcomes, hash_of), outcomes, o.interleave_rounds, settled, out) == 0) {
      break;
    }
  }
  clock.lap("near-ties");
  Record record = choose_record(ctx, in, outcomes, o.finalists, out, &clock);
  if (!model::backend_named(ctx.manifest->backend).sanitizer || !o.sanitize) return record;
  // The winners and, for a space with a domain, the learned dispatch fitted to the coverage
  // points and judged on the held-out ones (from the worklog where measured before).
  auto choose = [&] {
    Record chosen = select_winners(in, outcomes, hash_of);
    fit_domain(ctx, outcomes, in.rates, chosen, out);
    return chosen;
  };
  if (auto sanitizer = find_tool("compute-sanitizer")) {
    sanitize_choices(ctx, o, *sanitizer, outcomes, record, choose, out);
  } else if (o.sanitize_required) {
    throw Error("compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin); --sanitize needs it");
  } else {
    out << "kiln: compute-sanitizer not found: the winners are not sanitized (--no-sanitize says this is meant)\n";
  }
  clock.lap("gate");
  return record;
}

}  // namespace kiln::tuner
