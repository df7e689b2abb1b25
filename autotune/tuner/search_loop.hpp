// The second stage of `kiln tune`: the search. The strategy proposes, each variant is measured (or
// read from the worklog), the strategy observes its score, and its attempt is written; a progress
// line says how far the search is, the best so far and when it should end.
#pragma once
#include <cstddef>
#include <iosfwd>
#include <vector>

#include "evaluate.hpp"
#include "open_tuning.hpp"

namespace kiln::tuner {

struct SearchResult {
  std::vector<VariantOutcome> outcomes;  // in the order measured
  std::size_t ran = 0;                   // variants measured now, not read from the worklog
};

SearchResult run_search(Tuning& tuning, bool progress, std::ostream& out);

}  // namespace kiln::tuner
