#include "regression_forest.hpp"

#include <algorithm>
#include <cmath>

#include "grid.hpp"

namespace kiln::tuner {

void RegressionForest::fit(const std::vector<const std::vector<int>*>& points, const std::vector<double>& targets,
                           const std::vector<int>& value_counts, const ForestShape& shape, std::mt19937_64& rng) {
  points_ = &points;
  targets_ = &targets;
  value_counts_ = value_counts;
  shape_ = shape;
  splittable_.clear();
  for (std::size_t p = 0; p < value_counts.size(); ++p) {
    if (value_counts[p] > 1) splittable_.push_back(static_cast<int>(p));
  }
  trees_.assign(shape.trees, {});
  std::vector<std::size_t> sample(points.size());
  for (auto& tree : trees_) {
    for (auto& s : sample) s = grid::draw(rng, points.size());
    grow(tree, sample, 0, sample.size(), rng);
  }
  points_ = nullptr;
  targets_ = nullptr;
}

std::size_t RegressionForest::grow(Tree& tree, std::vector<std::size_t>& sample, std::size_t begin, std::size_t end,
                                   std::mt19937_64& rng) const {
  const auto& y = *targets_;
  const std::size_t n = end - begin;
  double total = 0;
  for (std::size_t i = begin; i < end; ++i) total += y[sample[i]];
  const std::size_t at = tree.size();
  tree.push_back(Node{.value = total / static_cast<double>(n)});
  if (n < 2 * shape_.min_leaf) return at;

  // The parameters this node may split on: a random subset, drawn by a partial shuffle.
  std::vector<int> candidates = splittable_;
  const auto considered = std::min(candidates.size(), static_cast<std::size_t>(std::ceil(
                                                          shape_.feature_fraction * static_cast<double>(candidates.size()))));
  for (std::size_t k = 0; k < considered; ++k) std::swap(candidates[k], candidates[k + grid::draw(rng, candidates.size() - k)]);

  // Minimising the squared error is maximising sum_left^2/n_left + sum_right^2/n_right.
  const double unsplit = total * total / static_cast<double>(n);
  double best_gain = 1e-12 * std::max(1.0, std::abs(unsplit));
  int best_parameter = -1, best_threshold = 0;
  std::vector<double> sums;
  std::vector<std::size_t> counts;
  for (std::size_t k = 0; k < considered; ++k) {
    const int p = candidates[k];
    sums.assign(static_cast<std::size_t>(value_counts_[p]), 0.0);
    counts.assign(static_cast<std::size_t>(value_counts_[p]), 0);
    for (std::size_t i = begin; i < end; ++i) {
      const auto c = static_cast<std::size_t>((*(*points_)[sample[i]])[p]);
      sums[c] += y[sample[i]];
      ++counts[c];
    }
    double left_sum = 0;
    std::size_t left_count = 0;
    for (int t = 0; t + 1 < value_counts_[p]; ++t) {
      left_sum += sums[static_cast<std::size_t>(t)];
      left_count += counts[static_cast<std::size_t>(t)];
      if (counts[static_cast<std::size_t>(t)] == 0 || left_count < shape_.min_leaf) continue;
      if (n - left_count < shape_.min_leaf) break;
      const double right_sum = total - left_sum;
      const double gain = left_sum * left_sum / static_cast<double>(left_count) +
                          right_sum * right_sum / static_cast<double>(n - left_count) - unsplit;
      if (gain > best_gain) {
        best_gain = gain;
        best_parameter = p;
        best_threshold = t;
      }
    }
  }
  if (best_parameter < 0) return at;

  auto middle = std::stable_partition(sample.begin() + static_cast<std::ptrdiff_t>(begin),
                                      sample.begin() + static_cast<std::ptrdiff_t>(end), [&](std::size_t s) {
                                        return (*(*points_)[s])[best_parameter] <= best_threshold;
                                      });
  const auto split = static_cast<std::size_t>(middle - sample.begin());
  const std::size_t left = grow(tree, sample, begin, split, rng);
  const std::size_t right = grow(tree, sample, split, end, rng);
  tree[at].parameter = best_parameter;
  tree[at].threshold = best_threshold;
  tree[at].left = left;
  tree[at].right = right;
  return at;
}

Prediction RegressionForest::predict(const std::vector<int>& point) const {
  double sum = 0, square = 0;
  for (const auto& tree : trees_) {
    std::size_t at = 0;
    while (tree[at].parameter >= 0) {
      at = point[static_cast<std::size_t>(tree[at].parameter)] <= tree[at].threshold ? tree[at].left : tree[at].right;
    }
    sum += tree[at].value;
    square += tree[at].value * tree[at].value;
  }
  const double count = static_cast<double>(trees_.size());
  const double mean = sum / count;
  return {mean, std::sqrt(std::max(0.0, square / count - mean * mean))};
}

}  // namespace kiln::tuner
