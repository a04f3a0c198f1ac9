// SFPU element math of the emulated compute engine: the unary, binary and
// ternary operations of tt-metal's SFPU API, computed in double precision
// from tt-metal's documented definitions (PyTorch semantics where tt-metal
// refers to them) and rounded to f32; DST rounding to 16 bits happens in the
// caller. Integer ops work on the 32-bit lanes exactly (two's complement
// wrap-around, as the SFPU's integer adder does).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

#include "compute_state.hpp"
#include "zyx_emu/sfpi_arith.h"
#include "zyx_emu/sfpu_ops.h"

namespace zyx::emu {

namespace {

double pf(uint32_t bits) { return std::bit_cast<float>(bits); }

constexpr double kPi = 3.14159265358979323846;

double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
  double r = 0;
  if (x < 0) {  // reflection
    return digamma(1 - x) - kPi / std::tan(kPi * x);
  }
  while (x < 6) r -= 1 / x, x += 1;
  double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
}

// polygamma(n, x) for n >= 1: (-1)^(n+1) n! sum_k 1/(x+k)^(n+1), summed
// directly to x+k >= 20, then the asymptotic tail (Euler-Maclaurin).
// sum_k 1/(x+k)^(n+1), n >= 1.
double polygamma_sum(int n, double x) {
  double s = 0;
  while (x < 20) s += 1 / std::pow(x, n + 1), x += 1;
  // tail: integral + half term + first Bernoulli corrections
  double t = 1 / (n * std::pow(x, n)) + 0.5 / std::pow(x, n + 1) + (n + 1) / (12 * std::pow(x, n + 2)) -
             (n + 1.0) * (n + 2) * (n + 3) / (720 * std::pow(x, n + 4));
  return s + t;
}
double polygamma(int n, double x) {
  if (n == 0) return digamma(x);
  double fact = std::tgamma(n + 1.0);
  return ((n + 1) % 2 == 0 ? 1 : -1) * fact * polygamma_sum(n, x);
}

double erfinv(double y) {
  if (y <= -1) return y == -1 ? -INFINITY : NAN;
  if (y >= 1) return y == 1 ? INFINITY : NAN;
  // initial guess (Giles), then Newton steps on erf
  double w = -std::log((1 - y) * (1 + y)), x;
  if (w < 5) {
    w -= 2.5;
    x = 2.81022636e-08;
    x = 3.43273939e-07 + x * w;
    x = -3.5233877e-06 + x * w;
    x = -4.39150654e-06 + x * w;
    x = 0.00021858087 + x * w;
    x = -0.00125372503 + x * w;
    x = -0.00417768164 + x * w;
    x = 0.246640727 + x * w;
    x = 1.50140941 + x * w;
  } else {
    w = std::sqrt(w) - 3;
    x = -0.000200214257;
    x = 0.000100950558 + x * w;
    x = 0.00134934322 + x * w;
    x = -0.00367342844 + x * w;
    x = 0.00573950773 + x * w;
    x = -0.0076224613 + x * w;
    x = 0.00943887047 + x * w;
    x = 1.00167406 + x * w;
    x = 2.83297682 + x * w;
  }
  x *= y;
  for (int i = 0; i < 3; i++) x -= (std::erf(x) - y) / (2 / std::sqrt(kPi) * std::exp(-x * x));
  return x;
}

double round_half_even(double x, int decimals) {
  double s = std::pow(10.0, decimals);
  double v = x * s;
  double r = std::nearbyint(v);  // default rounding mode: to nearest, ties to even
  return r / s;
}

uint32_t next_rand(uint64_t* s) {
  // xorshift64*: a deterministic per-core stream (hardware uses an LFSR).
  uint64_t x = *s;
  x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
  *s = x;
  return static_cast<uint32_t>((x * 0x2545F4914F6CDD1Dull) >> 32);
}

double softplus(double x, double beta, double threshold) {
  return beta * x > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
}

// One unary op on an element: the element as float and widened, the op's
// params as tt-metal passes them (p0-p2, bits) and p0, p1 as f32 values (a,
// b), and the core's random state.
struct UnaryArgs {
  float xf;
  double x, a, b;
  uint32_t p0, p1, p2;
  uint64_t* rng;
};

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

// One SFPLUT with sign retained, as tt-llk's approximations use it: the
// coefficient pair (8-bit a in bits 8-15, 8-bit c in bits 0-7) picked by |x|
// below 1, below 2 and above, a |x| + c rounded once, then x's sign.
uint32_t sfplut_retain_sign(float x, const uint32_t coeff[3]) {
  uint32_t w = std::bit_cast<uint32_t>(x), b = w & 0x7fffffffu;
  uint32_t c = coeff[b < 0x3f800000u ? 0 : b < 0x40000000u ? 1 : 2];
  uint32_t d = sfpi::impl_::mad(sfpi::impl_::lut8(c >> 8), b, sfpi::impl_::lut8(c));
  return (d & 0x7fffffffu) | (w & 0x80000000u);
}

// tanh_tile<true> as the card computes it: tt-llk's Wormhole approximation,
// one SFPLUT with the coefficient bytes 0x1dff (0.90625 |x| below 1), 0x481a
// (0.09375 |x| + 0.8125 below 2) and 0xff00 (1 above), x's sign kept.
double tanh_lut(float x) {
  static constexpr uint32_t kCoeff[3] = {0x1dffu, 0x481au, 0xff00u};
  return std::bit_cast<float>(sfplut_retain_sign(x, kCoeff));
}

// sigmoid_tile<.., true> as the card computes it (tt-metal's sigmoid_appx,
// the same for Wormhole and Blackhole): one SFPLUT with the coefficient bytes
// 0x3dff (0.2265625 |x| below 1), 0x21d8 (0.265625 |x| - 0.046875 below 2)
// and 0xff10 (0.5 above), x's sign kept, then + 0.5 as a second SFPU
// addition (its own rounding).
double sigmoid_lut(float x) {
  static constexpr uint32_t kCoeff[3] = {0x3dffu, 0x21d8u, 0xff10u};
  return std::bit_cast<float>(sfpi::impl_::mad(sfplut_retain_sign(x, kCoeff), 0x3f800000u, 0x3f000000u));
}
// gelu_tile<true> as the card computes it (tt-llk's _calculate_gelu_appx_,
// the same for Wormhole and Blackhole): 0.5 x (one SFPMUL) plus one SFPLUTFP32
// over six ranges of |x| (cut at 0.5, 1, 1.5, 2 and 3; fp16 slope and offset
// pairs, the result's own sign), the sum rounded once more. Above 3 the table
// gives 0.5 |x|, so the result is x for positive x and 0 for negative.
double gelu_lut(float x) {
  static constexpr uint32_t kSlopes[3] = {0x37e7322bu, 0x38e138f3u, 0x38003852u};
  static constexpr uint32_t kOffsets[3] = {0xb12286d8u, 0xb437b479u, 0x7c00afa4u};
  static constexpr uint32_t kCuts[5] = {0x3f000000u, 0x3f800000u, 0x3fc00000u, 0x40000000u, 0x40400000u};
  uint32_t w = std::bit_cast<uint32_t>(x), b = w & 0x7fffffffu;
  int range = 0;
  while (range < 5 && b >= kCuts[range]) range++;
  int shift = range % 2 ? 16 : 0;
  uint32_t slope = sfpi::impl_::lut16(kSlopes[range / 2] >> shift);
  uint32_t offset = sfpi::impl_::lut16(kOffsets[range / 2] >> shift);
  uint32_t table = sfpi::impl_::mad(slope, b, offset);
  uint32_t half_x = sfpi::impl_::mad(w, 0x3f000000u, 0);
  return std::bit_cast<float>(sfpi::impl_::mad(half_x, 0x3f800000u, table));
}

double bool_value(bool c) { return c ? 1.0 : 0.0; }

// Exponentials, logarithms, roots, powers and sign operations.
// Sets y and returns true when op is one of them.
bool exp_log_power(uint32_t op, const UnaryArgs& u, double& y) {
  const double x = u.x, a = u.a;
  const float xf = u.xf;
  const uint32_t p0 = u.p0;
  switch (op) {
    // exp_tile's scale_en (p0) multiplies by its bf16 scale (p1) first
    case ZYX_SU_EXP: y = std::exp(u.p0 ? x * pf(u.p1 << 16) : x); break;
    case ZYX_SU_EXP_APPROX: y = std::exp(x); break;
    case ZYX_SU_EXP2: y = std::exp2(x); break;
    case ZYX_SU_EXPM1: y = std::expm1(x); break;
    case ZYX_SU_LOG: y = std::log(x); break;
    case ZYX_SU_LOG_WITH_BASE: y = std::log(x) * a; break;
    case ZYX_SU_LOG1P: y = std::log1p(x); break;
    case ZYX_SU_SQRT: y = std::sqrt(x); break;
    case ZYX_SU_RSQRT: y = 1 / std::sqrt(x); break;
    case ZYX_SU_RECIP: y = 1 / x; break;
    case ZYX_SU_CBRT: y = std::cbrt(x); break;
    case ZYX_SU_SQUARE: y = x * x; break;
    case ZYX_SU_ABS: y = std::fabs(x); break;
    case ZYX_SU_NEG: y = -x; break;
    case ZYX_SU_SIGN: y = x > 0 ? 1 : x < 0 ? -1 : 0; break;
    case ZYX_SU_SIGNBIT: y = bool_value(std::signbit(xf)); break;
    case ZYX_SU_IDENTITY: y = x; break;
    case ZYX_SU_POWER: y = std::pow(x, a); break;
    case ZYX_SU_POWER_ITERATIVE: {
      y = 1;
      for (uint32_t i = 0; i < p0 && i < 1024; i++) y *= x;
      break;
    }
    case ZYX_SU_RPOW: y = std::pow(a, x); break;
    default: return false;
  }
  return true;
}

// Activation functions (the ReLU family, ELU, GELU, sigmoid, tanh, the
// hard and soft forms, threshold, PReLU).
// Sets y and returns true when op is one of them.
bool activation(uint32_t op, const UnaryArgs& u, double& y) {
  const double x = u.x, a = u.a, b = u.b;
  const uint32_t p2 = u.p2;
  switch (op) {
    case ZYX_SU_RELU: y = x > 0 ? x : 0; break;
    case ZYX_SU_RELU_MAX: y = x < 0 ? 0 : (x > a ? a : x); break;  // relu(min(x, upper))
    // max(x, lower), as tt-llk computes it (SFPSWAP on Wormhole, a compare
    // on Blackhole): tt-metal documents lower > 0, where this is
    // relu(max(x, lower)); below 0 the card does not clamp at 0.
    case ZYX_SU_RELU_MIN: y = std::max(x, a); break;
    case ZYX_SU_LEAKY_RELU: y = x < 0 ? a * x : x; break;
    case ZYX_SU_ELU: y = x < 0 ? a * std::expm1(x) : x; break;
    case ZYX_SU_SELU: y = a * (x > 0 ? x : b * std::expm1(x)); break;  // (scale, alpha)
    case ZYX_SU_CELU: y = x > 0 ? x : a * std::expm1(x / a); break;  // (alpha, 1/alpha)
    case ZYX_SU_GELU: y = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); break;
    case ZYX_SU_GELU_APPROX: y = gelu_lut(u.xf); break;
    case ZYX_SU_SIGMOID: y = sigmoid(x); break;
    case ZYX_SU_SIGMOID_APPROX: y = sigmoid_lut(u.xf); break;
    case ZYX_SU_SILU: case ZYX_SU_SWISH: y = x * sigmoid(x); break;
    case ZYX_SU_TANH: y = std::tanh(x); break;
    case ZYX_SU_TANH_APPROX: y = tanh_lut(u.xf); break;
    case ZYX_SU_HARDSIGMOID: y = std::min(1.0, std::max(0.0, x / 6 + 0.5)); break;
    case ZYX_SU_HARDSWISH: y = x * std::min(1.0, std::max(0.0, x / 6 + 0.5)); break;
    case ZYX_SU_HARDTANH: case ZYX_SU_CLAMP: y = std::min(b, std::max(a, x)); break;
    case ZYX_SU_HARDSHRINK: y = std::fabs(x) > a ? x : 0; break;
    case ZYX_SU_SOFTSHRINK: y = x > a ? x - a : x < -a ? x + a : 0; break;
    case ZYX_SU_SOFTSIGN: y = x / (1 + std::fabs(x)); break;
    // (beta, 1/beta, threshold); the second form is ttnn's INP_FLOAT32 build
    case ZYX_SU_SOFTPLUS: case ZYX_SU_SOFTPLUS_INP_F32: y = softplus(x, a, pf(p2)); break;
    case ZYX_SU_MISH: y = x * std::tanh(softplus(x, 1, 20)); break;
    case ZYX_SU_HARDMISH: y = 0.5 * x * std::min(2.0, std::max(0.0, x + 2)); break;
    case ZYX_SU_TANHSHRINK: y = x - std::tanh(x); break;
    case ZYX_SU_LOGSIGMOID: y = -softplus(-x, 1, 20); break;
    case ZYX_SU_TANH_DERIVATIVE: y = 1 - std::tanh(x) * std::tanh(x); break;
    // GELU'(x) = Phi(x) + x phi(x); the card's fast form is a table of the same.
    case ZYX_SU_GELU_DERIVATIVE:
      y = 0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * kPi);
      break;
    case ZYX_SU_SOFTCAP: y = a * std::tanh(x / a); break;
    case ZYX_SU_THRESHOLD: y = x > a ? x : b; break;
    case ZYX_SU_PRELU: y = x < 0 ? a * x : x; break;
    default: return false;
  }
  return true;
}

