#include "select.hpp"

#include <algorithm>

#include "floors.hpp"

namespace kiln::tuner {

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
  record.device_name = in.device.value("name", std::string("unknown device"));
  record.compute_capability = in.device.value("compute_capability", std::string{});
  record.driver = in.device.value("driver", std::string{});
  record.cuda_runtime = in.device.value("cuda_runtime", std::string{});
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
    std::vector<std::pair<double, const VariantOutcome*>> ranked;
    for (const auto& oc : outcomes) {
      if (!oc.complete || oc.failure) continue;
      std::vector<double> times;
      for (std::size_t i : members) times.push_back(oc.median_s.at(m.problems[i].key()));
      ranked.emplace_back(*geomean(times), &oc);
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second->index < b.second->index;
    });
    if (ranked.empty()) {
      rb.reason = "no variant passed validation and timing";
      record.buckets.push_back(std::move(rb));
      continue;
    }
    const VariantOutcome& winner = *ranked[0].second;
    rb.winner = m.variants[winner.index].name;
    rb.time_s = ranked[0].first;
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
      rb.contenders.push_back({m.variants[ranked[k].second->index].name, ranked[k].first});
    }
    record.buckets.push_back(std::move(rb));
  }
  record.date = newest.empty() ? "unknown" : newest.substr(0, 10);
  return record;
}

}  // namespace kiln::tuner
