// Kernel-side compute API of zyx-tt's Tensix emulator: the destination
// register file, unpack/pack, FPU binary ops, SFPU unary ops, matmul, reduce,
// transpose and typecast. The unpack, math and pack threads of a real Tensix
// run here as one sequential thread, so the init and sync calls that only
// configure or hand over hardware are accepted and do nothing.
#pragma once

#include "zyx_emu/common.h"

#define MATH(x) x
#define PACK(x) x
#define UNPACK(x) x
#ifndef NAMESPACE
#define NAMESPACE zyx_compute_ns
#endif
#define MAIN zyx_compute_main()

inline constexpr bool DST_ACCUM_MODE = ZYX_EMU_FP32_DEST_ACC != 0;
#ifndef APPROX
#define APPROX (ZYX_EMU_MATH_APPROX != 0)
#endif

enum PoolType { SUM = 0, AVG = 1, MAX = 2 };
enum ReduceDim { REDUCE_ROW = 0, REDUCE_COL = 1, REDUCE_SCALAR = 2 };
enum EltwiseBinaryType { ELWMUL = 0, ELWDIV = 1, ELWADD = 2, ELWSUB = 3, ELWLESS = 4 };
enum class BroadcastType { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };
enum class EltwiseBinaryReuseDestType { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };
enum class VectorMode { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };

namespace tt {
enum class DstMode { Full = 0, Half = 1, Tile = 2, NUM_DST_MODES = 3 };
}

namespace ckernel {

namespace zyx_emu_c {
FORCE_INLINE uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
}  // namespace zyx_emu_c

// ---- DST ownership ----
ALWI void tile_regs_acquire() { ZYX_API.dst_acquire(); }
ALWI void tile_regs_wait() {}
ALWI void tile_regs_commit() {}
ALWI void tile_regs_release() { ZYX_API.dst_release(); }
ALWI void acquire_dst(tt::DstMode = tt::DstMode::Half) { ZYX_API.dst_acquire(); }
ALWI void release_dst(tt::DstMode = tt::DstMode::Half) { ZYX_API.dst_release(); }

// ---- hardware setup (no state to configure in the emulator) ----
ALWI void compute_kernel_hw_startup(uint32_t, uint32_t, uint32_t = 16) {}
ALWI void binary_op_init_common(uint32_t, uint32_t, uint32_t = 16) {}
ALWI void unary_op_init_common(uint32_t, uint32_t = 16) {}
ALWI void init_sfpu(uint32_t, uint32_t = 16) {}
template <auto... P>
ALWI void reconfig_data_format(uint32_t, uint32_t) {}
template <auto... P>
ALWI void reconfig_data_format(uint32_t, uint32_t, uint32_t, uint32_t) {}
template <auto... P>
ALWI void reconfig_data_format_srca(uint32_t) {}
template <auto... P>
ALWI void reconfig_data_format_srca(uint32_t, uint32_t) {}
template <auto... P>
ALWI void reconfig_data_format_srcb(uint32_t) {}
template <auto... P>
ALWI void reconfig_data_format_srcb(uint32_t, uint32_t) {}
template <auto... P>
ALWI void unpack_reconfig_data_format(uint32_t, uint32_t) {}
template <auto... P>
ALWI void unpack_reconfig_data_format(uint32_t, uint32_t, uint32_t, uint32_t) {}
template <auto... P>
ALWI void unpack_reconfig_data_format_srca(uint32_t) {}
template <auto... P>
ALWI void unpack_reconfig_data_format_srca(uint32_t, uint32_t) {}
template <auto... P>
ALWI void unpack_reconfig_data_format_srcb(uint32_t) {}
template <auto... P>
ALWI void unpack_reconfig_data_format_srcb(uint32_t, uint32_t) {}
template <auto... P>
ALWI void pack_reconfig_data_format(uint32_t) {}
template <auto... P>
ALWI void pack_reconfig_data_format(uint32_t, uint32_t) {}
ALWI void pack_relu_config(uint32_t) {}

// ---- copy and pack ----
ALWI void copy_tile_init() {}
ALWI void copy_tile_init(uint32_t) {}
ALWI void copy_init(uint32_t = 0) {}
ALWI void copy_tile_to_dst_init_short(uint32_t = 0, uint32_t = 0) {}
ALWI void copy_tile_to_dst_init_short_with_dt(uint32_t, uint32_t, uint32_t = 0) {}
ALWI void copy_tile(uint32_t icb, uint32_t itile, uint32_t idst) { ZYX_API.copy_tile(icb, itile, idst); }
ALWI void copy_block_matmul_partials(uint32_t icb, uint32_t start_itile, uint32_t start_idst, uint32_t ntiles) {
  for (uint32_t i = 0; i < ntiles; i++) ZYX_API.copy_tile(icb, start_itile + i, start_idst + i);
}
template <bool out_of_order_output = false>
ALWI void pack_tile(uint32_t ifrom_dst, uint32_t icb, uint32_t output_tile_index = 0) {
  ZYX_API.pack_tile(ifrom_dst, icb, output_tile_index, out_of_order_output ? 1 : 0);
}
ALWI void pack_tile_block(uint32_t ifrom_dst, uint32_t icb, uint32_t ntiles) {
  for (uint32_t i = 0; i < ntiles; i++) ZYX_API.pack_tile(ifrom_dst + i, icb, 0, 0);
}
ALWI void matmul_pack_tile(uint32_t ifrom_dst, uint32_t icb, uint32_t ntiles) { pack_tile_block(ifrom_dst, icb, ntiles); }

// ---- FPU binary ops ----
template <auto... P>
ALWI void binary_op_specific_init() {}
ALWI void add_tiles_init(uint32_t = 0, uint32_t = 1, bool = false) {}
ALWI void sub_tiles_init(uint32_t = 0, uint32_t = 1, bool = false) {}
ALWI void mul_tiles_init(uint32_t = 0, uint32_t = 1) {}
ALWI void add_tiles_init_nof() {}
ALWI void sub_tiles_init_nof() {}
ALWI void mul_tiles_init_f() {}
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
  ZYX_API.binary(ZYX_BIN_ADD, icb0, icb1, itile0, itile1, idst);
}
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
  ZYX_API.binary(ZYX_BIN_SUB, icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
  ZYX_API.binary(ZYX_BIN_MUL, icb0, icb1, itile0, itile1, idst);
}

