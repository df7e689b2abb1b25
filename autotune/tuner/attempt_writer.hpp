// The worklog's attempts of a search: one per variant and context (a retried failure gets one of
// its own), in prose whose hypothesis the strategy supplies (Searcher::hypothesis) and whose
// change, verdict and explanation follow from the outcome and the best so far.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "evaluate.hpp"
#include "manifest.hpp"
#include "search.hpp"

namespace kiln::tuner {

// The score a search is judged against: the geometric mean of the problems' floors, and the
// resource that bounds the first problem.
struct ScoreFloor {
  std::optional<double> seconds;  // nothing when a problem has no floor
  std::string bound;
};

class AttemptWriter {
 public:
  // `attempted`: the variants with an attempt in this context already (from earlier sessions).
  AttemptWriter(const EvaluationContext& ctx, const Searcher& searcher, ScoreFloor floor, std::set<std::string> attempted);

  // Writes the attempt of variant `v` measured (or read) with `outcome`, against the best so far;
  // nothing when the variant has its attempt and this was no retry.
  void write(std::size_t v, const VariantOutcome& outcome, std::optional<std::size_t> best,
             std::optional<double> best_score);

 private:
  const EvaluationContext& ctx_;
  const Searcher& searcher_;
  ScoreFloor floor_;
  std::set<std::string> attempted_;
};

// The variants with an attempt in `ctx`'s context from sessions other than ctx.session_id.
std::set<std::string> attempted_variants(const EvaluationContext& ctx);

}  // namespace kiln::tuner
