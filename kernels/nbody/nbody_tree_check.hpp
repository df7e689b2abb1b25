// Host-side pieces shared by the CPU and CUDA tree N-body workloads: the two input distributions,
// the problem's dims, and the check against the fp64 all-pairs reference.
//
// The tree approximates what the all-pairs kernels compute (same bodies, same softening), so the
// reference is the all-pairs one (nbody_check.hpp). The check compares every body up to
// kFullCheckBodies, else kTreeSampleBodies drawn from the seed; its relative L2 error over the
// compared components is the relative RMS error of the accelerations,
//   sqrt(sum_i |a_i - a_ref,i|^2 / sum_i |a_ref,i|^2),
// which the harness holds to the space's fp32 tolerance (10^-TOL_DIGITS). Every element is also
// examined for poison and non-finite values.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kiln/counter_random.hpp"
#include "kiln/reference_store.hpp"
#include "nbody_check.hpp"

namespace kiln::nbody {

inline constexpr std::int64_t kTreeSampleBodies = 1024;

// Plummer sphere of unit mass and unit scale radius, truncated at kPlummerRadius: the mass
// fraction inside r is r^3 / (1 + r^2)^(3/2), about 0.985 at r = 10.
inline constexpr double kPlummerRadius = 10.0;

enum class Bodies { plummer, cube };

inline Bodies bodies_kind_of(const Problem& problem) {
  const std::string kind = problem.s("bodies");
  if (kind == "plummer") return Bodies::plummer;
  if (kind == "cube") return Bodies::cube;
  throw Error("nbody tree: bodies must be plummer or cube, got '" + kind + "'");
}

inline std::int64_t tree_bodies_of(const Problem& problem) {
  const std::int64_t n = problem.i("n");
  if (n < 1) throw Error("nbody tree: n must be positive");
  if (n > (std::int64_t{1} << 30)) throw Error("nbody tree: n must be at most 2^30");
  return n;
}

// Body i of the distribution (x, y, z, m), from counters (seed, i): the same on every backend.
//   plummer: equal masses 1/n; radius from the inverted cumulative mass, truncated at
//            kPlummerRadius; direction uniform on the sphere.
//   cube:    as the all-pairs workloads: uniform in [0, 1)^3, masses uniform in [kMassLo, kMassHi).
inline void make_body(Bodies kind, std::int64_t n, std::uint64_t seed, std::int64_t i, float* b) {
  using ::kiln::random::uniform;
  const auto c = static_cast<std::uint64_t>(4 * i);
  if (kind == Bodies::cube) {
    b[0] = uniform(seed, 0, c);
    b[1] = uniform(seed, 0, c + 1);
    b[2] = uniform(seed, 0, c + 2);
    b[3] = kMassLo + (kMassHi - kMassLo) * uniform(seed, 0, c + 3);
    return;
  }
  const double inside = std::pow(kPlummerRadius * kPlummerRadius / (1.0 + kPlummerRadius * kPlummerRadius), 1.5);
  // Mass fraction in (0, inside]: never 0, so the radius is finite and positive.
  const double f = (static_cast<double>(uniform(seed, 1, c)) + 0x1.0p-25) * inside;
  const double r = 1.0 / std::sqrt(std::pow(f, -2.0 / 3.0) - 1.0);
  const double cos_t = 2.0 * uniform(seed, 1, c + 1) - 1.0;
  const double sin_t = std::sqrt(std::max(0.0, 1.0 - cos_t * cos_t));
  const double phi = 6.283185307179586 * uniform(seed, 1, c + 2);
  b[0] = static_cast<float>(r * sin_t * std::cos(phi));
  b[1] = static_cast<float>(r * sin_t * std::sin(phi));
  b[2] = static_cast<float>(r * cos_t);
  b[3] = static_cast<float>(1.0 / static_cast<double>(n));
}

inline std::vector<float> make_bodies(Bodies kind, std::int64_t n, std::uint64_t seed) {
  std::vector<float> bodies(static_cast<std::size_t>(4 * n));
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; ++i) make_body(kind, n, seed, i, bodies.data() + 4 * i);
  return bodies;
}

// The reference store's key (kiln/reference_store.hpp) of a workload's bodies: the distribution,
// the count and the seed make them, and the count and the seed pick the compared ones.
inline std::string tree_stored_key(Bodies kind, std::int64_t n, std::uint64_t seed) {
  return std::string("nbody_tree bodies=") + (kind == Bodies::plummer ? "plummer" : "cube") + " n=" + std::to_string(n) +
         " seed=" + std::to_string(seed);
}

// The accelerations against the fp64 reference: the bodies in `compared` (sorted) with their
// reference (computed in parallel), the others only for being written and finite. With a
// `stored_key` the reference is taken from the reference store when an earlier check of the same
// bodies kept it (3 doubles a compared body; an all-pairs sum over up to 2^20 bodies each), and
// kept there otherwise.
inline CheckResult compare_tree(const float* acc, const float* bodies, std::int64_t n,
                                const std::vector<std::int64_t>& compared, const std::string& stored_key = {}) {
  std::vector<double> ref(3 * compared.size());
  const std::optional<std::string> stored =
      stored_key.empty() ? std::nullopt : reference_store::load(stored_key, ref.size() * sizeof(double));
  if (stored) {
    std::memcpy(ref.data(), stored->data(), stored->size());
  } else {
#pragma omp parallel for schedule(dynamic, 4)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(compared.size()); ++k)
      reference(bodies, n, compared[static_cast<std::size_t>(k)], ref.data() + 3 * k);
    if (!stored_key.empty()) {
      reference_store::store(stored_key, std::string(reinterpret_cast<const char*>(ref.data()), ref.size() * sizeof(double)));
    }
  }
  Comparison cmp("acc", "fp32");
  std::size_t next = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (next < compared.size() && compared[next] == i) {
      for (int c = 0; c < 3; ++c) cmp.f32(acc[3 * i + c], ref[3 * next + c]);
      ++next;
    } else {
      for (int c = 0; c < 3; ++c) cmp.written_f32(acc[3 * i + c]);
    }
  }
  return cmp.result();
}

}  // namespace kiln::nbody
