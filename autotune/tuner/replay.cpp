#include "replay.hpp"

#include <stdexcept>

#include "evaluate.hpp"

namespace kiln::tuner {

std::map<std::size_t, std::optional<double>> recorded_scores(const worklog::Worklog& log, const Manifest& m) {
  std::map<std::size_t, std::optional<double>> scores;
  for (const auto& [v, e] : recorded_evaluations(log, m)) scores[v] = e.score;
  return scores;
}

std::map<std::size_t, Evaluation> recorded_evaluations(const worklog::Worklog& log, const Manifest& m) {
  std::string context;
  for (const auto& s : log.sessions()) {
    if (s.kernel == m.kernel) context = s.context_key;
  }
  if (context.empty()) throw std::runtime_error("the worklog has no tuning session of kernel " + m.kernel);
  std::map<std::string, std::map<std::string, double>> bench;
  std::map<std::string, bool> failed;
  for (const auto& meas : log.measurements(context, m.kernel)) {
    if (meas.status == worklog::MeasurementStatus::failed) failed[meas.key.variant] = true;
    if (meas.key.phase == worklog::Phase::bench && meas.status == worklog::MeasurementStatus::ok) {
      bench[meas.key.variant][meas.key.problem_key] = median_of(meas);
    }
  }
  for (const auto& f : log.variant_failures(context, m.kernel)) failed[f.key.variant] = true;
  std::map<std::size_t, Evaluation> evaluations;
  for (std::size_t i = 0; i < m.variants.size(); ++i) {
    const std::string& name = m.variants[i].name;
    if (failed.count(name)) {
      evaluations[i] = Evaluation{i, std::nullopt, {}};
      continue;
    }
    auto it = bench.find(name);
    if (it == bench.end()) continue;
    std::vector<double> times;
    for (const auto& p : m.problems) {
      auto t = it->second.find(p.key());
      if (t != it->second.end()) times.push_back(t->second);
    }
    if (times.size() == m.problems.size()) evaluations[i] = Evaluation{i, geomean(times), bucket_scores(m, it->second)};
  }
  return evaluations;
}

}  // namespace kiln::tuner
