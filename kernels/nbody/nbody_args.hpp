// Argument checks of the public N-body functions (kiln/nbody.hpp): each throws kiln::NbodyError
// naming the function and the argument, before anything is read or written.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "kiln/nbody.hpp"

namespace kiln::nbody {

[[noreturn]] inline void reject(const char* function, const std::string& what) {
  throw NbodyError(std::string(function) + ": " + what);
}

inline void require_count(const char* function, std::int64_t n) {
  if (n < 0 || n > kNbodyMaxBodies)
    reject(function, "n must be in 0.." + std::to_string(kNbodyMaxBodies) + ", got " + std::to_string(n));
}

// A pointer that must be set when n > 0, with its alignment.
inline void require_pointer(const char* function, const char* name, const void* p, std::int64_t n,
                            std::size_t alignment) {
  if (p == nullptr && n > 0) reject(function, std::string(name) + " is null with n = " + std::to_string(n));
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
    reject(function, std::string(name) + " must be " + std::to_string(alignment) + "-byte aligned");
}

// The tuned tolerance buckets, loosest first: a bucket's TOL_DIGITS is d for 10^-d.
inline constexpr double kTreeTolerances[] = {1e-2, 1e-3, 1e-4};
inline constexpr int kTreeDigits[] = {2, 3, 4};

// The TOL_DIGITS of the loosest bucket at least as strict as `tolerance`, or 0 when every bucket
// is looser (all-pairs then).
inline int tolerance_digits(const char* function, double tolerance) {
  if (!(tolerance > 0.0) || std::isinf(tolerance)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", tolerance);
    reject(function, std::string("tolerance must be a positive finite number, got ") + text);
  }
  for (int b = 0; b < 3; ++b) {
    if (kTreeTolerances[b] <= tolerance) return kTreeDigits[b];
  }
  return 0;
}

}  // namespace kiln::nbody
