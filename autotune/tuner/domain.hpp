// Tuning over a problem domain (README, "Problem domains"): the learned dispatch fitted to the
// coverage points, its regret there, and its judgement on the held-out points, measured on the
// finalists.
#pragma once
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "evaluate.hpp"
#include "manifest.hpp"
#include "record.hpp"

namespace kiln::tuner {

// The variant the record's dispatch gives a problem: the learned tree's leaf; or the exact
// bucket's winner, else the nearest tuned bucket's (distance in powers of two, symbolic dims
// equal), else the space's default, as the generated header decides.
std::string dispatched_variant(const Manifest& m, const Record& record, const Problem& p);

// The table of times the dispatch is learned from: the variants that passed and were timed at
// every coverage point, in the manifest's order.
TreeTable coverage_table(const Manifest& m, const std::vector<VariantOutcome>& outcomes,
                         const std::map<std::string, double>& rates);

// Fills record.domain: learns the tree (a space with a domain and no buckets; with tuning.refine,
// learns it again after timing the refinement points on the variants it was learned from; the
// points are placed by the tree that fits served points, whatever tuning.tree_fit), measures the
// dispatch's regret at the coverage points, and times the held-out points on the finalists
// (the variants that are some point's best or some leaf's or bucket's choice, and the default),
// through ctx (which only reads the worklog when ctx.measure is off). Does nothing without a domain.
void fit_domain(const EvaluationContext& ctx, const std::vector<VariantOutcome>& outcomes,
                const std::map<std::string, double>& rates, Record& record, std::ostream& out);

// The probe points: for each int dim, the coverage point at its smallest value (of several, the
// middle one by size), unless a listed problem is that point. Every variant the search evaluates
// is timed on them in the same process as the listed problems, so that finalists can be chosen
// there too. Empty without a domain.
std::vector<Problem> probe_points(const Manifest& m);

// The variants a domain's coverage points are measured on: of the variants that passed, the
// `per_problem` fastest at each listed problem, at each probe point and by score (the geometric
// mean over the listed problems), and the default. Timing every variant at every coverage point
// multiplies the tuning time by the coverage size. The listed problems are the space's own
// sketch of its domain, but a sketch drawn around typical shapes: the variants that win only at
// an edge of the domain (rows of one or two elements, a few very wide rows, n small enough for
// all-pairs) are near the top of no listed problem, and the probe points are those edges.
std::set<std::size_t> coverage_finalists(const Manifest& m, const std::vector<VariantOutcome>& outcomes,
                                         std::size_t per_problem);

// The screen points (tuning.screen of them): the coverage points farthest from every point each
// variant is timed at anyway (the listed problems, the probe points, the screen points chosen
// before), one at a time: distance in log2 of each int dim, summed; a point of symbolic values no
// such point has is the farthest of all; ties in the coverage's order. A pure function of the
// manifest. The finalists come from the listed problems, the probe points and the score, which
// can all miss a whole stretch of the domain (softmax on an H200, 78530 rows of 10 bf16: 5.8 us
// on the fastest finalist, 3.5 us on a staged variant none of them favoured); the stretches farthest
// from them are where that happens. Ranking the points by how far the finalists' best is above
// the floor instead picks the problems that are far above it by nature (softmax: single rows of
// 32K to 256K elements, 8 to 19x; nothing beat the finalists there).
std::vector<Problem> screen_points(const Manifest& m);

// The refinement points (tuning.refine of them) for a dispatch learned on the points `fitted`: one at
// a time, the refinement candidate farthest from every fitted point (and every refinement point
// chosen before) that reaches the same leaf of `tree`; distance as screen_points' (a point of
// symbolic values no such point has is the farthest of all); ties in the candidates' order. A leaf
// covers a stretch of the domain from the points it was fitted to, and guesses farthest from them:
// softmax on an H200, a leaf fitted to rows of one element sent 415655 rows of 5 fp32 to a variant
// 1.9x slower there than the best. A pure function of the manifest, the tree and the points.
std::vector<Problem> refine_points(const Manifest& m, const DispatchTree& tree, const std::vector<Problem>& fitted);

// Puts the coverage points' times into the outcomes (median_s): measured on the finalists (when
// ctx.measure is on), read from the worklog for every other variant that passed and has them all,
// so a worklog that timed the coverage on every variant keeps doing so. A finalist that fails at a
// coverage point is reported and left out of the dispatch. With tuning.screen, every variant that
// passed is then timed at the screen points, and at each the fastest variant that beats every
// finalist there beyond the tolerance becomes a finalist, timed at every coverage point too.
void time_coverage(const EvaluationContext& ctx, std::vector<VariantOutcome>& outcomes, std::size_t per_problem,
                   std::ostream& out);

// The median of a list (the mean of the middle two when even); 0 for an empty list.
double median(std::vector<double> values);

}  // namespace kiln::tuner
