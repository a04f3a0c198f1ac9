// int32 helpers of zyx-tt's Tensix emulator, as tt-metal's
// api/numeric/int32.h gives kernels: the extreme values as the "infinities"
// of int32 reductions, the sign mask, and the order of two int32 values.
#pragma once

#include <cstdint>

inline constexpr int32_t NEG_INF_INT32 = INT32_MIN;
inline constexpr int32_t POS_INF_INT32 = INT32_MAX;
inline constexpr uint32_t INT32_SIGN_MASK = 0x80000000;

// Whether a > b as two's-complement values (tt-metal splits the test by the
// sign bit; the order is the plain signed one).
constexpr bool int32_greater(int32_t a, int32_t b) { return a > b; }
