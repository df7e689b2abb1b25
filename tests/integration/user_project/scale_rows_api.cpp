#include "kiln/tuned/scale_rows.hpp"
#include "scale_rows.hpp"
#include "user/scale_rows.hpp"

namespace user {

void scale_rows(const float* in, const float* scale, float* out, std::int64_t rows, std::int64_t cols) {
  kiln::tuned::scale_rows::dispatch({rows, cols}, [&](auto config) {
    scale_rows_kernel<decltype(config)>(in, scale, out, rows, cols);
  });
}

const char* scale_rows_variant(std::int64_t rows, std::int64_t cols) {
  return kiln::tuned::scale_rows::provenance({rows, cols}).variant;
}

bool scale_rows_tuned(std::int64_t rows, std::int64_t cols) {
  return kiln::tuned::scale_rows::provenance({rows, cols}).tuned;
}

}  // namespace user