// ---- SFPU binary ops on DST tiles ----
ALWI void add_binary_tile_init() {}
ALWI void sub_binary_tile_init() {}
ALWI void mul_binary_tile_init() {}
ALWI void add_binary_tile(uint32_t a, uint32_t b) { ZYX_API.binary_dst(ZYX_BIN_ADD, a, b, a); }
ALWI void add_binary_tile(uint32_t a, uint32_t b, uint32_t out) { ZYX_API.binary_dst(ZYX_BIN_ADD, a, b, out); }
ALWI void sub_binary_tile(uint32_t a, uint32_t b) { ZYX_API.binary_dst(ZYX_BIN_SUB, a, b, a); }
ALWI void sub_binary_tile(uint32_t a, uint32_t b, uint32_t out) { ZYX_API.binary_dst(ZYX_BIN_SUB, a, b, out); }
ALWI void mul_binary_tile(uint32_t a, uint32_t b) { ZYX_API.binary_dst(ZYX_BIN_MUL, a, b, a); }
ALWI void mul_binary_tile(uint32_t a, uint32_t b, uint32_t out) { ZYX_API.binary_dst(ZYX_BIN_MUL, a, b, out); }
ALWI void add_int_tile_init() {}
template <auto... P>
ALWI void add_int_tile(uint32_t a, uint32_t b, uint32_t out) { ZYX_API.binary_dst(ZYX_BIN_ADD, a, b, out); }
ALWI void add_int32_tile_init() {}
ALWI void add_int32_tile(uint32_t a, uint32_t b) { ZYX_API.binary_dst(ZYX_BIN_ADD, a, b, a); }
ALWI void add_int32_tile(uint32_t a, uint32_t b, uint32_t out) { ZYX_API.binary_dst(ZYX_BIN_ADD, a, b, out); }

// ---- SFPU unary ops ----
#define ZYX_EMU_UNARY(name, op)                                      \
  template <auto... P>                                               \
  ALWI void name##_tile_init(uint32_t = 0) {}                        \
  template <auto... P>                                               \
  ALWI void name##_tile(uint32_t idst, int = 0, int = 0, int = 0) {  \
    ZYX_API.unary(op, idst, 0);                                      \
  }
