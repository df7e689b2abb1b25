#include "dispatch_tree.hpp"

#include "kiln/model/json_reader.hpp"
#include "kiln/model/protocol_read.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace kiln::tuner {
namespace {

// Times equal within rounding count as equal: a point's best variant always serves it.
constexpr double kRelativeSlack = 1e-12;

// Where a split between two measured values a < b of an int dim goes: the power of two in [a, b)
// nearest their midpoint in log2, when there is one, else that midpoint, rounded, kept so that
// `<=` separates them. Tile sizes and register caches are powers of two, so that is where a
// variant's performance falls off a cliff: split at log2 midpoints, softmax's tree sent held-out
// rows of 138, 169 and 171 columns to a variant whose row cache holds 128 elements, which streams
// them at 1.4-1.8x the time of the 256-element one (H200, 2026-11-29).
std::int64_t threshold_between(std::int64_t a, std::int64_t b) {
  const double mid_log2 = (std::log2(static_cast<double>(a)) + std::log2(static_cast<double>(b))) / 2;
  std::optional<std::int64_t> pow2;
  for (std::int64_t p = 1; p > 0 && p < b; p *= 2) {
    if (p >= a && (!pow2 || std::fabs(std::log2(static_cast<double>(p)) - mid_log2) <
                                std::fabs(std::log2(static_cast<double>(*pow2)) - mid_log2))) {
      pow2 = p;
    }
  }
  if (pow2) return *pow2;
  return std::clamp(static_cast<std::int64_t>(std::llround(std::exp2(mid_log2))), a, b - 1);
}

bool goes_yes(const TreeNode& n, const Problem& p) {
  for (const auto& [name, value] : p.dims()) {
    if (name != n.dim) continue;
    if (n.threshold) return std::get<std::int64_t>(value) <= *n.threshold;
    return std::get<std::string>(value) == *n.symbol;
  }
  throw std::runtime_error("dispatch tree: the problem " + p.key() + " has no dim '" + n.dim + "'");
}

struct Fit {
  std::size_t variant = 0;
  std::size_t served = 0;  // points within the tolerance
  double worst = 0;        // worst regret
  double log_mean = 0;     // mean log time
  double log_regret = 0;   // sum of log regrets
};

// Sums of log regrets that differ by less than this are equal (they add the same terms in
// another order).
constexpr double kLogSlack = 1e-9;

// Lexicographic: more points served, then smaller worst regret, then smaller mean time, then the
// earlier variant; fitting regret, the smaller sum of log regrets first.
bool better(TreeFit criterion, const Fit& a, const Fit& b) {
  if (criterion == TreeFit::regret && std::fabs(a.log_regret - b.log_regret) > kLogSlack) return a.log_regret < b.log_regret;
  if (a.served != b.served) return a.served > b.served;
  if (a.worst != b.worst) return a.worst < b.worst;
  if (a.log_mean != b.log_mean) return a.log_mean < b.log_mean;
  return a.variant < b.variant;
}

struct Split {
  TreeNode node;
  std::vector<std::size_t> yes, no;
  std::size_t unserved = 0;
  double worst = 0;
  double log_regret = 0;  // both sides' sums
  // Whether the split lies on a boundary the measurements show: the points on its two nearest
  // values of an int dim have no variant that serves them all (a symbolic dim's split always
  // counts). Among splits otherwise equal, one on a boundary puts the threshold where the winner
  // changes, rather than peeling points off one end of a run that one variant serves.
  bool boundary = true;
};

class Learner {
 public:
  // What every fit reads, computed once per point and variant (a tree's search fits each variant
  // to each side of each candidate split, and leave-one-out learns dozens of trees): the same
  // expressions as before, so the same bits.
  Learner(const TreeTable& t, const TreeOptions& o) : t_(t), o_(o) {
    for (const auto& row : t.time) best_.push_back(*std::min_element(row.begin(), row.end()));
    log_time_.resize(t.time.size());
    log_regret_.resize(t.time.size());
    regret_.resize(t.time.size());
    serves_.resize(t.time.size());
    for (std::size_t p = 0; p < t.time.size(); ++p) {
      for (double time : t.time[p]) {
        log_time_[p].push_back(std::log(time));
        log_regret_[p].push_back(std::log(time / best_[p]));
        regret_[p].push_back(time / best_[p]);
        serves_[p].push_back(time <= best_[p] * o_.tolerance * (1 + kRelativeSlack) ? 1 : 0);
      }
    }
  }

