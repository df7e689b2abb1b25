// Quantiles of timings and the rule that stops repetitions once they agree (kiln/quantile.hpp).
#include <stdexcept>
#include <vector>

#include "kiln/quantile.hpp"
#include "kiln_catch.hpp"

TEST_CASE("quantiles interpolate between order statistics, whatever the order", "[quantile]") {
  const std::vector<double> v = {4, 1, 3, 2};
  CHECK(kiln::quantile(v, 0.5) == kiln_test::Approx(2.5));
  CHECK(kiln::quantile(v, 0.25) == kiln_test::Approx(1.75));
  CHECK(kiln::quantile(v, 0) == 1);
  CHECK(kiln::quantile(v, 1) == 4);
  CHECK_THROWS_AS(kiln::quantile({}, 0.5), std::invalid_argument);
}

TEST_CASE("repetitions are settled when their range is within the spread of their median", "[quantile]") {
  CHECK(kiln::settled({1.000, 1.004, 1.009}, 0.01));
  CHECK_FALSE(kiln::settled({1.000, 1.004, 1.011}, 0.01));
  // One outlier among agreeing repetitions asks for the rest.
  CHECK_FALSE(kiln::settled({1.0, 1.0, 1.5}, 0.01));
  // A spread of 0 always asks for every repetition, even of equal values.
  CHECK_FALSE(kiln::settled({2.0, 2.0, 2.0}, 0));
  CHECK_FALSE(kiln::settled({}, 0.01));
}
