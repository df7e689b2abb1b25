// The public N-body API (kiln/nbody.hpp) through the tuned library: the tolerance-taking CPU
// function meets its tolerance against the fp64 all-pairs reference on both distributions, a
// tolerance stricter than every bucket gives the all-pairs result bit for bit, and bad input to
// every CPU function throws kiln::NbodyError naming the function and the argument, writing nothing.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kiln/nbody.hpp"
#include "kiln_catch.hpp"
#include "nbody_tree_check.hpp"

namespace {

using kiln_test::ContainsSubstring;

double relative_rms(const std::vector<float>& acc, const std::vector<float>& bodies, std::int64_t n) {
  return kiln::nbody::compare_tree(acc.data(), bodies.data(), n, kiln::nbody::bodies_to_compare(n, 1, 512)).rel_l2;
}

}  // namespace

TEST_CASE("nbody api: the tolerance-taking function meets its tolerance", "[nbody][api][cpu]") {
  for (auto kind : {kiln::nbody::Bodies::plummer, kiln::nbody::Bodies::cube}) {
    for (std::int64_t n : {1, 2, 1000, 40009}) {
      const std::vector<float> bodies = kiln::nbody::make_bodies(kind, n, 77);
      for (double tolerance : {5e-2, 1e-2, 3e-3, 1e-3, 1e-4}) {
        INFO("n=" << n << " tolerance " << tolerance);
        std::vector<float> acc(static_cast<std::size_t>(3 * n), NAN);
        kiln::cpu::nbody_accelerations(bodies.data(), acc.data(), n, tolerance);
        CHECK(relative_rms(acc, bodies, n) <= tolerance);
        for (float a : acc) REQUIRE(std::isfinite(a));
      }
    }
  }
}

TEST_CASE("nbody api: a tolerance stricter than every bucket is all-pairs", "[nbody][api][cpu]") {
  const std::int64_t n = 3001;
  const std::vector<float> bodies = kiln::nbody::make_bodies(kiln::nbody::Bodies::plummer, n, 5);
  std::vector<float> strict(static_cast<std::size_t>(3 * n)), all_pairs(strict.size());
  kiln::cpu::nbody_accelerations(bodies.data(), strict.data(), n, 1e-6);
  kiln::cpu::nbody_accelerations(bodies.data(), all_pairs.data(), n);
  CHECK(std::memcmp(strict.data(), all_pairs.data(), strict.size() * sizeof(float)) == 0);
  CHECK(relative_rms(strict, bodies, n) < 1e-5);
}

TEST_CASE("nbody api: bad arguments throw NbodyError and write nothing", "[nbody][api][cpu]") {
  const std::int64_t n = 64;
  std::vector<float> bodies = kiln::nbody::make_bodies(kiln::nbody::Bodies::cube, n, 3);
  const float sentinel = 12345.0f;
  std::vector<float> acc(static_cast<std::size_t>(3 * n + 1), sentinel);
  const char* misaligned_bodies = reinterpret_cast<const char*>(bodies.data()) + 1;
  char* misaligned_acc = reinterpret_cast<char*>(acc.data()) + 2;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();

  struct Bad {
    const char* expected;
    const float* bodies;
    float* acc;
    std::int64_t n;
    double tolerance;
  };
  const std::vector<Bad> bad = {
      {"n must be in 0..1073741824, got -1", bodies.data(), acc.data(), -1, 1e-3},
      {"n must be in 0..1073741824, got 1073741825", bodies.data(), acc.data(), kiln::kNbodyMaxBodies + 1, 1e-3},
      {"bodies is null with n = 64", nullptr, acc.data(), n, 1e-3},
      {"acc is null with n = 64", bodies.data(), nullptr, n, 1e-3},
      {"bodies must be 4-byte aligned", reinterpret_cast<const float*>(misaligned_bodies), acc.data(), n, 1e-3},
      {"acc must be 4-byte aligned", bodies.data(), reinterpret_cast<float*>(misaligned_acc), n, 1e-3},
      {"tolerance must be a positive finite number, got 0", bodies.data(), acc.data(), n, 0.0},
      {"tolerance must be a positive finite number, got -0.001", bodies.data(), acc.data(), n, -1e-3},
      {"tolerance must be a positive finite number, got nan", bodies.data(), acc.data(), n, nan},
      {"tolerance must be a positive finite number, got inf", bodies.data(), acc.data(), n, inf},
  };
  for (const Bad& b : bad) {
    INFO(b.expected);
    CHECK_THROWS_AS(kiln::cpu::nbody_accelerations(b.bodies, b.acc, b.n, b.tolerance), kiln::NbodyError);
    CHECK_THROWS_WITH(kiln::cpu::nbody_accelerations(b.bodies, b.acc, b.n, b.tolerance),
                      ContainsSubstring(std::string("kiln::cpu::nbody_accelerations: ") + b.expected));
    // The all-pairs function checks the same arguments, tolerance aside.
    if (std::string(b.expected).find("tolerance") == std::string::npos) {
      CHECK_THROWS_AS(kiln::cpu::nbody_accelerations(b.bodies, b.acc, b.n), kiln::NbodyError);
      CHECK_THROWS_WITH(kiln::cpu::nbody_accelerations(b.bodies, b.acc, b.n),
                        ContainsSubstring(std::string("kiln::cpu::nbody_accelerations: ") + b.expected));
    }
  }
  for (float a : acc) CHECK(a == sentinel);

  // n = 0 with null pointers does nothing.
  CHECK_NOTHROW(kiln::cpu::nbody_accelerations(nullptr, nullptr, 0, 1e-3));
  CHECK_NOTHROW(kiln::cpu::nbody_accelerations(nullptr, nullptr, 0));
}