  DispatchTree learn() {
    std::vector<std::size_t> all(t_.points.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    grow(all, 0, t_.upper);
    return std::move(tree_);
  }

 private:
  Fit fit_of(const std::vector<std::size_t>& set, std::size_t v) const {
    Fit f;
    f.variant = v;
    for (std::size_t p : set) {
      f.served += serves_[p][v];
      f.worst = std::max(f.worst, regret_[p][v]);
      f.log_mean += log_time_[p][v];
      f.log_regret += log_regret_[p][v];
    }
    f.log_mean /= static_cast<double>(set.size());
    return f;
  }

  Fit fit(const std::vector<std::size_t>& set) const {
    Fit chosen = fit_of(set, 0);
    for (std::size_t v = 1; v < t_.variants.size(); ++v) {
      const Fit f = fit_of(set, v);
      if (better(o_.fit, f, chosen)) chosen = f;
    }
    return chosen;
  }

  // `beyond`: the leaf lies past a variant's reach and holds none of `set`, whose points only
  // chose its variant: it records no point, no time and no floor.
  int add_leaf(const std::vector<std::size_t>& set, const Fit& f, bool beyond = false) {
    TreeNode leaf;
    leaf.variant = t_.variants[f.variant];
    if (beyond) {
      tree_.nodes.push_back(std::move(leaf));
      return static_cast<int>(tree_.nodes.size()) - 1;
    }
    leaf.points = set.size();
    leaf.worst_regret = f.worst;
    leaf.time_s = std::exp(f.log_mean);
    double log_floor = 0;
    bool floors = true;
    for (std::size_t p : set) {
      floors = floors && t_.floor_s[p] > 0;
      if (floors) log_floor += std::log(t_.floor_s[p]);
    }
    leaf.floor_s = floors ? std::exp(log_floor / static_cast<double>(set.size())) : 0.0;
    tree_.nodes.push_back(std::move(leaf));
    return static_cast<int>(tree_.nodes.size()) - 1;
  }

  void consider(Split&& s, std::optional<Split>& chosen) const {
    if (s.yes.size() < std::max<std::size_t>(o_.min_leaf_points, 1) || s.no.size() < std::max<std::size_t>(o_.min_leaf_points, 1)) return;
    const Fit a = fit(s.yes), b = fit(s.no);
    s.unserved = (s.yes.size() - a.served) + (s.no.size() - b.served);
    s.worst = std::max(a.worst, b.worst);
    s.log_regret = a.log_regret + b.log_regret;
    if (!chosen || preferred(s, *chosen)) chosen = std::move(s);
  }

  // Fewer points left unserved (fitting regret: the smaller sum of log regrets), then the smaller
  // worst regret, then a split on a boundary, then the more even split (the smaller side larger:
  // shallower trees); then the first considered.
  bool preferred(const Split& a, const Split& b) const {
    if (o_.fit == TreeFit::regret && std::fabs(a.log_regret - b.log_regret) > kLogSlack) return a.log_regret < b.log_regret;
    if (a.unserved != b.unserved) return a.unserved < b.unserved;
    if (a.worst != b.worst) return a.worst < b.worst;
    if (a.boundary != b.boundary) return a.boundary;
    return std::min(a.yes.size(), a.no.size()) > std::min(b.yes.size(), b.no.size());
  }

  std::optional<Split> best_split(const std::vector<std::size_t>& set) const {
    std::optional<Split> chosen;
    for (const auto& [name, first_value] : t_.points[set.front()].dims()) {
      const bool integer = std::holds_alternative<std::int64_t>(first_value);
      // The dim's value at each point of the set, looked up by name once.
      std::vector<const Problem::Value*> column(t_.points.size(), nullptr);
      for (std::size_t p : set) {
        for (const auto& [n, v] : t_.points[p].dims()) {
          if (n == name) {
            column[p] = &v;
            break;
          }
        }
        if (column[p] == nullptr) {
          throw std::runtime_error("dispatch tree: coverage point " + t_.points[p].key() + " has no dim '" + name + "'");
        }
      }
      auto value_of = [&](std::size_t p) -> const Problem::Value& { return *column[p]; };
      std::vector<Problem::Value> values;
      for (std::size_t p : set) {
        const auto& v = value_of(p);
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      }
      if (values.size() < 2) continue;
      if (integer) {
        std::sort(values.begin(), values.end());
        for (std::size_t i = 0; i + 1 < values.size(); ++i) {
          Split s;
          s.node.dim = name;
          s.node.threshold = threshold_between(std::get<std::int64_t>(values[i]), std::get<std::int64_t>(values[i + 1]));
          std::vector<std::size_t> nearest;
          for (std::size_t p : set) {
            (std::get<std::int64_t>(value_of(p)) <= *s.node.threshold ? s.yes : s.no).push_back(p);
            if (value_of(p) == values[i] || value_of(p) == values[i + 1]) nearest.push_back(p);
          }
          s.boundary = fit(nearest).served < nearest.size();
          consider(std::move(s), chosen);
        }
      } else {
        for (const auto& symbol : values) {
          Split s;
          s.node.dim = name;
          s.node.symbol = std::get<std::string>(symbol);
          for (std::size_t p : set) (value_of(p) == symbol ? s.yes : s.no).push_back(p);
          consider(std::move(s), chosen);
        }
      }
    }
    return chosen;
  }

  // The leaf of `set` naming f's variant, ended where the variant's reach on a dim falls inside
  // the leaf's extent `upper` (the largest value of the dim that reaches it) and beyond every point
  // of `set`: past that, a leaf without points names the variant that fits `set` best among those
  // reaching further, itself ended at its own reach. Between two points a variant is trusted up to
  // its reach or the largest point it was measured at; past both nothing says it holds (softmax:
  // a row cache of 4 elements fitted to rows of 1 streamed held-out rows of 5 at 1.93x the best).
  int place(const std::vector<std::size_t>& set, const Fit& f, std::size_t depth,
            const std::map<std::string, std::int64_t>& upper, bool beyond) {
    if (!t_.reach.empty() && depth < o_.max_depth) {
      for (const auto& [dim, reach] : t_.reach[f.variant]) {
        const auto extent = upper.find(dim);
        if (extent == upper.end()) continue;
        std::int64_t trusted = reach;
        for (std::size_t p : set) trusted = std::max(trusted, t_.points[p].i(dim));
        if (trusted >= extent->second) continue;
        std::optional<Fit> further;
        for (std::size_t v = 0; v < t_.variants.size(); ++v) {
          const auto r = t_.reach[v].find(dim);
          if (r != t_.reach[v].end() && r->second <= trusted) continue;
          const Fit candidate = fit_of(set, v);
          if (!further || better(o_.fit, candidate, *further)) further = candidate;
        }
        if (!further) continue;
        TreeNode split;
        split.dim = dim;
        split.threshold = trusted;
        const int index = static_cast<int>(tree_.nodes.size());
        tree_.nodes.push_back(std::move(split));
        std::map<std::string, std::int64_t> within = upper;
        within[dim] = trusted;
        const int yes = place(set, f, depth + 1, within, beyond);
        const int no = place(set, *further, depth + 1, upper, true);
        tree_.nodes[static_cast<std::size_t>(index)].yes = yes;
        tree_.nodes[static_cast<std::size_t>(index)].no = no;
        return index;
      }
    }
    return add_leaf(set, f, beyond);
  }

  int grow(const std::vector<std::size_t>& set, std::size_t depth, const std::map<std::string, std::int64_t>& upper) {
    const Fit f = fit(set);
    if (f.served == set.size() || depth >= o_.max_depth) return place(set, f, depth, upper, false);
    std::optional<Split> split = best_split(set);
    // Fitting regret, a split that does not lower the node's sum says nothing the leaf does not.
    if (split && o_.fit == TreeFit::regret && split->log_regret >= f.log_regret - kLogSlack) split.reset();
    if (!split) return place(set, f, depth, upper, false);
    const int index = static_cast<int>(tree_.nodes.size());
    tree_.nodes.push_back(split->node);
    std::map<std::string, std::int64_t> within = upper;
    if (split->node.threshold) {
      const auto extent = within.find(split->node.dim);
      if (extent != within.end()) extent->second = std::min(extent->second, *split->node.threshold);
    }
    const int yes = grow(split->yes, depth + 1, within);
    const int no = grow(split->no, depth + 1, upper);
    // With leaves held to a minimum size, both sides of a split may end naming one variant: then
    // the split says nothing, and the node is that variant's leaf (the two leaves are the last nodes).
    const TreeNode& a = tree_.nodes[static_cast<std::size_t>(yes)];
    const TreeNode& b = tree_.nodes[static_cast<std::size_t>(no)];
    if (a.is_leaf() && b.is_leaf() && a.variant == b.variant) {
      const auto v = static_cast<std::size_t>(std::find(t_.variants.begin(), t_.variants.end(), a.variant) - t_.variants.begin());
      tree_.nodes.resize(static_cast<std::size_t>(index));
      return place(set, fit_of(set, v), depth, upper, false);
    }
    tree_.nodes[index].yes = yes;
    tree_.nodes[index].no = no;
    return index;
  }

  const TreeTable& t_;
  std::vector<std::vector<double>> log_time_;     // log(time) per point and variant
  std::vector<std::vector<double>> log_regret_;   // log(time over the point's fastest)
  std::vector<std::vector<double>> regret_;       // time over the point's fastest
  std::vector<std::vector<unsigned char>> serves_;  // within the tolerance of the fastest
  TreeOptions o_;
  std::vector<double> best_;
  DispatchTree tree_;
};

nlohmann::ordered_json node_json(const DispatchTree& tree, std::size_t i) {
  const TreeNode& n = tree.nodes.at(i);
  if (n.is_leaf()) {
    return {{"variant", n.variant},
            {"points", n.points},
            {"worst_regret", n.worst_regret},
            {"time_s", n.time_s},
            {"floor_s", n.floor_s}};
  }
  nlohmann::ordered_json j = {{"dim", n.dim}};
  if (n.threshold) {
    j["le"] = *n.threshold;
  } else {
    j["eq"] = *n.symbol;
  }
  j["then"] = node_json(tree, static_cast<std::size_t>(n.yes));
  j["else"] = node_json(tree, static_cast<std::size_t>(n.no));
  return j;
}

// A node of a record's tree; a wrong field is one error naming its JSON pointer.
int node_from_node(const model::JsonNode& j, DispatchTree& tree, std::size_t depth) {
  if (depth > 64) j.fail("dispatch tree nested deeper than 64 levels");
  j.require_object();
  TreeNode n;
  const int index = static_cast<int>(tree.nodes.size());
  if (j.has("variant")) {
    n.variant = j["variant"].string();
    n.points = model::protocol_read::count(j["points"]);
    n.worst_regret = j["worst_regret"].positive_number();
    n.time_s = model::protocol_read::non_negative(j["time_s"]);  // 0 for a leaf without points (past a variant's reach)
    n.floor_s = model::protocol_read::non_negative(j["floor_s"]);
    tree.nodes.push_back(std::move(n));
    return index;
  }
  n.dim = j["dim"].string();
  if (n.dim.empty()) j["dim"].fail("a split without a dim");
  if (j.has("le")) {
    n.threshold = j["le"].integer();
  } else {
    n.symbol = j["eq"].string();
  }
  tree.nodes.push_back(std::move(n));
  const int yes = node_from_node(j["then"], tree, depth + 1);
  const int no = node_from_node(j["else"], tree, depth + 1);
  tree.nodes[index].yes = yes;
  tree.nodes[index].no = no;
  return index;
}

}  // namespace

std::size_t DispatchTree::leaf_of(const Problem& p) const {
  std::size_t i = 0;
  while (!nodes.at(i).is_leaf()) i = static_cast<std::size_t>(goes_yes(nodes[i], p) ? nodes[i].yes : nodes[i].no);
  return i;
}

std::size_t DispatchTree::leaf_count() const {
  return static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(), [](const TreeNode& n) { return n.is_leaf(); }));
}

