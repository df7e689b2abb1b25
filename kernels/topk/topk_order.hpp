// The total order every top-k path ranks by, as unsigned integers (host and device).
//   key(x): an order-preserving 32-bit image of a float in which every NaN is above +inf and -0.0
//           equals +0.0; in smallest mode the key is complemented, so that "larger key" always
//           means "ranks first" (NaN, key 0 there, ranks last).
//   packed(key, column): key in the high half, the complement of the column in the low half, so
//           one 64-bit comparison ranks by key and then by lower column first. Columns are below
//           2^31, so a packed entry is never 0: 0 pads lists and marks empty slots.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define KILN_TOPK_HD __host__ __device__ __forceinline__
#else
#define KILN_TOPK_HD inline
#endif

namespace kiln::topk {

KILN_TOPK_HD std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

// Largest mode's key: x < y (as floats, NaN above all, -0 == +0) <=> key(x) < key(y).
KILN_TOPK_HD std::uint32_t key_largest(std::uint32_t u) {
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu;  // NaN
  if (u == 0x80000000u) u = 0;                                // -0.0 as +0.0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// smallest: the complement, so that the lowest value gets the highest key.
KILN_TOPK_HD std::uint32_t key_of(std::uint32_t bits, bool smallest) {
  const std::uint32_t k = key_largest(bits);
  return smallest ? ~k : k;
}

KILN_TOPK_HD std::uint64_t pack(std::uint32_t key, std::uint32_t column) {
  return (static_cast<std::uint64_t>(key) << 32) | (0xFFFFFFFFu - column);
}
KILN_TOPK_HD std::uint32_t packed_key(std::uint64_t p) { return static_cast<std::uint32_t>(p >> 32); }
KILN_TOPK_HD std::uint32_t packed_column(std::uint64_t p) { return 0xFFFFFFFFu - static_cast<std::uint32_t>(p); }

}  // namespace kiln::topk
