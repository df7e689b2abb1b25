// Drawing the coverage and held-out points of a problem domain (generator/README.md, "Problem
// domains"). Deterministic: the only randomness is kiln::random's counter-based mix, seeded from
// the kernel's name, so the same space always gives the same points on every machine.
#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/counter_random.hpp"
#include "kiln/gen/domain.hpp"
#include "kiln/hash.hpp"

namespace kiln::gen {
namespace {

// Points one symbolic combination may evaluate against the constraints while sampling: it bounds
// `kiln generate` to seconds whatever the domain (the space's limits keep the combinations and the
// constraints' nodes small enough).
constexpr std::uint64_t kProbesPerCombination = 20000;
// Corners of the domain are taken for up to this many int dims; beyond, only the two diagonal ends.
constexpr std::size_t kMaxCornerDims = 6;
constexpr int kBisections = 30;

__extension__ typedef unsigned __int128 Wide;  // GCC and Clang; the product of two 64-bit residues

std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return static_cast<std::uint64_t>(static_cast<Wide>(a) * b % m);
}

std::uint64_t pow_mod(std::uint64_t base, std::uint64_t exp, std::uint64_t m) {
  std::uint64_t result = 1;
  base %= m;
  for (; exp > 0; exp >>= 1) {
    if (exp & 1) result = mul_mod(result, base, m);
    base = mul_mod(base, base, m);
  }
  return result;
}

struct Axis {
  std::size_t dim;  // index in space.dims
  IntRange range;
};

// Where an int dim's value lies on its scale: t in [0, 1] from min to max.
std::int64_t value_at(const IntRange& r, double t) {
  t = std::clamp(t, 0.0, 1.0);
  double v = r.log ? std::exp2(std::log2(static_cast<double>(r.min)) +
                               t * (std::log2(static_cast<double>(r.max)) - std::log2(static_cast<double>(r.min))))
                   : static_cast<double>(r.min) + t * static_cast<double>(r.max - r.min);
  return std::clamp(static_cast<std::int64_t>(std::llround(v)), r.min, r.max);
}

// Uniform in [0, 1) with 53 random bits.
double uniform53(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  const std::uint64_t h = random::mix64(random::mix64(seed ^ (stream * 0x9E3779B97F4A7C15ull)) + counter);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

std::string symbols_text(const Space& space, const std::vector<Value>& values, const std::vector<std::size_t>& symbolic) {
  std::string out;
  for (std::size_t i : symbolic) {
    out += (out.empty() ? "" : " ") + space.dims[i].name + "=" + std::get<std::string>(values[i]);
  }
  return out;
}

class Sampler {
 public:
  explicit Sampler(const Space& space) : space_(space) {
    Fnv1a64 h;
    h.field("kiln domain").field(space.kernel);
    seed_ = h.value();
    for (std::size_t i = 0; i < space.dims.size(); ++i) {
      if (!space.dims[i].symbolic) {
        axes_.push_back({i, *space.dims[i].range});
      } else if (std::find(space.tuning.alternate.begin(), space.tuning.alternate.end(), space.dims[i].name) !=
                 space.tuning.alternate.end()) {
        alternating_.push_back(i);
        alternations_ *= space.dims[i].domain.size();
      } else {
        symbolic_.push_back(i);
      }
    }
  }

  // Every combination of the crossed symbolic dims' values, odometer order (last dim fastest).
  std::vector<std::vector<std::string>> combinations() const {
    std::vector<std::vector<std::string>> out(1);
    for (std::size_t i : symbolic_) {
      std::vector<std::vector<std::string>> next;
      for (const auto& prefix : out) {
        for (const std::string& s : space_.dims[i].domain) {
          next.push_back(prefix);
          next.back().push_back(s);
        }
      }
      out = std::move(next);
    }
    return out;
  }

  std::vector<ProblemInstance> coverage(const std::vector<std::string>& combo, std::size_t quota, const char* pointer) {
    start(combo, 1);
    std::vector<ProblemInstance> chosen;
    corners(chosen, quota);
    grid(chosen, quota);
    draw(chosen, quota, 1);
    finish(chosen, quota, pointer, "coverage");
    return chosen;
  }

  // As many as the budget yields up to the quota: a pool to choose refinement points from, so a
  // domain with fewer free points than asked is no error.
  std::vector<ProblemInstance> refine_candidates(const std::vector<std::string>& combo, std::size_t quota) {
    start(combo, 3);
    std::vector<ProblemInstance> chosen;
    draw(chosen, quota, 3);
    for (auto& p : chosen) p.pointer = "/tuning/refine";
    return chosen;
  }

  std::vector<ProblemInstance> held_out(const std::vector<std::string>& combo, std::size_t quota, const char* pointer) {
    start(combo, 2);
    std::vector<ProblemInstance> chosen;
    if (quota == 0) return chosen;
    draw(chosen, quota, 2);
    finish(chosen, quota, pointer, "held-out");
    return chosen;
  }

 private:
  void start(const std::vector<std::string>& combo, std::uint64_t purpose) {
    combo_ = combo;
    purpose_ = purpose;
    probes_ = 0;
    feasible_seen_ = 0;
    rejected_.assign(space_.domain_constraints.size(), 0);
    ++combination_index_;
    turn(0);
  }

  // The alternating dims' values for the n-th point a set takes (of this combination): each run of
  // as many points as there are combinations of those values holds every combination once, in an
  // order drawn afresh for each run, so that no value goes with one end of an int dim (the corners
  // and the grid come in a fixed order). Called for every candidate point (up to the probe budget),
  // so a run's order is drawn once and kept.
  void turn(std::size_t n) {
    alternate_values_.clear();
    if (alternating_.empty()) return;
    const std::uint64_t run = n / alternations_;
    const std::uint64_t stream = (combination_index_ << 8) | (purpose_ + 16);
    if (order_.empty() || run != order_run_ || stream != order_stream_) {
      order_.resize(alternations_);
      for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
      // alternations_ <= kMaxDomainPoints (sections::check_domain), below the run's stride of 4096.
      for (std::size_t i = order_.size(); i > 1; --i) {
        const std::uint64_t h = random::mix64(random::mix64(seed_ ^ (stream * 0x9E3779B97F4A7C15ull)) + run * 4096 + i);
        std::swap(order_[i - 1], order_[h % i]);
      }
      order_run_ = run;
      order_stream_ = stream;
    }
    std::size_t index = order_[n % alternations_];
    for (std::size_t k = alternating_.size(); k-- > 0;) {
      const auto& values = space_.dims[alternating_[k]].domain;
      alternate_values_.push_back(values[index % values.size()]);
      index /= values.size();
    }
    std::reverse(alternate_values_.begin(), alternate_values_.end());
  }

  ProblemInstance point(const std::vector<double>& t) const {
    ProblemInstance p;
    p.values.resize(space_.dims.size());
    for (std::size_t k = 0; k < symbolic_.size(); ++k) p.values[symbolic_[k]] = combo_[k];
    for (std::size_t k = 0; k < alternating_.size(); ++k) p.values[alternating_[k]] = alternate_values_[k];
    for (std::size_t a = 0; a < axes_.size(); ++a) p.values[axes_[a].dim] = value_at(axes_[a].range, t[a]);
    return p;
  }

  // Within the constraints (counting which one rejects), and not taken by either set yet.
  bool acceptable(const ProblemInstance& p) {
    ++probes_;
    const Environment env = problem_environment(space_, p);
    for (std::size_t c = 0; c < space_.domain_constraints.size(); ++c) {
      const Constraint& constraint = space_.domain_constraints[c];
      bool holds = false;
      try {
        holds = constraint.expr.evaluate(env) != 0;
      } catch (const ExprError& e) {
        fail_expr(space_, constraint.expr_pointer, e, "domain point " + problem_key(space_, p));
      }
      if (!holds) {
        ++rejected_[c];
        return false;
      }
    }
    ++feasible_seen_;
    return taken_.insert(problem_key(space_, p)).second;
  }

  bool budget_left() const { return probes_ < kProbesPerCombination; }

  // The corners of the int dims' box; a corner outside the constraints moves along the line to
  // the box's centre until it is inside (the extreme the constraints allow in that direction).
  void corners(std::vector<ProblemInstance>& chosen, std::size_t quota) {
    const std::size_t k = axes_.size();
    std::vector<std::vector<double>> ends;
    if (k <= kMaxCornerDims) {
      for (std::size_t mask = 0; mask < (std::size_t{1} << k); ++mask) {
        std::vector<double> t(k);
        for (std::size_t a = 0; a < k; ++a) t[a] = (mask >> (k - 1 - a)) & 1 ? 1.0 : 0.0;
        ends.push_back(t);
      }
    } else {
      ends.push_back(std::vector<double>(k, 0.0));
      ends.push_back(std::vector<double>(k, 1.0));
    }
    for (const auto& corner : ends) {
      if (chosen.size() >= quota) return;
      turn(chosen.size());
      ProblemInstance p = point(corner);
      if (acceptable(p)) {
        chosen.push_back(std::move(p));
        continue;
      }
      if (!feasible(point(std::vector<double>(k, 0.5)))) continue;
      double outside = 0, inside = 1;  // fractions of the way from the corner to the centre
      for (int i = 0; i < kBisections; ++i) {
        const double mid = (outside + inside) / 2;
        (feasible(point(along(corner, mid))) ? inside : outside) = mid;
      }
      ProblemInstance q = point(along(corner, inside));
      if (acceptable(q)) chosen.push_back(std::move(q));
    }
  }

  static std::vector<double> along(const std::vector<double>& corner, double s) {
    std::vector<double> t(corner.size());
    for (std::size_t a = 0; a < t.size(); ++a) t[a] = corner[a] + s * (0.5 - corner[a]);
    return t;
  }

  // Within the constraints only (the bisection's test; takes nothing).
  bool feasible(const ProblemInstance& p) {
    ++probes_;
    const Environment env = problem_environment(space_, p);
    for (const Constraint& constraint : space_.domain_constraints) {
      try {
        if (constraint.expr.evaluate(env) == 0) return false;
      } catch (const ExprError& e) {
        fail_expr(space_, constraint.expr_pointer, e, "domain point " + problem_key(space_, p));
      }
    }
    return true;
  }

  // A grid evenly spaced on each dim's scale, fine enough to hold the points still needed, of
  // which every other one chosen is moved to an odd size (a prime: a multiple of no tile).
  void grid(std::vector<ProblemInstance>& chosen, std::size_t quota) {
    if (chosen.size() >= quota) return;
    const std::size_t need = quota - chosen.size();
    const std::size_t k = axes_.size();
    std::vector<std::vector<double>> usable;
    for (std::size_t g = 3; budget_left(); g = g + g / 2) {
      double cells = std::pow(static_cast<double>(g), static_cast<double>(k));
      if (cells > static_cast<double>(kProbesPerCombination - probes_)) break;
      usable.clear();
      std::vector<std::size_t> at(k, 0);
      while (true) {
        std::vector<double> t(k);
        for (std::size_t a = 0; a < k; ++a) t[a] = static_cast<double>(at[a]) / static_cast<double>(g - 1);
        if (feasible(point(t))) usable.push_back(t);
        std::size_t a = k;
        while (a > 0 && ++at[a - 1] == g) at[--a] = 0;
        if (a == 0) break;
      }
      if (usable.size() >= 2 * need) break;
    }
    const std::size_t n = usable.size();
    for (std::size_t i = 0; i < need && i < n && chosen.size() < quota; ++i) {
      turn(chosen.size());
      const std::size_t index = need >= n ? i : (i * (n - 1)) / std::max<std::size_t>(need - 1, 1);
      ProblemInstance p = point(usable[index]);
      if (i % 2 == 1) {
        ProblemInstance odd = p;
        for (const Axis& axis : axes_) {
          auto& v = std::get<std::int64_t>(odd.values[axis.dim]);
          v = odd_size(v, axis.range.min, axis.range.max);
        }
        if (acceptable(odd)) {
          chosen.push_back(std::move(odd));
          continue;
        }
      }
      if (acceptable(p)) chosen.push_back(std::move(p));
    }
  }

  // Random points, log-uniform on log scales, within the constraints, until the quota or the budget.
  void draw(std::vector<ProblemInstance>& chosen, std::size_t quota, std::uint64_t purpose) {
    const std::uint64_t stream = (combination_index_ << 8) | purpose;
    for (std::uint64_t counter = 0; chosen.size() < quota && budget_left(); ++counter) {
      std::vector<double> t(axes_.size());
      for (std::size_t a = 0; a < t.size(); ++a) t[a] = uniform53(seed_, stream, counter * axes_.size() + a);
      turn(chosen.size());
      ProblemInstance p = point(t);
      if (acceptable(p)) chosen.push_back(std::move(p));
    }
  }

  void finish(std::vector<ProblemInstance>& chosen, std::size_t quota, const char* pointer, const char* which) {
    const std::string combo = symbols_text(space_, chosen.empty() ? point(std::vector<double>(axes_.size(), 0)).values
                                                                  : chosen.front().values, symbolic_);
    const std::string where = combo.empty() ? "" : " with " + combo;
    if (feasible_seen_ == 0) {
      std::size_t worst = 0;
      for (std::size_t c = 1; c < rejected_.size(); ++c) {
        if (rejected_[c] > rejected_[worst]) worst = c;
      }
      fail_at(space_.label, space_.domain_constraints.empty() ? "/problem/domain_constraints" : space_.domain_constraints[worst].pointer,
              "no point of the domain" + where + " satisfies the domain constraints (" + std::to_string(probes_) +
                  " points tried: corners, a grid and random draws; most often rejected by this one)");
    }
    if (chosen.size() < quota) {
      fail_at(space_.label, pointer,
              "the domain" + where + " yields only " + std::to_string(chosen.size()) + " distinct " + which +
                  " points within its constraints, fewer than the " + std::to_string(quota) + " asked for");
    }
    for (std::size_t i = 0; i < chosen.size(); ++i) chosen[i].pointer = pointer;
  }

  const Space& space_;
  std::uint64_t seed_ = 0;
  std::vector<std::size_t> symbolic_;     // crossed: each combination of their values gets its share
  std::vector<std::size_t> alternating_;  // tuning.alternate: their values taken in turn
  std::size_t alternations_ = 1;          // combinations of the alternating dims' values
  std::vector<std::string> alternate_values_;
  std::vector<std::size_t> order_;  // the current run's order of the alternating combinations
  std::uint64_t order_run_ = 0, order_stream_ = 0;
  std::uint64_t purpose_ = 0;
  std::vector<Axis> axes_;
  std::vector<std::string> combo_;
  std::uint64_t combination_index_ = 0;
  std::uint64_t probes_ = 0;
  std::uint64_t feasible_seen_ = 0;
  std::vector<std::uint64_t> rejected_;
  std::set<std::string> taken_;  // keys of points in either set: the sets are disjoint
};

// Each symbolic combination gets an equal share of `total`, the first ones one more.
std::size_t share(std::int64_t total, std::size_t combinations, std::size_t index) {
  const auto t = static_cast<std::size_t>(total);
  return t / combinations + (index < t % combinations ? 1 : 0);
}

}  // namespace

bool is_prime(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t p : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    if (n % p == 0) return n == p;
  }
  std::uint64_t d = n - 1;
  int s = 0;
  for (; d % 2 == 0; d /= 2) ++s;
  for (std::uint64_t a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    std::uint64_t x = pow_mod(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s && composite; ++r) {
      x = mul_mod(x, x, n);
      composite = x != n - 1;
    }
    if (composite) return false;
  }
  return true;
}