// Trigonometric and hyperbolic functions, erf, Bessel, gamma-family
// functions and logit.
// Sets y and returns true when op is one of them.
bool special_function(uint32_t op, const UnaryArgs& u, double& y) {
  const double x = u.x, a = u.a, b = u.b;
  const uint32_t p0 = u.p0;
  switch (op) {
    case ZYX_SU_SIN: y = std::sin(x); break;
    case ZYX_SU_COS: y = std::cos(x); break;
    case ZYX_SU_TAN: y = std::tan(x); break;
    case ZYX_SU_ASIN: y = std::asin(x); break;
    case ZYX_SU_ACOS: y = std::acos(x); break;
    case ZYX_SU_ATAN: y = std::atan(x); break;
    case ZYX_SU_SINH: y = std::sinh(x); break;
    case ZYX_SU_COSH: y = std::cosh(x); break;
    case ZYX_SU_ASINH: y = std::asinh(x); break;
    case ZYX_SU_ACOSH: y = std::acosh(x); break;
    case ZYX_SU_ATANH: y = std::atanh(x); break;
    case ZYX_SU_ERF: y = std::erf(x); break;
    case ZYX_SU_ERFC: y = std::erfc(x); break;
    case ZYX_SU_ERFINV: y = erfinv(x); break;
    case ZYX_SU_I0: y = std::cyl_bessel_i(0.0, std::fabs(x)); break;
    case ZYX_SU_I1: y = (x < 0 ? -1 : 1) * std::cyl_bessel_i(1.0, std::fabs(x)); break;
    case ZYX_SU_LGAMMA: y = std::lgamma(x); break;
    // The Stirling stage of tt-metal's split lgamma: lgamma(1 - x) below 0.5,
    // where lgamma_adjusted_tile applies the reflection.
    case ZYX_SU_LGAMMA_STIRLING: y = std::lgamma(x < 0.5 ? 1 - x : x); break;
    case ZYX_SU_DIGAMMA: y = digamma(x); break;
    case ZYX_SU_POLYGAMMA: y = polygamma(static_cast<int>(p0), x); break;
    case ZYX_SU_POLYGAMMA_SCALED: {  // (n, (-1)^(n+1) n!) as f32 bits
      int n = static_cast<int>(a);
      y = n >= 1 && n <= 11 ? b * polygamma_sum(n, x) : std::numeric_limits<double>::quiet_NaN();
      break;
    }
    case ZYX_SU_MULTIGAMMALN:  // multivariate log-gamma of order 4, as ttnn's multigammaln
      y = std::lgamma(x) + std::lgamma(x - 0.5) + std::lgamma(x - 1) + std::lgamma(x - 1.5) + 3 * std::log(kPi);
      break;
    case ZYX_SU_LOGIT: {
      double v = x;
      if (a >= 0) v = std::min(std::max(v, a), 1 - a);
      y = std::log(v / (1 - v));
      break;
    }
    default: return false;
  }
  return true;
}

