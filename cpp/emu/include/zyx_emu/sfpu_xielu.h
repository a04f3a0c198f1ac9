// xielu_tile of tt-metal's api/compute/eltwise_unary/xielu.h, written as
// SFPI code on the emulator's SFPU model so that it rounds as the card's
// SFPU does (each product-and-add one SFPMAD):
//   x > 0:  alpha_p * x * x + x / 2
//   x <= 0: alpha_n * (expm1(min(x, eps)) - x) + x / 2, eps = -1e-6,
// with expm1(x) - x from a constant at [eps, 0], a degree-7 polynomial on
// (-0.5, eps) and exp(x) by Cody-Waite range reduction and a Taylor
// polynomial below. The init loads the three programmable constants the
// tile call reads (1/ln 2, eps, expm1(eps)); alpha_p and alpha_n are fp32
// bits. A 16-bit DST gets the result rounded to bf16 (nearest even).
#pragma once

#include "zyx_emu/compute.h"
#include "zyx_emu/sfpi_llk.h"

namespace ckernel {

namespace zyx_emu_xielu {

// Horner's rule, one SFPMAD a coefficient: c[0] + x * (c[1] + x * (...)).
template <size_t N>
inline sfpi::vFloat horner(const sfpi::vFloat& x, const float (&c)[N]) {
  sfpi::vFloat acc = c[N - 1];
  for (size_t i = N - 1; i-- > 0;) acc = x * acc + sfpi::vFloat(c[i]);
  return acc;
}

// exp(x) for x <= -0.5: k = x / ln 2 rounded to an integer (clamped at
// -126.5, rounded by adding and subtracting 1.5 * 2^23), r = x - k ln 2 in
// two parts, exp(r) by its Taylor polynomial to r^7, 2^k put in the exponent.
inline sfpi::vFloat exp_of_negative(const sfpi::vFloat& x) {
  sfpi::vFloat z = x * sfpi::vConstFloatPrgm0;
  sfpi::vFloat lowest = -126.5f;
  sfpi::vec_min_max(lowest, z);
  const sfpi::vFloat round_bias = sfpi::reinterpret<sfpi::vFloat>(sfpi::vInt(0x4b400000));
  sfpi::vFloat biased = z + round_bias;
  sfpi::vFloat k = biased - round_bias;
  sfpi::vInt k_int = sfpi::reinterpret<sfpi::vInt>(biased) - sfpi::reinterpret<sfpi::vInt>(round_bias);
  constexpr float kMinusLn2High = -0.6931152343750000f, kMinusLn2Low = -3.19461832987e-05f;
  sfpi::vFloat r_high = k * kMinusLn2High + x;
  sfpi::vFloat r = k * kMinusLn2Low + r_high;
  static constexpr float kTaylor[] = {1.0f,        1.0f,         0.5f,          1.0f / 6.0f,
                                      1.0f / 24.0f, 1.0f / 120.0f, 1.0f / 720.0f, 1.0f / 5040.0f};
  sfpi::vFloat p = horner(r, kTaylor);
  return sfpi::setexp(p, sfpi::exexp_nodebias(p) + k_int);
}

// (expm1(x) - x) / x^2 on (-0.5, 0): a minimax fit of tt-metal's.
inline constexpr float kExpm1Fit[] = {0.500000059604644775390625f,       0.16666667163372039794921875f,
                                      4.16650883853435516357421875e-2f,  8.333188481628894805908203125e-3f,
                                      1.400390756316483020782470703125e-3f, 1.99588379473425447940826416015625e-4f};

inline void store(const sfpi::vFloat& product_a, const sfpi::vFloat& product_b, const sfpi::vFloat& addend) {
  sfpi::vFloat result = product_a * product_b + addend;
  if constexpr (!DST_ACCUM_MODE) result = sfpi::float_to_fp16b(result, sfpi::RoundMode::NearestEven);
  sfpi::dst_reg[0] = result;
}

inline void xielu_face(uint32_t alpha_p_bits, uint32_t alpha_n_bits) {
  const sfpi::vFloat alpha_p = sfpi::reinterpret<sfpi::vFloat>(sfpi::vInt(alpha_p_bits));
  const sfpi::vFloat alpha_n = sfpi::reinterpret<sfpi::vFloat>(sfpi::vInt(alpha_n_bits));
  for (int step = 0; step < 8; step++) {
    sfpi::vFloat x = sfpi::dst_reg[0];
    sfpi::vFloat half_x = sfpi::vFloat(0.5f) * x;
    v_if(x > 0.0f) {
      sfpi::vFloat ax = alpha_p * x;
      store(ax, x, half_x);
    }
    v_elseif(x >= sfpi::vConstFloatPrgm1) { store(alpha_n, sfpi::vFloat(sfpi::vConstFloatPrgm2) - x, half_x); }
    v_elseif(x > -0.5f) {
      sfpi::vFloat x2 = x * x;
      sfpi::vFloat fit = horner(x, kExpm1Fit);
      sfpi::vFloat term = x2 * fit;
      store(alpha_n, term, half_x);
    }
    v_else {
      sfpi::vFloat e_minus_1 = exp_of_negative(x) - sfpi::vConst1;
      store(alpha_n, e_minus_1 - x, half_x);
    }
    v_endif;
    sfpi::dst_reg++;
  }
}

inline void init() {
  sfpi::vConstFloatPrgm0 = 1.4426950408889634f;   // 1 / ln 2
  sfpi::vConstFloatPrgm1 = -1e-6f;                // eps
  sfpi::vConstFloatPrgm2 = -0.0000009999995427f;  // expm1(eps)
}

}  // namespace zyx_emu_xielu

ALWI void xielu_tile_init() { MATH((zyx_emu_xielu::init())); }
ALWI void xielu_tile(uint32_t idst, uint32_t alpha_p, uint32_t alpha_n) {
  MATH((_llk_math_eltwise_unary_sfpu_params_(zyx_emu_xielu::xielu_face, idst, VectorMode::RC, alpha_p, alpha_n)));
}

}  // namespace ckernel
