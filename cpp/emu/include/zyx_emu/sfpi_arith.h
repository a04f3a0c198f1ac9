// The Wormhole SFPU's lane arithmetic on 32-bit words, for the SFPI model
// (zyx_emu/sfpi.h): SFPMAD (which SFPADD, SFPMUL, SFPLUT and SFPLUTFP32 use),
// the SFPLOAD/SFPSTORE conversions between DST formats and fp32 lanes, and
// the conversion instructions. Written from the Tensix ISA documentation's
// functional models of the Wormhole B0 Vector Unit; docs/emulator.md
// ("SFPI") says what is modelled.
#pragma once

#include <cstdint>

#include "zyx_emu/abi.h"

namespace sfpi::impl_ {

constexpr uint32_t kSign = 0x80000000u;

// Shifts m right by s, keeping a sticky bit only when something is left: the
// card's adder drops the sticky bit of an operand shifted out entirely.
inline uint32_t sticky_shift(uint32_t m, int32_t s) {
  if (s <= 0) return m;
  if (s >= 32) return 0;
  uint32_t r = m >> s;
  if (r && (r << s) != m) r |= 1;
  return r;
}

// Inf/NaN handling of mad: 0 to go on, else the result (bit 0 clear: a
// final result; set: a NaN whose computation goes on and may gain bits).
struct MadSpecial {
  bool done = false;
  uint32_t value = 0;
};

inline MadSpecial mad_special(int32_t xe, uint32_t xm, int32_t ye, uint32_t ym, int32_t pe, uint32_t ps, int32_t ze,
                              uint32_t zm, uint32_t z) {
  MadSpecial s;
  bool p_inf = xe == 255 || ye == 255 || pe >= 255;
  if (!p_inf && ze != 255) return s;
  bool z_inf = ze == 255 && zm == (0x800000u << 3);
  bool invalid = (xe == 255 && (xm != 0x800000u || ym == 0)) || (ye == 255 && (ym != 0x800000u || xm == 0)) ||
                 (z_inf && p_inf && (z & kSign) != ps);
  if (invalid) {
    s.value = ps | 0x7f800001u;
  } else if (ze == 255 && !z_inf) {
    s.value = (z & kSign) | 0x7f800001u;
  } else if (ze == 255) {
    s.done = true, s.value = z;
  } else {
    s.done = true, s.value = ps | 0x7f800000u;
  }
  return s;
}

// SFPMAD: x * y + z with one rounding (nearest, ties to even) of a product
// kept to 27 bits (three below fp32's 24, with a sticky bit); denormal inputs
// read as zero; denormal or zero results are +0.
inline uint32_t mad(uint32_t x, uint32_t y, uint32_t z) {
  int32_t xe = (x >> 23) & 255, ye = (y >> 23) & 255, ze = (z >> 23) & 255;
  uint32_t xm = xe ? (x & 0x7fffffu) ^ 0x800000u : 0;
  uint32_t ym = ye ? (y & 0x7fffffu) ^ 0x800000u : 0;
  uint32_t zm = ze ? ((z & 0x7fffffu) ^ 0x800000u) << 3 : 0;
  uint32_t ps = (x ^ y) & kSign, zs = z & kSign;
  uint64_t full = uint64_t(xm) * ym << 3;
  uint32_t pm = uint32_t(full >> 23) | ((full & 0x7fffffu) != 0);
  int32_t pe = xe + ye - 127;
  MadSpecial sp = mad_special(xe, xm, ye, ym, pe, ps, ze, zm, z);
  if (sp.done) return sp.value;
  uint32_t nan = sp.value;
  if (nan && pe > 255) pe = 255;
  if (pm == 0 || pe < 0) {
    if (!nan) return zm ? z : 0;
    pm = 0, pe = 0;
  }
  int32_t re = pe > ze ? pe : ze;
  pm = sticky_shift(pm, re - pe);
  zm = sticky_shift(zm, re - ze);
  uint32_t rs = pm >= zm ? ps : zs;
  if (zs != rs) zm = ~zm;
  if (ps != rs) pm = ~pm;
  uint32_t rm = zm + pm + (ps != zs);
  if (rm == 0) return nan;
  int32_t n = 5 - __builtin_clz(rm);
  re += n;
  if (re >= 255) return nan ? nan : rs | 0x7f800000u;
  if (re < 0) return nan;
  // Normalising right by two keeps only bit 0 as sticky (the card drops bit 1).
  rm = n <= 0 ? rm << -n : (rm >> n) | (rm & 1);
  uint32_t r = (uint32_t(re) << 23) + ((rm >> 3) & 0x7fffffu);
  r += ((rm & 7) + (r & 1)) > 4;
  if (!(r >> 23)) return nan;
  return (nan ? nan : rs) | r;
}

// mad for SFPI's add, subtract and multiply, faster: the ISA documentation
// makes SFPMAD times one, times minus one or plus zero the IEEE fp32 add,
// subtract or multiply apart from denormals and zero signs, so lanes whose
// operands and result are normal (away from the range's ends) use the
// host's fp32 arithmetic; every other lane goes through mad.
inline uint32_t mad_fast(uint32_t x, uint32_t y, uint32_t z) {
  auto normal = [](uint32_t w) { return ((w >> 23) & 255) - 1u < 254u; };
  auto f = [](uint32_t w) { return __builtin_bit_cast(float, w); };
  float r;
  if (z == 0 && normal(x) && normal(y)) {
    r = f(x) * f(y);
  } else if ((y & 0x7fffffffu) == 0x3f800000u && normal(x) && normal(z)) {
    r = y == 0x3f800000u ? f(z) + f(x) : f(z) - f(x);
    if (r == 0.0f) return 0;
  } else {
    return mad(x, y, z);
  }
  uint32_t b = __builtin_bit_cast(uint32_t, r);
  return ((b >> 23) & 255) - 2u < 252u ? b : mad(x, y, z);
}

// SFPLUT's 8-bit coefficient: sign, 3-bit negative exponent, 4-bit mantissa;
// 0xff is zero.
inline uint32_t lut8(uint32_t b) {
  b &= 0xff;
  if (b == 0xff) return 0;
  return ((b >> 7) << 31) | ((127 - ((b >> 4) & 7)) << 23) | ((b & 15) << 19);
}

// SFPLUTFP32's 16-bit coefficient: fp16 fields, exponent 31 read as zero and
// exponent 0 as a normal.
inline uint32_t lut16(uint32_t h) {
  h &= 0xffff;
  uint32_t e = (h >> 10) & 31;
  return ((h >> 15) << 31) | ((e == 31 ? 0 : 112 + e) << 23) | ((h & 0x3ff) << 13);
}

// SFPSTORE to a 16-bit bf16 DST: denormals to signed zero, then truncation.
inline uint32_t store_bf16(uint32_t x) { return ((x >> 23) & 255) ? x & 0xffff0000u : x & kSign; }

// SFPSTORE to a 16-bit fp16 DST (as the value it holds, widened to fp32):
// underflow to signed zero, overflow saturating, the mantissa truncated.
inline uint32_t store_fp16(uint32_t x) {
  uint32_t s = x & kSign;
  int32_t e = int32_t((x >> 23) & 255) - 112;
  if (e <= 0) return s;
  if (e > 31) return s | (143u << 23) | (0x3ffu << 13);
  return s | (x & 0x7fffe000u);
}

// SFPLOAD and SFPSTORE of a DST word (its sfpu_dst flags: a 32-bit DST, the
// tile's kind): a 16-bit bf16 DST loads the top half, stores convert as
// above; fp32 words and integers move as they are.
inline uint32_t load_word(uint32_t w, uint32_t flags) {
  if ((flags & ZYX_SFPU_FP32) || (flags >> 4) != ZYX_SFPU_KIND_BF16) return w;
  return w & 0xffff0000u;
}
inline uint32_t store_word(uint32_t w, uint32_t flags) {
  uint32_t kind = flags >> 4;
  if ((flags & ZYX_SFPU_FP32) || kind == ZYX_SFPU_KIND_INT) return w;
  return kind == ZYX_SFPU_KIND_F16 ? store_fp16(w) : store_bf16(w);
}
// The DST word of lane l in a 4-row group: row l / 8, column 2 (l % 8),
// plus one for an odd-column address.
inline int lane_word(int l, uint32_t flags) { return (l >> 3) * 16 + (l & 7) * 2 + ((flags & ZYX_SFPU_ODD) ? 1 : 0); }

// SFPLOADI's fp16 immediate (FLOATA): the exponent rebiased, nothing else.
inline uint32_t loadi_fp16(uint32_t h) {
  return ((h >> 15 & 1) << 31) | ((((h >> 10) & 31) + 112) << 23) | ((h & 0x3ff) << 13);
}

// fp32 to the nearest fp16 bit pattern (for sFloat16a of a float).
inline uint32_t fp16_bits(uint32_t x) {
  uint32_t s = (x >> 16) & 0x8000;
  int32_t e = int32_t((x >> 23) & 255) - 112;
  if (e <= 0) return s;
  if (e > 31) return s | 0x7fff;
  uint32_t m = x & 0x7fffff, h = s | uint32_t(e) << 10 | m >> 13;
  uint32_t rest = m & 0x1fff;
  return h + (rest > 0x1000 || (rest == 0x1000 && (h & 1)));
}

// SFPSTOCHRND fp32 -> fp32 with `keep` mantissa bits (7: bf16, 10: fp16),
// rounding the magnitude up when the dropped bits reach `threshold` (half
// of the dropped range rounds half away from zero; the card's PRNG gives
// stochastic rounding); zero and denormals become +0, NaN infinity.
inline uint32_t round_mantissa(uint32_t x, int keep, uint32_t threshold) {
  uint32_t e = (x >> 23) & 255;
  if (e == 0) return 0;
  if (e == 255) return x & 0xff800000u;
  uint32_t drop = 23 - keep, mask = (1u << drop) - 1;
  uint32_t low = x & mask;
  x -= low;
  if (low >= threshold) x += mask + 1;
  return x;
}

// SFPSTOCHRND fp32 -> sign-magnitude integer of at most max_mag, rounding
// up from `threshold` (of 23 fraction bits).
inline uint32_t float_to_smag(uint32_t c, bool keep_sign, uint32_t max_mag, uint32_t threshold) {
  uint32_t sign = keep_sign ? c & kSign : 0;
  int32_t e = int32_t((c >> 23) & 255) - 127;
  if (e < -1) return 0;
  uint64_t mag = max_mag;
  if (e < 16) {
    mag = 0x800000u | (c & 0x7fffffu);
    mag = e >= 0 ? mag << e : mag >> -e;
    mag = (mag >> 23) + ((mag & 0x7fffffu) >= threshold);
    if (mag > max_mag) mag = max_mag;
  }
  if (mag == 0) sign = 0;
  return sign + uint32_t(mag);
}

// SFPCAST: sign-magnitude integer to fp32, rounding to nearest even.
inline uint32_t smag_to_float(uint32_t c) {
  uint32_t s = c & kSign, mag = c & 0x7fffffffu;
  if (!mag) return s;
  uint32_t lz = __builtin_clz(mag);
  uint32_t norm = mag << lz;
  uint32_t d = s + ((157 - lz) << 23) + (norm >> 8);
  if ((norm & 0x80) && (norm & 0x17f)) d += 1;
  return d;
}

// SFPSWAP's order: sign-magnitude words (fp32's total order, -NaN first).
inline bool smag_less(uint32_t c, uint32_t d) {
  c ^= uint32_t(int32_t(c) >> 30) >> 1;
  d ^= uint32_t(int32_t(d) >> 30) >> 1;
  return int32_t(c) < int32_t(d);
}

}  // namespace sfpi::impl_
