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

// The greatest non-NaN float (as bits) whose largest-mode key is at most `key`, or a NaN's bits
// when there is none. The CUDA filter compares floats against it instead of computing every
// element's key: for a non-NaN x, x <= limit(K) <=> key_largest(x) <= K (float order is key order,
// -0.0 == +0.0 included, and no key lies strictly between limit(K)'s key and K), and a compare with
// a NaN is unordered. Keys that no float has: below key(-inf) = 0x007FFFFF (those of negative NaN
// bit patterns), 0x7FFFFFFF (that of -0.0, which takes +0.0's), and above key(+inf) = 0xFF800000
// but for 0xFFFFFFFF (every NaN).
KILN_TOPK_HD std::uint32_t float_at_most(std::uint32_t key) {
  if (key < 0x007FFFFFu) return 0x7FFFFFFFu;  // a NaN: no float is that low
  if (key >= 0xFF800000u) return 0x7F800000u;  // +inf
  if (key >= 0x80000000u) return key & 0x7FFFFFFFu;
  return ~(key == 0x7FFFFFFFu ? 0x7FFFFFFEu : key);  // negative; 0x7FFFFFFF would be -0.0
}

// Whether key_of(bits, smallest) >= threshold, through float_at_most as the filter decides it:
// largest: all keys pass a zero threshold, otherwise x passes when !(x <= limit(threshold - 1))
// (a NaN passes); smallest: key_of >= threshold <=> key_largest <= ~threshold, so x passes when
// x <= limit(~threshold) (a NaN only at threshold 0). The host twin of the filter's compare.
KILN_TOPK_HD bool passes_limit(float x, std::uint32_t threshold, bool smallest) {
  if (threshold == 0) return true;
#if defined(__CUDA_ARCH__)
  const float limit = __uint_as_float(float_at_most(smallest ? ~threshold : threshold - 1));
#else
  const std::uint32_t bits = float_at_most(smallest ? ~threshold : threshold - 1);
  float limit;
  std::memcpy(&limit, &bits, sizeof limit);
#endif
  return smallest ? x <= limit : !(x <= limit);
}

KILN_TOPK_HD std::uint64_t pack(std::uint32_t key, std::uint32_t column) {
  return (static_cast<std::uint64_t>(key) << 32) | (0xFFFFFFFFu - column);
}
KILN_TOPK_HD std::uint32_t packed_key(std::uint64_t p) { return static_cast<std::uint32_t>(p >> 32); }
KILN_TOPK_HD std::uint32_t packed_column(std::uint64_t p) { return 0xFFFFFFFFu - static_cast<std::uint32_t>(p); }

}  // namespace kiln::topk