// Tests and comparisons (1 or 0), max, min and heaviside against a scalar.
// Sets y and returns true when op is one of them.
bool comparison(uint32_t op, const UnaryArgs& u, double& y) {
  const double x = u.x, a = u.a;
  switch (op) {
    case ZYX_SU_ISINF: y = bool_value(std::isinf(x)); break;
    case ZYX_SU_ISPOSINF: y = bool_value(std::isinf(x) && x > 0); break;
    case ZYX_SU_ISNEGINF: y = bool_value(std::isinf(x) && x < 0); break;
    case ZYX_SU_ISNAN: y = bool_value(std::isnan(x)); break;
    case ZYX_SU_ISFINITE: y = bool_value(std::isfinite(x)); break;
    case ZYX_SU_LOGICAL_NOT: case ZYX_SU_EQZ: y = bool_value(x == 0); break;
    case ZYX_SU_NEZ: y = bool_value(x != 0); break;
    case ZYX_SU_LTZ: y = bool_value(x < 0); break;
    case ZYX_SU_GTZ: y = bool_value(x > 0); break;
    case ZYX_SU_LEZ: y = bool_value(x <= 0); break;
    case ZYX_SU_GEZ: y = bool_value(x >= 0); break;
    case ZYX_SU_UNARY_EQ: y = bool_value(x == a); break;
    case ZYX_SU_UNARY_NE: y = bool_value(x != a); break;
    case ZYX_SU_UNARY_GT: y = bool_value(x > a); break;
    case ZYX_SU_UNARY_LT: y = bool_value(x < a); break;
    case ZYX_SU_UNARY_GE: y = bool_value(x >= a); break;
    case ZYX_SU_UNARY_LE: y = bool_value(x <= a); break;
    case ZYX_SU_UNARY_MAX: y = std::isnan(x) ? x : std::max(x, a); break;
    case ZYX_SU_UNARY_MIN: y = std::isnan(x) ? x : std::min(x, a); break;
    case ZYX_SU_HEAVISIDE: y = x < 0 ? 0 : x > 0 ? 1 : a; break;
    default: return false;
  }
  return true;
}

