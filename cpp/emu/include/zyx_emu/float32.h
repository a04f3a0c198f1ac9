// float32 helpers of zyx-tt's Tensix emulator, as tt-metal's
// api/numeric/float32.h gives kernels: the special values' bit patterns, the
// field masks, and an ordering of raw float32 bits.
#pragma once

#include <cstdint>

inline constexpr uint32_t NEG_INF_FLOAT32 = 0xFF800000;
inline constexpr uint32_t POS_INF_FLOAT32 = 0x7F800000;
inline constexpr uint32_t NAN_FLOAT32 = 0x7FFFFFFF;
inline constexpr uint32_t FLOAT32_SIGN_MASK = 0x80000000;
inline constexpr uint32_t FLOAT32_EXPONENT_MASK = 0x7F800000;
inline constexpr uint32_t FLOAT32_MANTISSA_MASK = 0x007FFFFF;
inline constexpr uint32_t FLOAT32_MAGNITUDE_MASK = 0x7FFFFFFF;

// Whether float32 a > b, on the bits alone. Unlike bfloat16_greater, a NaN
// is never greater nor smaller and +0 equals -0 (tt-metal's argmax relies on
// both); otherwise sign-magnitude order.
constexpr bool float32_greater(uint32_t a, uint32_t b) {
  auto is_nan = [](uint32_t x) { return (x & FLOAT32_MAGNITUDE_MASK) > FLOAT32_EXPONENT_MASK; };
  if (is_nan(a) || is_nan(b)) return false;
  if ((a & FLOAT32_MAGNITUDE_MASK) == 0 && (b & FLOAT32_MAGNITUDE_MASK) == 0) return false;
  bool a_neg = (a & FLOAT32_SIGN_MASK) != 0, b_neg = (b & FLOAT32_SIGN_MASK) != 0;
  if (a_neg != b_neg) return !a_neg;
  return a_neg ? a < b : a > b;
}
