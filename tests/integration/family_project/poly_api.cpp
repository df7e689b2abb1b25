#include "kiln/tuned/poly.hpp"
#include "poly.hpp"
#include "user/poly.hpp"

namespace user {

void poly(const float* x, float* y, std::int64_t n, int degree) {
  kiln::tuned::poly::dispatch(degree, {n}, [&](auto config) { poly_kernel<decltype(config)>(x, y, n); });
}

const char* poly_variant(std::int64_t n, int degree) { return kiln::tuned::poly::provenance(degree, {n}).variant; }

const char* poly_degrees() { return kiln::tuned::poly::keys_text; }

}  // namespace user