// Operations with a scalar (rsub, rdiv, fmod, remainder, fill, add, …) and
// rounding.
// Sets y and returns true when op is one of them.
bool scalar_op(uint32_t op, const UnaryArgs& u, double& y) {
  const double x = u.x, a = u.a;
  const uint32_t p0 = u.p0;
  const uint32_t p1 = u.p1;
  switch (op) {
    case ZYX_SU_RSUB: case ZYX_SU_RSUB_SCALAR: y = a - x; break;
    case ZYX_SU_RDIV:  // p1: rounding of the quotient (0 none, 1 trunc, 2 floor)
      y = a / x;
      if (p1 == 1) y = std::trunc(y);
      if (p1 == 2) y = std::floor(y);
      break;
    case ZYX_SU_FMOD: y = std::fmod(x, a); break;  // sign of x, as torch.fmod
    case ZYX_SU_REMAINDER: {  // sign of the divisor, as torch.remainder
      y = std::fmod(x, a);
      if (y != 0 && ((y < 0) != (a < 0))) y += a;
      break;
    }
    case ZYX_SU_FLOOR: y = std::floor(x); break;
    case ZYX_SU_CEIL: y = std::ceil(x); break;
    case ZYX_SU_TRUNC: y = std::trunc(x); break;
    case ZYX_SU_ROUND: y = round_half_even(x, static_cast<int32_t>(p0)); break;
    case ZYX_SU_FRAC: y = x - std::trunc(x); break;
    case ZYX_SU_FILL: y = a; break;
    case ZYX_SU_ADD_SCALAR: y = x + a; break;
    case ZYX_SU_SUB_SCALAR: y = x - a; break;
    case ZYX_SU_MUL_SCALAR: y = x * a; break;
    case ZYX_SU_DIV_SCALAR: y = x / a; break;
    default: return false;
  }
  return true;
}

