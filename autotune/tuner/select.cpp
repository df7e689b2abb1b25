#include "select.hpp"

#include <algorithm>
#include <cstdio>

#include "floors.hpp"
#include "noise.hpp"

namespace kiln::tuner {
namespace {

struct Ranked {
  double score = 0;                // geometric mean over the bucket's problems
  std::optional<double> noise;     // relative; nothing when a timing has no recorded spread
  const VariantOutcome* outcome = nullptr;
};

Ranked rank_entry(const Manifest& m, const std::vector<std::size_t>& members, const VariantOutcome& oc) {
  std::vector<double> times;
  std::vector<std::optional<double>> spreads;
  for (std::size_t i : members) {
    const std::string key = m.problems[i].key();
    times.push_back(oc.median_s.at(key));
    auto s = oc.spread_s.find(key);
    spreads.push_back(s == oc.spread_s.end() ? std::nullopt : std::optional<double>(s->second));
  }
  return {*geomean(times), relative_noise(times, spreads), &oc};
}

// A variant must beat the space's default by more than the noise to replace it: when the
// fastest is within noise of the default, the default moves to the front. Without recorded
// noise the fastest median wins, as before noise was recorded.
void keep_default_within_noise(const Manifest& m, std::vector<Ranked>& ranked, RecordedBucket& rb) {
  auto is_default = [&](const Ranked& r) { return m.variants[r.outcome->index].name == m.default_variant; };
  auto d = std::find_if(ranked.begin(), ranked.end(), is_default);
  if (d == ranked.end() || d == ranked.begin() || !d->noise || !ranked[0].noise) return;
  if (!within_noise(ranked[0].score, ranked[0].noise, d->score, d->noise)) return;
  char why[256];
  std::snprintf(why, sizeof why, "the default is kept: %s was %.1f%% faster, within the noise (%.1f%%)",
                m.variants[ranked[0].outcome->index].name.c_str(), (1 - ranked[0].score / d->score) * 100,
                std::max(*ranked[0].noise, *d->noise) * 100);
  rb.choice = why;
  std::rotate(ranked.begin(), d, d + 1);
}

}  // namespace

Record select_winners(const SelectionInput& in, const std::vector<VariantOutcome>& outcomes,
                      const std::function<std::string(std::size_t)>& variant_hash_of) {
  const Manifest& m = *in.manifest;
  std::vector<Floor> floors;
  for (const auto& p : m.problems) floors.push_back(floor_of(m.work_of(p), in.rates));

  Record record;
  record.kernel = m.kernel;
  record.backend = m.backend;
  record.space_hash = m.space_hash;
  record.context_key = in.context_key;
  record.preset = in.preset;
  record.device_name = in.device.name;
  record.compute_capability = in.device.compute_capability.value_or("");
  record.driver = in.device.driver.value_or("");
  record.cuda_runtime = in.device.cuda_runtime.value_or("");
  record.strategy = in.strategy;
  record.rates = in.rates;
  std::size_t failed = 0, invalid = 0, passed = 0, evaluated = 0;
  for (const auto& oc : outcomes) {
    if (!oc.complete) continue;
    ++evaluated;
    if (!oc.failure) {
      ++passed;
    } else if (*oc.failure == worklog::FailureKind::correctness) {
      ++invalid;
    } else {
      ++failed;
    }
  }
  record.counts = {{"feasible", m.variants.size()},
                   {"evaluated", evaluated},
                   {"passed", passed},
                   {"invalid", invalid},
                   {"failed", failed}};

  std::string newest;
  for (std::size_t b = 0; b < m.buckets.size(); ++b) {
    RecordedBucket rb;
    rb.name = m.buckets[b].name;
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < m.problems.size(); ++i) {
      if (m.bucket_of(m.problems[i]) == b) members.push_back(i);
    }
    if (members.empty()) {
      rb.reason = "no tuning problem falls in this bucket";
      record.buckets.push_back(std::move(rb));
      continue;
    }
    std::vector<Ranked> ranked;
    for (const auto& oc : outcomes) {
      if (!oc.complete || oc.failure) continue;
      ranked.push_back(rank_entry(m, members, oc));
    }
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      return a.score != b.score ? a.score < b.score : a.outcome->index < b.outcome->index;
    });
    if (ranked.empty()) {
      rb.reason = "no variant passed validation and timing";
      record.buckets.push_back(std::move(rb));
      continue;
    }
    keep_default_within_noise(m, ranked, rb);
    const VariantOutcome& winner = *ranked[0].outcome;
    rb.winner = m.variants[winner.index].name;
    rb.time_s = ranked[0].score;
    rb.noise = ranked[0].noise;
    std::vector<double> bucket_floors;
    for (std::size_t i : members) {
      RecordedProblem rp;
      rp.problem = m.problems[i];
      rp.time_s = winner.median_s.at(m.problems[i].key());
      rp.floor_s = floors[i].seconds;
      rp.bound = floors[i].bound;
      if (rp.floor_s > 0) bucket_floors.push_back(rp.floor_s);
      rb.problems.push_back(std::move(rp));
      auto meas = in.log->measurement({in.context_key, m.kernel, *rb.winner, variant_hash_of(winner.index),
                                       m.problems[i].key(), worklog::Phase::bench});
      if (meas && meas->created_at > newest) newest = meas->created_at;
    }
    rb.floor_s = bucket_floors.size() == members.size() ? *geomean(bucket_floors) : 0.0;
    for (std::size_t k = 1; k < ranked.size() && k <= 3; ++k) {
      RecordedContender c{m.variants[ranked[k].outcome->index].name, ranked[k].score, ranked[k].noise, std::nullopt};
      if (ranked[0].noise && ranked[k].noise) {
        c.within_noise = within_noise(ranked[0].score, ranked[0].noise, ranked[k].score, ranked[k].noise);
      }
      rb.contenders.push_back(std::move(c));
    }
    record.buckets.push_back(std::move(rb));
  }
  // Without a bucket winner (a learned dispatch is fitted afterwards), the newest timing in the
  // worklog of any variant that passed, on the listed problems, dates the record: read from the
  // worklog, as above, so that a tuning and `kiln record` give the same date.
  if (newest.empty()) {
    for (const auto& oc : outcomes) {
      if (!oc.complete || oc.failure) continue;
      for (const auto& p : m.problems) {
        auto meas = in.log->measurement({in.context_key, m.kernel, m.variants[oc.index].name, variant_hash_of(oc.index),
                                         p.key(), worklog::Phase::bench});
        if (meas && meas->created_at > newest) newest = meas->created_at;
      }
    }
  }
  record.date = newest.empty() ? "unknown" : newest.substr(0, 10);
  return record;
}

}  // namespace kiln::tuner
