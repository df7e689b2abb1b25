// Tuning over a problem domain (README, "Problem domains"): the learned dispatch fitted to the
// coverage points, its regret there, and its judgement on the held-out points, measured on the
// finalists.
#pragma once
#include <map>
#include <ostream>
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

// Fills record.domain: learns the tree (a space with a domain and no buckets), measures the
// dispatch's regret at the coverage points, and times the held-out points on the finalists
// (the variants that are some point's best or some leaf's or bucket's choice, and the default),
// through ctx (which only reads the worklog when ctx.measure is off). Does nothing without a domain.
void fit_domain(const EvaluationContext& ctx, const std::vector<VariantOutcome>& outcomes,
                const std::map<std::string, double>& rates, Record& record, std::ostream& out);

// The median of a list (the mean of the middle two when even); 0 for an empty list.
double median(std::vector<double> values);

}  // namespace kiln::tuner