// Random ops: dropout and rand, from the core's generator.
// Sets y and returns true when op is one of them.
bool random_op(uint32_t op, const UnaryArgs& u, double& y) {
  const double x = u.x, a = u.a, b = u.b;
  const uint32_t p0 = u.p0;
  uint64_t* rng = u.rng;
  switch (op) {
    case ZYX_SU_DROPOUT: {
      // p0: drop probability scaled to [0, 2^31); p1: f32 scale of kept elements
      uint32_t r = next_rand(rng) >> 1;
      y = r < p0 ? 0 : x * b;
      break;
    }
    case ZYX_SU_RAND: y = a + b * (next_rand(rng) * (1.0 / 4294967296.0)); break;
    default: return false;
  }
  return true;
}

// stochastic_round_tile: to bf16 by adding 16 random low bits, then
// truncating (NaN, inf unchanged).
float stochastic_round_bf16(float xf, uint64_t* rng) {
  uint32_t u;
  std::memcpy(&u, &xf, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return xf;
  uint32_t r = (u & 0x7fffffffu) + (next_rand(rng) >> 16);
  if (r > 0x7f7fffffu) r = 0x7f7f0000u;  // the largest finite bf16 (no rounding up to inf)
  u = (u & 0x80000000u) | (r & 0x7fff0000u);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

bool sfpu_unary_known(uint32_t op) { return op < ZYX_SU_COUNT && op != ZYX_SU_TILED_PROD && op != ZYX_SU_EXP_PACK; }
bool sfpu_binary_known(uint32_t op) { return op < ZYX_SB_COUNT; }

bool sfpu_unary_is_int(uint32_t op) {
  switch (op) {
    case ZYX_SU_ABS_INT32: case ZYX_SU_NEG_INT32: case ZYX_SU_SIGNBIT_INT32: case ZYX_SU_RELU_INT32:
    case ZYX_SU_LOGICAL_NOT_INT32: case ZYX_SU_EQZ_INT32: case ZYX_SU_NEZ_INT32: case ZYX_SU_LTZ_INT32:
    case ZYX_SU_GTZ_INT32: case ZYX_SU_LEZ_INT32: case ZYX_SU_GEZ_INT32: case ZYX_SU_UNARY_MAX_INT32:
    case ZYX_SU_UNARY_MIN_INT32: case ZYX_SU_UNARY_MAX_UINT32: case ZYX_SU_UNARY_MIN_UINT32: case ZYX_SU_FILL_INT:
    case ZYX_SU_BITWISE_AND: case ZYX_SU_BITWISE_OR: case ZYX_SU_BITWISE_XOR: case ZYX_SU_BITWISE_NOT:
    case ZYX_SU_LEFT_SHIFT: case ZYX_SU_RIGHT_SHIFT: case ZYX_SU_RELU_MAX_INT32: case ZYX_SU_RELU_MIN_INT32:
    case ZYX_SU_IDENTITY_INT: case ZYX_SU_UNARY_EQ_INT32: case ZYX_SU_UNARY_NE_INT32: case ZYX_SU_UNARY_GT_INT32:
    case ZYX_SU_UNARY_GE_INT32: case ZYX_SU_UNARY_LT_INT32: case ZYX_SU_UNARY_LE_INT32: case ZYX_SU_CLAMP_INT32:
    case ZYX_SU_RSUB_INT32: case ZYX_SU_ADD_SCALAR_INT32: case ZYX_SU_SUB_SCALAR_INT32:
      return true;
    default: return false;
  }
}

// A float's bits truncated toward zero to an int32 (the RISC-V cast of the
// kernel's threshold); beyond the range it saturates, NaN gives 0.
static int32_t float_bits_to_int32(uint32_t bits) {
  const float f = std::bit_cast<float>(bits);
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return INT32_MAX;
  if (f <= -2147483648.0f) return INT32_MIN;
  return static_cast<int32_t>(f);
}

uint32_t sfpu_unary_i(uint32_t op, uint32_t u, uint32_t p0, uint32_t p1) {
  int32_t x = static_cast<int32_t>(u), p = static_cast<int32_t>(p0), q = static_cast<int32_t>(p1);
  auto b = [](bool c) { return c ? 1u : 0u; };
  switch (op) {
    case ZYX_SU_ABS_INT32: return x < 0 ? 0u - u : u;
    case ZYX_SU_NEG_INT32: return 0u - u;
    case ZYX_SU_SIGNBIT_INT32: return u >> 31;
    case ZYX_SU_RELU_INT32: return x < 0 ? 0 : u;
    case ZYX_SU_LOGICAL_NOT_INT32: case ZYX_SU_EQZ_INT32: return b(x == 0);
    case ZYX_SU_NEZ_INT32: return b(x != 0);
    case ZYX_SU_LTZ_INT32: return b(x < 0);
    case ZYX_SU_GTZ_INT32: return b(x > 0);
    case ZYX_SU_LEZ_INT32: return b(x <= 0);
    case ZYX_SU_GEZ_INT32: return b(x >= 0);
    case ZYX_SU_UNARY_MAX_INT32: return static_cast<uint32_t>(x > p ? x : p);
    case ZYX_SU_UNARY_MIN_INT32: return static_cast<uint32_t>(x < p ? x : p);
    case ZYX_SU_UNARY_MAX_UINT32: return u > p0 ? u : p0;
    case ZYX_SU_UNARY_MIN_UINT32: return u < p0 ? u : p0;
    case ZYX_SU_FILL_INT: return p0;
    case ZYX_SU_BITWISE_AND: return u & p0;
    case ZYX_SU_BITWISE_OR: return u | p0;
    case ZYX_SU_BITWISE_XOR: return u ^ p0;
    case ZYX_SU_BITWISE_NOT: return ~u;
    case ZYX_SU_LEFT_SHIFT: return p0 >= 32 ? 0 : u << p0;
    case ZYX_SU_RIGHT_SHIFT: return static_cast<uint32_t>(p0 >= 32 ? (x < 0 ? -1 : 0) : (x >> p0));
    case ZYX_SU_RELU_MAX_INT32: {
      // tt-llk's threshold is the parameter's bits read as a float and
      // truncated to an integer (tt-metal passes the float's bits); then
      // min(x, t), and negative results 0.
      const int32_t t = float_bits_to_int32(p0);
      return static_cast<uint32_t>(std::max(std::min(x, t), 0));
    }
    case ZYX_SU_RELU_MIN_INT32: return static_cast<uint32_t>(std::max(x, p));  // tt-llk: max(x, threshold)
    case ZYX_SU_IDENTITY_INT: return u;
    case ZYX_SU_UNARY_EQ_INT32: return b(x == p);
    case ZYX_SU_UNARY_NE_INT32: return b(x != p);
    case ZYX_SU_UNARY_GT_INT32: return b(x > p);
    case ZYX_SU_UNARY_GE_INT32: return b(x >= p);
    case ZYX_SU_UNARY_LT_INT32: return b(x < p);
    case ZYX_SU_UNARY_LE_INT32: return b(x <= p);
    case ZYX_SU_CLAMP_INT32: return static_cast<uint32_t>(x < p ? p : (x > q ? q : x));
    case ZYX_SU_RSUB_INT32: return p0 - u;
    case ZYX_SU_ADD_SCALAR_INT32: return u + p0;
    case ZYX_SU_SUB_SCALAR_INT32: return u - p0;
    default: return u;
  }
}

float sfpu_unary_f(uint32_t op, float xf, uint32_t p0, uint32_t p1, uint32_t p2, uint64_t* rng) {
  if (op == ZYX_SU_STOCHASTIC_ROUND) return stochastic_round_bf16(xf, rng);
  const UnaryArgs u{xf, xf, pf(p0), pf(p1), p0, p1, p2, rng};
  double y = u.x;  // an op of none of the groups leaves the element as it is
  if (!exp_log_power(op, u, y) && !activation(op, u, y) && !special_function(op, u, y) && !comparison(op, u, y) &&
      !scalar_op(op, u, y))
    random_op(op, u, y);
  return static_cast<float>(y);
}

bool sfpu_binary_is_int(uint32_t op) { return op >= ZYX_SB_ADD_INT32 && op <= ZYX_SB_LCM && op != ZYX_SB_MAX && op != ZYX_SB_MIN; }

uint32_t sfpu_binary_i(uint32_t op, uint32_t ua, uint32_t ub) {
  int32_t a = static_cast<int32_t>(ua), b = static_cast<int32_t>(ub);
  auto bo = [](bool c) { return c ? 1u : 0u; };
  switch (op) {
    case ZYX_SB_ADD_INT32: return ua + ub;
    case ZYX_SB_SUB_INT32: return ua - ub;
    case ZYX_SB_RSUB_INT32: return ub - ua;
    case ZYX_SB_MUL_INT32: return ua * ub;
    case ZYX_SB_MUL_UINT16: return (ua & 0xffff) * (ub & 0xffff) & 0xffff;
    // binary_comp.h's uint16 compares read the low 16 bits of each word
    case ZYX_SB_LT_UINT16: return bo((ua & 0xffff) < (ub & 0xffff));
    case ZYX_SB_GT_UINT16: return bo((ua & 0xffff) > (ub & 0xffff));
    case ZYX_SB_DIV_INT32_TRUNC:
      if (b == 0) return 0;
      if (a == INT32_MIN && b == -1) return ua;
      return static_cast<uint32_t>(a / b);
    case ZYX_SB_DIV_INT32_FLOOR: {
      if (b == 0) return 0;
      if (a == INT32_MIN && b == -1) return ua;
      int32_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
      return static_cast<uint32_t>(q);
    }
    case ZYX_SB_REMAINDER_INT32: {
      if (b == 0 || (a == INT32_MIN && b == -1)) return 0;
      int32_t r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return static_cast<uint32_t>(r);
    }
    case ZYX_SB_FMOD_INT32:
      if (b == 0 || (a == INT32_MIN && b == -1)) return 0;
      return static_cast<uint32_t>(a % b);
    case ZYX_SB_MAX_INT32: return static_cast<uint32_t>(a > b ? a : b);
    case ZYX_SB_MIN_INT32: return static_cast<uint32_t>(a < b ? a : b);
    case ZYX_SB_MAX_UINT32: return ua > ub ? ua : ub;
    case ZYX_SB_MIN_UINT32: return ua < ub ? ua : ub;
    case ZYX_SB_AND: return ua & ub;
    case ZYX_SB_OR: return ua | ub;
    case ZYX_SB_XOR: return ua ^ ub;
    case ZYX_SB_SHL: return ub >= 32 ? 0 : ua << ub;
    case ZYX_SB_SHR: return static_cast<uint32_t>(ub >= 32 ? (a < 0 ? -1 : 0) : (a >> ub));
    case ZYX_SB_SHR_LOGICAL: return ub >= 32 ? 0 : ua >> ub;
    case ZYX_SB_LT_INT32: return bo(a < b);
    case ZYX_SB_GT_INT32: return bo(a > b);
    case ZYX_SB_GE_INT32: return bo(a >= b);
    case ZYX_SB_LE_INT32: return bo(a <= b);
    case ZYX_SB_EQ_INT32: return bo(a == b);
    case ZYX_SB_NE_INT32: return bo(a != b);
    // Of the magnitudes, so never negative (gcd(INT32_MIN, 0) wraps to its bits).
    case ZYX_SB_GCD: return static_cast<uint32_t>(std::gcd(std::llabs(a), std::llabs(b)));
    case ZYX_SB_LCM: return static_cast<uint32_t>(std::lcm(std::llabs(a), std::llabs(b)));
    default: return ua;
  }
}

float sfpu_binary_f(uint32_t op, float af, float bf) {
  const double a = af, b = bf;
  auto bo = [](bool c) { return c ? 1.0 : 0.0; };
  double y;
  switch (op) {
    case ZYX_SB_ADD: y = a + b; break;
    case ZYX_SB_SUB: y = a - b; break;
    case ZYX_SB_MUL: y = a * b; break;
    case ZYX_SB_DIV: y = a / b; break;
    case ZYX_SB_DIV_NO_NAN: y = b == 0 ? 0 : a / b; break;
    case ZYX_SB_DIV_INT32: y = a / b; break;  // integer inputs, float quotient
    case ZYX_SB_RSUB: y = b - a; break;
    case ZYX_SB_POW: y = std::pow(a, b); break;
    case ZYX_SB_EQ: y = bo(a == b); break;
    case ZYX_SB_NE: y = bo(a != b); break;
    case ZYX_SB_LT: y = bo(a < b); break;
    case ZYX_SB_GT: y = bo(a > b); break;
    case ZYX_SB_LE: y = bo(a <= b); break;
    case ZYX_SB_GE: y = bo(a >= b); break;
    case ZYX_SB_MAX: y = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); break;
    case ZYX_SB_MIN: y = std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); break;
    case ZYX_SB_ATAN2: y = std::atan2(a, b); break;
    case ZYX_SB_XLOGY: y = a == 0 && !std::isnan(b) ? 0 : a * std::log(b); break;
    case ZYX_SB_FMOD: y = std::fmod(a, b); break;  // sign of a
    case ZYX_SB_REMAINDER: {  // a - b * floor(a / b): sign of b
      y = std::fmod(a, b);
      if (y != 0 && ((y < 0) != (b < 0))) y += b;
      break;
    }
    case ZYX_SB_LOGSIGMOID: y = std::min(a, 0.0) - std::log1p(std::exp(-std::fabs(a))); break;
    // The float32 Stirling stage: b holds log of the reflected argument, which
    // the card's series needs and the exact value does not.
    case ZYX_SB_LGAMMA_STIRLING: y = std::lgamma(a < 0.5 ? 1 - a : a); break;
    default: y = a; break;
  }
  return static_cast<float>(y);
}

float sfpu_ternary_f(uint32_t op, float a, float b, float c, float p) {
  double y;
  switch (op) {
    case ZYX_ST_ADDCMUL: y = double(a) + double(p) * b * c; break;
    case ZYX_ST_ADDCDIV: y = double(a) + double(p) * b / c; break;
    case ZYX_ST_LERP: y = double(a) + double(c) * (double(b) - a); break;
    case ZYX_ST_WHERE: y = a != 0 ? b : c; break;
    case ZYX_ST_LGAMMA_ADJUSTED:  // (lgamma(1-x) or lgamma(x), log|sin(pi x)|, x)
      y = c < 0.5 ? std::log(kPi) - double(b) - double(a) : double(a);
      break;
    default: y = a; break;
  }
  return static_cast<float>(y);
}

}  // namespace zyx::emu
