// Problem domains (generator/README.md, "Problem domains"): the sizes a kernel will see, declared
// per int dim as a range with a scale, limited by constraints across dims; and the deterministic
// points drawn from them, a coverage set the tuner times every variant on and a disjoint held-out
// set it judges the dispatch on.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/gen/space.hpp"

namespace kiln::gen {

// Deterministic primality of a 64-bit integer (Miller-Rabin with the bases that are exact below 2^64).
bool is_prime(std::uint64_t n);

// The smallest prime >= v when it is at most `max`, else the largest prime in [min, v], else v.
std::int64_t odd_size(std::int64_t v, std::int64_t min, std::int64_t max);

// True when the point lies in the domain: every int dim in its range and every domain constraint
// holds. Throws InputError when a constraint cannot be evaluated there (an overflow).
bool in_domain(const Space& space, const ProblemInstance& point);

// Draws space.coverage and space.held_out from the space's domain; does nothing without one.
// The same space always gives the same points: the only randomness is a counter-based generator
// seeded from the kernel's name. Throws InputError (naming the file and the place) when the
// constraints leave no point, or fewer distinct points than the two sets need.
void sample_domain(Space& space);

}  // namespace kiln::gen
