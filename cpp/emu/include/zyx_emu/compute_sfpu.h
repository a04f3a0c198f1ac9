// Kernel-side SFPU operations of zyx-tt's Tensix emulator: unary, binary and
// ternary ops on DST tiles, by tt-metal's names. Each forwards to the
// emulator with an op code (zyx_emu/sfpu_ops.h) and the params as tt-metal
// encodes them. Included by zyx_emu/compute.h.
#pragma once

namespace ckernel {

namespace zyx_emu_c {
ALWI void su(uint32_t op, uint32_t idst, uint32_t p0 = 0, uint32_t p1 = 0, uint32_t p2 = 0) {
  ZYX_API.sfpu_unary(op, idst, p0, p1, p2);
}
ALWI void sb(uint32_t op, uint32_t a, uint32_t b, uint32_t out, uint32_t p0 = 0) { ZYX_API.sfpu_binary(op, a, b, out, p0); }
}  // namespace zyx_emu_c

// An op's X_tile_init() (nothing to set up here) and X_tile: both take the
// template params given last; X_tile takes PARAMS (parenthesized) and runs
// CALL.
#define ZYX_EMU_SFPU_OP(name, PARAMS, CALL, ...) \
  template <__VA_ARGS__>                         \
  ALWI void name##_tile_init() {}                \
  template <__VA_ARGS__>                         \
  ALWI void name##_tile PARAMS {                 \
    CALL;                                        \
  }

