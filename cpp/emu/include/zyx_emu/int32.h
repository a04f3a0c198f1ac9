// int32 helpers of zyx-tt's Tensix emulator, as tt-metal's api/numeric/int32.h
// gives kernels (argmax's readers): the extreme values and the sign mask with
// tt-metal's types, and an ordering of int32 values.
#pragma once

#include <cstdint>

inline constexpr int32_t NEG_INF_INT32 = INT32_MIN;
inline constexpr int32_t POS_INF_INT32 = INT32_MAX;
inline constexpr uint32_t INT32_SIGN_MASK = 0x80000000;

// Whether int32 a > b: the two's-complement order.
constexpr bool int32_greater(int32_t a, int32_t b) { return a > b; }