std::size_t DispatchTree::depth() const {
  std::vector<std::size_t> level(nodes.size(), 0);
  std::size_t deepest = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    deepest = std::max(deepest, level[i]);
    if (nodes[i].is_leaf()) continue;
    level[static_cast<std::size_t>(nodes[i].yes)] = level[i] + 1;
    level[static_cast<std::size_t>(nodes[i].no)] = level[i] + 1;
  }
  return deepest;
}

namespace {

void check_table(const TreeTable& table) {
  if (table.points.empty() || table.variants.empty()) throw std::runtime_error("dispatch tree: no measurements to learn from");
  if (!table.reach.empty() && table.reach.size() != table.variants.size()) {
    throw std::runtime_error("dispatch tree: the reach of some variants is missing");
  }
  for (const auto& row : table.time) {
    if (row.size() != table.variants.size()) throw std::runtime_error("dispatch tree: a row of the table is incomplete");
    for (double v : row) {
      if (!(v > 0) || !std::isfinite(v)) throw std::runtime_error("dispatch tree: a time is not a positive number");
    }
  }
}

TreeTable without_point(const TreeTable& t, std::size_t left_out) {
  TreeTable sub;
  sub.variants = t.variants;
  sub.reach = t.reach;
  sub.upper = t.upper;
  for (std::size_t i = 0; i < t.points.size(); ++i) {
    if (i == left_out) continue;
    sub.points.push_back(t.points[i]);
    sub.time.push_back(t.time[i]);
    sub.floor_s.push_back(i < t.floor_s.size() ? t.floor_s[i] : 0.0);
  }
  return sub;
}

}  // namespace

