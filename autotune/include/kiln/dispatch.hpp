// Support for generated dispatch headers (kiln/tuned/<kernel>.hpp): the functions space
// expressions may use, with the generator's semantics, and the provenance a program can query.
#pragma once
#include <cstdint>

#include "kiln/choice.hpp"

namespace kiln {

namespace expr {
constexpr std::int64_t min(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
constexpr std::int64_t max(std::int64_t a, std::int64_t b) { return a < b ? b : a; }
// Mathematical ceiling of a / b, as the generator evaluates it.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a % b != 0 && ((a < 0) == (b < 0))) ? a / b + 1 : a / b;
}
constexpr std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }
// Floor of log2 for a > 0.
constexpr std::int64_t log2(std::int64_t a) {
  std::int64_t r = 0;
  for (; a > 1; a >>= 1) ++r;
  return r;
}
constexpr std::int64_t is_pow2(std::int64_t a) { return a > 0 && (a & (a - 1)) == 0 ? 1 : 0; }
}  // namespace expr

// Distance between two sizes in powers of two, used to find the nearest tuned bucket.
constexpr std::int64_t log2_distance(std::int64_t a, std::int64_t b) {
  std::int64_t la = a > 0 ? expr::log2(a) : 0;
  std::int64_t lb = b > 0 ? expr::log2(b) : 0;
  return la > lb ? la - lb : lb - la;
}

// Where a dispatched configuration comes from.
struct Provenance {
  const char* variant;             // canonical variant name of the configuration
  const char* bucket;              // the bucket whose winner it is, or the learned dispatch's leaf
                                   // ("leaf 3"); "" for the default
  const char* selection;           // "exact bucket", "nearest tuned bucket", "learned dispatch",
                                   // "listed problem" (its fastest variant, ahead of the learned
                                   // dispatch) or "default, not tuned"
  const char* device;              // device the tuning ran on; "" when not tuned
  const char* compute_capability;
  const char* driver;
  const char* cuda;
  const char* date;                // UTC day of the measurements
  double time_s;                   // geometric mean of the winner's times on the bucket's problems
                                   // (a leaf: on its coverage points)
  double floor_s;                  // geometric mean of the floors of those problems
  double ratio;                    // time / floor; 0 when not tuned or no floor
  bool tuned;
};

}  // namespace kiln
