// The family's API: one entry point for every degree the family has a member for.
#pragma once
#include <cstdint>

namespace user {
// y[i] = Σ_k x[i]^k / (k + 1), k = 0..degree; throws std::invalid_argument for a degree without a
// member.
void poly(const float* x, float* y, std::int64_t n, int degree);
// Canonical name of the variant the call dispatches to.
const char* poly_variant(std::int64_t n, int degree);
// The degrees the family has, as text ("2, 3").
const char* poly_degrees();
}  // namespace user
