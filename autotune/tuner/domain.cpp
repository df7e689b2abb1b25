#include "domain.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <future>
#include <optional>
#include <ostream>
#include <set>

#include "floors.hpp"
#include "kiln/dispatch.hpp"
#include "measuring_pool.hpp"

namespace kiln::tuner {
namespace {

// The nearest measured problem of a tuned bucket, as the header's nearest_tuned_bucket() finds it.
std::optional<std::string> nearest_bucket_winner(const Manifest& m, const Record& record, const Problem& p) {
  std::optional<std::string> chosen;
  std::int64_t best_distance = -1;
  for (const auto& rb : record.buckets) {
    if (!rb.winner || !m.variant_index(*rb.winner)) continue;
    for (const auto& rp : rb.problems) {
      std::int64_t distance = 0;
      bool comparable = true;
      for (const auto& d : m.dims) {
        if (!rp.problem.has(d.name) || !p.has(d.name)) {
          comparable = false;
        } else if (d.symbolic) {
          comparable = comparable && rp.problem.s(d.name) == p.s(d.name);
        } else {
          distance += log2_distance(rp.problem.i(d.name), p.i(d.name));
        }
      }
      if (comparable && (best_distance < 0 || distance < best_distance)) {
        best_distance = distance;
        chosen = *rb.winner;
      }
    }
  }
  return chosen;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string dispatched_variant(const Manifest& m, const Record& record, const Problem& p) {
  if (record.domain && record.domain->tree) {
    for (const auto& l : record.domain->listed) {
      if (l.problem == p && m.variant_index(l.variant)) return l.variant;
    }
    const auto& tree = *record.domain->tree;
    const std::string& v = tree.nodes[tree.leaf_of(m.with_features(p))].variant;
    return m.variant_index(v) ? v : m.default_variant;
  }
  if (auto b = m.bucket_of(p)) {
    for (const auto& rb : record.buckets) {
      if (rb.name == m.buckets[*b].name && rb.winner && m.variant_index(*rb.winner)) return *rb.winner;
    }
  }
  return nearest_bucket_winner(m, record, p).value_or(m.default_variant);
}

namespace {

// `points` timed on each of `variants`: what the worklog holds is read; the rest is measured, in
// one parallel batch of compiles first when compiled on demand, and on every GPU of the pool when
// there is one (each variant's points in one process on one GPU). A line on `out` per variant
// measured says how far the stage (`what`) is and when it should end.
std::map<std::size_t, PointTimes> times_of(const EvaluationContext& ctx, const std::vector<std::size_t>& variants,
                                           const std::vector<Problem>& points, const std::string& what,
                                           std::ostream& out) {
  std::map<std::size_t, PointTimes> times;
  EvaluationContext reading = ctx;
  reading.measure = false;
  std::vector<std::size_t> to_run;
  for (std::size_t v : variants) {
    PointTimes held = time_points(reading, v, points);
    if (ctx.measure && held.median_s.size() < points.size()) {
      to_run.push_back(v);
    } else {
      times[v] = std::move(held);
    }
  }
  if (ctx.compiler != nullptr) ctx.compiler->compile(to_run);
  const auto started = std::chrono::steady_clock::now();
  std::size_t done = 0;
  auto report = [&] {
    ++done;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    out << "kiln: " << ctx.manifest->kernel << ": " << what << " " << done << "/" << to_run.size() << " variants timed";
    if (done < to_run.size()) {
      out << "  ETA " << std::lround(elapsed / static_cast<double>(done) * static_cast<double>(to_run.size() - done)) << " s";
    }
    out << "\n" << std::flush;
  };
  if (ctx.pool == nullptr) {
    for (std::size_t v : to_run) {
      times[v] = time_points(ctx, v, points);
      report();
    }
    return times;
  }
  // With fewer variants than four a GPU, each variant's points are dealt out (round robin) to as
  // many processes as there are GPUs, so that the GPUs end together (three finalists on two GPUs
  // would otherwise leave one idle for a third of the stage); a process more costs its start.
  const std::size_t gpus = ctx.pool->size();
  const std::size_t slices = to_run.size() < 4 * gpus ? std::max<std::size_t>(1, std::min(gpus, points.size())) : 1;
  std::vector<std::pair<std::size_t, std::vector<std::future<PointTimes>>>> running;
  for (std::size_t v : to_run) {
    std::vector<std::future<PointTimes>> parts;
    for (std::size_t s = 0; s < slices; ++s) {
      std::vector<Problem> share;
      for (std::size_t i = s; i < points.size(); i += slices) share.push_back(points[i]);
      parts.push_back(ctx.pool->time_points(v, std::move(share)));
    }
    running.emplace_back(v, std::move(parts));
  }
  for (auto& [v, parts] : running) {
    PointTimes& into = times[v];
    for (auto& f : parts) {
      PointTimes part = f.get();
      into.median_s.insert(part.median_s.begin(), part.median_s.end());
      into.ran = into.ran || part.ran;
      if (into.failure.empty()) into.failure = part.failure;
    }
    report();
  }
  return times;
}

// The table as the tree learns from it: each point with its features' values beside its dims (the
// table itself keeps the points as measured, whose keys name their times), and with tuning.reach,
// each variant's reach and the domain's largest value of each dim a reach names.
TreeTable with_features(const Manifest& m, TreeTable t) {
  for (auto& p : t.points) p = m.with_features(p);
  t.reach.clear();
  t.upper.clear();
  if (!m.tuning.reach.empty()) {
    for (const auto& name : t.variants) t.reach.push_back(m.variants[*m.variant_index(name)].reach);
    for (const auto& r : m.tuning.reach) {
      for (const auto& d : m.dims) {
        if (d.name == r.dim && d.range) t.upper[r.dim] = d.range->max;
      }
    }
  }
  return t;
}

// The listed problems where the tree's variant is more than `tolerance` slower than the fastest
// variant that passed and was timed there.
std::vector<ListedPoint> listed_points(const Manifest& m, const std::vector<VariantOutcome>& outcomes,
                                       const Record& record, double tolerance,
                                       const std::map<std::string, double>& rates) {
  std::vector<ListedPoint> listed;
  for (const auto& p : m.problems) {
    const std::string key = p.key();
    const std::string tree_variant = dispatched_variant(m, record, p);
    std::optional<double> tree_s;
    const VariantOutcome* fastest = nullptr;
    double best_s = 0;
    for (const auto& oc : outcomes) {
      if (!oc.complete || oc.failure || !oc.score) continue;
      auto t = oc.median_s.find(key);
      if (t == oc.median_s.end()) continue;
      if (m.variants[oc.index].name == tree_variant) tree_s = t->second;
      if (fastest == nullptr || t->second < best_s) {
        fastest = &oc;
        best_s = t->second;
      }
    }
    if (fastest == nullptr || !tree_s) continue;  // the tree's variant has no time here to compare
    if (*tree_s <= tolerance * best_s) continue;
    listed.push_back(
        {p, m.variants[fastest->index].name, best_s, tree_variant, *tree_s, floor_of(m.work_of(p), rates).seconds});
  }
  return listed;
}

}  // namespace

TreeTable coverage_table(const Manifest& m, const std::vector<VariantOutcome>& outcomes,
                         const std::map<std::string, double>& rates) {
  TreeTable t;
  t.points = m.coverage;
  t.time.resize(m.coverage.size());
  for (const auto& p : m.coverage) t.floor_s.push_back(floor_of(m.work_of(p), rates).seconds);
  std::vector<const VariantOutcome*> usable;
  for (const auto& oc : outcomes) {
    if (!oc.complete || oc.failure || !oc.score) continue;
    const bool timed_everywhere = std::all_of(m.coverage.begin(), m.coverage.end(),
                                              [&](const Problem& p) { return oc.median_s.count(p.key()) > 0; });
    if (!timed_everywhere) continue;
    usable.push_back(&oc);
  }
  std::sort(usable.begin(), usable.end(), [](const auto* a, const auto* b) { return a->index < b->index; });
  for (const auto* oc : usable) {
    t.variants.push_back(m.variants[oc->index].name);
    for (std::size_t i = 0; i < m.coverage.size(); ++i) t.time[i].push_back(oc->median_s.at(m.coverage[i].key()));
  }
  return t;
}

std::vector<Problem> probe_points(const Manifest& m) {
  std::vector<Problem> probes;
  if (!m.has_domain()) return probes;
  auto product = [&](const Problem& p) {
    double v = 1;
    for (const auto& d : m.dims) {
      if (!d.symbolic) v *= static_cast<double>(p.i(d.name));
    }
    return v;
  };
  for (const auto& d : m.dims) {
    if (d.symbolic) continue;
    std::vector<const Problem*> ties;
    for (const auto& p : m.coverage) {
      if (!ties.empty() && p.i(d.name) > ties.front()->i(d.name)) continue;
      if (!ties.empty() && p.i(d.name) < ties.front()->i(d.name)) ties.clear();
      ties.push_back(&p);
    }
    if (ties.empty()) continue;
    // Of the points at the dim's smallest value, the one of middle size: the smallest is often a
    // launch that says little, the largest the costliest to time on every variant.
    std::stable_sort(ties.begin(), ties.end(), [&](const Problem* a, const Problem* b) { return product(*a) < product(*b); });
    const Problem& chosen = *ties[(ties.size() - 1) / 2];
    auto same = [&](const Problem& p) { return p.key() == chosen.key(); };
    if (std::none_of(m.problems.begin(), m.problems.end(), same) && std::none_of(probes.begin(), probes.end(), same)) {
      probes.push_back(chosen);
    }
  }
  return probes;
}

std::set<std::size_t> coverage_finalists(const Manifest& m, const std::vector<VariantOutcome>& outcomes,
                                         std::size_t per_problem) {
  std::vector<const VariantOutcome*> passed;
  for (const auto& oc : outcomes) {
    if (!oc.failure && oc.score) passed.push_back(&oc);
  }
  std::set<std::size_t> chosen;
  auto take_fastest = [&](const std::function<std::optional<double>(const VariantOutcome&)>& time_of) {
    std::vector<std::pair<double, std::size_t>> ranked;
    for (const auto* oc : passed) {
      if (auto t = time_of(*oc)) ranked.emplace_back(*t, oc->index);
    }
    std::sort(ranked.begin(), ranked.end());
    for (std::size_t k = 0; k < std::min(per_problem, ranked.size()); ++k) chosen.insert(ranked[k].second);
  };
  // The listed problems, then the probe points: a variant fastest only at an edge of the domain
  // no listed problem reaches (rows of one element, a single wide row) is found at its probe.
  std::vector<Problem> points = m.problems;
  for (auto& p : probe_points(m)) points.push_back(std::move(p));
  for (const auto& p : points) {
    take_fastest([&](const VariantOutcome& oc) -> std::optional<double> {
      auto it = oc.median_s.find(p.key());
      return it == oc.median_s.end() ? std::nullopt : std::optional<double>(it->second);
    });
  }
  take_fastest([](const VariantOutcome& oc) { return oc.score; });
  if (auto d = m.variant_index(m.default_variant)) {
    for (const auto* oc : passed) {
      if (oc->index == *d) chosen.insert(*d);
    }
  }
  return chosen;
}

namespace {

// Distance in log2 of every int dim, summed; points of other symbolic values are unrelated (infinitely far).
double log2_distance_between(const Manifest& m, const Problem& a, const Problem& b) {
  double d = 0;
  for (const auto& dim : m.dims) {
    if (!a.has(dim.name) || !b.has(dim.name)) continue;
    if (dim.symbolic) {
      if (a.s(dim.name) != b.s(dim.name)) return std::numeric_limits<double>::infinity();
    } else {
      d += std::fabs(std::log2(static_cast<double>(std::max<std::int64_t>(a.i(dim.name), 1))) -
                     std::log2(static_cast<double>(std::max<std::int64_t>(b.i(dim.name), 1))));
    }
  }
  return d;
}

}  // namespace

std::vector<Problem> refine_points(const Manifest& m, const DispatchTree& tree, const std::vector<Problem>& fitted) {
  std::vector<Problem> chosen;
  if (!m.has_domain() || m.tuning.refine <= 0 || tree.nodes.empty()) return chosen;
  const std::vector<Problem>& candidates = m.refine_candidates;
  std::vector<std::size_t> leaf(candidates.size());
  std::vector<double> nearest(candidates.size(), std::numeric_limits<double>::infinity());
  std::set<std::string> taken;
  for (const auto& p : fitted) taken.insert(p.key());
  std::map<std::size_t, std::vector<const Problem*>> fitted_in_leaf;
  for (const auto& p : fitted) fitted_in_leaf[tree.leaf_of(m.with_features(p))].push_back(&p);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    leaf[i] = tree.leaf_of(m.with_features(candidates[i]));
    for (const Problem* p : fitted_in_leaf[leaf[i]]) {
      nearest[i] = std::min(nearest[i], log2_distance_between(m, candidates[i], *p));
    }
  }
  while (chosen.size() < static_cast<std::size_t>(m.tuning.refine)) {
    std::optional<std::size_t> far;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (taken.count(candidates[i].key()) > 0) continue;
      if (!far || nearest[i] > nearest[*far]) far = i;  // ties: the first in the candidates' order
    }
    if (!far) break;
    const Problem& p = candidates[*far];
    chosen.push_back(p);
    taken.insert(p.key());
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (leaf[i] == leaf[*far]) nearest[i] = std::min(nearest[i], log2_distance_between(m, candidates[i], p));
    }
  }
  return chosen;
}

