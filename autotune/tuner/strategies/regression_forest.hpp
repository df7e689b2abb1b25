// A random forest of regression trees over parameter-grid coordinates: the surrogate model of the
// forest strategy. Each tree is grown on a bootstrap sample of the measured points, choosing at
// every node the split `coordinate[p] <= t` that most reduces the squared error among a random
// subset of the parameters. The trees' mean is the prediction and their spread its uncertainty.
// Coordinates are small integers (a parameter has tens of values at most), so a split is found by
// counting per value instead of sorting.
#pragma once
#include <cstddef>
#include <random>
#include <vector>

namespace kiln::tuner {

struct ForestShape {
  std::size_t trees = 32;
  std::size_t min_leaf = 2;     // points in a leaf, at least
  double feature_fraction = 0.84;  // of the parameters considered at each split (5/6, as SMAC does)
};

struct Prediction {
  double mean = 0;
  double spread = 0;  // standard deviation of the trees' predictions
};

class RegressionForest {
 public:
  // `points[i]` has `targets[i]`; `value_counts[p]` bounds coordinate p. At least one point.
  void fit(const std::vector<const std::vector<int>*>& points, const std::vector<double>& targets,
           const std::vector<int>& value_counts, const ForestShape& shape, std::mt19937_64& rng);
  Prediction predict(const std::vector<int>& point) const;

 private:
  struct Node {
    int parameter = -1;  // a leaf when negative
    int threshold = 0;   // coordinate <= threshold goes to `left`
    std::size_t left = 0, right = 0;
    double value = 0;    // a leaf's mean
  };
  using Tree = std::vector<Node>;

  std::size_t grow(Tree& tree, std::vector<std::size_t>& sample, std::size_t begin, std::size_t end,
                   std::mt19937_64& rng) const;

  // Set for the duration of fit().
  const std::vector<const std::vector<int>*>* points_ = nullptr;
  const std::vector<double>* targets_ = nullptr;
  std::vector<int> splittable_;  // parameters with more than one value
  std::vector<int> value_counts_;
  ForestShape shape_;

  std::vector<Tree> trees_;
};

}  // namespace kiln::tuner