// X_tile_init() and X_tile(idst) for ops without params, X_tile(idst, p0)
// and X_tile(idst, p0, p1) for ops with one or two. Template params of
// tt-metal's forms (approx, fast_and_approx, vector mode, ...) are accepted.
#define ZYX_EMU_SFPU0(name, OP) ZYX_EMU_SFPU_OP(name, (uint32_t idst, int = 0), zyx_emu_c::su(ZYX_SU_##OP, idst), auto... P)
#define ZYX_EMU_SFPU1(name, OP) \
  ZYX_EMU_SFPU_OP(name, (uint32_t idst, uint32_t p0), zyx_emu_c::su(ZYX_SU_##OP, idst, p0), auto... P)
#define ZYX_EMU_SFPU2(name, OP) \
  ZYX_EMU_SFPU_OP(name, (uint32_t idst, uint32_t p0, uint32_t p1), zyx_emu_c::su(ZYX_SU_##OP, idst, p0, p1), auto... P)

ZYX_EMU_SFPU0(silu, SILU)
ZYX_EMU_SFPU0(log1p, LOG1P)
ZYX_EMU_SFPU0(cbrt, CBRT)
ZYX_EMU_SFPU0(square, SQUARE)
ZYX_EMU_SFPU0(abs, ABS)
ZYX_EMU_SFPU0(sign, SIGN)
ZYX_EMU_SFPU0(signbit, SIGNBIT)
ZYX_EMU_SFPU0(identity, IDENTITY)
ZYX_EMU_SFPU0(relu, RELU)
ZYX_EMU_SFPU0(hardsigmoid, HARDSIGMOID)
ZYX_EMU_SFPU0(hardswish, HARDSWISH)
ZYX_EMU_SFPU0(softsign, SOFTSIGN)
ZYX_EMU_SFPU0(mish, MISH)
ZYX_EMU_SFPU0(hardmish, HARDMISH)
ZYX_EMU_SFPU0(tanhshrink, TANHSHRINK)
ZYX_EMU_SFPU0(logsigmoid, LOGSIGMOID)
ZYX_EMU_SFPU0(tanh_derivative, TANH_DERIVATIVE)
ZYX_EMU_SFPU0(swish, SWISH)
ZYX_EMU_SFPU0(sin, SIN)
ZYX_EMU_SFPU0(cos, COS)
ZYX_EMU_SFPU0(tan, TAN)
ZYX_EMU_SFPU0(asin, ASIN)
ZYX_EMU_SFPU0(acos, ACOS)
ZYX_EMU_SFPU0(atan, ATAN)
ZYX_EMU_SFPU0(sinh, SINH)
ZYX_EMU_SFPU0(cosh, COSH)
ZYX_EMU_SFPU0(asinh, ASINH)
ZYX_EMU_SFPU0(acosh, ACOSH)
ZYX_EMU_SFPU0(atanh, ATANH)
ZYX_EMU_SFPU0(erfinv, ERFINV)
ZYX_EMU_SFPU0(i0, I0)
ZYX_EMU_SFPU0(i1, I1)
ZYX_EMU_SFPU0(lgamma, LGAMMA)
ZYX_EMU_SFPU0(lgamma_stirling, LGAMMA_STIRLING)
ZYX_EMU_SFPU0(digamma, DIGAMMA)
ZYX_EMU_SFPU0(multigammaln, MULTIGAMMALN)
ZYX_EMU_SFPU0(isinf, ISINF)
ZYX_EMU_SFPU0(isposinf, ISPOSINF)
ZYX_EMU_SFPU0(isneginf, ISNEGINF)
ZYX_EMU_SFPU0(isnan, ISNAN)
ZYX_EMU_SFPU0(isfinite, ISFINITE)
ZYX_EMU_SFPU0(logical_not_unary, LOGICAL_NOT)
ZYX_EMU_SFPU0(eqz, EQZ)
ZYX_EMU_SFPU0(nez, NEZ)
ZYX_EMU_SFPU0(ltz, LTZ)
ZYX_EMU_SFPU0(gtz, GTZ)
ZYX_EMU_SFPU0(lez, LEZ)
ZYX_EMU_SFPU0(gez, GEZ)
ZYX_EMU_SFPU0(exp2, EXP2)
ZYX_EMU_SFPU0(alt_complex_rotate90, ALT_COMPLEX_ROTATE90)
// compute_kernel_api.h: a running product down each SFPU lane (see
// sfpu_tiled_prod); its last face also writes the first rows of DST idst + 1.
// reshuffle.h: DST[idst + 1] row map[i] += DST[idst] row i for each row i
// whose byte map[i] (at L1 idx_addr + 16, after a 16-byte header) is below
// 32, in row order (embedding backward's scatter-add).
ALWI void reshuffle_rows_tile_init() {}
ALWI void reshuffle_rows_tile(uint32_t idst, uint32_t idx_addr) {
  ZYX_API.compute_special(ZYX_CS_RESHUFFLE_ROWS, idst, idx_addr, 0, 0);
}
// ema.h: the exponential moving average down each column of DST[idst], top
// row first, into DST[idst + 1]: prev = alpha * prev + beta * x (alpha and
// beta as f32 bits); each column's last average carries to the next
// ema_tile until ema_clear_previous_output sets them to 0.
ALWI void ema_init(uint32_t alpha, uint32_t beta) { ZYX_API.compute_special(ZYX_CS_EMA_INIT, alpha, beta, 0, 0); }
ALWI void ema_clear_previous_output() { ZYX_API.compute_special(ZYX_CS_EMA_CLEAR, 0, 0, 0, 0); }
ALWI void ema_tile(uint32_t input_dst_index) { ZYX_API.compute_special(ZYX_CS_EMA_TILE, input_dst_index, 0, 0, 0); }
ALWI void tiled_prod_tile_init() {}
ALWI void tiled_prod_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_TILED_PROD, idst); }
ZYX_EMU_SFPU0(bitwise_not, BITWISE_NOT)
ZYX_EMU_SFPU1(relu_max, RELU_MAX)
ZYX_EMU_SFPU1(relu_min, RELU_MIN)
ZYX_EMU_SFPU1(leaky_relu, LEAKY_RELU)
ZYX_EMU_SFPU1(elu, ELU)
ZYX_EMU_SFPU1(hardshrink, HARDSHRINK)
ZYX_EMU_SFPU1(softshrink, SOFTSHRINK)
ZYX_EMU_SFPU1(softcap, SOFTCAP)
ZYX_EMU_SFPU1(heaviside, HEAVISIDE)
ZYX_EMU_SFPU1(power, POWER)
ZYX_EMU_SFPU1(power_iterative, POWER_ITERATIVE)
ZYX_EMU_SFPU1(rpow, RPOW)
ZYX_EMU_SFPU1(rsub, RSUB)
ZYX_EMU_SFPU1(rdiv, RDIV)
ZYX_EMU_SFPU1(prelu, PRELU)
ZYX_EMU_SFPU1(logit, LOGIT)
// logit_tile(idst): log(x / (1 - x)) without clamping (the one-argument form).
template <auto... P>
ALWI void logit_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_LOGIT, idst, 0xffffffffu); }
ZYX_EMU_SFPU1(polygamma, POLYGAMMA)
// polygamma_tile(idst, n, scale): n as f32 bits, scale = (-1)^(n+1) n! as f32 bits.
ALWI void polygamma_tile(uint32_t idst, uint32_t n_packed, uint32_t scale_packed) {
  zyx_emu_c::su(ZYX_SU_POLYGAMMA_SCALED, idst, n_packed, scale_packed);
}
ZYX_EMU_SFPU1(unary_eq, UNARY_EQ)
ZYX_EMU_SFPU1(unary_ne, UNARY_NE)
ZYX_EMU_SFPU1(unary_gt, UNARY_GT)
ZYX_EMU_SFPU1(unary_lt, UNARY_LT)
ZYX_EMU_SFPU1(unary_ge, UNARY_GE)
ZYX_EMU_SFPU1(unary_le, UNARY_LE)
ZYX_EMU_SFPU1(unary_max, UNARY_MAX)
ZYX_EMU_SFPU1(unary_min, UNARY_MIN)
ZYX_EMU_SFPU1(unary_max_int32, UNARY_MAX_INT32)
ZYX_EMU_SFPU1(unary_min_int32, UNARY_MIN_INT32)
ZYX_EMU_SFPU1(unary_max_uint32, UNARY_MAX_UINT32)
ZYX_EMU_SFPU1(unary_min_uint32, UNARY_MIN_UINT32)
ZYX_EMU_SFPU1(bitwise_and, BITWISE_AND)
ZYX_EMU_SFPU1(bitwise_or, BITWISE_OR)
ZYX_EMU_SFPU1(bitwise_xor, BITWISE_XOR)
ZYX_EMU_SFPU1(left_shift, LEFT_SHIFT)
ZYX_EMU_SFPU1(right_shift, RIGHT_SHIFT)
ZYX_EMU_SFPU2(selu, SELU)
ZYX_EMU_SFPU2(celu, CELU)
ZYX_EMU_SFPU2(clamp, CLAMP)
ZYX_EMU_SFPU2(hardtanh, HARDTANH)
ZYX_EMU_SFPU2(threshold, THRESHOLD)
ZYX_EMU_SFPU2(fmod, FMOD)
ZYX_EMU_SFPU2(remainder, REMAINDER)
#undef ZYX_EMU_SFPU0
#undef ZYX_EMU_SFPU1
#undef ZYX_EMU_SFPU2