std::vector<Problem> screen_points(const Manifest& m) {
  std::vector<Problem> chosen;
  if (!m.has_domain() || m.tuning.screen <= 0) return chosen;
  // Where every variant is timed anyway: the listed problems and the probe points.
  std::vector<Problem> timed = m.problems;
  for (auto& p : probe_points(m)) timed.push_back(std::move(p));
  auto distance = [&](const Problem& a, const Problem& b) { return log2_distance_between(m, a, b); };
  std::set<std::string> taken;
  for (const auto& p : timed) taken.insert(p.key());
  std::vector<double> nearest(m.coverage.size(), std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < m.coverage.size(); ++i) {
    for (const auto& t : timed) nearest[i] = std::min(nearest[i], distance(m.coverage[i], t));
  }
  while (chosen.size() < static_cast<std::size_t>(m.tuning.screen)) {
    std::optional<std::size_t> far;
    for (std::size_t i = 0; i < m.coverage.size(); ++i) {
      if (taken.count(m.coverage[i].key()) > 0) continue;
      if (!far || nearest[i] > nearest[*far]) far = i;  // ties: the first in the coverage's order
    }
    if (!far) break;
    const Problem& p = m.coverage[*far];
    chosen.push_back(p);
    taken.insert(p.key());
    for (std::size_t i = 0; i < m.coverage.size(); ++i) nearest[i] = std::min(nearest[i], distance(m.coverage[i], p));
  }
  return chosen;
}

