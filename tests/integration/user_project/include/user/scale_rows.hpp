// out[r, c] = in[r, c] * scale[r]: the tuned entry point of the user project.
#pragma once
#include <cstdint>

namespace user {
void scale_rows(const float* in, const float* scale, float* out, std::int64_t rows, std::int64_t cols);
// Canonical name of the variant the call dispatches to, and whether it was tuned.
const char* scale_rows_variant(std::int64_t rows, std::int64_t cols);
bool scale_rows_tuned(std::int64_t rows, std::int64_t cols);
}  // namespace user
