// SFPI's library functions on the emulator (included by zyx_emu/sfpi.h):
// each is the SFPU instruction SFPI emits for it, lane by lane, as the Tensix
// ISA documentation describes the Wormhole B0 Vector Unit.
#pragma once

namespace sfpi {

enum class RoundMode { NearestEven = 0, Stochastic = 1 };
enum class ExponentMode { Unbiased, Biased };

namespace impl_ {

sfpi_inline uint32_t rnd_threshold(RoundMode m, int keep) {
  return m == RoundMode::Stochastic ? prng23() >> keep : 0x400000u >> keep;
}
sfpi_inline RoundMode round_mode(int m) { return m ? RoundMode::Stochastic : RoundMode::NearestEven; }

}  // namespace impl_

// SFPABS: float clears the sign (not of -NaN); integers negate.
sfpi_inline vFloat abs(const vFloat& v) {
  return impl_::map<vFloat>(v, [](uint32_t x) { return (x >> 31) && x <= 0xff800000u ? x & 0x7fffffffu : x; });
}
sfpi_inline vInt abs(const vInt& v) {
  return impl_::map<vInt>(v, [](uint32_t x) { return int32_t(x) < 0 ? 0u - x : x; });
}

// SFPSETSGN from an immediate or from another vector's top bit.
sfpi_inline vFloat setsgn(const vFloat& v, int sgn) {
  uint32_t s = uint32_t(sgn & 1) << 31;
  return impl_::map<vFloat>(v, [s](uint32_t x) { return (x & 0x7fffffffu) | s; });
}
sfpi_inline vFloat setsgn(const vFloat& v, const vFloat& sgn) {
  return impl_::map2<vFloat>(v, sgn, [](uint32_t x, uint32_t s) { return (x & 0x7fffffffu) | (s & impl_::kSign); });
}
sfpi_inline vFloat setsgn(const vFloat& v, const vInt& sgn) {
  return impl_::map2<vFloat>(v, sgn, [](uint32_t x, uint32_t s) { return (x & 0x7fffffffu) | (s & impl_::kSign); });
}
sfpi_inline vInt setsgn(const vInt& v, int sgn) {
  uint32_t s = uint32_t(sgn & 1) << 31;
  return impl_::map<vInt>(v, [s](uint32_t x) { return (x & 0x7fffffffu) | s; });
}

// SFPEXEXP: the exponent field, less 127 unless biased.
sfpi_inline vInt exexp(const vFloat& v, ExponentMode mode = ExponentMode::Unbiased) {
  uint32_t bias = mode == ExponentMode::Unbiased ? 127 : 0;
  return impl_::map<vInt>(v, [bias](uint32_t x) { return ((x >> 23) & 255) - bias; });
}
sfpi_inline vInt exexp_nodebias(const vFloat& v) { return exexp(v, ExponentMode::Biased); }

// SFPEXMAN: the mantissa with (exman8) or without (exman9) the hidden bit.
sfpi_inline vInt exman8(const vFloat& v) {
  return impl_::map<vInt>(v, [](uint32_t x) { return (x & 0x7fffffu) | 0x800000u; });
}
sfpi_inline vInt exman9(const vFloat& v) {
  return impl_::map<vInt>(v, [](uint32_t x) { return x & 0x7fffffu; });
}

// SFPSETEXP: the exponent field from an immediate or an integer's low 8 bits.
sfpi_inline vFloat setexp(const vFloat& v, uint32_t e) {
  return impl_::map<vFloat>(v, [e](uint32_t x) { return (x & 0x807fffffu) | ((e & 255) << 23); });
}
sfpi_inline vFloat setexp(const vFloat& v, int e) { return setexp(v, uint32_t(e)); }
sfpi_inline vFloat setexp(const vFloat& v, const vInt& e) {
  return impl_::map2<vFloat>(v, e, [](uint32_t x, uint32_t y) { return (x & 0x807fffffu) | ((y & 255) << 23); });
}
sfpi_inline vFloat setexp(const vFloat& v, const vUInt& e) { return setexp(v, vInt(e)); }

// SFPSETMAN: the mantissa field from an immediate or an integer's low 23 bits.
sfpi_inline vFloat setman(const vFloat& v, uint32_t m) {
  return impl_::map<vFloat>(v, [m](uint32_t x) { return (x & 0xff800000u) | (m & 0x7fffffu); });
}
sfpi_inline vFloat setman(const vFloat& v, int m) { return setman(v, uint32_t(m)); }
sfpi_inline vFloat setman(const vFloat& v, const vInt& m) {
  return impl_::map2<vFloat>(v, m, [](uint32_t x, uint32_t y) { return (x & 0xff800000u) | (y & 0x7fffffu); });
}
sfpi_inline vFloat setman(const vFloat& v, const vUInt& m) { return setman(v, vInt(m)); }

// SFPDIVP2 (add): the exponent plus n, wrapping in 8 bits; Inf/NaN kept.
sfpi_inline vFloat addexp(const vFloat& v, int n) {
  return impl_::map<vFloat>(v, [n](uint32_t x) {
    uint32_t e = (x >> 23) & 255;
    return e == 255 ? x : (x & 0x807fffffu) | (((e + uint32_t(n)) & 255) << 23);
  });
}

// SFPLZ: leading zeros (32 for zero), optionally ignoring the sign bit.
sfpi_inline vInt lz(const impl_::Lanes& v) {
  return impl_::map<vInt>(v, [](uint32_t x) { return x ? uint32_t(__builtin_clz(x)) : 32u; });
}
sfpi_inline vInt lz_nosgn(const impl_::Lanes& v) {
  return impl_::map<vInt>(v, [](uint32_t x) {
    x &= 0x7fffffffu;
    return x ? uint32_t(__builtin_clz(x)) : 32u;
  });
}

// SFPSHFT: left for a non-negative amount, logical right for a negative one.
sfpi_inline vUInt shft(const vUInt& v, const vInt& amt) {
  return impl_::map2<vUInt>(v, amt, [](uint32_t x, uint32_t a) {
    int32_t s = int32_t(a);
    return s >= 0 ? x << (s & 31) : x >> ((-s) & 31);
  });
}
sfpi_inline vUInt shft(const vUInt& v, int amt) { return shft(v, vInt(amt)); }

// SFPCAST: a sign-magnitude integer to fp32 (nearest even).
sfpi_inline vFloat int32_to_float(const vInt& v, int = 0) { return impl_::map<vFloat>(v, impl_::smag_to_float); }
sfpi_inline vFloat int32_to_float(const vInt& v, RoundMode) { return int32_to_float(v); }

// SFPSTOCHRND fp32 -> bf16 / fp16 precision (kept as fp32).
sfpi_inline vFloat float_to_fp16b(const vFloat& v, RoundMode m = RoundMode::NearestEven) {
  return impl_::map<vFloat>(v, [m](uint32_t x) { return impl_::round_mantissa(x, 7, impl_::rnd_threshold(m, 7)); });
}
sfpi_inline vFloat float_to_fp16b(const vFloat& v, int m) { return float_to_fp16b(v, impl_::round_mode(m)); }
sfpi_inline vFloat float_to_fp16a(const vFloat& v, RoundMode m = RoundMode::NearestEven) {
  return impl_::map<vFloat>(v,
                             [m](uint32_t x) { return impl_::round_mantissa(x, 10, impl_::rnd_threshold(m, 10)); });
}
sfpi_inline vFloat float_to_fp16a(const vFloat& v, int m) { return float_to_fp16a(v, impl_::round_mode(m)); }

// SFPSTOCHRND fp32 -> sign-magnitude (u)int16 / (u)int8, saturating.
#define ZYX_SFPI_TO_INT(name, keep_sign, max_mag)                                              \
  sfpi_inline vInt name(const vFloat& v, RoundMode m = RoundMode::NearestEven) {              \
    return impl_::map<vInt>(v, [m](uint32_t x) {                                             \
      return impl_::float_to_smag(x, keep_sign, max_mag, impl_::rnd_threshold(m, 0));       \
    });                                                                                       \
  }                                                                                           \
  sfpi_inline vInt name(const vFloat& v, int m) { return name(v, impl_::round_mode(m)); }
ZYX_SFPI_TO_INT(float_to_int16, true, 32767u)
ZYX_SFPI_TO_INT(float_to_uint16, false, 65535u)
ZYX_SFPI_TO_INT(float_to_int8, true, 127u)
ZYX_SFPI_TO_INT(float_to_uint8, false, 255u)
#undef ZYX_SFPI_TO_INT

namespace impl_ {

// SFPLUT / SFPLUTFP32: |v| picks a coefficient pair (below 1, below 2, else),
// a * |v| + c rounds as SFPMAD does; `retain` gives the result v's sign.
template <class Pick>
sfpi_inline vFloat lut_eval(const vFloat& v, bool retain, Pick pick) {
  Lanes r;
  for (int l = 0; l < kLanes; l++) {
    uint32_t x = v.w[l], b = x & 0x7fffffffu;
    uint32_t a, c;
    pick(l, b, a, c);
    uint32_t d = mad(a, b, c);
    r.w[l] = retain ? (d & 0x7fffffffu) | (x & kSign) : d;
  }
  return vFloat(r);
}
// The table index of |v| (as bits): 0 below 1.0, 1 below 2.0, else 2.
sfpi_inline int lut_index(uint32_t b) { return b < 0x3f800000u ? 0 : b < 0x40000000u ? 1 : 2; }

sfpi_inline vFloat lut8_eval(const vFloat& v, const Lanes& l0, const Lanes& l1, const Lanes& l2, bool retain) {
  return lut_eval(v, retain, [&](int l, uint32_t b, uint32_t& a, uint32_t& c) {
    const Lanes* t[3] = {&l0, &l1, &l2};
    uint32_t w = t[lut_index(b)]->w[l];
    a = lut8(w >> 8), c = lut8(w);
  });
}

}  // namespace impl_

// lut: 8-bit coefficients (a in bits 8-15, c in bits 0-7 of each register).
sfpi_inline vFloat lut(const vFloat& v, const vUInt& l0, const vUInt& l1, const vUInt& l2) {
  return impl_::lut8_eval(v, l0, l1, l2, true);
}
sfpi_inline vFloat lut_sign(const vFloat& v, const vUInt& l0, const vUInt& l1, const vUInt& l2) {
  return impl_::lut8_eval(v, l0, l1, l2, false);
}

namespace impl_ {

// lut2 with three registers of fp16 pairs (a high, c low).
sfpi_inline vFloat lut16x3(const vFloat& v, const Lanes& l0, const Lanes& l1, const Lanes& l2, bool retain) {
  return lut_eval(v, retain, [&](int l, uint32_t b, uint32_t& a, uint32_t& c) {
    const Lanes* t[3] = {&l0, &l1, &l2};
    uint32_t w = t[lut_index(b)]->w[l];
    a = lut16(w >> 16), c = lut16(w);
  });
}
// lut2 with six fp32 registers: a0-a2 slopes, b0-b2 offsets.
sfpi_inline vFloat lut32x3(const vFloat& v, const Lanes* a3, const Lanes* c3, bool retain) {
  return lut_eval(v, retain, [&](int l, uint32_t b, uint32_t& a, uint32_t& c) {
    int i = lut_index(b);
    a = a3[i].w[l], c = c3[i].w[l];
  });
}
// lut2 with six registers of fp16 pairs: six ranges of |v| (cut at 0.5, 1,
// 1.5, 2 and 3, or 4 in mode 2), each half of a register.
sfpi_inline vFloat lut16x6(const vFloat& v, const Lanes* a3, const Lanes* c3, int mode, bool retain) {
  uint32_t cut = mode == 2 ? 0x40800000u : 0x40400000u;
  return lut_eval(v, retain, [&](int l, uint32_t b, uint32_t& a, uint32_t& c) {
    int i = lut_index(b);
    bool hi = b < 0x3f000000u   ? false
              : b < 0x3f800000u ? true
              : b < 0x3fc00000u ? false
              : b < 0x40000000u ? true
              : b < cut         ? false
                                : true;
    int sh = hi ? 16 : 0;
    a = lut16(a3[i].w[l] >> sh), c = lut16(c3[i].w[l] >> sh);
  });
}

}  // namespace impl_

sfpi_inline vFloat lut2(const vFloat& v, const vUInt& l0, const vUInt& l1, const vUInt& l2) {
  return impl_::lut16x3(v, l0, l1, l2, true);
}
sfpi_inline vFloat lut2_sign(const vFloat& v, const vUInt& l0, const vUInt& l1, const vUInt& l2) {
  return impl_::lut16x3(v, l0, l1, l2, false);
}
sfpi_inline vFloat lut2(const vFloat& v, const vFloat& a0, const vFloat& a1, const vFloat& a2, const vFloat& b0,
                        const vFloat& b1, const vFloat& b2) {
  const impl_::Lanes a[3] = {a0, a1, a2}, c[3] = {b0, b1, b2};
  return impl_::lut32x3(v, a, c, true);
}
sfpi_inline vFloat lut2_sign(const vFloat& v, const vFloat& a0, const vFloat& a1, const vFloat& a2, const vFloat& b0,
                             const vFloat& b1, const vFloat& b2) {
  const impl_::Lanes a[3] = {a0, a1, a2}, c[3] = {b0, b1, b2};
  return impl_::lut32x3(v, a, c, false);
}
sfpi_inline vFloat lut2(const vFloat& v, const vUInt& a01, const vUInt& a23, const vUInt& a45, const vUInt& b01,
                        const vUInt& b23, const vUInt& b45, int mode = 1) {
  const impl_::Lanes a[3] = {a01, a23, a45}, c[3] = {b01, b23, b45};
  return impl_::lut16x6(v, a, c, mode, true);
}
sfpi_inline vFloat lut2_sign(const vFloat& v, const vUInt& a01, const vUInt& a23, const vUInt& a45, const vUInt& b01,
                             const vUInt& b23, const vUInt& b45, int mode = 1) {
  const impl_::Lanes a[3] = {a01, a23, a45}, c[3] = {b01, b23, b45};
  return impl_::lut16x6(v, a, c, mode, false);
}

// SFPSWAP (min/max): a gets the smaller, b the larger, in sign-magnitude order.
template <class T>
sfpi_inline void vec_min_max(T& a, T& b) {
  impl_::Lanes lo = a, hi = b;
  for (int l = 0; l < impl_::kLanes; l++)
    if (impl_::smag_less(b.w[l], a.w[l])) lo.w[l] = b.w[l], hi.w[l] = a.w[l];
  a = T(lo);
  b = T(hi);
}
template <class T>
sfpi_inline void vec_swap(T& a, T& b) {
  T t = a;
  a = b;
  b = t;
}

}  // namespace sfpi
