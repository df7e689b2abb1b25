#include "replay_table.hpp"

#include <algorithm>
#include <cmath>

#include "kiln/error.hpp"
#include "kiln/quantile.hpp"
#include "numbers.hpp"

namespace kiln::tuner {

std::vector<std::string> budgeted_strategies() {
  std::vector<std::string> names;
  for (const auto& [name, s] : strategies()) {
    if (std::any_of(s.options.begin(), s.options.end(), [](const StrategyOption& o) { return o.name == "budget"; })) {
      names.push_back(name);
    }
  }
  return names;
}

std::vector<TableRow> replay_table(const SearchSpace& space,
                                   const std::function<std::optional<double>(std::size_t)>& recorded,
                                   const TableSettings& settings) {
  if (settings.seeds == 0) throw Error("a strategy table needs at least one seed");
  std::optional<double> optimum;
  for (std::size_t v = 0; v < space.size(); ++v) {
    if (auto s = recorded(v); s && (!optimum || *s < *optimum)) optimum = s;
  }
  if (!optimum) throw Error("no variant of the space passed: there is no optimum to compare with");
  const std::vector<std::string> budgeted = budgeted_strategies();
  const std::vector<std::string> names = settings.strategies.empty() ? budgeted : settings.strategies;
  for (const auto& name : names) {
    if (std::find(budgeted.begin(), budgeted.end(), name) == budgeted.end()) {
      throw Error("strategy '" + name + "' takes no budget (budgeted strategies: " + [&] {
        std::string list;
        for (const auto& b : budgeted) list += (list.empty() ? "" : ", ") + b;
        return list;
      }() + ")");
    }
  }
  std::vector<TableRow> rows;
  for (const auto& name : names) {
    for (double fraction : settings.fractions) {
      if (!(fraction > 0 && fraction <= 1)) throw Error("budget fraction " + fixed(fraction, 3) + " is not in (0, 1]");
      TableRow row{name, fraction, static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(space.size()) - 1e-9)), {}, {}};
      row.budget = std::max<std::size_t>(row.budget, 1);
      for (std::size_t k = 0; k < settings.seeds; ++k) {
        auto searcher = make_searcher(name, space, StrategyOptions{{"budget", std::to_string(row.budget)}},
                                      settings.first_seed + k);
        ReplayResult result = replay(*searcher, recorded);
        row.reached.push_back(result.best ? *optimum / *recorded(*result.best) : 0.0);
        row.evaluations.push_back(result.evaluations.size());
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string format_table(const std::vector<TableRow>& rows) {
  std::string out =
      "| strategy | budget | evaluations | median | quartiles | worst |\n"
      "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows) {
    const auto [fewest, most] = std::minmax_element(r.evaluations.begin(), r.evaluations.end());
    std::string evaluations = std::to_string(*fewest);
    if (*most != *fewest) evaluations += "–" + std::to_string(*most);
    out += "| " + r.strategy + " | " + fixed(100 * r.fraction, 0) + " % (" + std::to_string(r.budget) + ") | " + evaluations +
           " | " + fixed(quantile(r.reached, 0.5), 3) + " | " + fixed(quantile(r.reached, 0.25), 3) + "–" +
           fixed(quantile(r.reached, 0.75), 3) + " | " + fixed(*std::min_element(r.reached.begin(), r.reached.end()), 3) +
           " |\n";
  }
  return out;
}

}  // namespace kiln::tuner
