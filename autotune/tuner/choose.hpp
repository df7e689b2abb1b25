// The third stage of `kiln tune`: choosing what the header dispatches to. The winners of each
// bucket and, for a space with a problem domain, the learned dispatch fitted to the coverage points
// (choose_record, which `kiln record` runs on a worklog alone); near-ties measured again in turns
// first, and the sanitizer gate after.
#pragma once
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <vector>

#include "evaluate.hpp"
#include "record.hpp"
#include "select.hpp"
#include "stage_clock.hpp"
#include "tune.hpp"

namespace kiln::tuner {

// Adds to `outcomes` every variant the search did not propose whose results the worklog holds in
// this context (a search interrupted and resumed with another seed, another strategy or budget
// before), read from the worklog and never measured: the record then chooses from everything
// measured, as `kiln record` does from the worklog alone. Returns how many were added.
std::size_t add_worklog_outcomes(const EvaluationContext& ctx, std::vector<VariantOutcome>& outcomes);

// The winners (select_winners), the coverage points timed on `finalists` variants of each listed
// problem (0: what the worklog holds), and the learned dispatch where the space has a domain; the
// stages "coverage" and "domain" lapped on `clock` when given.
Record choose_record(const EvaluationContext& ctx, const SelectionInput& in, std::vector<VariantOutcome>& outcomes,
                     std::size_t finalists, std::ostream& out, StageClock* clock = nullptr);

// Near-ties settled, choose_record, then the sanitizer gate where the options ask for it (CUDA):
// throws kiln::Error when --sanitize requires compute-sanitizer and there is none. Laps the
// stages near-ties, coverage, domain and gate on `clock`.
Record choose_and_sanitize(const EvaluationContext& ctx, const SelectionInput& in, std::vector<VariantOutcome>& outcomes,
                           const TuneOptions& o, std::ostream& out, StageClock& clock);

}  // namespace kiln::tuner