std::size_t choose_min_leaf_points(const TreeTable& table, const TreeOptions& options) {
  check_table(table);
  const std::size_t n = table.points.size();
  std::size_t chosen = 1;
  double chosen_worst = 0, chosen_mean = 0;
  for (std::size_t m = 1; m <= kMaxLeafPoints && (m == 1 || 2 * m <= n); ++m) {
    double worst = 1, log_sum = 0;
    for (std::size_t i = 0; n > 1 && i < n; ++i) {
      TreeOptions o = options;
      o.min_leaf_points = m;
      const DispatchTree tree = Learner(without_point(table, i), o).learn();
      const std::string& v = tree.nodes[tree.leaf_of(table.points[i])].variant;
      const auto at = std::find(table.variants.begin(), table.variants.end(), v) - table.variants.begin();
      const double r = regret(table.time[i], static_cast<std::size_t>(at));
      worst = std::max(worst, r);
      log_sum += std::log(r);
    }
    const double mean = n > 1 ? log_sum / static_cast<double>(n) : 0.0;
    const bool lower = options.fit == TreeFit::regret
                           ? mean < chosen_mean - kLogSlack || (std::fabs(mean - chosen_mean) <= kLogSlack && worst < chosen_worst)
                           : worst < chosen_worst || (worst == chosen_worst && mean < chosen_mean);
    if (m == 1 || lower) {
      chosen = m;
      chosen_worst = worst;
      chosen_mean = mean;
    }
  }
  return chosen;
}

DispatchTree learn_tree(const TreeTable& table, const TreeOptions& options) {
  check_table(table);
  if (options.min_leaf_points == 0) {
    TreeOptions o = options;
    o.min_leaf_points = choose_min_leaf_points(table, options);
    DispatchTree tree = Learner(table, o).learn();
    tree.min_leaf_points = o.min_leaf_points;
    return tree;
  }
  DispatchTree tree = Learner(table, options).learn();
  tree.min_leaf_points = std::max<std::size_t>(options.min_leaf_points, 1);
  return tree;
}

double regret(const std::vector<double>& times_at_point, std::size_t variant) {
  return times_at_point.at(variant) / *std::min_element(times_at_point.begin(), times_at_point.end());
}

nlohmann::ordered_json tree_to_json(const DispatchTree& tree) { return node_json(tree, 0); }

DispatchTree tree_from_node(const model::JsonNode& j) {
  DispatchTree tree;
  node_from_node(j, tree, 0);
  return tree;
}

DispatchTree tree_from_json(const nlohmann::ordered_json& j) {
  const model::JsonFile file{"dispatch tree", "", j};
  return tree_from_node(model::JsonNode::root(file));
}

}  // namespace kiln::tuner
