// Near-ties are measured again in turns (A, B, A, B...) before a winner is named: drifts of the
// machine (clocks, temperature, other load) then fall on every candidate alike.
#pragma once
#include <cstddef>
#include <vector>

#include "evaluate.hpp"

namespace kiln::tuner {

// Times each of `variants` on `problems`, `rounds` turns each, interleaved, and stores per
// variant and problem the pooled timing: the earlier repetitions and the new ones together, so
// nothing measured is lost. Candidates already pooled with the same rivals are left as they are.
// Returns how many processes ran.
std::size_t remeasure_interleaved(const EvaluationContext& ctx, const std::vector<std::size_t>& variants,
                                  const std::vector<Problem>& problems, int rounds);

}  // namespace kiln::tuner