ZYX_EMU_UNARY(exp, ZYX_UN_EXP)
ZYX_EMU_UNARY(log, ZYX_UN_LOG)
ZYX_EMU_UNARY(sqrt, ZYX_UN_SQRT)
ZYX_EMU_UNARY(recip, ZYX_UN_RECIP)
ZYX_EMU_UNARY(relu, ZYX_UN_RELU)
ZYX_EMU_UNARY(sigmoid, ZYX_UN_SIGMOID)
ZYX_EMU_UNARY(gelu, ZYX_UN_GELU)
ZYX_EMU_UNARY(abs, ZYX_UN_ABS)
ZYX_EMU_UNARY(negative, ZYX_UN_NEG)
ZYX_EMU_UNARY(square, ZYX_UN_SQUARE)
ZYX_EMU_UNARY(rsqrt, ZYX_UN_RSQRT)
ZYX_EMU_UNARY(tanh, ZYX_UN_TANH)
ZYX_EMU_UNARY(sin, ZYX_UN_SIN)
ZYX_EMU_UNARY(cos, ZYX_UN_COS)
ZYX_EMU_UNARY(silu, ZYX_UN_SILU)
ZYX_EMU_UNARY(exp2, ZYX_UN_EXP2)
ZYX_EMU_UNARY(sign, ZYX_UN_SIGN)
#undef ZYX_EMU_UNARY
template <auto... P>
ALWI void neg_tile_init() {}
template <auto... P>
ALWI void neg_tile(uint32_t idst) { ZYX_API.unary(ZYX_UN_NEG, idst, 0); }
ALWI void relu_max_tile_init() {}
ALWI void relu_max_tile(uint32_t idst, uint32_t param0) { ZYX_API.unary(ZYX_UN_RELU_MAX, idst, param0); }
ALWI void relu_min_tile_init() {}
ALWI void relu_min_tile(uint32_t idst, uint32_t param0) { ZYX_API.unary(ZYX_UN_RELU_MIN, idst, param0); }
ALWI void fill_tile_init() {}
ALWI void fill_tile(uint32_t idst, float value) { ZYX_API.unary(ZYX_UN_FILL, idst, zyx_emu_c::fbits(value)); }
ALWI void fill_tile_bitcast(uint32_t idst, uint32_t bits) { ZYX_API.unary(ZYX_UN_FILL, idst, bits); }
ALWI void binop_with_scalar_tile_init() {}
ALWI void add_unary_tile(uint32_t idst, uint32_t param_bits) { ZYX_API.unary(ZYX_UN_ADD_SCALAR, idst, param_bits); }
ALWI void mul_unary_tile(uint32_t idst, uint32_t param_bits) { ZYX_API.unary(ZYX_UN_MUL_SCALAR, idst, param_bits); }
ALWI void sub_unary_tile(uint32_t idst, uint32_t param_bits) {
  float f;
  std::memcpy(&f, &param_bits, 4);
  ZYX_API.unary(ZYX_UN_ADD_SCALAR, idst, zyx_emu_c::fbits(-f));
}

// ---- matmul ----
ALWI void mm_init(uint32_t = 0, uint32_t = 1, uint32_t = 16, uint32_t = 0) {}
ALWI void matmul_init(uint32_t = 0, uint32_t = 1, uint32_t = 0) {}
ALWI void mm_init_short(uint32_t = 0, uint32_t = 1, uint32_t = 0) {}
ALWI void mm_init_short_with_dt(uint32_t, uint32_t, uint32_t, uint32_t = 0) {}
ALWI void mm_block_init(uint32_t = 0, uint32_t = 1, uint32_t = 16, uint32_t = 0, uint32_t = 1, uint32_t = 1,
                        uint32_t = 1) {}
ALWI void mm_block_init_short(uint32_t = 0, uint32_t = 1, uint32_t = 0, uint32_t = 1, uint32_t = 1, uint32_t = 1) {}
ALWI void matmul_tiles(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                       uint32_t transpose = 0) {
  ZYX_API.matmul(in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose);
}
ALWI void matmul_tile(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                      uint32_t transpose = 0) {
  ZYX_API.matmul(in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose);
}
// A block of ct_dim x rt_dim output tiles from kt_dim-wide strips.
ALWI void matmul_block(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                       uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
  for (uint32_t r = 0; r < rt_dim; r++)
    for (uint32_t c = 0; c < ct_dim; c++)
      ZYX_API.matmul(in0_cb, in1_cb, in0_tile + r * kt_dim, in1_tile + c, idst + r * ct_dim + c, transpose);
}

// ---- reduce ----
#ifdef REDUCE_OP
#define ZYX_EMU_REDUCE_OP_DEFAULT = REDUCE_OP
#else
#define ZYX_EMU_REDUCE_OP_DEFAULT = PoolType::SUM
#endif
#ifdef REDUCE_DIM
#define ZYX_EMU_REDUCE_DIM_DEFAULT = REDUCE_DIM
#else
#define ZYX_EMU_REDUCE_DIM_DEFAULT = ReduceDim::REDUCE_SCALAR
#endif
template <PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT, auto... P>
ALWI void reduce_init(uint32_t, uint32_t, uint32_t = 16) {}
template <PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT, auto... P>
ALWI void reduce_init_short(uint32_t, uint32_t, uint32_t = 16) {}
template <auto... P>
ALWI void reduce_uninit() {}
template <PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT, auto... P>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler, uint32_t idst) {
  ZYX_API.reduce(static_cast<uint32_t>(reduce_type), static_cast<uint32_t>(reduce_dim), icb, icb_scaler, itile,
                 itile_scaler, idst);
}

// ---- transpose ----
ALWI void transpose_wh_init(uint32_t, uint32_t = 16) {}
ALWI void transpose_wh_init_short(uint32_t) {}
ALWI void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) { ZYX_API.transpose(icb, itile, idst); }

// ---- typecast (formats as tt-metal DataFormat values) ----
template <auto... P>
ALWI void typecast_tile_init() {}
template <auto IN_DTYPE, auto OUT_DTYPE>
ALWI void typecast_tile(uint32_t idst) {
  ZYX_API.typecast(idst, static_cast<uint32_t>(IN_DTYPE), static_cast<uint32_t>(OUT_DTYPE));
}

}  // namespace ckernel