// Ops whose approximate (fast) forms differ: the first bool template param
// selects the approximation, as on hardware.
#define ZYX_EMU_SFPU_APPROX(name, OP, DEFAULT)                                                        \
  ZYX_EMU_SFPU_OP(name, (uint32_t idst, int = 0), zyx_emu_c::su(approx ? ZYX_SU_##OP##_APPROX : ZYX_SU_##OP, idst), \
                  bool approx = DEFAULT, auto... P)
// tt-metal's gelu_tile defaults to its fast approximation, tanh_tile to exact.
ZYX_EMU_SFPU_APPROX(gelu, GELU, true)
ZYX_EMU_SFPU_APPROX(tanh, TANH, false)
#undef ZYX_EMU_SFPU_APPROX
// exp as tt-metal's exp.h: approx (exp_tile_init's scale, an fp32 word,
// goes into the card's constants; input_clamping picks the form), or the
// default form with scale_en multiplying by exp_tile's bf16 scale first.
enum class InputClamping : uint8_t {
  ClampToNegative = 1,
  None = 0,
};
template <bool approx = false, uint32_t scale = 0x3F800000, InputClamping input_clamping = InputClamping::ClampToNegative>
ALWI void exp_tile_init() {
  if (approx) zyx_emu_c::su(ZYX_SU_EXP_APPROX, 0xffffffffu, scale);
}
template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8>
ALWI void exp_tile(uint32_t idst, int = 0, uint16_t scale = 0x3F80) {
  if (approx)
    zyx_emu_c::su(ZYX_SU_EXP_APPROX, idst, input_clamping == InputClamping::None ? 1u : 0u);
  else
    zyx_emu_c::su(ZYX_SU_EXP, idst, scale_en ? 1u : 0u, scale);
}
// exp_tile run by the pack thread on the DST section it holds (between
// tile_regs_wait and the packs), as tt-metal's PACK(...) form: the pack
// build applies it to the tiles math committed. With scale_en the input is
// first multiplied by `scale` (bf16 bits), as the card's SFPMAD does.
template <bool approx = false, uint32_t scale = 0x3F800000, InputClamping input_clamping = InputClamping::ClampToNegative>
ALWI void exp_packthread_tile_init() {}
template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8>
ALWI void exp_packthread_tile(uint32_t idst, int vector_mode = static_cast<int>(VectorMode::RC),
                              uint16_t scale = 0x3F80) {
  (void)vector_mode;
  PACK((zyx_emu_c::su(ZYX_SU_EXP_PACK, idst, scale_en ? 0x10000u | scale : 0u, approx ? 1u : 0u)));
}
template <bool approx = false>
ALWI void expm1_tile_init() {}
template <bool approx = false>
ALWI void expm1_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_EXPM1, idst, approx ? 1u : 0u); }
// log_with_base_tile: the natural log times base_scale (fp32 bits of 1 / ln
// base); p1 says FAST_APPROX (4), as log_tile's p0.
template <bool fast_and_approx = false>
ALWI void log_with_base_tile_init() {}
template <bool fast_and_approx = false>
ALWI void log_with_base_tile(uint32_t idst, uint32_t base_scale) {
  zyx_emu_c::su(ZYX_SU_LOG_WITH_BASE, idst, base_scale, fast_and_approx ? 4u : 0u);
}
template <bool fast_and_approx = false>
ALWI void gelu_derivative_tile_init() {}
template <bool fast_and_approx = false>
ALWI void gelu_derivative_tile(uint32_t idst) {
  zyx_emu_c::su(ZYX_SU_GELU_DERIVATIVE, idst, fast_and_approx ? 1u : 0u);
}
// ttnn's unary programs define INP_FLOAT32 for a Float32 input; erf and
// softplus then use their fp32 fits, as tt-metal's headers do.
#ifdef INP_FLOAT32
constexpr bool zyx_emu_inp_float32 = true;
#else
constexpr bool zyx_emu_inp_float32 = false;
#endif
// sigmoid_tile<vector mode, fast_and_approx>: an int, as tt-metal's (ttnn
// writes the mode as a number).
template <bool fast_and_approx = false>
ALWI void sigmoid_tile_init() {}
template <int vec_mode = VectorMode::RC, bool fast_and_approx = false>
ALWI void sigmoid_tile(uint32_t idst) { zyx_emu_c::su(fast_and_approx ? ZYX_SU_SIGMOID_APPROX : ZYX_SU_SIGMOID, idst); }
template <bool fast_and_approx = false>
ALWI void sigmoid_tile_init_pack() {}
template <int vec_mode = VectorMode::RC, bool fast_and_approx = false>
ALWI void sigmoid_tile_pack(uint32_t idst) { sigmoid_tile<vec_mode, fast_and_approx>(idst); }
template <bool fast_and_approx = false>
ALWI void tanh_tile_init_pack() {}
template <bool fast_and_approx = false>
ALWI void tanh_tile_pack(uint32_t idst) { tanh_tile<fast_and_approx>(idst); }
ALWI void silu_tile_init_pack() {}
ALWI void silu_tile_pack(uint32_t idst) { silu_tile(idst); }
ALWI void hardsigmoid_tile_init_pack() {}
ALWI void hardsigmoid_tile_pack(uint32_t idst) { hardsigmoid_tile(idst); }
template <bool fast_and_approx = false>
ALWI void log_tile_init() {}
template <bool fast_and_approx = false>
ALWI void log_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_LOG, idst, fast_and_approx ? 4u : 0u); }
// recip, sqrt and rsqrt compute as the card's tt-llk code for their
// template arguments and math_approx_mode (APPROX): p0's flags, see
// cpp/emu/src/sfpu_card.hpp (1 approx, 2 legacy_compat, 4 FAST_APPROX).
template <bool legacy_compat = true, auto... P>
ALWI void recip_tile_init() {}
template <bool legacy_compat = true, auto... P>
ALWI void recip_tile(uint32_t idst, int = 0) {
  zyx_emu_c::su(ZYX_SU_RECIP, idst, (APPROX ? 1u : 0u) | (legacy_compat ? 2u : 0u));
}
template <bool legacy_compat = false, auto... P>
ALWI void rsqrt_tile_init() {}
template <bool legacy_compat = false, bool FAST_APPROX = false, auto... P>
ALWI void rsqrt_tile(uint32_t idst, int = 0) {
  zyx_emu_c::su(ZYX_SU_RSQRT, idst, (APPROX ? 1u : 0u) | (legacy_compat ? 2u : 0u) | (FAST_APPROX ? 4u : 0u));
}
template <auto... P>
ALWI void sqrt_tile_init() {}
template <bool FAST_APPROX = false, auto... P>
ALWI void sqrt_tile(uint32_t idst, int = 0) {
  zyx_emu_c::su(ZYX_SU_SQRT, idst, (APPROX ? 1u : 0u) | (FAST_APPROX ? 4u : 0u));
}
template <bool fast_and_approx = true>
ALWI void erf_tile_init() {}
// p0: 1 fast_and_approx (one Newton step for the reciprocal), 8 INP_FLOAT32
template <bool fast_and_approx = true>
ALWI void erf_tile(uint32_t idst) {
  zyx_emu_c::su(ZYX_SU_ERF, idst, (fast_and_approx ? 1u : 0u) | (zyx_emu_inp_float32 ? 8u : 0u));
}
template <bool approx = false>
ALWI void erfc_tile_init() {}
template <bool approx = false>
ALWI void erfc_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_ERFC, idst); }
template <auto... P>
ALWI void negative_tile_init() {}
template <auto... P>
ALWI void negative_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_NEG, idst); }
template <auto... P>
ALWI void neg_tile_init() {}
template <auto... P>
ALWI void neg_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_NEG, idst); }
ALWI void negative_tile_int32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_NEG_INT32, idst); }
ALWI void abs_tile_int32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_ABS_INT32, idst); }
ALWI void signbit_tile_int32_init() {}
ALWI void signbit_tile_int32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_SIGNBIT_INT32, idst); }
ALWI void relu_tile_int32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_RELU_INT32, idst); }
ALWI void relu_max_tile_int32(uint32_t idst, uint32_t upper) { zyx_emu_c::su(ZYX_SU_RELU_MAX_INT32, idst, upper); }
ALWI void relu_min_tile_int32(uint32_t idst, uint32_t lower) { zyx_emu_c::su(ZYX_SU_RELU_MIN_INT32, idst, lower); }
ALWI void identity_tile_uint32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_IDENTITY_INT, idst); }
ALWI void clamp_tile_int32(uint32_t idst, uint32_t lo, uint32_t hi) { zyx_emu_c::su(ZYX_SU_CLAMP_INT32, idst, lo, hi); }
ALWI void rsub_unary_int32_tile_init() {}
ALWI void rsub_unary_int32_tile(uint32_t idst, uint32_t scalar) { zyx_emu_c::su(ZYX_SU_RSUB_INT32, idst, scalar); }
ALWI void add_unary_tile_int32(uint32_t idst, uint32_t v) { zyx_emu_c::su(ZYX_SU_ADD_SCALAR_INT32, idst, v); }
ALWI void sub_unary_tile_int32(uint32_t idst, uint32_t v) { zyx_emu_c::su(ZYX_SU_SUB_SCALAR_INT32, idst, v); }
// Comparisons of int32 tiles with an int32 scalar (1 or 0), and with zero.
#define ZYX_EMU_SFPU_ICMP(name, OP) \
  ALWI void name##_tile_int32(uint32_t idst, uint32_t v) { zyx_emu_c::su(ZYX_SU_##OP##_INT32, idst, v); }
