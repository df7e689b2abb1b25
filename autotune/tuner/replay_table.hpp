// The offline evaluation of search strategies: every budgeted strategy, at every budget (a fraction
// of the space), over many seeds, replayed on a kernel's recorded results, and how close each run
// came to the best variant of the space. `kiln replay --table` prints it; the README publishes it
// for the recorded spaces listed in presets/records/replay.json, and a test recomputes it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search.hpp"

namespace kiln::tuner {

struct TableSettings {
  std::vector<std::string> strategies;           // empty: every strategy that takes a budget
  std::vector<double> fractions{0.05, 0.10, 0.15};  // budgets, as fractions of the space
  std::size_t seeds = 20;
  std::uint64_t first_seed = 1;  // seeds first_seed, first_seed + 1, ...
};

struct TableRow {
  std::string strategy;
  double fraction = 0;     // of the space
  std::size_t budget = 0;  // variants: the fraction of the space, rounded up
  // Per seed, in seed order: the optimum's score over the best score found (1 when the search
  // found the optimum, 0 when no variant it measured passed).
  std::vector<double> reached;
  std::vector<std::size_t> evaluations;  // per seed: variants measured
};

// Replays the strategies on `recorded` (a score, or nothing for a failed variant, for every
// variant of `space`). Throws kiln::Error for a strategy without a budget, a fraction outside
// (0, 1], no seeds, or a space where no variant passed.
std::vector<TableRow> replay_table(const SearchSpace& space,
                                   const std::function<std::optional<double>(std::size_t)>& recorded,
                                   const TableSettings& settings);

// The strategies that take the option `budget`, by name.
std::vector<std::string> budgeted_strategies();

// The table in Markdown: strategy, budget, evaluations, then the median, quartiles and worst of
// the fraction of the optimum reached, with three decimals. The README holds it as printed.
std::string format_table(const std::vector<TableRow>& rows);

}  // namespace kiln::tuner
