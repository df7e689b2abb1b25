// Counter-based random numbers for workloads that fill large inputs on the device: the value of
// element `counter` of stream `stream` depends only on (seed, stream, counter), so every thread
// draws its own without shared state, and a seed reproduces its inputs.
#pragma once
#include <cstdint>

#include "kiln/choice.hpp"  // KILN_HOST_DEVICE

namespace kiln::random {

// splitmix64's finaliser: a bijective 64-bit mix that decorrelates consecutive counters.
KILN_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1), 24 random bits.
KILN_HOST_DEVICE inline float uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  const std::uint64_t h = mix64(mix64(seed ^ (stream * 0x9E3779B97F4A7C15ull)) + counter);
  return static_cast<float>(h >> 40) * 0x1.0p-24f;
}

}  // namespace kiln::random
