// Recorded results for offline search: the score every variant of a kernel got in the worklog's
// most recent tuning context of that kernel, to drive a Searcher through replay() without a device.
#pragma once
#include <cstddef>
#include <map>
#include <optional>

#include "kiln/worklog/worklog.hpp"
#include "manifest.hpp"
#include "search.hpp"

namespace kiln::tuner {

// Variant index -> geometric mean of its median times over the space's problems, or nothing for
// a variant that failed. Variants the worklog never measured are absent.
std::map<std::size_t, std::optional<double>> recorded_scores(const worklog::Worklog& log, const Manifest& manifest);

// The same with each bucket's score as well (Evaluation::parts, bucket_scores), as a tuning hands
// them to its search.
std::map<std::size_t, Evaluation> recorded_evaluations(const worklog::Worklog& log, const Manifest& manifest);

}  // namespace kiln::tuner
