#include "search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

#include "kiln/error.hpp"
#include "kiln/join.hpp"

#include "manifest.hpp"

namespace kiln::tuner {
namespace {
// A bound as people write it: 0, 0.5, 1.
std::string format_bound(double v) {
  std::string text = std::to_string(v);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}
}  // namespace

std::optional<std::size_t> SearchSpace::find(const std::vector<int>& coords) const {
  if (positions.size() == coordinates.size()) {
    auto it = positions.find(coords);
    if (it == positions.end()) return std::nullopt;
    return it->second;
  }
  for (std::size_t i = 0; i < coordinates.size(); ++i) {
    if (coordinates[i] == coords) return i;
  }
  return std::nullopt;
}

SearchSpace SearchSpace::from(const Manifest& manifest) {
  SearchSpace space;
  for (const auto& p : manifest.parameters) {
    space.value_counts.push_back(static_cast<int>(p.values.size()));
    space.categorical.push_back(p.symbolic());
  }
  for (const auto& v : manifest.variants) {
    std::vector<int> coords;
    for (std::size_t k = 0; k < manifest.parameters.size(); ++k) {
      const auto& values = manifest.parameters[k].values;
      auto it = std::find(values.begin(), values.end(), v.params[k]);
      if (it == values.end()) throw std::runtime_error("variant " + v.name + " has a value outside its parameter's list");
      coords.push_back(static_cast<int>(it - values.begin()));
    }
    space.positions.emplace(coords, space.coordinates.size());
    space.coordinates.push_back(std::move(coords));
  }
  space.default_variant = manifest.variant_index(manifest.default_variant).value_or(0);
  return space;
}

StrategyOptions StrategyOptions::parse(const std::vector<std::string>& assignments) {
  StrategyOptions o;
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error("strategy option '" + a + "' is not of the form key=value");
    }
    o.values_[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return o;
}

namespace {
// The whole text as one finite number, or nothing.
std::optional<double> finite_number(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}
}  // namespace

std::optional<std::size_t> StrategyOptions::count(const std::string& key, std::size_t whole) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  const std::string& text = it->second;
  const std::optional<double> parsed = finite_number(text);
  const double v = parsed.value_or(0);
  if (!parsed || v < 0 || (v >= 1 && v != std::floor(v)) || v > 1e12) {
    throw Error("strategy option " + key + "=" + text + ": expected a count (20) or a fraction of the space (0.15)");
  }
  if (v > 0 && v < 1) return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(v * static_cast<double>(whole))));
  return static_cast<std::size_t>(v);
}

std::size_t StrategyOptions::budget(std::size_t whole) const {
  const std::size_t b = count("budget", whole).value_or(0);
  return b > 0 ? b : (whole + 2) / 3;
}

std::optional<double> StrategyOptions::number(const std::string& key, double low, double high) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  const std::string& text = it->second;
  const std::optional<double> parsed = finite_number(text);
  const double v = parsed.value_or(0);
  if (!parsed || v < low || v > high) {
    throw Error("strategy option " + key + "=" + text + ": expected a number from " + format_bound(low) + " to " +
                format_bound(high));
  }
  return v;
}

namespace {
std::map<std::string, Strategy>& registry() {
  static std::map<std::string, Strategy> r;
  return r;
}
}  // namespace

const std::map<std::string, Strategy>& strategies() { return registry(); }

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& [name, s] : registry()) names.push_back(name);
  return names;
}

bool register_strategy(Strategy strategy) {
  std::string name = strategy.name;
  return registry().emplace(std::move(name), std::move(strategy)).second;
}

std::unique_ptr<Searcher> make_searcher(const std::string& name, const SearchSpace& space,
                                        const StrategyOptions& options, std::uint64_t seed) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    throw Error("unknown search strategy '" + name + "' (known: " + join(strategy_names(), ", ") + ")");
  }
  const Strategy& s = it->second;
  for (const auto& [key, value] : options.values()) {
    bool known = std::any_of(s.options.begin(), s.options.end(), [&](const StrategyOption& o) { return o.name == key; });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& o : s.options) names.push_back(o.name);
      throw Error("search strategy '" + name + "' has no option '" + key + "' (its options: " +
                  (names.empty() ? std::string("none") : join(names, ", ")) + ")");
    }
  }
  return s.make(space, options, seed);
}

ReplayResult replay(Searcher& searcher, const std::function<std::optional<double>(std::size_t)>& recorded) {
  return replay_evaluations(searcher, [&](std::size_t v) { return Evaluation{v, recorded(v), {}}; });
}

ReplayResult replay_evaluations(Searcher& searcher, const std::function<Evaluation(std::size_t)>& recorded) {
  ReplayResult result;
  std::optional<double> best_score;
  while (auto v = searcher.propose()) {
    Evaluation e = recorded(*v);
    searcher.observe(e);
    result.evaluations.push_back(e);
    if (e.score && (!best_score || *e.score < *best_score)) {
      best_score = e.score;
      result.best = e.variant;
    }
  }
  return result;
}

}  // namespace kiln::tuner
