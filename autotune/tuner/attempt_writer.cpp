#include "attempt_writer.hpp"

#include <sstream>

#include "kiln/worklog/markdown.hpp"
#include "numbers.hpp"

namespace kiln::tuner {
namespace {

using worklog::FailureKind;
using worklog::Verdict;

std::string slug(const std::string& label) {
  std::string s;
  for (char c : label) s += c == ' ' ? '-' : c;
  return s;
}

std::string params_text(const Manifest& m, std::size_t v) {
  std::string s;
  for (std::size_t k = 0; k < m.parameters.size(); ++k) {
    if (!s.empty()) s += ' ';
    s += m.parameters[k].name + "=" + value_text(m.variants[v].params[k]);
  }
  return s;
}

std::string change_text(const Manifest& m, std::size_t v, std::optional<std::size_t> best) {
  if (!best) {
    return (m.variants[v].name == m.default_variant ? "the space's default configuration: " : "first configuration measured: ") +
           params_text(m, v);
  }
  std::string s;
  for (std::size_t k = 0; k < m.parameters.size(); ++k) {
    const auto& from = m.variants[*best].params[k];
    const auto& to = m.variants[v].params[k];
    if (from == to) continue;
    if (!s.empty()) s += ", ";
    s += m.parameters[k].name + " " + value_text(from) + " -> " + value_text(to);
  }
  return s.empty() ? "same parameters as the best so far" : s + " (against the best so far, " + m.variants[*best].name + ")";
}

}  // namespace

std::set<std::string> attempted_variants(const EvaluationContext& ctx) {
  std::set<std::string> attempted;
  for (const auto& s : ctx.log->sessions()) {
    if (s.context_key != ctx.context_key || s.kernel != ctx.manifest->kernel || s.id == ctx.session_id) continue;
    worklog::AttemptFilter f;
    f.session_id = s.id;
    for (const auto& a : ctx.log->attempts(f)) {
      if (a.variant) attempted.insert(*a.variant);
    }
  }
  return attempted;
}

AttemptWriter::AttemptWriter(const EvaluationContext& ctx, const Searcher& searcher, ScoreFloor floor,
                             std::set<std::string> attempted)
    : ctx_(ctx), searcher_(searcher), floor_(std::move(floor)), attempted_(std::move(attempted)) {}

void AttemptWriter::write(std::size_t v, const VariantOutcome& outcome, std::optional<std::size_t> best,
                          std::optional<double> best_score) {
  const Manifest& m = *ctx_.manifest;
  const std::string& name = m.variants[v].name;
  // A retried failure is new evidence: it gets an attempt of its own.
  if (attempted_.count(name) && outcome.retried.empty()) return;
  worklog::Attempt a;
  a.session_id = ctx_.session_id;
  a.kernel = m.kernel;
  a.variant = name;
  a.author = worklog::Author::kiln;
  a.hypothesis = searcher_.hypothesis();
  a.change = change_text(m, v, best);
  a.baseline = best_score;
  a.unit = "s";
  a.floor = floor_.seconds;
  a.tags = {searcher_.name(), m.backend};
  if (!outcome.evidence.empty()) a.evidence = outcome.evidence;
  if (!outcome.retried.empty()) {
    a.hypothesis = "retried: " + outcome.retried + "; the earlier failure may have been the conditions', not the variant's";
    a.tags.push_back("retried");
  }
  if (outcome.failure) {
    a.verdict = *outcome.failure == FailureKind::correctness ? Verdict::invalid : Verdict::failed;
    a.failure_kind = *outcome.failure;
    a.explanation = std::string(worklog::to_string(*outcome.failure)) + ": " + outcome.detail;
    a.tags.push_back(std::string(worklog::to_string(*outcome.failure)));
  } else {
    a.result = outcome.score;
    bool better = !best_score || *outcome.score < *best_score;
    a.verdict = better ? Verdict::keep : Verdict::revert;
    const std::size_t problems = m.problems.size();
    std::ostringstream e;
    e << "geometric mean " << us(*outcome.score) << " over " << problems << " problem" << (problems == 1 ? "" : "s");
    if (best_score) {
      e << ", " << fixed((*outcome.score / *best_score - 1) * 100, 1) << "% against the best so far (" << us(*best_score)
        << ")";
    }
    if (floor_.seconds) {
      double ratio = *outcome.score / *floor_.seconds;
      e << "; " << fixed(ratio, 2) << "x its floor of " << us(*floor_.seconds) << " (" << worklog::floor_reading(ratio)
        << ", bound by " << floor_.bound << ")";
      a.tags.push_back(slug(floor_.bound));
    }
    a.explanation = e.str();
  }
  if (!outcome.retried.empty()) a.explanation = "retried (" + outcome.retried + "): " + a.explanation;
  ctx_.log->add_attempt(a);
  attempted_.insert(name);
}

}  // namespace kiln::tuner
