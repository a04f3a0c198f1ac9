// Integer helpers of zyx-tt's Tensix emulator that tt-metal's
// internal/mod_div_lib.h gives kernels: multiplication and division by a
// constant. The card's cores have no divider, so tt-metal divides by some
// constants with a multiply-high and a shift; the emulator computes those
// quotients the same way (kFastDivisors), so a kernel sees the card's
// results, and divides by every other divisor exactly.
#pragma once

#include <cstdint>

#include "zyx_emu/common.h"

namespace zyx_emu_detail {
// A divisor d with its multiplier m and shift s (tt-metal's constants): the
// quotient is ((n * m) >> 32) >> s. That is n / d for small n, but for some
// divisors (7, 56, 63, 70, 108, 110, 117, 124, 126, 140) one more than n / d
// for some n near 2^32 (7: n = 4293567291), as on the card.
struct FastDivisor {
  uint32_t d, m, s;
};
inline constexpr FastDivisor kFastDivisors[] = {
    {7, 0x92492493u, 2},    {12, 0xAAAAAAABu, 3},  {20, 0xCCCCCCCDu, 4},  {48, 0xAAAAAAABu, 5},
    {56, 0x24924925u, 3},   {63, 0x82082083u, 5},  {70, 0xEA0EA0EBu, 6},  {72, 0x38E38E39u, 4},
    {80, 0xCCCCCCCDu, 6},   {94, 0xAE4C415Du, 6},  {108, 0x4BDA12F7u, 5}, {110, 0x094F2095u, 2},
    {117, 0x8C08C08Du, 6},  {120, 0x88888889u, 6}, {124, 0x84210843u, 6}, {126, 0x82082083u, 6},
    {130, 0xFC0FC0FDu, 7},  {140, 0xEA0EA0EBu, 7},
};
constexpr const FastDivisor* fast_divisor(uint32_t d) {
  for (const FastDivisor& f : kFastDivisors)
    if (f.d == d) return &f;
  return nullptr;
}
}  // namespace zyx_emu_detail

FORCE_INLINE unsigned int mulsi3(unsigned int a, unsigned int b) { return a * b; }

template <uint32_t d>
FORCE_INLINE uint32_t udivsi3_const_divisor(uint32_t n) {
  static_assert(d != 0, "udivsi3_const_divisor: division by zero");
  constexpr const zyx_emu_detail::FastDivisor* f = zyx_emu_detail::fast_divisor(d);
  if constexpr (f != nullptr)
    return static_cast<uint32_t>(((static_cast<uint64_t>(n) * f->m) >> 32) >> f->s);
  else
    return n / d;
}
template <uint32_t d>
FORCE_INLINE uint32_t umodsi3_const_divisor(uint32_t n) {
  return n - udivsi3_const_divisor<d>(n) * d;
}