ZYX_EMU_SFPU_ICMP(unary_eq, UNARY_EQ)
ZYX_EMU_SFPU_ICMP(unary_ne, UNARY_NE)
ZYX_EMU_SFPU_ICMP(unary_gt, UNARY_GT)
ZYX_EMU_SFPU_ICMP(unary_ge, UNARY_GE)
ZYX_EMU_SFPU_ICMP(unary_lt, UNARY_LT)
ZYX_EMU_SFPU_ICMP(unary_le, UNARY_LE)
#undef ZYX_EMU_SFPU_ICMP
#define ZYX_EMU_SFPU_ZCMP(name, OP) \
  ALWI void name##_tile_int32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_##OP##_INT32, idst); }
ZYX_EMU_SFPU_ZCMP(eqz, EQZ)
ZYX_EMU_SFPU_ZCMP(nez, NEZ)
ZYX_EMU_SFPU_ZCMP(ltz, LTZ)
ZYX_EMU_SFPU_ZCMP(gtz, GTZ)
ZYX_EMU_SFPU_ZCMP(lez, LEZ)
ZYX_EMU_SFPU_ZCMP(gez, GEZ)
#undef ZYX_EMU_SFPU_ZCMP
// Unsigned lanes compare with zero as the int32 forms do.
ALWI void eqz_tile_uint16(uint32_t idst) { zyx_emu_c::su(ZYX_SU_EQZ_INT32, idst); }
ALWI void eqz_tile_uint32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_EQZ_INT32, idst); }
ALWI void nez_tile_uint16(uint32_t idst) { zyx_emu_c::su(ZYX_SU_NEZ_INT32, idst); }
ALWI void nez_tile_uint32(uint32_t idst) { zyx_emu_c::su(ZYX_SU_NEZ_INT32, idst); }
// logical_not_tile<DataFormat>: integer formats on the lanes' bits, float formats on the values.
ALWI void logical_not_tile_init() {}
template <DataFormat DATA_FORMAT>
ALWI void logical_not_tile(uint32_t idst) {
  constexpr bool is_int = DATA_FORMAT == DataFormat::Int32 || DATA_FORMAT == DataFormat::UInt32 ||
                          DATA_FORMAT == DataFormat::UInt16 || DATA_FORMAT == DataFormat::UInt8 ||
                          DATA_FORMAT == DataFormat::Int8;
  zyx_emu_c::su(is_int ? ZYX_SU_LOGICAL_NOT_INT32 : ZYX_SU_LOGICAL_NOT, idst);
}
// FP32 to BF16 with stochastic rounding (a per-core pseudo-random stream, as
// the SFPU's PRNG; seed it with rand_tile_init).
ALWI void stochastic_round_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_STOCHASTIC_ROUND, idst); }
ALWI void softplus_tile_init() {}
ALWI void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold) {
  zyx_emu_c::su(zyx_emu_inp_float32 ? ZYX_SU_SOFTPLUS_INP_F32 : ZYX_SU_SOFTPLUS, idst, beta, beta_reciprocal,
                threshold);
}
ALWI void dropout_tile_init(uint32_t seed) { zyx_emu_c::su(ZYX_SU_RAND, 0xffffffffu, seed); }
ALWI void dropout_kernel_init(uint32_t seed = 0) { zyx_emu_c::su(ZYX_SU_RAND, 0xffffffffu, seed); }
ALWI void dropout_tile(uint32_t idst, uint32_t probability, uint32_t scale_factor) {
  zyx_emu_c::su(ZYX_SU_DROPOUT, idst, probability, scale_factor);
}
ALWI void rand_tile_init(uint32_t seed = 0) { zyx_emu_c::su(ZYX_SU_RAND, 0xffffffffu, seed); }
// tt-llk's ckernel::init_prng_seed, which kernels call directly: seeds the
// same generator as rand_tile_init (the one stochastic_round_tile,
// rand_tile and dropout_tile draw from).
ALWI void init_prng_seed(uint32_t seed) { zyx_emu_c::su(ZYX_SU_RAND, 0xffffffffu, seed); }
ALWI void rand_tile(uint32_t idst, uint32_t from, uint32_t scale) { zyx_emu_c::su(ZYX_SU_RAND, idst, from, scale); }

