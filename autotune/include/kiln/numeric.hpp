// Host-side 16-bit float conversions and the poison patterns written into outputs before a run.
// The patterns are NaNs with a distinctive payload: an element still holding one after the run
// was never written, and any NaN that reaches the comparison fails it.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kiln {

namespace poison {
inline constexpr std::uint32_t f32 = 0xFFC1A5E5u;
inline constexpr std::uint16_t bf16 = 0xFFC1u;
inline constexpr std::uint16_t f16 = 0xFE5Au;
}  // namespace poison

inline std::uint32_t bits_of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

inline float float_of_bits(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Round to nearest even, as __float2bfloat16_rn does; NaN stays NaN.
inline std::uint16_t bf16_from_float(float x) {
  std::uint32_t u = bits_of(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

inline float float_from_bf16(std::uint16_t h) { return float_of_bits(static_cast<std::uint32_t>(h) << 16); }

// IEEE binary16, round to nearest even, with subnormals and overflow to infinity.
inline std::uint16_t f16_from_float(float x) {
  std::uint32_t u = bits_of(x);
  std::uint32_t sign = (u >> 16) & 0x8000u;
  std::uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);  // NaN
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow -> inf
  if (abs < 0x38800000u) {  // below 2^-14: a subnormal half, h * 2^-24, or zero
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // under half of 2^-24
    // value = mant * 2^(e - 150) with the implicit bit; h = value / 2^-24 = mant >> (126 - e).
    std::uint32_t mant = (abs & 0x007FFFFFu) | 0x00800000u;
    int shift = 126 - static_cast<int>(abs >> 23);
    std::uint32_t half = mant >> shift;
    std::uint32_t rem = mant & ((1u << shift) - 1u);
    std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t h = ((abs - 0x38000000u) >> 13);
  std::uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

inline float float_from_f16(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    if (mant == 0) return float_of_bits(sign);
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return float_of_bits(sign | 0x7F800000u | (mant << 13));
  return float_of_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace kiln
