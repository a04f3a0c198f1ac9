// bfloat16 helpers of zyx-tt's Tensix emulator, as tt-metal's
// api/numeric/bfloat16.h gives kernels: special values' bit patterns and an
// ordering of raw bfloat16 bits.
#pragma once

#include <cstdint>

inline constexpr uint16_t NEG_INF_BFLOAT16 = 0xFF80;
inline constexpr uint16_t POS_INF_BFLOAT16 = 0x7F80;
inline constexpr uint16_t NAN_BFLOAT16 = 0x7FFF;
inline constexpr uint16_t BFLOAT16_SIGN_MASK = 0x8000;

// Whether bfloat16 a > b, on the bits alone (sign-magnitude): a positive
// value beats a negative one; among negatives the larger magnitude is the
// smaller value. NaNs are ordered by their bits and +0 > -0, as in tt-metal.
constexpr bool bfloat16_greater(uint16_t a, uint16_t b) {
  bool a_neg = (a & BFLOAT16_SIGN_MASK) != 0, b_neg = (b & BFLOAT16_SIGN_MASK) != 0;
  if (a_neg != b_neg) return !a_neg;
  return a_neg ? a < b : a > b;
}
