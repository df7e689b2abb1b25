// Host-side pieces shared by the CPU and CUDA N-body workloads: the input distribution, which
// bodies are compared with the fp64 reference, the reference itself, and the walk over every
// output element.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kiln/check.hpp"
#include "kiln/problem.hpp"
#include "kiln/rng.hpp"
#include "nbody_softening.hpp"

namespace kiln::nbody {

// Inputs: positions uniform in the unit cube [0, 1)^3, masses uniform in [0.1, 1).
inline constexpr float kMassLo = 0.1f;
inline constexpr float kMassHi = 1.0f;

// Up to this many bodies every acceleration is compared; beyond, kSampleBodies bodies drawn from
// the seed, always including the first and the last.
inline constexpr std::int64_t kFullCheckBodies = 2048;
inline constexpr std::int64_t kSampleBodies = 256;

inline std::int64_t bodies_of(const Problem& problem) {
  const std::int64_t n = problem.i("n");
  if (n < 1) throw Error("nbody: n must be positive");
  if (n > (std::int64_t{1} << 30)) throw Error("nbody: n must be at most 2^30");
  return n;
}

// Sorted indices of the bodies to compare with the reference: every body up to kFullCheckBodies,
// beyond that `sample` bodies drawn from the seed.
inline std::vector<std::int64_t> bodies_to_compare(std::int64_t n, std::uint64_t seed,
                                                   std::int64_t sample = kSampleBodies) {
  std::vector<std::int64_t> picked;
  if (n <= kFullCheckBodies || n <= sample) {
    picked.resize(static_cast<std::size_t>(n));
    std::iota(picked.begin(), picked.end(), std::int64_t{0});
    return picked;
  }
  Rng rng(seed ^ 0xB0D1'E5C4'EC4E'5EEDull);
  picked = {0, n - 1};
  while (static_cast<std::int64_t>(picked.size()) < sample) {
    const auto i = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(n));
    if (std::find(picked.begin(), picked.end(), i) == picked.end()) picked.push_back(i);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// Acceleration of body i in fp64; bodies holds x, y, z, m per body.
inline void reference(const float* bodies, std::int64_t n, std::int64_t i, double a[3]) {
  const double eps2 = kSoftening2;
  const double xi = bodies[4 * i], yi = bodies[4 * i + 1], zi = bodies[4 * i + 2];
  a[0] = a[1] = a[2] = 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double dx = bodies[4 * j] - xi, dy = bodies[4 * j + 1] - yi, dz = bodies[4 * j + 2] - zi;
    const double r2 = dx * dx + dy * dy + dz * dz + eps2;
    const double s = bodies[4 * j + 3] / (r2 * std::sqrt(r2));
    a[0] += dx * s;
    a[1] += dy * s;
    a[2] += dz * s;
  }
}

// Walks every element of acc (3 floats per body): the bodies in `compared` (sorted) against the
// reference, the others only for being written and finite.
inline CheckResult compare_bodies(const float* acc, const float* bodies, std::int64_t n,
                                  const std::vector<std::int64_t>& compared) {
  Comparison cmp("acc", "fp32");
  std::size_t next = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (next < compared.size() && compared[next] == i) {
      ++next;
      double a[3];
      reference(bodies, n, i, a);
      for (int c = 0; c < 3; ++c) cmp.f32(acc[3 * i + c], a[c]);
    } else {
      for (int c = 0; c < 3; ++c) cmp.written_f32(acc[3 * i + c]);
    }
  }
  return cmp.result();
}

}  // namespace kiln::nbody
