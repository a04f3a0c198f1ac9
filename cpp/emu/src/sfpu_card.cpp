// The SFPU's built-in exp, log, reciprocal, sqrt, rsqrt, sigmoid, silu,
// tanh, exp2, expm1, erf, erfc, softplus, gelu and gelu's derivative as the
// card computes them (tt-metal a8c5af0f: its tt_metal/tt-llk's
// ckernel_sfpu_exp.h, _exp2.h, _recip.h, _sqrt.h, _rsqrt.h, _rsqrt_compat.h
// and its own llk_sfpu ckernel_sfpu_log.h, _sigmoid.h, _silu.h, _tanh.h,
// _expm1.h, _erf.h, _erfc.h, _piecewise_rational.h, _softplus.h, _gelu.h), each SFPI
// operation one call of the SFPU model: SFPMAD (mad, one rounding; SFPI folds
// a product feeding an add into one), compares as SFPSETCC on the SFPMAD difference,
// SFPSWAP's sign-magnitude order, SFPSTOCHRND, SFPCAST, SFPSHFT.
#include "sfpu_card.hpp"

#include <bit>

#include "zyx_emu/sfpi_arith.h"
#include "zyx_emu/sfpu_ops.h"

namespace zyx::emu {

namespace {

using sfpi::impl_::kSign;
using sfpi::impl_::mad;

constexpr uint32_t kOne = 0x3f800000u, kHalf = 0x3f000000u, kNegOne = 0xbf800000u;
constexpr uint32_t kInf = 0x7f800000u, kQuietNaN = 0x7fc00000u;

constexpr uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
uint32_t mul(uint32_t a, uint32_t b) { return mad(a, b, 0); }
uint32_t add(uint32_t a, uint32_t b) { return mad(a, kOne, b); }
uint32_t sub(uint32_t a, uint32_t b) { return mad(b, kNegOne, a); }
// SFPSETCC on a - b (SFPI's float compare with a non-zero operand).
bool ge(uint32_t a, uint32_t b) { return int32_t(sub(a, b)) >= 0; }
bool le(uint32_t a, uint32_t b) { return int32_t(sub(a, b)) <= 0; }
// SFPEXEXP (debiased), SFPSETEXP, SFPSETMAN.
int32_t exexp(uint32_t x) { return int32_t((x >> 23) & 255) - 127; }
uint32_t setexp(uint32_t x, uint32_t e) { return (x & 0x807fffffu) | ((e & 255) << 23); }
uint32_t setman(uint32_t x, uint32_t m) { return (x & 0xff800000u) | (m & 0x7fffffu); }
// SFPSHFT by a register: left for a non-negative amount, else logical right.
uint32_t shft(uint32_t x, int32_t s) { return s >= 0 ? x << (s & 31) : x >> (-s & 31); }
// float_to_fp16b(v, NearestEven): SFPSTOCHRND to bf16 precision.
uint32_t round_bf16(uint32_t x) { return sfpi::impl_::round_mantissa(x, 7, 0x400000u >> 7); }
// SFPSWAP's max in sign-magnitude order.
uint32_t smag_max(uint32_t a, uint32_t b) { return sfpi::impl_::smag_less(a, b) ? b : a; }

// Horner's rule as tt-llk's PolynomialEvaluator writes it, c[0] + x * (c[1] +
// x * (...)): one SFPMAD a degree.
template <int N>
uint32_t horner(uint32_t x, const uint32_t (&c)[N]) {
  uint32_t p = c[N - 1];
  for (int i = N - 2; i >= 0; i--) p = mad(x, p, c[i]);
  return p;
}

// exp on a 16-bit DST (_sfpu_exp_21f_bf16_, Moroz et al.'s exp_21f):
// x / ln 2 + 127 clamped to [0, 255] and turned into a fixed-point word
// whose exponent field is 2's power and whose mantissa, through a quadratic,
// the fraction's; the result rounded to bf16 unless `keep` (sigmoid's use).
// exp_21f_of_log2 is the part after the clamp, which gelu enters directly.
[[gnu::always_inline]] inline uint32_t exp_21f_of_log2(uint32_t t) {
  static constexpr uint32_t kPoly[3] = {bits(1.0017248f), bits(7.839635491371155e-08f),
                                        bits(4.791750143340323e-15f)};
  uint32_t z = shft((t & 0x7fffffu) | 0x800000u, exexp(t));
  uint32_t frac = sfpi::impl_::smag_to_float(z & 0x7fffffu);
  return setexp(horner(frac, kPoly), (z >> 23) & 255);
}
uint32_t exp_21f(uint32_t x, bool keep = false) {
  uint32_t t = mad(x, bits(1.4426950216293334961f), bits(127.0f));
  t = smag_max(0, t);
  if (sfpi::impl_::smag_less(bits(255.0f), t)) t = bits(255.0f);
  uint32_t y = exp_21f_of_log2(t);
  return keep ? y : round_bf16(y);
}

// exp on a 32-bit DST (_sfpu_exp_fp32_accurate_): k = round(x / ln 2)
// by the 1.5 * 2^23 trick, r = x - k ln 2 in two Cody-Waite steps, e^r by
// the Taylor polynomial of degree 7, then k added to the exponent field.
uint32_t exp_fp32(uint32_t x) {
  static constexpr uint32_t kTaylor[8] = {kOne, kOne, bits(0.5f), bits(1.0f / 6.0f), bits(1.0f / 24.0f),
                                          bits(1.0f / 120.0f), bits(1.0f / 720.0f), bits(1.0f / 5040.0f)};
  constexpr uint32_t kRound = 0x4b400000u;  // 2^23 + 2^22
  uint32_t z = mul(x, bits(1.4426950408889634f));
  if (ge(z, bits(128.0f))) return kInf;
  if (le(z, bits(-127.0f))) return 0;
  // tt-llk tests the debiased exponent against 255 for NaN, which it never
  // equals; NaN lanes go on through the polynomial as on the card.
  if (exexp(z) == 255) return kQuietNaN;
  uint32_t shifted = add(z, kRound);
  uint32_t k = sub(shifted, kRound);
  uint32_t k_int = shifted - kRound;
  uint32_t r = mad(k, bits(-0.6931152343750000f), x);
  r = mad(k, bits(-3.19461832987e-05f), r);
  uint32_t p = horner(r, kTaylor);
  return setexp(p, ((p >> 23) & 255) + k_int);
}

// exp_tile<true>: Schraudolph's exponent-field construction, as the
// instruction sequence of tt-llk's SFPLOADMACRO form does it. With
// ClampToNegative: x = max(x, -88.5 / scale) (SFPSWAP, stored to DST and
// reloaded), t = A x + (B - C) (SFPMAD, A = 256 / ln 2 * scale), t rounded
// to an unsigned 16-bit integer (SFPSTOCHRND, sign dropped), shifted left
// 15 bits. Without clamping: t to a sign-magnitude 16-bit integer (saturating
// at 32767), shifted left 15 bits with its sign kept (SFPSHFT2, SFPSETSGN).
uint32_t exp_approx(uint32_t x, bool clamp, uint32_t scale_bits, bool fp32_dest) {
  const float scale = std::bit_cast<float>(scale_bits);
  const uint32_t a = bits(256.0f * 1.4426950408889634f * scale);
  constexpr uint32_t kBMinusC = bits(32500.818359375f);
  if (clamp) {
    x = smag_max(x, bits(-88.5f / scale));
    if (!fp32_dest) x = sfpi::impl_::store_bf16(x);
    uint32_t t = mad(a, x, kBMinusC);
    return sfpi::impl_::float_to_smag(t, false, 65535, 0x400000u) << 15;
  }
  uint32_t t = mad(a, x, kBMinusC);
  uint32_t v = sfpi::impl_::float_to_smag(t, true, 32767, 0x400000u);
  return ((v << 15) & 0x7fffffffu) | (v & kSign);
}

// recip_tile<true> (legacy_compat, tt-metal's default): the mantissa as
// -m in [-1, -0.5), Newton steps y = y (m y + 2) from 1.442695 (2 in
// approximate mode, 3 otherwise), the exponent put back from the input's
// (results below the range are 0), the input's sign.
uint32_t recip_compat(uint32_t in, int iterations) {
  const uint32_t m = setexp(in | kSign, 126), c = bits(1.442695f), two = bits(2.0f);
  uint32_t y = mul(c, mad(m, c, two));
  for (int i = 1; i < iterations; i++) y = mul(y, mad(m, y, two));
  int32_t e = exexp(y) - exexp(in) + 126;
  if (e < 0) y = 0, e = 0;
  y = setexp(y, uint32_t(e));
  return int32_t(in) < 0 ? y ^ kSign : y;
}

// recip_tile<false> on Wormhole (_sfpu_reciprocal_): a quadratic estimate
// over the mantissa as -x in [-2, -1), one Newton step (two with a 32-bit
// DST outside approximate mode), scaled by 2^(254 - e) computed as ~e
// halved, the input's sign.
uint32_t recip_newton(uint32_t in, int iterations) {
  constexpr uint32_t k0 = bits(0.3232325017452239990234375f), k1 = bits(1.4545459747314453125f),
                     k2 = bits(2.121212482452392578125f);
  const uint32_t nx = setman(kNegOne, in);
  uint32_t y = mad(k0, nx, k1);
  y = mad(y, nx, k2);
  const uint32_t scale = mul(~in & 0xff800000u, kHalf);
  y = mad(y, mad(nx, y, kOne), y);
  if (iterations > 1) y = mad(y, mad(nx, y, kOne), y);
  y = mul(y, scale);
  return (y & 0x7fffffffu) | (in & kSign);
}

// sqrt_tile / rsqrt_tile<false> (_calculate_sqrt_body_): the magic-constant
// inverse square root estimate y, refined once (approximate mode: one
// Newton step; else a cubic correction and then one more step), x y or y;
// infinity and zero handled by their bit patterns; x < 0 (sign bit set,
// -0 included) NaN unless FAST_APPROX.
uint32_t sqrt_body(uint32_t x, bool approx, bool reciprocal, bool fast) {
  const uint32_t magic = approx ? 0x5f0b3892u : 0x5f1110a0u;
  const uint32_t k1 = approx ? bits(1.89099014875f) : bits(2.2825186f), k2 = bits(2.2533049f);
  uint32_t y = magic - (x >> 1);
  const uint32_t inf_minus_x = kInf - x;
  if (approx) {
    uint32_t c = mul(x, y);
    uint32_t t = mad(y ^ kSign, c, k1);
    if (reciprocal)
      y = inf_minus_x != 0 && x != 0 ? mul(y, t) : inf_minus_x;
    else
      y = x != kInf ? mul(c, t) : c;
  } else {
    uint32_t xy = mul(x, y);
    uint32_t c = mul(y ^ kSign, xy);
    y = mul(y, mad(c, add(k2, c), k1));
    xy = mul(x, y);
    uint32_t one_minus_xyy = mad(y ^ kSign, xy, kOne);
    if (reciprocal) {
      uint32_t e = (y >> 23) & 255;  // SFPDIVP2 by -1: the exponent field less one, Inf/NaN kept
      uint32_t half_y = e == 255 ? y : (y & 0x807fffffu) | (((e - 1) & 255) << 23);
      y = inf_minus_x != 0 && x != 0 ? mad(one_minus_xyy, half_y, y) : inf_minus_x;
    } else {
      uint32_t half_xy = mul(kHalf, xy);
      if (int32_t(x - kInf) < 0) y = mad(one_minus_xyy, half_xy, xy);
    }
  }
  if (!fast && int32_t(x) < 0) y = kQuietNaN;
  return y;
}

// rsqrt_tile<true> (legacy_compat): _sqrt_compat_ (approximate: (x + 1.0's
// bits) >> 1; else two Newton steps of the inverse square root from 0x5f37,
// times x, zero kept), stored to DST and reloaded, then recip_compat with the
// input's sign.
uint32_t rsqrt_compat(uint32_t x, bool approx, bool fp32_dest) {
  uint32_t s = x;
  if (approx) {
    s = (kOne + x) >> 1;
  } else if (x != 0) {
    uint32_t y = 0x5f370000u - (x >> 1);
    const uint32_t neg_half_x = mul(x, bits(-0.5f));
    for (int i = 0; i < 2; i++) y = mul(mad(mul(y, y), neg_half_x, bits(1.5f)), y);
    s = mul(y, x);
  }
  if (!fp32_dest) s = sfpi::impl_::store_bf16(s);
  uint32_t out = recip_compat(s, approx ? 2 : 3);
  return int32_t(s) < 0 ? out ^ kSign : out;
}

// The exponent of x as SFPCAST reads it: sign-magnitude, so a negative
// debiased exponent is negated and its sign bit set first.
uint32_t exponent_as_float(int32_t e) {
  return sfpi::impl_::smag_to_float(e < 0 ? uint32_t(-e) | kSign : uint32_t(e));
}

// log_tile on a 16-bit DST (calculate_log_body): a degree-5 polynomial in
// the mantissa m in [1, 2), plus the exponent times ln 2; +0 gives -inf;
// unless FAST_APPROX, +inf gives +inf and negative (sign bit set), Inf or
// NaN inputs NaN; then rounded to bf16. log_with_base_tile (kScaled)
// multiplies the result by its base's scale (fp32 bits) before the special
// cases; a template, so that log_tile's form stays as it was.
template <bool kScaled = false>
uint32_t log_bf16(uint32_t in, bool fast, uint32_t scale = 0) {
  // tt-metal writes these as doubles, converted to float where used
  static constexpr uint32_t kPoly[6] = {bits(float(-2.0069785118103027)), bits(float(3.767500400543213)),
                                        bits(float(-2.800232410430908)),  bits(float(1.3681391477584839)),
                                        bits(float(-0.3706687390804291)), bits(float(0.04224011301994324))};
  uint32_t y = mad(exponent_as_float(exexp(in)), bits(0.69314718246459961f), horner(setexp(in, 127), kPoly));
  if (kScaled) y = mul(y, scale);
  if (in == 0) y = 0xff800000u;
  if (!fast) {
    if (in == kInf) y = kInf;
    else if (exexp(in) == 128 || int32_t(in) < 0) y = kQuietNaN;
  }
  return round_bf16(y);
}

// log_tile on a 32-bit DST (calculate_log_f32_body): m in [sqrt 2 / 2,
// sqrt 2), z = (m - 1) / (m + 1) with the Newton reciprocal, ln m = 2 z
// (1 + z^2/3 + ... + z^10/11), plus the exponent times ln 2; times the
// base's scale for log_with_base_tile (kScaled; not the special values).
template <bool kScaled = false>
uint32_t log_fp32(uint32_t in, uint32_t scale = 0) {
  static constexpr uint32_t kPoly[6] = {kOne,       bits(0.3333333333333333f),  bits(0.2f), bits(0.14285714285714285f),
                                        bits(0.1111111111111111f), bits(.09090909090909091f)};
  int32_t e = exexp(in);
  if (in == kInf) return kInf;
  if (e == 128 || int32_t(in) < 0) return kQuietNaN;
  if (in == 0) return 0xff800000u;
  uint32_t m = setexp(in, 127);
  if (ge(m, bits(1.4142135381698608f))) m = mul(m, kHalf), e++;
  const uint32_t z = mul(sub(m, kOne), recip_newton(add(m, kOne), 2));
  const uint32_t ln_m = mul(bits(2.0f), mul(z, horner(mul(z, z), kPoly)));
  const uint32_t y = mad(exponent_as_float(e), bits(0.69314718246459961f), ln_m);
  return kScaled ? mul(y, scale) : y;
}

// tt-metal's accurate sigmoid (_sfpu_sigmoid_): 1 / (1 + e^-x) with the
// DST width's exp (fp32: Cody-Waite; 16-bit: exp_21f unrounded) and the
// Newton reciprocal (two steps on a 32-bit DST, one on a 16-bit).
uint32_t sigmoid_accurate(uint32_t x, bool fp32_dest) {
  uint32_t e = fp32_dest ? exp_fp32(x ^ kSign) : exp_21f(x ^ kSign, true);
  return recip_newton(add(kOne, e), fp32_dest ? 2 : 1);
}

// SFPABS on a float: the sign cleared, except of a negative NaN.
uint32_t sfpabs(uint32_t x) { return (x >> 31) && x <= 0xff800000u ? x & 0x7fffffffu : x; }

// tanh_tile's default: on a 32-bit DST (_sfpu_tanh_fp32_accurate_) an odd
// polynomial below |x| = 0.6 and 2 sigmoid(2x) - 1 above; on a 16-bit DST
// (_sfpu_tanh_polynomial_) a degree-6 polynomial in |x| capped at 1 (SFPSWAP)
// with x's sign.
uint32_t tanh_accurate(uint32_t x, bool fp32_dest) {
  if (fp32_dest) {
    static constexpr uint32_t kOdd[5] = {bits(0.999999940395355224609375f), bits(-0.33332359790802001953125f),
                                         bits(0.13310669362545013427734375f),
                                         bits(-5.21197654306888580322265625e-2f),
                                         bits(1.5497927553951740264892578125e-2f)};
    if (int32_t(sub(sfpabs(x), bits(0.6f))) < 0) return mul(x, horner(mul(x, x), kOdd));
    return mad(bits(2.0f), sigmoid_accurate(mul(bits(2.0f), x), true), kNegOne);
  }
  // tt-metal writes these as doubles, converted to float where used
  static constexpr uint32_t kPoly[7] = {0,
                                        bits(float(0.999004364013671875)),
                                        bits(float(3.0897438526153564453125e-2)),
                                        bits(float(-0.4890659749507904052734375)),
                                        bits(float(0.281917631626129150390625)),
                                        bits(float(-6.6649019718170166015625e-2)),
                                        bits(float(5.876733921468257904052734375e-3))};
  uint32_t y = horner(sfpabs(x), kPoly);
  if (sfpi::impl_::smag_less(kOne, y)) y = kOne;
  return (y & 0x7fffffffu) | (x & kSign);
}

// ---- exp2, expm1, erf, erfc, softplus, gelu and its derivative ----

bool lt(uint32_t a, uint32_t b) { return int32_t(sub(a, b)) < 0; }
bool gt(uint32_t a, uint32_t b) { return int32_t(sub(a, b)) > 0; }
// SFPSWAP's min in sign-magnitude order.
uint32_t smag_min(uint32_t a, uint32_t b) { return sfpi::impl_::smag_less(b, a) ? b : a; }

// exp2_tile (_calculate_exp2_): x times ln 2 (one SFPMAD), then the DST
// width's exp, rounded to bf16 on a 16-bit DST.
uint32_t exp2_card(uint32_t x, bool fp32_dest) {
  x = mul(x, bits(0.6931471805f));
  return fp32_dest ? exp_fp32(x) : exp_21f(x);
}

// expm1_tile. The short form (_sfpu_expm1_: every 16-bit DST, and a 32-bit
// one in approximate mode): x (1 + x (0.5 + 0.166 x)) below |x| = bf16 0.4,
// else exp_21f(x) - 1, rounded to bf16 on a 16-bit DST. The accurate form
// (32-bit DST): a degree-7 fit below |x| = 0.5, else the Cody-Waite exp - 1.
uint32_t expm1_card(uint32_t x, bool approx, bool fp32_dest) {
  if (approx || !fp32_dest) {
    static constexpr uint32_t kTaylor[4] = {0, kOne, kHalf, bits(0.166f)};
    const uint32_t y = lt(sfpabs(x), 0x3ecc0000u) ? horner(x, kTaylor) : sub(exp_21f(x, true), kOne);
    return fp32_dest ? y : round_bf16(y);
  }
  static constexpr uint32_t kFit[8] = {0,
                                       kOne,
                                       bits(0.500000059604644775390625f),
                                       bits(0.16666667163372039794921875f),
                                       bits(4.16650883853435516357421875e-2f),
                                       bits(8.333188481628894805908203125e-3f),
                                       bits(1.400390756316483020782470703125e-3f),
                                       bits(1.99588379473425447940826416015625e-4f)};
  return lt(sfpabs(x), kHalf) ? horner(x, kFit) : sub(exp_fp32(x), kOne);
}

// The inline exp of softplus's tail and gelu's derivative for t <= 0:
// k = round(t / ln 2) by the 1.5 * 2^23 trick, r = t - k ln 2 in two
// Cody-Waite steps, e^r by a Taylor polynomial; `times` (when given)
// multiplies it before k goes into the exponent field, and a field of 0 or
// below gives 0.
template <int N>
uint32_t exp_negative(uint32_t t, const uint32_t (&taylor)[N], const uint32_t* times = nullptr) {
  constexpr uint32_t kRound = 0x4b400000u;  // 2^23 + 2^22
  const uint32_t shifted = add(mul(t, bits(1.4426950408889634f)), kRound);
  const uint32_t k = sub(shifted, kRound);
  uint32_t r = mad(k, bits(-0.6931152343750000f), t);
  r = mad(k, bits(-3.19461832987e-05f), r);
  uint32_t p = horner(r, taylor);
  if (times) p = mul(*times, p);
  const int32_t e = int32_t((p >> 23) & 255) + int32_t(shifted - kRound);
  return e > 0 ? setexp(p, uint32_t(e)) : 0;
}

// erf_tile (tt-metal's calculate_erf): |x| capped at 10 (SFPSWAP), x's sign
// put back, a rational P(x) / Q(x) with P odd and Q even (Horner in x^2, P
// times x), Q's reciprocal by the Newton form (1 step in approximate mode,
// else 2), the result clamped to [-1, 1] by SFPSWAPs. ttnn's INP_FLOAT32
// define (a Float32 input) selects the degree-16 fit, else degree 8.
uint32_t erf_card(uint32_t x, bool approx, bool f32_input) {
  // the fits' non-zero coefficients: P's of x, x^3, ...; Q's of 1, x^2, ...
  static constexpr uint32_t kNum8[4] = {bits(1.1280932447f), bits(2.7609212279e-01f), bits(4.5400281738e-02f),
                                        bits(7.4481184425e-04f)};
  static constexpr uint32_t kDen8[5] = {kOne, bits(5.7439188334e-01f), bits(1.3675764810e-01f),
                                        bits(8.2844606784e-03f), bits(2.4813862145e-05f)};
  static constexpr uint32_t kNum16[8] = {bits(1.1283791065f),     bits(2.1477432549e-01f), bits(6.2133435160e-02f),
                                         bits(5.6230435148e-03f), bits(6.1307044234e-04f), bits(1.7678321456e-05f),
                                         bits(2.7384647439e-08f), bits(-2.8632063387e-10f)};
  static constexpr uint32_t kDen16[9] = {kOne,
                                         bits(5.2367275953e-01f),
                                         bits(1.2961706519e-01f),
                                         bits(1.9642570987e-02f),
                                         bits(1.9545555115e-03f),
                                         bits(1.3179056987e-04f),
                                         bits(1.3156344494e-06f),
                                         bits(-3.5153888689e-09f),
                                         bits(-6.7350725691e-12f)};
  x = (smag_min(x & 0x7fffffffu, bits(10.0f)) & 0x7fffffffu) | (x & kSign);
  const uint32_t x2 = mul(x, x);
  const uint32_t p = mul(f32_input ? horner(x2, kNum16) : horner(x2, kNum8), x);
  const uint32_t q = f32_input ? horner(x2, kDen16) : horner(x2, kDen8);
  const uint32_t y = mul(p, recip_newton(q, approx ? 1 : 2));
  return smag_min(smag_max(kNegOne, y), kOne);
}

// erfc_tile (tt-metal's calculate_erfc): |x| capped at 5, a rational of
// degree 4 / 5 in it (the [2.5, 5] segment's from 2.5 on), Q's reciprocal
// by one Newton step, and 2 - r for a set sign bit.
uint32_t erfc_card(uint32_t x) {
  static constexpr uint32_t kNum[2][5] = {
      {bits(1.0000233650e+00f), bits(-1.3375675678e+00f), bits(6.8185544014e-01f), bits(-1.5691982210e-01f),
       bits(1.3746744953e-02f)},
      {bits(-2.5655237550e-05f), bits(2.1275576728e-05f), bits(-6.6162156145e-06f), bits(9.1439767402e-07f),
       bits(-4.7387182178e-08f)}};
  static constexpr uint32_t kDen[2][6] = {
      {kOne, bits(-2.0801517367e-01f), bits(4.3667086959e-01f), bits(-3.4568668343e-03f), bits(2.5104774162e-02f),
       bits(2.8375532478e-02f)},
      {kOne, bits(-1.6457208991e-01f), bits(-2.0572184026e-01f), bits(-1.3888636231e-01f), bits(1.2677097321e-01f),
       bits(-2.1375391632e-02f)}};
  const uint32_t a = smag_min(x & 0x7fffffffu, bits(5.0f));
  const int seg = ge(a, bits(2.5f)) ? 1 : 0;
  const uint32_t r = mul(horner(a, kNum[seg]), recip_newton(horner(a, kDen[seg]), 1));
  return int32_t(x) < 0 ? sub(bits(2.0f), r) : r;
}

// softplus_tile (tt-metal's calculate_softplus_body): t = beta x; where t
// reaches the threshold the lane is not stored (x stays). Else f(|t|) =
// ln(1 + e^-|t|) by a degree-8 polynomial, above |t| = 5 by e^-|t| (exp_21f
// rounded to bf16; with INP_FLOAT32 the inline exp and ln(1 + e) to third
// order), plus max(0, t), times 1 / beta, rounded to bf16 on a 16-bit DST.
uint32_t softplus_card(uint32_t x, const SfpuCardMode& m, bool f32_input) {
  static constexpr uint32_t kPoly[9] = {bits(6.9310557842e-01f),  bits(-4.9926245213e-01f), bits(1.2186349183e-01f),
                                        bits(5.6753782555e-03f),  bits(-1.0528374463e-02f), bits(2.7290175203e-03f),
                                        bits(-3.4358495031e-04f), bits(2.1285692128e-05f),  bits(-4.8245715334e-07f)};
  static constexpr uint32_t kTaylor7[8] = {kOne,
                                           kOne,
                                           kHalf,
                                           bits(0.166666667f),
                                           bits(0.0416666667f),
                                           bits(0.00833333333f),
                                           bits(0.00138888889f),
                                           bits(0.000198412698f)};
  static constexpr uint32_t kLog1p[4] = {0, kOne, bits(-0.5f), bits(0.333333343f)};
  const uint32_t t = mul(m.p0, x);
  if (!lt(t, m.p2)) return x;
  const uint32_t a = t & 0x7fffffffu;
  uint32_t residual = horner(a, kPoly);
  if (gt(a, bits(5.0f))) residual = f32_input ? horner(exp_negative(a | kSign, kTaylor7), kLog1p) : exp_21f(a | kSign);
  const uint32_t y = mul(m.p1, add(smag_max(0, t), residual));
  return m.fp32_dest ? y : round_bf16(y);
}

// gelu_tile<false> (tt-metal's calculate_gelu_piecewise): 0 up to -13.1875;
// to -3.125 exp(-x^2 / 2) (exp_21f entered at x^2 (-0.5 / ln 2) + 127, no
// clamp) times a degree-4 correction in x; to 2.78125 x Phi(x), Phi = 0.5 +
// x times a degree-7 polynomial in x^2; then x. Rounded to bf16 on a 16-bit
// DST.
uint32_t gelu_card(uint32_t x, bool fp32_dest) {
  static constexpr uint32_t kCorrection[5] = {bits(-2.9069766448e-01f), bits(3.9288617802e-02f),
                                              bits(5.8260409601e-03f), bits(3.9454728181e-04f),
                                              bits(1.0058581740e-05f)};
  static constexpr uint32_t kPhiOdd[8] = {bits(3.9894151688e-01f),  bits(-6.6479682922e-02f), bits(9.9489670247e-03f),
                                          bits(-1.1655492708e-03f), bits(1.0574820044e-04f),  bits(-7.0036203397e-06f),
                                          bits(2.9501944709e-07f),  bits(-5.7769380390e-09f)};
  const uint32_t x2 = mul(x, x);
  uint32_t y = 0;
  if (!gt(x, bits(-13.1875f))) {
    y = 0;
  } else if (!ge(x, bits(-3.125f))) {
    const uint32_t e = exp_21f_of_log2(mad(x2, bits(-0.72134752044f), bits(127.0f)));
    y = mul(e, horner(x, kCorrection));
  } else if (!ge(x, bits(2.78125f))) {
    y = mul(x, mad(x, horner(x2, kPhiOdd), kHalf));
  } else {
    y = x;
  }
  return fp32_dest ? y : round_bf16(y);
}

// gelu_derivative_tile (tt-metal's calculate_gelu_derivative_simple): 1 from
// 3.1719; from -3 0.5 + x h(x^2), h of degree 8; above -13.375 x e^(-x^2/2)
// (the inline exp, x multiplied in before the exponent shift) / sqrt(2 pi),
// outside approximate mode times 1 - 1/x^2 + 1/x^4 (Newton reciprocal, 2
// steps); else 0. tt-metal's call leaves is_fp32_dest_acc_en false, so
// every DST width gets the bf16 rounding.
uint32_t gelu_derivative_card(uint32_t x, bool approx) {
  static constexpr uint32_t kH[9] = {bits(7.9788309336e-01f),  bits(-2.6593554020e-01f), bits(5.9766173363e-02f),
                                     bits(-9.4142099842e-03f), bits(1.1061388068e-03f),  bits(-9.7448595625e-05f),
                                     bits(6.0921474869e-06f),  bits(-2.3764030743e-07f), bits(4.2734988881e-09f)};
  static constexpr uint32_t kTaylor5[6] = {kOne,           kOne, kHalf, bits(0.166666667f), bits(0.0416666667f),
                                           bits(0.00833333333f)};
  constexpr uint32_t kInvSqrt2Pi = bits(0.3989422804014327f);
  uint32_t y = 0;
  if (ge(x, bits(3.1719f))) {
    y = kOne;
  } else if (ge(x, bits(-3.0f))) {
    y = mad(x, horner(mul(x, x), kH), kHalf);
  } else if (gt(x, bits(-13.375f))) {
    const uint32_t x2 = mul(x, x);
    const uint32_t x_exp = exp_negative(mul(x2, bits(-0.5f)), kTaylor5, &x);
    if (approx) {
      y = mul(x_exp, kInvSqrt2Pi);
    } else {
      const uint32_t inv_x2 = recip_newton(x2, 2);
      const uint32_t correction = add(sub(kOne, inv_x2), mul(inv_x2, inv_x2));
      y = mul(mul(x_exp, kInvSqrt2Pi), correction);
    }
  }
  return round_bf16(y);
}

}  // namespace

bool sfpu_card_op(uint32_t op, const SfpuCardMode& m) {
  const bool approx = m.p0 & kSfpuApprox, legacy = m.p0 & kSfpuLegacy;
  switch (op) {
    case ZYX_SU_EXP_APPROX: return true;
    case ZYX_SU_EXP: return m.hw_numerics;
    case ZYX_SU_RECIP:  // Blackhole's non-legacy form uses SFPARECIP, not modelled
      return (approx || m.hw_numerics) && (legacy || !m.blackhole);
    case ZYX_SU_SQRT: case ZYX_SU_RSQRT: return approx || m.hw_numerics;
    // a 32-bit DST's log uses the reciprocal (SFPARECIP on Blackhole)
    case ZYX_SU_LOG: return m.hw_numerics && !(m.fp32_dest && m.blackhole);
    case ZYX_SU_SIGMOID: case ZYX_SU_SILU: return m.hw_numerics && !m.blackhole;
    // the 16-bit DST's tanh has no reciprocal
    case ZYX_SU_TANH: return m.hw_numerics && !(m.fp32_dest && m.blackhole);
    case ZYX_SU_EXP2: case ZYX_SU_GELU: case ZYX_SU_SOFTPLUS: case ZYX_SU_SOFTPLUS_INP_F32: return m.hw_numerics;
    case ZYX_SU_EXPM1: return approx || m.hw_numerics;
    case ZYX_SU_LOG_WITH_BASE: return m.hw_numerics && !(m.fp32_dest && m.blackhole);
    // erf's and erfc's rational functions divide by the reciprocal; erf's
    // <true> is its default form (one Newton step), so it follows the
    // numerics as default forms do
    case ZYX_SU_ERF: return m.hw_numerics && !m.blackhole;
    case ZYX_SU_ERFC: return m.hw_numerics && !m.blackhole;
    // the approximate derivative has no reciprocal
    case ZYX_SU_GELU_DERIVATIVE: return approx || (m.hw_numerics && !m.blackhole);
    default: return false;
  }
}

// The operations added after the first eight, in a function of their own:
// inlined into sfpu_card_word they changed how the compiler laid out the
// older ones (exp_tile<true> took 17 % more instructions a word).
[[gnu::noinline]] static uint32_t card_word_more(uint32_t op, uint32_t x, const SfpuCardMode& m) {
  const bool approx = m.p0 & kSfpuApprox;
  switch (op) {
    // log_with_base_tile: p0 the base's scale, p1 the flags
    case ZYX_SU_LOG_WITH_BASE:
      return m.fp32_dest ? log_fp32<true>(x, m.p0) : log_bf16<true>(x, m.p1 & kSfpuFast, m.p0);
    case ZYX_SU_EXP2: return exp2_card(x, m.fp32_dest);
    case ZYX_SU_EXPM1: return expm1_card(x, approx, m.fp32_dest);
    case ZYX_SU_ERF: return erf_card(x, approx, m.p0 & kSfpuInpF32);
    case ZYX_SU_ERFC: return erfc_card(x);
    case ZYX_SU_SOFTPLUS: return softplus_card(x, m, false);
    case ZYX_SU_SOFTPLUS_INP_F32: return softplus_card(x, m, true);
    case ZYX_SU_GELU: return gelu_card(x, m.fp32_dest);
    case ZYX_SU_GELU_DERIVATIVE: return gelu_derivative_card(x, approx);
    default: return x;
  }
}

uint32_t sfpu_card_word(uint32_t op, uint32_t x, const SfpuCardMode& m) {
  const bool approx = m.p0 & kSfpuApprox, legacy = m.p0 & kSfpuLegacy, fast = m.p0 & kSfpuFast;
  uint32_t y = x;
  bool round = false;  // outside approximate mode a 16-bit DST gets float_to_fp16b first
  switch (op) {
    // p0 1: InputClamping::None
    case ZYX_SU_EXP_APPROX: return exp_approx(x, m.p0 == 0, m.exp_scale, m.fp32_dest);
    case ZYX_SU_EXP: {
      // exp_tile's scale_en: x times the bf16 scale in p1 first
      if (m.p0) x = mul(x, m.p1 << 16);
      return m.fp32_dest ? exp_fp32(x) : exp_21f(x);
    }
    case ZYX_SU_LOG: return m.fp32_dest ? log_fp32(x) : log_bf16(x, fast);
    case ZYX_SU_SIGMOID: y = sigmoid_accurate(x, m.fp32_dest), round = true; break;
    case ZYX_SU_SILU: y = mul(x, sigmoid_accurate(x, m.fp32_dest)), round = true; break;
    case ZYX_SU_TANH: y = tanh_accurate(x, m.fp32_dest), round = true; break;
    case ZYX_SU_RECIP:
      if (legacy) {
        y = recip_compat(x, approx ? 2 : 3);
      } else {
        y = recip_newton(x, approx || !m.fp32_dest ? 1 : 2);
      }
      round = !approx;
      break;
    case ZYX_SU_SQRT: y = sqrt_body(x, approx, false, fast), round = true; break;
    case ZYX_SU_RSQRT:
      if (legacy) {
        y = rsqrt_compat(x, approx, m.fp32_dest);
        round = !approx;
      } else {
        y = sqrt_body(x, approx, true, fast), round = true;
      }
      break;
    default: return card_word_more(op, x, m);
  }
  return round && !m.fp32_dest ? round_bf16(y) : y;
}

}  // namespace zyx::emu