namespace {

// The passed variants in order of score (best first): the fast ones' times are the bounds at
// which the slow ones' timings stop (stop_bounds), so the earlier they are in the worklog, the
// less a stage costs.
std::vector<std::size_t> by_score(const std::vector<VariantOutcome>& outcomes, const std::set<std::size_t>* among) {
  std::vector<std::pair<double, std::size_t>> ranked;
  for (const auto& oc : outcomes) {
    if (oc.failure || !oc.score || (among != nullptr && among->count(oc.index) == 0)) continue;
    ranked.emplace_back(*oc.score, oc.index);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::size_t> order;
  for (const auto& r : ranked) order.push_back(r.second);
  return order;
}

// Screening (tuning.screen): every passed variant timed at the screen points; at each, the fastest
// variant that beats every finalist there beyond the tolerance joins the finalists. Returns those.
std::set<std::size_t> screen_finalists(const EvaluationContext& ctx, const std::vector<VariantOutcome>& outcomes,
                                       const std::set<std::size_t>& finalists, std::ostream& out) {
  const Manifest& m = *ctx.manifest;
  std::set<std::size_t> added;
  const std::vector<std::size_t> passed = by_score(outcomes, nullptr);
  const bool all_finalists = std::all_of(passed.begin(), passed.end(), [&](std::size_t v) { return finalists.count(v) > 0; });
  if (all_finalists) return added;  // every variant is timed at every coverage point already
  const std::vector<Problem> points = screen_points(m);
  if (points.empty()) return added;
  std::map<std::size_t, PointTimes> times = times_of(ctx, passed, points, "screen points", out);
  for (const auto& p : points) {
    std::optional<double> best_finalist;
    std::optional<std::pair<double, std::size_t>> best_other;
    for (const auto& [v, t] : times) {
      auto it = t.median_s.find(p.key());
      if (it == t.median_s.end()) continue;
      if (finalists.count(v) > 0) {
        if (!best_finalist || it->second < *best_finalist) best_finalist = it->second;
      } else if (!best_other || std::make_pair(it->second, v) < *best_other) {
        best_other = std::make_pair(it->second, v);
      }
    }
    if (best_finalist && best_other && best_other->first * m.tuning.regret_tolerance < *best_finalist) {
      added.insert(best_other->second);
      out << "kiln: " << m.kernel << ": screen point " << p.key() << ": " << m.variants[best_other->second].name
          << " is " << *best_finalist / best_other->first << "x faster than every finalist; a finalist now\n";
    }
  }
  out << "kiln: " << m.kernel << ": " << points.size() << " screen points timed on every variant; " << added.size()
      << " finalist" << (added.size() == 1 ? "" : "s") << " added\n";
  return added;
}

}  // namespace

void time_coverage(const EvaluationContext& ctx, std::vector<VariantOutcome>& outcomes, std::size_t per_problem,
                   std::ostream& out) {
  const Manifest& m = *ctx.manifest;
  if (!m.has_domain()) return;
  if (ctx.measure) {
    const std::vector<Problem> probes = probe_points(m);
    if (!probes.empty()) {
      std::size_t passed = 0, probed = 0;
      std::string names;
      for (const auto& p : probes) names += (names.empty() ? "" : ", ") + p.key();
      for (const auto& oc : outcomes) {
        if (oc.failure || !oc.score) continue;
        ++passed;
        if (std::all_of(probes.begin(), probes.end(), [&](const Problem& p) { return oc.median_s.count(p.key()) > 0; })) {
          ++probed;
        }
      }
      out << "kiln: " << m.kernel << ": probe points " << names << " timed on " << probed << " of the " << passed
          << " variants that passed\n";
    }
  }
  std::set<std::size_t> finalists = ctx.measure ? coverage_finalists(m, outcomes, per_problem) : std::set<std::size_t>{};
  EvaluationContext reading = ctx;
  reading.measure = false;
  std::size_t measured = 0;
  // The coverage of `variants` into the outcomes: measured for those (when ctx.measure is on),
  // read from the worklog for every other variant that passed and has it all, so a worklog that
  // timed the coverage on every variant keeps doing so.
  auto cover = [&](const std::set<std::size_t>& variants, bool read_others) {
    std::map<std::size_t, PointTimes> times = times_of(ctx, by_score(outcomes, &variants), m.coverage, "coverage points", out);
    for (auto& oc : outcomes) {
      if (oc.failure || !oc.score) continue;
      auto f = times.find(oc.index);
      if (f == times.end() && !read_others) continue;
      PointTimes t = f != times.end() ? std::move(f->second) : time_points(reading, oc.index, m.coverage);
      if (t.ran) ++measured;
      if (!t.failure.empty()) out << "kiln: " << m.variants[oc.index].name << ": coverage points: " << t.failure << "\n";
      for (const auto& [key, seconds] : t.median_s) oc.median_s[key] = seconds;
    }
  };
  cover(finalists, true);
  if (ctx.measure) {
    const std::set<std::size_t> added = screen_finalists(ctx, outcomes, finalists, out);
    if (!added.empty()) {
      cover(added, false);  // the others were read above
      finalists.insert(added.begin(), added.end());
    }
    out << "kiln: " << m.kernel << ": coverage of " << m.coverage.size() << " points timed on " << finalists.size()
        << " finalists (" << measured << " measured now)\n";
  }
}

void fit_domain(const EvaluationContext& ctx, const std::vector<VariantOutcome>& outcomes,
                const std::map<std::string, double>& rates, Record& record, std::ostream& out) {
  const Manifest& m = *ctx.manifest;
  if (!m.has_domain()) return;
  TreeTable table = coverage_table(m, outcomes, rates);
  if (table.variants.empty()) {
    out << "kiln: " << m.kernel << ": no variant passed and was timed at every coverage point; no dispatch learned\n";
    return;
  }
  RecordedDomain d;
  d.tolerance = m.tuning.regret_tolerance;
  if (m.buckets.empty()) {
    const TreeOptions options{m.tuning.regret_tolerance, TreeOptions{}.max_depth,
                              static_cast<std::size_t>(m.tuning.min_leaf_points), m.tuning.tree_fit};
    d.tree = learn_tree(with_features(m, table), options);
    // The refinement points are placed by the tree that fits served points, whatever the space's
    // fit: where a leaf stretches far from its points is a question of the coverage, not of the
    // criterion, and so a space's tree_fit can change and its record be rebuilt from the worklog
    // (`kiln record`) without timing other points.
    std::optional<DispatchTree> placing;
    if (options.fit != TreeFit::served && m.tuning.refine > 0) {
      TreeOptions served = options;
      served.fit = TreeFit::served;
      placing = learn_tree(with_features(m, table), served);
    }
    const std::vector<Problem> refinement = refine_points(m, placing ? *placing : *d.tree, table.points);
    if (!refinement.empty()) {
      // The refinement points timed on the variants the tree was learned from; a variant that
      // fails or has no time at one of them leaves the table (every entry of a table is measured).
      std::string keys;
      for (const auto& p : refinement) keys += (keys.empty() ? "" : ", ") + p.key();
      out << "kiln: " << m.kernel << ": refinement points (farthest from their leaf's coverage): " << keys << "\n";
      std::vector<std::size_t> learned_from;
      for (const auto& name : table.variants) learned_from.push_back(*m.variant_index(name));
      const std::map<std::size_t, PointTimes> times = times_of(ctx, learned_from, refinement, "refinement points", out);
      TreeTable wider;
      wider.points = table.points;
      wider.floor_s = table.floor_s;
      for (const auto& p : refinement) {
        wider.points.push_back(p);
        wider.floor_s.push_back(floor_of(m.work_of(p), rates).seconds);
      }
      wider.time.resize(wider.points.size());
      std::vector<std::string> failed;
      std::size_t untimed = 0;  // variants with no time at some refinement point and no failure there
      for (std::size_t v = 0; v < table.variants.size(); ++v) {
        auto t = times.find(learned_from[v]);
        const bool complete = t != times.end() && std::all_of(refinement.begin(), refinement.end(), [&](const Problem& p) {
          return t->second.median_s.count(p.key()) > 0;
        });
        if (!complete) {
          if (t != times.end() && !t->second.failure.empty()) {
            failed.push_back(table.variants[v] + " (" + t->second.failure + ")");
          } else {
            ++untimed;
          }
          continue;
        }
        wider.variants.push_back(table.variants[v]);
        for (std::size_t i = 0; i < table.points.size(); ++i) wider.time[i].push_back(table.time[i][v]);
        for (std::size_t r = 0; r < refinement.size(); ++r) {
          wider.time[table.points.size() + r].push_back(t->second.median_s.at(refinement[r].key()));
        }
      }
      // A variant not timed yet (a worklog read without measuring, a tuning interrupted) would
      // leave the dispatch for want of a measurement: the refinement waits until all are timed.
      if (untimed > 0 || wider.variants.empty()) {
        out << "kiln: " << m.kernel << ": " << untimed << " of the " << table.variants.size()
            << " variants have no time at every refinement point yet; the dispatch stays the one learned from the "
               "coverage\n";
      } else {
        for (const auto& name : failed) {
          out << "kiln: " << name << ": failed at a refinement point; left out of the dispatch\n";
        }
        table = std::move(wider);
        d.refine_points = refinement.size();
        d.tree = learn_tree(with_features(m, table), options);
        out << "kiln: " << m.kernel << ": " << refinement.size() << " refinement points timed on "
            << table.variants.size() << " variants; dispatch learned again over " << table.points.size() << " points\n";
      }
    }
    record.domain = d;  // the dispatch below reads the tree from the record
    d.listed = listed_points(m, outcomes, record, d.tolerance, rates);
    record.domain = d;
  }
  d.coverage_points = table.points.size();

  // The dispatch's regret at the coverage points, and the finalists.
  auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(table.variants.begin(), table.variants.end(), name) - table.variants.begin());
  };
  std::set<std::size_t> finalists;
  std::vector<double> regrets;
  for (std::size_t i = 0; i < table.points.size(); ++i) {
    const auto& row = table.time[i];
    finalists.insert(*m.variant_index(table.variants[std::min_element(row.begin(), row.end()) - row.begin()]));
    const std::string chosen = dispatched_variant(m, record, table.points[i]);
    const std::size_t c = column(chosen);
    if (c < table.variants.size()) regrets.push_back(regret(row, c));
    finalists.insert(*m.variant_index(chosen));
  }
  finalists.insert(*m.variant_index(m.default_variant));
  if (!regrets.empty()) {
    d.coverage_worst_regret = *std::max_element(regrets.begin(), regrets.end());
    d.coverage_median_regret = median(regrets);
  }

  // The held-out points, timed on the finalists that passed.
  std::map<std::string, std::map<std::string, double>> held;  // variant -> point key -> seconds
  std::vector<std::size_t> timed;
  for (std::size_t v : finalists) {
    const std::string& name = m.variants[v].name;
    if (column(name) >= table.variants.size()) continue;  // failed or not measured
    d.finalists.push_back(name);
    timed.push_back(v);
  }
  for (auto& [v, times] : times_of(ctx, timed, m.held_out, "held-out points", out)) {
    const std::string& name = m.variants[v].name;
    if (!times.failure.empty()) out << "kiln: " << name << ": held-out points: " << times.failure << "\n";
    held[name] = std::move(times.median_s);
  }
  for (const auto& p : m.held_out) {
    HeldOutPoint h;
    h.problem = p;
    h.dispatched = dispatched_variant(m, record, p);
    auto own = held.find(h.dispatched);
    if (own == held.end() || !own->second.count(p.key())) continue;  // the dispatched variant has no time here
    h.dispatched_s = own->second.at(p.key());
    for (const auto& name : d.finalists) {
      auto t = held[name].find(p.key());
      if (t == held[name].end()) continue;
      if (h.best.empty() || t->second < h.best_s) {
        h.best = name;
        h.best_s = t->second;
      }
    }
    const Floor f = floor_of(m.work_of(p), rates);
    h.floor_s = f.seconds;
    h.bound = f.bound;
    d.held_out.push_back(std::move(h));
  }
  record.domain = std::move(d);
}

}  // namespace kiln::tuner