std::int64_t odd_size(std::int64_t v, std::int64_t min, std::int64_t max) {
  if (v == 1) return v;  // a multiple of no tile already
  for (std::int64_t p = v; p <= max; ++p) {
    if (is_prime(static_cast<std::uint64_t>(p))) return p;
  }
  for (std::int64_t p = v; p >= min; --p) {
    if (is_prime(static_cast<std::uint64_t>(p))) return p;
  }
  return v;
}

bool in_domain(const Space& space, const ProblemInstance& point) {
  for (std::size_t i = 0; i < space.dims.size(); ++i) {
    const auto& range = space.dims[i].range;
    if (!range) continue;
    const std::int64_t v = std::get<std::int64_t>(point.values[i]);
    if (v < range->min || v > range->max) return false;
  }
  const Environment env = problem_environment(space, point);
  for (const Constraint& c : space.domain_constraints) {
    try {
      if (c.expr.evaluate(env) == 0) return false;
    } catch (const ExprError& e) {
      fail_expr(space, c.expr_pointer, e, "domain point " + problem_key(space, point));
    }
  }
  return true;
}

void sample_domain(Space& space) {
  if (!has_domain(space)) return;
  Sampler sampler(space);
  const auto combos = sampler.combinations();
  if (static_cast<std::int64_t>(combos.size()) > space.tuning.coverage) {
    fail_at(space.label, "/tuning/coverage",
            "coverage " + std::to_string(space.tuning.coverage) + " is fewer than the " + std::to_string(combos.size()) +
                " combinations of the symbolic dims (each needs a point)");
  }
  std::uint64_t nodes = 0;
  for (const Constraint& c : space.domain_constraints) nodes += c.expr.node_count();
  check_evaluation_cost(space.label, "/problem/domain_constraints",
                        combos.size() * (space.tuning.refine > 0 ? 3 : 2) * kProbesPerCombination, nodes,
                        "domain points sampled");
  space.coverage.clear();
  space.held_out.clear();
  // Coverage first for every combination, so the held-out draws avoid all of it.
  for (std::size_t c = 0; c < combos.size(); ++c) {
    for (auto& p : sampler.coverage(combos[c], share(space.tuning.coverage, combos.size(), c), "/tuning/coverage")) {
      space.coverage.push_back(std::move(p));
    }
  }
  for (std::size_t c = 0; c < combos.size(); ++c) {
    for (auto& p : sampler.held_out(combos[c], share(space.tuning.held_out, combos.size(), c), "/tuning/held_out")) {
      space.held_out.push_back(std::move(p));
    }
  }
  space.refine_candidates.clear();
  if (space.tuning.refine > 0) {
    // Drawn after both sets, so adding refinement leaves the coverage and held-out points as they were.
    const std::int64_t pool = space.tuning.refine * kRefineCandidatesPerPoint;
    for (std::size_t c = 0; c < combos.size(); ++c) {
      for (auto& p : sampler.refine_candidates(combos[c], share(pool, combos.size(), c))) {
        space.refine_candidates.push_back(std::move(p));
      }
    }
  }
}

}  // namespace kiln::gen