enum class RoundingMode : uint8_t { None = 0, Trunc = 1, Floor = 2 };
// rdiv_tile: value / x, then truncated or floored per the rounding mode.
// vector_mode (which faces the SFPU visits) is taken as RC, all faces.
template <RoundingMode rounding_mode = RoundingMode::None>
ALWI void rdiv_tile(uint32_t idst, uint32_t value, int vector_mode) {
  (void)vector_mode;
  zyx_emu_c::su(ZYX_SU_RDIV, idst, value, static_cast<uint32_t>(rounding_mode));
}
template <auto... P>
ALWI void rpow_tile(uint32_t idst, uint32_t base, int vector_mode) {
  (void)vector_mode;
  zyx_emu_c::su(ZYX_SU_RPOW, idst, base);
}
// The divisor and its reciprocal of the inits are the ones the tile calls pass.
ALWI void fmod_tile_init(uint32_t, uint32_t) {}
ALWI void remainder_tile_init(uint32_t, uint32_t) {}

// Rounding (rounding.h): one init for the family.
ALWI void rounding_op_tile_init() {}
template <auto... P>
ALWI void floor_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_FLOOR, idst); }
template <auto... P>
ALWI void ceil_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_CEIL, idst); }
template <auto... P>
ALWI void trunc_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_TRUNC, idst); }
template <auto... P>
ALWI void frac_tile(uint32_t idst) { zyx_emu_c::su(ZYX_SU_FRAC, idst); }
template <auto... P>
ALWI void round_tile(uint32_t idst, int32_t decimals) { zyx_emu_c::su(ZYX_SU_ROUND, idst, static_cast<uint32_t>(decimals)); }

// Fill and scalar ops (binop_with_scalar.h); params are f32 bits.
template <auto... P>
ALWI void fill_tile_init() {}
ALWI void fill_tile(uint32_t idst, float value) { zyx_emu_c::su(ZYX_SU_FILL, idst, zyx_emu_c::fbits(value)); }
ALWI void fill_tile_bitcast(uint32_t idst, uint32_t bits) { zyx_emu_c::su(ZYX_SU_FILL, idst, bits); }
// tt-metal's form names the DST format as a template arg
// (fill_tile_int<DataFormat::Int32>); the earlier form has none. The value
// is written as 32-bit integer bits either way.
template <auto... P>
ALWI void fill_tile_int(uint32_t idst, uint32_t value) {
  zyx_emu_c::su(ZYX_SU_FILL_INT, idst, value);
}
ALWI void binop_with_scalar_tile_init() {}
ALWI void add_unary_tile(uint32_t idst, uint32_t param) { zyx_emu_c::su(ZYX_SU_ADD_SCALAR, idst, param); }
ALWI void sub_unary_tile(uint32_t idst, uint32_t param) { zyx_emu_c::su(ZYX_SU_SUB_SCALAR, idst, param); }
ALWI void mul_unary_tile(uint32_t idst, uint32_t param) { zyx_emu_c::su(ZYX_SU_MUL_SCALAR, idst, param); }
ALWI void div_unary_tile(uint32_t idst, uint32_t param) { zyx_emu_c::su(ZYX_SU_DIV_SCALAR, idst, param); }
ALWI void rsub_unary_tile(uint32_t idst, uint32_t param) { zyx_emu_c::su(ZYX_SU_RSUB_SCALAR, idst, param); }

// Typecast between tt-metal DataFormat values.
template <auto IN_DTYPE = 0, auto OUT_DTYPE = 0>
ALWI void typecast_tile_init() {}
template <auto IN_DTYPE, auto OUT_DTYPE>
ALWI void typecast_tile(uint32_t idst) {
  ZYX_API.typecast(idst, static_cast<uint32_t>(IN_DTYPE), static_cast<uint32_t>(OUT_DTYPE));
}

// ---- binary SFPU ops on DST tiles: out = op(in0, in1) ----
#define ZYX_EMU_SFPUB(name, OP)                                                                               \
  ZYX_EMU_SFPU_OP(name, (uint32_t idst0, uint32_t idst1, uint32_t odst), zyx_emu_c::sb(ZYX_SB_##OP, idst0, idst1, odst), \
                  auto... P)
ZYX_EMU_SFPUB(add_binary, ADD)
ZYX_EMU_SFPUB(sub_binary, SUB)
ZYX_EMU_SFPUB(mul_binary, MUL)
ZYX_EMU_SFPUB(div_binary, DIV)
ZYX_EMU_SFPUB(rsub_binary, RSUB)
ZYX_EMU_SFPUB(power_binary, POW)
ZYX_EMU_SFPUB(eq_binary, EQ)
ZYX_EMU_SFPUB(ne_binary, NE)
ZYX_EMU_SFPUB(lt_binary, LT)
ZYX_EMU_SFPUB(gt_binary, GT)
ZYX_EMU_SFPUB(le_binary, LE)
ZYX_EMU_SFPUB(ge_binary, GE)
ZYX_EMU_SFPUB(add_int32, ADD_INT32)
ZYX_EMU_SFPUB(sub_int32, SUB_INT32)
ZYX_EMU_SFPUB(rsub_int32, RSUB_INT32)
ZYX_EMU_SFPUB(mul_int32, MUL_INT32)
ZYX_EMU_SFPUB(mul_uint16, MUL_UINT16)
ZYX_EMU_SFPUB(lt_uint16, LT_UINT16)
ZYX_EMU_SFPUB(gt_uint16, GT_UINT16)
ZYX_EMU_SFPUB(div_int32, DIV_INT32)
ZYX_EMU_SFPUB(div_int32_floor, DIV_INT32_FLOOR)
ZYX_EMU_SFPUB(div_int32_trunc, DIV_INT32_TRUNC)
ZYX_EMU_SFPUB(remainder_int32, REMAINDER_INT32)
ZYX_EMU_SFPUB(fmod_int32, FMOD_INT32)
ZYX_EMU_SFPUB(binary_max, MAX)
ZYX_EMU_SFPUB(binary_min, MIN)
ZYX_EMU_SFPUB(binary_max_int32, MAX_INT32)
ZYX_EMU_SFPUB(binary_min_int32, MIN_INT32)
ZYX_EMU_SFPUB(binary_max_uint32, MAX_UINT32)
ZYX_EMU_SFPUB(binary_min_uint32, MIN_UINT32)
ZYX_EMU_SFPUB(binary_left_shift, SHL)
ZYX_EMU_SFPUB(binary_right_shift, SHR)
ZYX_EMU_SFPUB(binary_logical_right_shift, SHR_LOGICAL)
ZYX_EMU_SFPUB(lt_int32, LT_INT32)
ZYX_EMU_SFPUB(gt_int32, GT_INT32)
ZYX_EMU_SFPUB(ge_int32, GE_INT32)
ZYX_EMU_SFPUB(le_int32, LE_INT32)
ZYX_EMU_SFPUB(eq_int32, EQ_INT32)
ZYX_EMU_SFPUB(ne_int32, NE_INT32)
ZYX_EMU_SFPUB(atan2_binary, ATAN2)
ZYX_EMU_SFPUB(xlogy_binary, XLOGY)
// The SFPU's bitonic top-k stages (compute_kernel_api.h): values in DST
// idst and idst + 1, their indices in idst + 2 and idst + 3, each column's
// 64 values sorted by the card's instruction sequence (the runtime's
// sfpu_sort.cpp).
ALWI void topk_tile_init() { ZYX_API.compute_special(ZYX_CS_TOPK_INIT, 0, 0, 0, 0); }
template <bool stable_sort = false>
ALWI void topk_local_sort(uint32_t idst, int idir, int i_end_phase, int i_start_phase = 0, int i_end_step = 0,
                          int i_start_step = 0) {
  // a phase or step outside 0..0xffff comes out of range in the runtime's check
  auto two = [](int lo, int hi) { return (uint32_t(lo) & 0xffffu) | (uint32_t(hi) & 0xffffu) << 16; };
  ZYX_API.compute_special(ZYX_CS_TOPK_LOCAL_SORT, idst, (uint32_t(idir) & 1u) | (stable_sort ? 2u : 0u),
                          two(i_end_phase, i_start_phase), two(i_end_step, i_start_step));
}
template <bool idir = false, bool stable_sort = false>
ALWI void topk_merge(uint32_t idst, int m_iter, int k) {
  ZYX_API.compute_special(ZYX_CS_TOPK_MERGE, idst, (idir ? 1u : 0u) | (stable_sort ? 2u : 0u), uint32_t(m_iter),
                          uint32_t(k));
}
template <bool stable_sort = false>
ALWI void topk_rebuild(uint32_t idst, bool idir, int m_iter, int k, int logk, int skip_second) {
  ZYX_API.compute_special(ZYX_CS_TOPK_REBUILD, idst,
                          (idir ? 1u : 0u) | (stable_sort ? 2u : 0u) | ((skip_second & 1) ? 4u : 0u),
                          (uint32_t(m_iter) & 0xffffu) | (uint32_t(logk) & 0xffffu) << 16, uint32_t(k));
}
// The SFPU max pool with indices (compute_kernel_api.h): each column's max
// over the first num_rows rows of DST[idst] into its first row, the index
// beside it (DST[idst_idx]) moving with it, by the card's instruction
// sequence (sfpu_sort.cpp); num_rows over 9 takes ROW_MAJOR data.
template <ckernel::DataLayout layout = ckernel::DataLayout::TILE>
ALWI void max_reduce_with_indices_init() {
  ZYX_API.compute_special(ZYX_CS_MAX_POOL_INIT, layout == ckernel::DataLayout::ROW_MAJOR ? 1u : 0u, 0, 0, 0);
}
template <int num_rows = 9, ckernel::DataLayout layout = ckernel::DataLayout::TILE, bool accumulate = false,
          int ITERATIONS = 8>
ALWI void max_reduce_with_indices(uint32_t idst, uint32_t idst_idx, uint32_t chunk = 0) {
  static_assert(num_rows <= 32, "num_rows must be <= 32");
  static_assert(num_rows <= 9 || layout == ckernel::DataLayout::ROW_MAJOR,
                "generic max pool with indices is only implemented for ROW_MAJOR layout");
  static_assert(!(num_rows <= 9 && layout == ckernel::DataLayout::TILE && accumulate),
                "accumulate mode is not supported for TILE layout");
  ZYX_API.compute_special(ZYX_CS_MAX_POOL, idst, idst_idx,
                          uint32_t(num_rows) | (layout == ckernel::DataLayout::ROW_MAJOR ? 1u << 8 : 0u) |
                              (accumulate ? 1u << 9 : 0u),
                          chunk);
}
// cumsum.h: each column's running sum, top to bottom; first = false
// continues the column from the previous tile (tiles in NWH order).
ALWI void cumsum_tile_init() {}
ALWI void cumsum_tile(uint32_t idst, bool first = true) {
  ZYX_API.compute_special(ZYX_CS_CUMSUM, idst, first ? 1 : 0, 0, 0);
}
ZYX_EMU_SFPUB(lgamma_stirling_float, LGAMMA_STIRLING)
ZYX_EMU_SFPUB(gcd, GCD)  // int32, of the magnitudes
ZYX_EMU_SFPUB(lcm, LCM)
#undef ZYX_EMU_SFPUB
// sfpu_binary_bcast.h: DST[data] op= column 0 (COL) or row 0 (ROW) of
// DST[bcast], spread over the tile; FP32 DST data. One init per dimension
// covers add/sub/mul.
ALWI void sfpu_bcast_col_init() {}
ALWI void sfpu_bcast_row_init() {}
#define ZYX_EMU_SFPU_BCAST(name, OP, dim, DIM)                                                   \
  ALWI void sfpu_##name##_bcast_##dim##_init() {}                                                 \
  ALWI void sfpu_##name##_bcast_##dim(uint32_t dst_data_idx, uint32_t dst_bcast_idx) {             \
    zyx_emu_c::sb(ZYX_SB_##OP, dst_data_idx, dst_bcast_idx, dst_data_idx, ZYX_SB_BCAST_##DIM); \
  }
ZYX_EMU_SFPU_BCAST(add, ADD, col, COL)
ZYX_EMU_SFPU_BCAST(sub, SUB, col, COL)
ZYX_EMU_SFPU_BCAST(mul, MUL, col, COL)
ZYX_EMU_SFPU_BCAST(add, ADD, row, ROW)
ZYX_EMU_SFPU_BCAST(sub, SUB, row, ROW)
ZYX_EMU_SFPU_BCAST(mul, MUL, row, ROW)
#undef ZYX_EMU_SFPU_BCAST
template <BroadcastType Dim>
ALWI void sfpu_bcast_init() {
  static_assert(Dim == BroadcastType::COL || Dim == BroadcastType::ROW, "sfpu_bcast_init: COL or ROW only");
}
template <BroadcastType Dim, EltwiseBinaryType Op>
ALWI void sfpu_bcast(uint32_t dst_data_idx, uint32_t dst_bcast_idx) {
  static_assert(Dim == BroadcastType::COL || Dim == BroadcastType::ROW, "sfpu_bcast: COL or ROW only");
  static_assert(Op == ELWADD || Op == ELWSUB || Op == ELWMUL, "sfpu_bcast: ELWADD, ELWSUB or ELWMUL only");
  constexpr uint32_t op = Op == ELWADD ? ZYX_SB_ADD : Op == ELWSUB ? ZYX_SB_SUB : ZYX_SB_MUL;
  zyx_emu_c::sb(op, dst_data_idx, dst_bcast_idx, dst_data_idx,
                Dim == BroadcastType::COL ? ZYX_SB_BCAST_COL : ZYX_SB_BCAST_ROW);
}
// binary_max/min with a vector mode (taken as RC, all faces).
template <auto... P>
ALWI void binary_max_tile(uint32_t a, uint32_t b, uint32_t o, int vector_mode) {
  (void)vector_mode;
  zyx_emu_c::sb(ZYX_SB_MAX, a, b, o);
}
template <auto... P>
ALWI void binary_min_tile(uint32_t a, uint32_t b, uint32_t o, int vector_mode) {
  (void)vector_mode;
  zyx_emu_c::sb(ZYX_SB_MIN, a, b, o);
}
// Float fmod (sign of x0) and remainder (sign of x1) of two tiles.
ALWI void fmod_binary_tile_init() {}
ALWI void fmod_binary_tile(uint32_t a, uint32_t b, uint32_t o) { zyx_emu_c::sb(ZYX_SB_FMOD, a, b, o); }
ALWI void remainder_binary_tile_init() {}
ALWI void remainder_binary_tile(uint32_t a, uint32_t b, uint32_t o) { zyx_emu_c::sb(ZYX_SB_REMAINDER, a, b, o); }
// logsigmoid_tile(in0, in1, out): out = log(sigmoid(in0)); in1 (exp(-x) on a card) is not read.
ALWI void logsigmoid_tile(uint32_t in0, uint32_t in1, uint32_t out) { zyx_emu_c::sb(ZYX_SB_LOGSIGMOID, in0, in1, out); }
// One init for the bitwise ops and one for the shifts (binary_bitwise_sfpu.h, binary_shift.h).
ALWI void binary_bitwise_tile_init() {}
ALWI void binary_shift_tile_init() {}
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void rsub_int_tile_init() {}
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void rsub_int_tile(uint32_t a, uint32_t b, uint32_t o) { zyx_emu_c::sb(ZYX_SB_RSUB_INT32, a, b, o); }
template <auto... P>
ALWI void div_no_nan_binary_tile(uint32_t a, uint32_t b, uint32_t o) { zyx_emu_c::sb(ZYX_SB_DIV_NO_NAN, a, b, o); }
ALWI void add_int32_tile(uint32_t a, uint32_t b) { zyx_emu_c::sb(ZYX_SB_ADD_INT32, a, b, a); }
// Integer ops templated on the data format (add_int_sfpu.h and friends).
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void add_int_tile_init() {}
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void add_int_tile(uint32_t a, uint32_t b, uint32_t o) { zyx_emu_c::sb(ZYX_SB_ADD_INT32, a, b, o); }
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void sub_int_tile_init() {}
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void sub_int_tile(uint32_t a, uint32_t b, uint32_t o) { zyx_emu_c::sb(ZYX_SB_SUB_INT32, a, b, o); }
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void mul_int_tile_init() {}
template <auto FMT = DataFormat::Int32, auto... P>
ALWI void mul_int_tile(uint32_t a, uint32_t b, uint32_t o) {
  zyx_emu_c::sb(static_cast<DataFormat>(FMT) == DataFormat::UInt16 ? ZYX_SB_MUL_UINT16 : ZYX_SB_MUL_INT32, a, b, o);
}
#define ZYX_EMU_SFPU_BITWISE(name, OP) \
  ZYX_EMU_SFPU_OP(name, (uint32_t a, uint32_t b, uint32_t o), zyx_emu_c::sb(ZYX_SB_##OP, a, b, o), auto FMT = DataFormat::Int32)
ZYX_EMU_SFPU_BITWISE(bitwise_and_binary, AND)
ZYX_EMU_SFPU_BITWISE(bitwise_or_binary, OR)
ZYX_EMU_SFPU_BITWISE(bitwise_xor_binary, XOR)
#undef ZYX_EMU_SFPU_BITWISE

// ---- ternary ops: out = op(a, b, c) ----
// The data format template of tt-metal's forms only names the lanes' width;
// the math follows each DST tile's kind.
ALWI void addcmul_tile_init() {}
template <auto... P>
ALWI void addcmul_tile(uint32_t a, uint32_t b, uint32_t c, uint32_t o, uint32_t value) {
  ZYX_API.sfpu_ternary(ZYX_ST_ADDCMUL, a, b, c, o, value);
}
ALWI void addcdiv_tile_init() {}
template <auto... P>
ALWI void addcdiv_tile(uint32_t a, uint32_t b, uint32_t c, uint32_t o, uint32_t value) {
  ZYX_API.sfpu_ternary(ZYX_ST_ADDCDIV, a, b, c, o, value);
}
ALWI void lerp_tile_init() {}
template <auto... P>
ALWI void lerp_tile(uint32_t a, uint32_t b, uint32_t c, uint32_t o) { ZYX_API.sfpu_ternary(ZYX_ST_LERP, a, b, c, o, 0); }
// lgamma_adjusted_tile(stirling, log|sin(pi x)|, x, out): the reflection
// formula for x < 0.5, out = log(pi) - log|sin(pi x)| - lgamma(1 - x); else
// out = lgamma(x) as the Stirling tile holds it.
ALWI void lgamma_adjusted_tile_init() {}
ALWI void lgamma_adjusted_tile(uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
  ZYX_API.sfpu_ternary(ZYX_ST_LGAMMA_ADJUSTED, i0, i1, i2, i3, 0);
}

// ---- SFPU reductions over a 32x32 DST tile (compute_kernel_api.h) ----
// sfpu_reduce: each column reduced over the tile's 32 rows into row 0 (SUM,
// AVG = SUM / 32, MAX, MIN); integer formats on the lanes as integers.
template <PoolType pool_type, DataFormat format>
ALWI void sfpu_reduce_init() {}
template <PoolType pool_type, DataFormat format, ReduceDim reduce_dim = ReduceDim::REDUCE_COL>
ALWI void sfpu_reduce(uint32_t idst) {
  static_assert(reduce_dim == ReduceDim::REDUCE_COL, "Only column reduction (REDUCE_COL) is currently supported");
  ZYX_API.compute_special(ZYX_CS_SFPU_REDUCE, idst, static_cast<uint32_t>(pool_type), static_cast<uint32_t>(format), 0);
}
// sfpu_add_top_row: row 0 of DST[out] = row 0 of DST[a] + row 0 of DST[b].
ALWI void sfpu_add_top_row_init() {}
template <DataFormat format>
ALWI void sfpu_add_top_row(uint32_t a, uint32_t b, uint32_t out) {
  ZYX_API.compute_special(ZYX_CS_ADD_TOP_ROW, a, b, out, static_cast<uint32_t>(format));
}

// ---- debug halt: stops the other TRISCs for a debugger to read registers.
// One thread runs all three here and no debugger attaches, so halting and
// resuming leave everything as it was.
ALWI void dbg_halt() {}
ALWI void dbg_unhalt() {}
// A DST row through the debug array: 16 16-bit cells as the card stores them
// (the runtime's api_dst_row says how).
ALWI void dbg_read_dest_acc_row(int row_addr, uint32_t* rd_data) { ZYX_API.dst_row(uint32_t(row_addr), rd_data); }

// ---- the special-value flags: NaN and infinities seen at the FPU's and
// the SFPU's output since the last clear (the layout of the card's
// RISCV_DEBUG_REG_FPU_STICKY_BITS: FPU bits 4-6, SFPU bits 0-3; the
// emulator raises the FPU's infinity/overflow bit 5 and the SFPU's NaN bit
// 3 and infinity bit 2). The math build reads them; the others get 0.
ALWI uint32_t get_compute_special_value_flags() {
  uint32_t flags = 0;
  MATH((flags = ZYX_API.special_flags(ZYX_SPECIAL_READ, 0)));
  return flags;
}
// tt-metal's field extractions, as written: the FPU's masks the register
// with 0x7 before shifting it right by 4, so it returns 0 whatever the flags.
ALWI uint32_t get_compute_special_value_flags_fpu(uint32_t special_value_flags_reg) {
  uint32_t field = 0;
  MATH((field = (special_value_flags_reg & 0x7u) >> 4));
  return field;
}
ALWI uint32_t get_compute_special_value_flags_sfpu(uint32_t special_value_flags_reg) {
  uint32_t field = 0;
  MATH((field = special_value_flags_reg & 0xfu));
  return field;
}
ALWI void clear_compute_special_value_flags() { MATH((ZYX_API.special_flags(ZYX_SPECIAL_CLEAR, 0))); }
ALWI void store_compute_special_value_flags_to_l1(uint32_t l1_addr) {
  MATH((ZYX_API.special_flags(ZYX_SPECIAL_STORE, l1_addr)));
}
template <auto... P>
ALWI void where_tile_init() {}
template <auto... P>
ALWI void where_tile(uint32_t cond, uint32_t t, uint32_t f, uint32_t o) {
  ZYX_API.sfpu_ternary(ZYX_ST_WHERE, cond, t, f, o, 0);
}

#undef ZYX_EMU_SFPU_OP

}  // namespace ckernel
