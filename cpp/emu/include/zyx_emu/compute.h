// Kernel-side compute API of zyx-tt's Tensix emulator: the destination
// register file, unpack/pack, FPU binary ops, SFPU unary ops, matmul, reduce,
// transpose and typecast. The kernel is built once (the unpack, math and pack
// threads of a Tensix as one sequential thread) or three times, once per
// TRISC (ZYX_EMU_TRISC; docs/emulator.md, "Compute model"); the runtime
// gives each call its part in each build. The init calls that only
// configure hardware are accepted and do nothing.
#pragma once

#include <array>
#include <cstddef>

#include "zyx_emu/common.h"
#include "zyx_emu/ckernel_defs.h"
#include "zyx_emu/llk_defs.h"
// tt-metal compute kernels see mulsi3 and the const-divisor forms without
// including internal/mod_div_lib.h (its risc_common.h brings them).
#include "zyx_emu/mod_div.h"

// The single build runs unpack, math and pack in one: every processor's
// code is active. A TRISC build (ZYX_EMU_TRISC 1-3, with tt-metal's
// TRISC_UNPACK, TRISC_MATH or TRISC_PACK) keeps only its own.
#if !defined(ZYX_EMU_TRISC) || ZYX_EMU_TRISC == 2
#define MATH(x) x
#else
#define MATH(x)
#endif
#if !defined(ZYX_EMU_TRISC) || ZYX_EMU_TRISC == 3
#define PACK(x) x
#else
#define PACK(x)
#endif
#if !defined(ZYX_EMU_TRISC) || ZYX_EMU_TRISC == 1
#define UNPACK(x) x
#else
#define UNPACK(x)
#endif
#ifndef NAMESPACE
#define NAMESPACE zyx_compute_ns
#endif
#define MAIN zyx_compute_main()

inline constexpr bool DST_ACCUM_MODE = ZYX_EMU_FP32_DEST_ACC != 0;
// The DST sync mode tt-metal's build defines: half, its default. The
// emulator's DST is not split (docs/emulator.md), so either mode fits.
#ifndef DST_SYNC_MODE
#define DST_SYNC_MODE DstSync::SyncHalf
#endif
constexpr bool get_fp32_dest_acc_enabled() { return DST_ACCUM_MODE; }
// The same as a define: tt-metal's data-movement kernels get it from their
// program factory, and ttnn's kernel_lib reads it where no TRISC is named
// (the emulator runs one thread for all three, so names none).
#ifndef ENABLE_FP32_DEST_ACC
#define ENABLE_FP32_DEST_ACC ZYX_EMU_FP32_DEST_ACC
#endif

#ifndef APPROX
#define APPROX (ZYX_EMU_MATH_APPROX != 0)
#endif


namespace tt {
enum class DstMode { Full = 0, Half = 1, Tile = 2, NUM_DST_MODES = 3 };
}

namespace ckernel {

// The FPU's binary ops, the broadcast dimensions and the DST-reuse modes,
// in ckernel and (the first two) unscoped, as tt-llk declares them: kernels
// name ckernel::BroadcastType::COL, BroadcastType::COL or COL.
enum EltwiseBinaryType { ELWMUL = 0, ELWDIV = 1, ELWADD = 2, ELWSUB = 3, ELWLESS = 4 };
enum BroadcastType { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };
enum class EltwiseBinaryReuseDestType { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };

// Which faces an SFPU call covers. Unscoped and in ckernel, as tt-llk
// declares it: kernels name VectorMode::RC or RC, pass either where an int
// is taken (`(int)VectorMode::C`) and compare an int with it.
enum VectorMode { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };

enum class DstRoundingMode { Default = 0, NearestEven = 1 };
enum class DataLayout { TILE = 0, ROW_MAJOR = 1 };
enum class Transpose { None = 0, WH = 1 };
enum class SrcOrder { Default = 0, Reverse = 1 };

namespace zyx_emu_c {
FORCE_INLINE uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
template <auto F>
constexpr uint32_t fmt() {
  return static_cast<uint32_t>(F);
}
// A fidelity by the name the compute config gives ("LoFi", "HiFi2", ...).
constexpr MathFidelity fidelity_named(const char* n) {
  return n[0] == 'L' ? MathFidelity::LoFi
         : n[4] == '2' ? MathFidelity::HiFi2
         : n[4] == '3' ? MathFidelity::HiFi3
                       : MathFidelity::HiFi4;
}
}  // namespace zyx_emu_c

// The kernel's math fidelity (its compute config), as tt-metal's generated
// descriptors give compute kernels: a constant the LLK-layer calls take as a
// template arg. The numerics take the fidelity from the config themselves.
#ifdef ZYX_EMU_MATH_FIDELITY_NAME
inline constexpr MathFidelity MATH_FIDELITY = zyx_emu_c::fidelity_named(ZYX_EMU_MATH_FIDELITY_NAME);
#endif

// ---- DST ownership ----
// Math owns DST from acquire to commit, pack from wait to release; the
// emulator checks the order, and in the TRISC builds hands DST over.
ALWI void tile_regs_acquire() { ZYX_API.compute_config(ZYX_CK_DST_SYNC, 0); }
ALWI void tile_regs_commit() { ZYX_API.compute_config(ZYX_CK_DST_SYNC, 1); }
ALWI void tile_regs_wait() { ZYX_API.compute_config(ZYX_CK_DST_SYNC, 2); }
ALWI void tile_regs_release() { ZYX_API.compute_config(ZYX_CK_DST_SYNC, 3); }
ALWI void acquire_dst(tt::DstMode = tt::DstMode::Half) { ZYX_API.compute_config(ZYX_CK_DST_SYNC, 4); }
ALWI void release_dst(tt::DstMode = tt::DstMode::Half) { ZYX_API.compute_config(ZYX_CK_DST_SYNC, 5); }

// ---- where the kernel runs (common.h) ----
namespace zyx_emu_c {
inline zyx_emu_core_info core_info() {
  zyx_emu_core_info i{};
  ZYX_API.core_info(&i);
  return i;
}
}  // namespace zyx_emu_c
inline uint8_t get_absolute_logical_x() { return static_cast<uint8_t>(zyx_emu_c::core_info().logical_x); }
inline uint8_t get_absolute_logical_y() { return static_cast<uint8_t>(zyx_emu_c::core_info().logical_y); }
inline uint8_t get_relative_logical_x() { return static_cast<uint8_t>(zyx_emu_c::core_info().relative_x); }
inline uint8_t get_relative_logical_y() { return static_cast<uint8_t>(zyx_emu_c::core_info().relative_y); }

// ---- a CB tile at the read pointer (cb_api.h): its L1 byte address, and
// one of its 32-bit words ----
ALWI uint32_t get_tile_address(uint32_t cb_id, uint32_t tile_index) {
  return ZYX_API.cb_read_ptr(cb_id) + tile_index * ZYX_API.cb_page_size(cb_id);
}
ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset) {
  uint32_t v;
  std::memcpy(&v, ZYX_API.l1_range(get_tile_address(cb_id, tile_index) + 4 * element_offset, 4, "read_tile_value"), 4);
  return v;
}

// ---- tile shape of a CB's pages ----
ALWI uint32_t get_tile_r_dim(uint32_t cb) {
  uint32_t r = 32, c = 32, f = 4;
  ZYX_API.tile_shape(cb, &r, &c, &f);
  return r;
}
ALWI uint32_t get_tile_c_dim(uint32_t cb) {
  uint32_t r = 32, c = 32, f = 4;
  ZYX_API.tile_shape(cb, &r, &c, &f);
  return c;
}

// ---- hardware setup: one sequential thread has no unpack/math/pack state to
// configure; the format of every CB is read at each unpack and pack. The
// CBs each call configures are noted for the register dumps (debug_extra.h).
template <SrcOrder = SrcOrder::Default>
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb) { zyx_emu_detail::note_operands(icb0, icb0, ocb); }
template <SrcOrder = SrcOrder::Default>
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
  zyx_emu_detail::note_operands(icb0, icb1, ocb);
}
ALWI void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb = 16) {
  zyx_emu_detail::note_operands(icb0, icb1, ocb);
}
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb = 16) { zyx_emu_detail::note_operands(icb, icb, ocb); }
ALWI void init_sfpu(uint32_t icb, uint32_t ocb = 16) { zyx_emu_detail::note_operands(icb, icb, ocb); }
// DST's width from here on (the compute config's fp32_dest_acc sets it at the
// start): 32-bit values and half the tiles, or 16-bit ones. The compile-time
// DST_ACCUM_MODE stays what the config said, as on the card.
ALWI void enable_fp32_dest_acc() { ZYX_API.compute_config(ZYX_CK_FP32_DEST_ACC, 1); }
ALWI void disable_fp32_dest_acc() { ZYX_API.compute_config(ZYX_CK_FP32_DEST_ACC, 0); }
template <bool to_from_int8 = false>
ALWI void reconfig_data_format(uint32_t a, uint32_t b) { zyx_emu_detail::note_operands(a, b, -1); }
template <bool to_from_int8 = false>
ALWI void reconfig_data_format(uint32_t, uint32_t a, uint32_t, uint32_t b) { zyx_emu_detail::note_operands(a, b, -1); }
template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srca(uint32_t a) { zyx_emu_detail::note_operands(a, -1, -1); }
template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srca(uint32_t, uint32_t a) { zyx_emu_detail::note_operands(a, -1, -1); }
template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srcb(uint32_t b) { zyx_emu_detail::note_operands(-1, b, -1); }
template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srcb(uint32_t, uint32_t b) { zyx_emu_detail::note_operands(-1, b, -1); }
template <auto... P>
ALWI void unpack_reconfig_data_format(uint32_t a, uint32_t b) { zyx_emu_detail::note_operands(a, b, -1); }
template <auto... P>
ALWI void unpack_reconfig_data_format(uint32_t, uint32_t a, uint32_t, uint32_t b) {
  zyx_emu_detail::note_operands(a, b, -1);
}
template <auto... P>
ALWI void unpack_reconfig_data_format_srca(uint32_t a) { zyx_emu_detail::note_operands(a, -1, -1); }
template <auto... P>
ALWI void unpack_reconfig_data_format_srca(uint32_t, uint32_t a) { zyx_emu_detail::note_operands(a, -1, -1); }
template <auto... P>
ALWI void unpack_reconfig_data_format_srcb(uint32_t b) { zyx_emu_detail::note_operands(-1, b, -1); }
template <auto... P>
ALWI void unpack_reconfig_data_format_srcb(uint32_t, uint32_t b) { zyx_emu_detail::note_operands(-1, b, -1); }
template <auto... P>
ALWI void pack_reconfig_data_format(uint32_t o) { zyx_emu_detail::note_operands(-1, -1, o); }
template <auto... P>
ALWI void pack_reconfig_data_format(uint32_t, uint32_t o) { zyx_emu_detail::note_operands(-1, -1, o); }
ALWI void pack_init(uint32_t) {}

// ---- pack ----
// ReLU on pack: tt-metal's packed config, mode in bits 0-3 (0 none, 1 zero,
// 2 min threshold, 3 max threshold), threshold (bf16 bits) in bits 16-31.
ALWI void pack_relu_config(uint32_t config) { ZYX_API.compute_config(ZYX_CK_RELU, config); }
// tt-metal's LLK form of the same, with a ReluConfig (zyx_emu/llk_defs.h) or,
// as older kernels pass it, a ReluType.
ALWI void pack_relu_config(ReluConfig c) { pack_relu_config(c.packed()); }
ALWI void llk_pack_relu_config(ReluConfig c) { pack_relu_config(c); }
ALWI void llk_pack_relu_config(ReluType t) { pack_relu_config(static_cast<uint32_t>(t)); }
ALWI void llk_pack_relu_config(uint32_t packed) { pack_relu_config(packed); }
ALWI void pack_reconfig_l1_acc(uint32_t l1_acc_en) { ZYX_API.compute_config(ZYX_CK_L1_ACC, l1_acc_en); }
ALWI void llk_pack_reconfig_l1_acc(uint32_t l1_acc_en) { pack_reconfig_l1_acc(l1_acc_en); }
template <bool out_of_order_output = false>
ALWI void pack_tile(uint32_t ifrom_dst, uint32_t icb, uint32_t output_tile_index = 0) {
  ZYX_API.pack_tile(ifrom_dst, icb, output_tile_index, out_of_order_output ? 1 : 0);
}
ALWI void pack_tile_block(uint32_t ifrom_dst, uint32_t icb, uint32_t ntiles) {
  for (uint32_t i = 0; i < ntiles; i++) ZYX_API.pack_tile(ifrom_dst + i, icb, 0, 0);
}
ALWI void matmul_pack_tile(uint32_t ifrom_dst, uint32_t icb, uint32_t ntiles) { pack_tile_block(ifrom_dst, icb, ntiles); }
// experimental/pack_block.h (Blackhole on the card; here on both): num_tiles
// (1 to 8) DST tiles from ifrom_dst packed to ocb's next pages in order, as
// that many pack_tile calls. Tiles smaller than 32 x 32 are not emulated.
ALWI void pack_block_contiguous_init(uint32_t) {}
ALWI void pack_block_contiguous(uint32_t ifrom_dst, uint32_t ocb, uint32_t num_tiles) {
  if (num_tiles < 1 || num_tiles > 8) ZYX_API.fail("pack_block_contiguous: num_tiles must be 1 to 8");
  pack_tile_block(ifrom_dst, ocb, num_tiles);
}
ALWI void pack_rows_init(uint32_t num_rows) { ZYX_API.compute_config(ZYX_CK_PACK_ROWS, num_rows); }
ALWI void pack_rows(uint32_t idst, uint32_t ocb, uint32_t output_index = 0) { ZYX_API.pack_rows(idst, ocb, output_index); }
ALWI void pack_rows_uninit() { ZYX_API.compute_config(ZYX_CK_PACK_ROWS, 0); }

// ---- copy ----
ALWI void copy_tile_to_dst_init_short(uint32_t cbid = 0, uint32_t transpose = 0, uint32_t transpose_within_16x16_face = 0) {
  (void)cbid;
  ZYX_API.compute_config(ZYX_CK_COPY_TRANSPOSE, transpose ? 1u : transpose_within_16x16_face ? 2u : 0u);
}
ALWI void copy_tile_init(uint32_t cbid = 0) { copy_tile_to_dst_init_short(cbid, 0, 0); }
ALWI void copy_init(uint32_t cbid = 0) { copy_tile_to_dst_init_short(cbid, 0, 0); }
ALWI void copy_tile_to_dst_init_short_with_dt(uint32_t, uint32_t new_cbid, uint32_t transpose = 0) {
  copy_tile_to_dst_init_short(new_cbid, transpose);
}
ALWI void copy_tile(uint32_t icb, uint32_t itile, uint32_t idst) { ZYX_API.copy_tile(icb, itile, idst); }
// experimental/tile_move_copy_custom.h (Blackhole on the card; here on both):
// copy_tile through SDPA's own unpack and datacopy paths, the same result.
ALWI void copy_tile_custom(uint32_t icb, uint32_t itile, uint32_t idst) { copy_tile(icb, itile, idst); }
ALWI void copy_block_matmul_partials(uint32_t icb, uint32_t start_itile, uint32_t start_idst, uint32_t ntiles) {
  for (uint32_t i = 0; i < ntiles; i++) ZYX_API.copy_tile(icb, start_itile + i, start_idst + i);
}
ALWI void copy_dest_values_init() {}
// The format only tells the hardware how wide the values are; DST keeps each
// tile's kind, so every format copies exactly.
template <DataFormat DATA_FORMAT>
ALWI void copy_dest_values(uint32_t idst_in, uint32_t idst_out) { ZYX_API.copy_dst(idst_in, idst_out); }
ALWI void copy_dest_values(uint32_t idst_in, uint32_t idst_out) { ZYX_API.copy_dst(idst_in, idst_out); }

// ---- FPU binary ops ----
namespace zyx_emu_c {
constexpr uint32_t bin_op(EltwiseBinaryType t) {
  return t == ELWADD ? ZYX_BIN_ADD : t == ELWSUB ? ZYX_BIN_SUB : ZYX_BIN_MUL;
}
}  // namespace zyx_emu_c
template <bool full_init, EltwiseBinaryType type>
ALWI void binary_tiles_init(uint32_t, uint32_t, bool acc_to_dest = false) {
  // acc_to_dest accumulates add and sub into DST; Wormhole and Blackhole
  // ignore it for mul (tt-metal documents it as unused there).
  ZYX_API.compute_config(ZYX_CK_ACC_TO_DEST, (type != ELWMUL && acc_to_dest) ? 1 : 0);
}
ALWI void add_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) {
  binary_tiles_init<true, ELWADD>(icb0, icb1, acc_to_dest);
}
ALWI void sub_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) {
  binary_tiles_init<true, ELWSUB>(icb0, icb1, acc_to_dest);
}
ALWI void mul_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = true) {
  binary_tiles_init<true, ELWMUL>(icb0, icb1, acc_to_dest);
}
ALWI void add_tiles_init(uint32_t icb0 = 0, uint32_t icb1 = 1, bool acc_to_dest = false) { add_init(icb0, icb1, acc_to_dest); }
ALWI void sub_tiles_init(uint32_t icb0 = 0, uint32_t icb1 = 1, bool acc_to_dest = false) { sub_init(icb0, icb1, acc_to_dest); }
ALWI void mul_tiles_init(uint32_t icb0 = 0, uint32_t icb1 = 1) { mul_init(icb0, icb1, true); }
ALWI void mul_tiles_init(uint32_t icb0, uint32_t icb1, uint32_t acc_to_dest) { mul_init(icb0, icb1, acc_to_dest != 0); }
ALWI void add_tiles_init_nof() { add_init(0, 1, false); }
ALWI void sub_tiles_init_nof() { sub_init(0, 1, false); }
ALWI void mul_tiles_init_f() { mul_init(0, 1, true); }
template <auto... P>
ALWI void binary_op_specific_init() { ZYX_API.compute_config(ZYX_CK_ACC_TO_DEST, 0); }
// The 2024 form: the op as a run-time code (0 add, 1 sub, 2 mul, as the
// kernels' ELTWISE_OP_CODE define gives it), full_init choosing the full init
// or the math-only one. Both select the op without acc_to_dest; another code
// selects nothing, as there.
template <bool full_init = false>
ALWI void binary_op_specific_init(int op_code) {
  if constexpr (full_init) {
    if (op_code == 0) add_tiles_init();
    if (op_code == 1) sub_tiles_init();
    if (op_code == 2) mul_tiles_init();
  } else {
    if (op_code == 0) add_tiles_init_nof();
    if (op_code == 1) sub_tiles_init_nof();
    if (op_code == 2) mul_tiles_init_f();
  }
}
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
  ZYX_API.binary_bcast(ZYX_BIN_ADD, ZYX_BC_NONE, icb0, icb1, itile0, itile1, idst, 0);
}
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
  ZYX_API.binary_bcast(ZYX_BIN_SUB, ZYX_BC_NONE, icb0, icb1, itile0, itile1, idst, 0);
}
ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
  ZYX_API.binary_bcast(ZYX_BIN_MUL, ZYX_BC_NONE, icb0, icb1, itile0, itile1, idst, 0);
}
// experimental/mul_reduce_scalar.h (Blackhole on the card; here on both):
// DST[i] = A[i] * B[i] for the first num_tiles tiles of each CB, then the sum
// of all their elements times scaler into element 0 of DST[0] (the rest of
// DST[0] is 0). The card's code sums whatever reduce_type says, and so does
// this. Multiplication ignores acc_to_dest, so the init has nothing to set.
ALWI void mul_reduce_scalar_init(uint32_t, uint32_t) {}
template <PoolType reduce_type = PoolType::SUM>
ALWI void mul_reduce_scalar_tile(uint32_t icb0, uint32_t icb1, uint32_t num_tiles, float scaler = 1.0f) {
  for (uint32_t i = 0; i < num_tiles; i++) mul_tiles(icb0, icb1, i, i, i);
  ZYX_API.compute_special(ZYX_CS_SUM_DST_SCALAR, num_tiles, __builtin_bit_cast(uint32_t, scaler), 0, 0);
}
ALWI void mul_reduce_scalar_uninit() {}
ALWI void add_block(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t d, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) add_tiles(icb0, icb1, t0 + i, t1 + i, d + i);
}
ALWI void sub_block(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t d, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) sub_tiles(icb0, icb1, t0 + i, t1 + i, d + i);
}
ALWI void mul_block(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t d, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) mul_tiles(icb0, icb1, t0 + i, t1 + i, d + i);
}
template <EltwiseBinaryType type = ELWADD, EltwiseBinaryReuseDestType reuse = EltwiseBinaryReuseDestType::NONE>
ALWI void binary_dest_reuse_tiles_init(uint32_t) {
  ZYX_API.compute_config(ZYX_CK_ACC_TO_DEST, 0);
}
template <EltwiseBinaryType type = ELWADD, EltwiseBinaryReuseDestType reuse = EltwiseBinaryReuseDestType::NONE>
ALWI void binary_dest_reuse_tiles(uint32_t in_cb, uint32_t in_tile, uint32_t dst) {
  ZYX_API.binary_reuse(zyx_emu_c::bin_op(type), static_cast<uint32_t>(reuse), in_cb, in_tile, dst);
}
template <EltwiseBinaryReuseDestType reuse>
ALWI void add_reuse_dest_init(uint32_t icb) { binary_dest_reuse_tiles_init<ELWADD, reuse>(icb); }
template <EltwiseBinaryReuseDestType reuse>
ALWI void sub_reuse_dest_init(uint32_t icb) { binary_dest_reuse_tiles_init<ELWSUB, reuse>(icb); }
template <EltwiseBinaryReuseDestType reuse>
ALWI void mul_reuse_dest_init(uint32_t icb) { binary_dest_reuse_tiles_init<ELWMUL, reuse>(icb); }
template <EltwiseBinaryReuseDestType reuse>
ALWI void add_reuse_dest_tiles(uint32_t icb, uint32_t t, uint32_t d) { binary_dest_reuse_tiles<ELWADD, reuse>(icb, t, d); }
template <EltwiseBinaryReuseDestType reuse>
ALWI void sub_reuse_dest_tiles(uint32_t icb, uint32_t t, uint32_t d) { binary_dest_reuse_tiles<ELWSUB, reuse>(icb, t, d); }
template <EltwiseBinaryReuseDestType reuse>
ALWI void mul_reuse_dest_tiles(uint32_t icb, uint32_t t, uint32_t d) { binary_dest_reuse_tiles<ELWMUL, reuse>(icb, t, d); }

// ---- broadcast ----
// COL: B's column 0 is broadcast across the columns (C[h][w] = A[h][w] op B[h][0]);
// ROW: B's row bcast_row_idx across the rows (C[h][w] = A[h][w] op B[r][w]);
// SCALAR: B[0][0] everywhere.
template <EltwiseBinaryType op, BroadcastType dim>
ALWI void init_bcast(uint32_t, uint32_t, uint32_t = 16) { ZYX_API.compute_config(ZYX_CK_ACC_TO_DEST, 0); }
template <EltwiseBinaryType op, BroadcastType dim>
ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t row = 0) {
  ZYX_API.binary_bcast(zyx_emu_c::bin_op(op), static_cast<uint32_t>(dim), icb0, icb1, t0, t1, idst, row);
}
template <BroadcastType dim>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t row = 0) {
  any_tiles_bcast<ELWADD, dim>(icb0, icb1, t0, t1, idst, row);
}
template <BroadcastType dim>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t row = 0) {
  any_tiles_bcast<ELWSUB, dim>(icb0, icb1, t0, t1, idst, row);
}
template <BroadcastType dim>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t row = 0) {
  any_tiles_bcast<ELWMUL, dim>(icb0, icb1, t0, t1, idst, row);
}
// sdpa's custom column-broadcast subtract (experimental/sdpa_sub_custom.h):
// one SrcB tile for ct_dim consecutive A tiles through custom LLK paths on the
// card; the result is sub_tiles_bcast<COL>'s on each:
// DST[idst + j] = A[itile0 + j] - column 0 of B[itile1], j < ct_dim.
ALWI void sub_bcast_cols_init_short_custom(uint32_t icb0, uint32_t icb1, uint32_t, uint32_t = 0) {
  init_bcast<ELWSUB, BroadcastType::COL>(icb0, icb1);
}
ALWI void sub_tiles_bcast_cols_custom(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                                      uint32_t ct_dim) {
  for (uint32_t j = 0; j < ct_dim; j++) sub_tiles_bcast<BroadcastType::COL>(icb0, icb1, itile0 + j, itile1, idst + j);
}
#define ZYX_EMU_BCAST_FORMS(opname, OPT)                                                                       \
  ALWI void opname##_tiles_bcast_rows(uint32_t a, uint32_t b, uint32_t ta, uint32_t tb, uint32_t d, uint32_t r = 0) { \
    any_tiles_bcast<OPT, BroadcastType::ROW>(a, b, ta, tb, d, r);                                              \
  }                                                                                                            \
  ALWI void opname##_tiles_bcast_cols(uint32_t a, uint32_t b, uint32_t ta, uint32_t tb, uint32_t d) {          \
    any_tiles_bcast<OPT, BroadcastType::COL>(a, b, ta, tb, d);                                                 \
  }                                                                                                            \
  ALWI void opname##_tiles_bcast_scalar(uint32_t a, uint32_t b, uint32_t ta, uint32_t tb, uint32_t d) {        \
    any_tiles_bcast<OPT, BroadcastType::SCALAR>(a, b, ta, tb, d);                                              \
  }                                                                                                            \
  /* the third parameter is tt-metal's call_line (__builtin_LINE()), which only */                         \
  /* its state-configuration check reports; ttnn's chain_llk takes the address */                             \
  /* of these as void (*)(uint32_t, uint32_t, uint32_t) */                                                      \
  ALWI void opname##_bcast_rows_init_short(uint32_t a = 0, uint32_t b = 1, uint32_t = 0) {                     \
    init_bcast<OPT, BroadcastType::ROW>(a, b);                                                                 \
  }                                                                                                            \
  ALWI void opname##_bcast_cols_init_short(uint32_t a = 0, uint32_t b = 1, uint32_t = 0) {                     \
    init_bcast<OPT, BroadcastType::COL>(a, b);                                                                 \
  }                                                                                                            \
  ALWI void opname##_bcast_scalar_init_short(uint32_t a = 0, uint32_t b = 1, uint32_t = 0) {                   \
    init_bcast<OPT, BroadcastType::SCALAR>(a, b);                                                              \
  }                                                                                                            \
  ALWI void opname##_tiles_bcast_scalar_init_short(uint32_t a = 0, uint32_t b = 1, uint32_t = 0) {             \
    init_bcast<OPT, BroadcastType::SCALAR>(a, b);                                                              \
  }
ZYX_EMU_BCAST_FORMS(add, ELWADD)
ZYX_EMU_BCAST_FORMS(sub, ELWSUB)
ZYX_EMU_BCAST_FORMS(mul, ELWMUL)
#undef ZYX_EMU_BCAST_FORMS
template <BroadcastType dim>
ALWI void unary_bcast_init(uint32_t, uint32_t) {}
template <BroadcastType dim>
ALWI void unary_bcast(uint32_t icb, uint32_t in_tile, uint32_t dst) {
  ZYX_API.unary_bcast(static_cast<uint32_t>(dim), icb, in_tile, dst);
}
template <BroadcastType dim>
ALWI void unary_bcast_uninit(uint32_t) {}
template <BroadcastType old_dim, BroadcastType new_dim>
ALWI void reconfigure_unary_bcast(uint32_t, uint32_t, uint32_t, uint32_t) {}

// ---- matmul: DST += A * B, B transposed when the init said so ----
ALWI void matmul_init(uint32_t = 0, uint32_t = 1, uint32_t transpose = 0) {
  ZYX_API.compute_config(ZYX_CK_MM_TRANSPOSE, transpose ? 1 : 0);
}
ALWI void mm_init(uint32_t in0 = 0, uint32_t in1 = 1, uint32_t = 16, uint32_t transpose = 0) { matmul_init(in0, in1, transpose); }
ALWI void mm_init_short(uint32_t in0 = 0, uint32_t in1 = 1, uint32_t transpose = 0) { matmul_init(in0, in1, transpose); }
ALWI void mm_init_short_with_dt(uint32_t in0, uint32_t in1, uint32_t, uint32_t transpose = 0) {
  matmul_init(in0, in1, transpose);
}
ALWI void matmul_block_init(uint32_t in0 = 0, uint32_t in1 = 1, uint32_t transpose = 0, uint32_t = 1, uint32_t = 1,
                            uint32_t = 1) {
  matmul_init(in0, in1, transpose);
}
ALWI void mm_block_init(uint32_t in0 = 0, uint32_t in1 = 1, uint32_t = 16, uint32_t transpose = 0, uint32_t = 1,
                        uint32_t = 1, uint32_t = 1) {
  matmul_init(in0, in1, transpose);
}
ALWI void mm_block_init_short(uint32_t in0 = 0, uint32_t in1 = 1, uint32_t transpose = 0, uint32_t = 1, uint32_t = 1,
                              uint32_t = 1) {
  matmul_init(in0, in1, transpose);
}
ALWI void mm_block_init_short_with_dt(uint32_t in0, uint32_t in1, uint32_t, uint32_t transpose = 0, uint32_t = 1,
                                      uint32_t = 1, uint32_t = 1) {
  matmul_init(in0, in1, transpose);
}
ALWI void mm_block_init_short_with_both_dt(uint32_t in0, uint32_t in1, uint32_t, uint32_t, uint32_t transpose = 0,
                                           uint32_t = 1, uint32_t = 1, uint32_t = 1) {
  matmul_init(in0, in1, transpose);
}
// The 6th argument is the older tt-metal form; it transposes in addition to the init's flag.
ALWI void matmul_tiles(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                       uint32_t transpose = 0) {
  ZYX_API.matmul(in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose ? 1 : 2);
}
ALWI void matmul_tile(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                      uint32_t transpose = 0) {
  matmul_tiles(in0_cb, in1_cb, in0_tile, in1_tile, idst, transpose);
}
// A block of rt_dim x ct_dim output tiles: A is rt_dim x kt_dim tiles (row-major
// from in0_tile), B is kt_dim x ct_dim (from in1_tile); only the in0/in1 tile
// at the given offsets take part (one k step), as tt-metal's matmul_block does.
ALWI void matmul_block(uint32_t in0_cb, uint32_t in1_cb, uint32_t in0_tile, uint32_t in1_tile, uint32_t idst,
                       uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
  for (uint32_t r = 0; r < rt_dim; r++)
    for (uint32_t c = 0; c < ct_dim; c++)
      ZYX_API.matmul(in0_cb, in1_cb, in0_tile + r * kt_dim, in1_tile + c, idst + r * ct_dim + c, transpose ? 1 : 2);
}

// Math only: DST[idst] += A * B for the next pair of tiles the unpacker has
// put in the source registers (unpack_tilizeA_B_block; on a card also the
// LLK's matmul unpack), A as srcB's in0 and B as srcA's in1. num_faces must
// be 4 (the emulator's tiles are 32x32).
template <uint32_t num_faces = 4>
ALWI void matmul_tiles_math(uint32_t idst) { ZYX_API.compute_special(ZYX_CS_MATMUL_MATH, idst, num_faces, 0, 0); }
// matmul_block's math half on Blackhole (firmware throttling changes only
// its speed): DST[idst + r * ct_dim + c] += the rt_dim x ct_dim pairs the
// unpacker queued (llk_unpack_AB_matmul), in order.
ALWI void matmul_block_math_dynamic_throttle(uint32_t, uint32_t, uint32_t idst, const uint32_t, uint32_t ct_dim,
                                             uint32_t rt_dim) {
  for (uint32_t i = 0; i < ct_dim * rt_dim; i++) matmul_tiles_math(idst + i);
}

// ---- the compute-kernel sentinel (api/compute/sentinel) ----
// tt-metal's optional check that a kernel reconfigures its unpacker and
// packer before changing CBs records each configuration here; built without
// it (tt-metal's default) the calls do nothing, and the emulator, which
// keeps no unpacker or packer state to get wrong, builds them so.
enum class Operand : uint8_t { SRCA = 0x1, SRCB = 0x2, PACK = 0x4 };
template <Operand operand = Operand::SRCA>
ALWI void state_configure(uint32_t, uint32_t) {}
template <Operand operand_a = Operand::SRCA, Operand operand_b = Operand::SRCB>
ALWI void state_configure(uint32_t, uint32_t, uint32_t) {}
ALWI void state_configure(uint32_t, uint32_t, uint32_t, uint32_t) {}

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
template <PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_init(uint32_t, uint32_t, uint32_t = 16) {}
// The earlier form, reduce_init<at_start>(icb, icb_scaler, ocb): like the
// above, configuration only (the emulator keeps no unpacker state). at_start
// has no default, so a call without template args is the form above.
template <bool at_start, PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT>
ALWI void reduce_init(uint32_t, uint32_t, uint32_t = 16) {}
template <bool at_start = false, PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT,
          ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT>
ALWI void reduce_init_delta(uint32_t = 0, uint32_t = 2, uint32_t = 16) {}
// The earlier undo of reduce_init_delta (reduce_uninit since): nothing to undo.
template <ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT>
ALWI void reduce_revert_delta(uint32_t = 16) {}
template <PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_init_short(uint32_t, uint32_t, uint32_t = 16) {}
template <bool enforce_fp32_accumulation = false>
ALWI void reduce_uninit(uint32_t = 0) {}
template <PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler, uint32_t idst) {
  ZYX_API.reduce(static_cast<uint32_t>(reduce_type), static_cast<uint32_t>(reduce_dim), icb, icb_scaler, itile,
                 itile_scaler, idst);
}
// Math only: reduces the next source tile the unpacker has put in srcA
// (unpack_tilizeA_B_block) with the scaler in srcB into DST[idst], as
// reduce_tile does; only faces [0, num_faces) of the tile take part.
template <PoolType reduce_type ZYX_EMU_REDUCE_OP_DEFAULT, ReduceDim reduce_dim ZYX_EMU_REDUCE_DIM_DEFAULT,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_tile_math(uint32_t idst, uint32_t num_faces = 4) {
  ZYX_API.compute_special(ZYX_CS_REDUCE_MATH, idst, static_cast<uint32_t>(reduce_type), static_cast<uint32_t>(reduce_dim),
                          num_faces);
}
template <uint32_t block_ct_dim, bool respect_trigger = false>
ALWI void reduce_block_max_row_init() {}
template <uint32_t block_ct_dim, bool respect_trigger = false>
ALWI void reduce_block_max_row_reinit_short() {}
template <uint32_t block_ct_dim, bool respect_trigger = false>
ALWI void reduce_block_max_row(uint32_t icb, uint32_t icb_scaler, uint32_t row_start_index, uint32_t idst) {
  ZYX_API.reduce_max_row_block(icb, icb_scaler, row_start_index, block_ct_dim, idst);
}
template <uint32_t block_ct_dim, bool respect_trigger = false>
ALWI void reduce_block_max_row_reinit_minimal() {}
// icb: the form tt-metal takes now (it restores the source format on Wormhole).
template <bool clear_fp32_accumulation = false, bool respect_trigger = false>
ALWI void reduce_block_max_row_uninit(uint32_t = 0) {}
// The runtime forms: the block width is an argument of the (re)init, and
// reduce_block_max_row_runtime reduces over the last one set.
ALWI void reduce_block_max_row_init_runtime(uint32_t block_ct_dim, bool = false) {
  ZYX_API.compute_config(ZYX_CK_BLOCK_CT_DIM, block_ct_dim);
}
ALWI void reduce_block_max_row_reinit_short_runtime(uint32_t block_ct_dim, bool = false) {
  ZYX_API.compute_config(ZYX_CK_BLOCK_CT_DIM, block_ct_dim);
}
ALWI void reduce_block_max_row_reinit_minimal_runtime(uint32_t block_ct_dim, bool = false) {
  ZYX_API.compute_config(ZYX_CK_BLOCK_CT_DIM, block_ct_dim);
}
ALWI void reduce_block_max_row_runtime(uint32_t icb, uint32_t icb_scaler, uint32_t row_start_index, uint32_t idst,
                                       bool = false) {
  ZYX_API.compute_special(ZYX_CS_REDUCE_MAX_ROW_RUNTIME, icb, icb_scaler, row_start_index, idst);
}
ALWI void reduce_block_max_row_uninit_runtime(uint32_t, bool = false) {}

// ---- tilize / untilize ----
ALWI void tilize_init(uint32_t, uint32_t, uint32_t) {}
ALWI void tilize_init_short(uint32_t, uint32_t, uint32_t = 16) {}
ALWI void tilize_init_short_with_dt(uint32_t, uint32_t, uint32_t, uint32_t) {}
ALWI void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                       uint32_t output_tile_index = 0) {
  ZYX_API.tilize(icb, block, ocb, input_tile_index, output_tile_index);
}
ALWI void tilize_uninit(uint32_t, uint32_t) {}
ALWI void tilize_uninit_with_dt(uint32_t, uint32_t, uint32_t) {}
// Unpacks `block` tiles of row-major A from icb0 (tilized as tilize_block
// does; faces of srca_face_r_dim rows, num_faces of them) into srcA, each
// with tile tile_idx_b of icb1 in srcB, for reduce_tile_math/matmul_tiles_math
// to consume in order. Rows a short face does not have read as -inf
// (neginf_srcA) or 0.
template <bool neginf_srcA = true, uint32_t reload_srcB = true, bool zero_srcA = false, bool zero_srcA_reduce = false>
ALWI void unpack_tilizeA_B_block(uint32_t icb0, uint32_t icb1, uint32_t block, uint32_t tile_idx_b,
                                 uint32_t num_faces = 4, uint32_t srca_face_r_dim = 16) {
  ZYX_API.unpack_tilize_ab(icb0, icb1, block, tile_idx_b, num_faces, srca_face_r_dim,
                           (neginf_srcA && !zero_srcA ? 1u : 0u));
}
// The init for tilize-A-B reduce (tt-metal declares it when REDUCE_OP and
// REDUCE_DIM are defined); nothing to configure here.
template <bool neginf_srcA = true, bool zero_srcA_reduce = false>
ALWI void tilizeA_B_reduce_init(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t = 4, uint32_t = 16) {}
ALWI void unpack_tilizeA_B_uninit(uint32_t) {}
ALWI void fast_tilize_init(uint32_t, uint32_t, uint32_t) {}
ALWI void fast_tilize_init_with_dt(uint32_t, uint32_t, uint32_t) {}
ALWI void fast_tilize_uninit(uint32_t, uint32_t) {}
ALWI void fast_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                            uint32_t output_tile_index = 0) {
  ZYX_API.tilize(icb, block, ocb, input_tile_index, output_tile_index);
}
ALWI void untilize_init(uint32_t) {}
ALWI void untilize_init_short(uint32_t) {}
template <uint32_t block_ct_dim = 1>
ALWI void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb) { ZYX_API.untilize(icb, full_ct_dim, ocb); }
ALWI void untilize_uninit(uint32_t) {}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... P>
ALWI void pack_untilize_dest_init(uint32_t, uint32_t = 16, uint32_t = 4) {}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim>
ALWI void pack_untilize_init(uint32_t, uint32_t) {}
// Unpacks block_ct_dim tiles per tile row from icb into DST and packs them row-major.
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim>
ALWI void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0) {
  for (uint32_t r = 0; r < block_rt_dim; r++) {
    acquire_dst();  // math: acquire; pack: wait
    for (uint32_t c = 0; c < block_ct_dim; c++) ZYX_API.copy_tile(icb, r * block_ct_dim + c, c);
    ZYX_API.pack_untilize(0, 1, block_ct_dim, full_ct_dim, block_c_index, ocb);
    release_dst();  // math: commit; pack: release
  }
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false, auto... P>
ALWI void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0, uint32_t = 16,
                             uint32_t = 4, uint32_t tile_dst_rt_offset = 0) {
  ZYX_API.pack_untilize(tile_dst_rt_offset, block_rt_dim, block_ct_dim, full_ct_dim, block_c_index, ocb);
}
ALWI void pack_untilize_uninit(uint32_t = 16) {}
// ---- transpose ----
ALWI void transpose_wh_init(uint32_t, uint32_t = 16) {}
ALWI void transpose_wh_init_short(uint32_t) {}
ALWI void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) { ZYX_API.transpose(icb, itile, idst); }
// transpose.h (the names that replace the _wh ones)
ALWI void transpose_init(uint32_t) {}
ALWI void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst) { ZYX_API.transpose(icb, itile, idst); }
ALWI void transpose_block(uint32_t icb, uint32_t start_itile, uint32_t start_idst, uint32_t ntiles) {
  for (uint32_t i = 0; i < ntiles; i++) ZYX_API.transpose(icb, start_itile + i, start_idst + i);
}
template <bool is_32bit = false, bool transpose_of_faces = true>
ALWI void transpose_wh_dest_init_short(uint32_t = 0) {}
// transpose_of_faces = false: only each face transposed in place (the faces
// keep their places).
template <bool is_32bit = false, bool transpose_of_faces = true>
ALWI void transpose_wh_dest(uint32_t idst) {
  if constexpr (transpose_of_faces)
    ZYX_API.transpose_dst(idst);
  else
    ZYX_API.compute_special(ZYX_CS_TRANSPOSE_FACES_DST, idst, 0, 0, 0);
}

// ---- mask ----
ALWI void mask_tile_init() {}
ALWI void mask_tile(uint32_t idst_data, uint32_t, DataFormat = DataFormat::Float16_b) { ZYX_API.mask(idst_data, 0); }
ALWI void mask_posinf_tile(uint32_t idst_data, uint32_t) { ZYX_API.mask(idst_data, 1); }

// ---- welford: running mean and M2 per column over the rows of DST tiles ----
ALWI void welford_init() { ZYX_API.welford(ZYX_WF_CLEAR, 0, 0, 0, nullptr, 0); }
ALWI void welford_clear() { ZYX_API.welford(ZYX_WF_CLEAR, 0, 0, 0, nullptr, 0); }
template <uint32_t N>
ALWI void welford_update(uint32_t input_dst_idx, uint32_t start_idx, const std::array<uint32_t, N>& lut) {
  ZYX_API.welford(ZYX_WF_UPDATE, input_dst_idx, start_idx, (0u << 16) | 32u, lut.data(), N);
}
template <uint32_t N>
ALWI void welford_update_rows(uint32_t input_dst_idx, uint32_t start_idx, uint32_t start_row, uint32_t num_rows,
                              const std::array<uint32_t, N>& lut) {
  ZYX_API.welford(ZYX_WF_UPDATE, input_dst_idx, start_idx, (start_row << 16) | num_rows, lut.data(), N);
}
ALWI void welford_save_state(uint32_t mean_dst_idx, uint32_t group_id = 0) {
  ZYX_API.welford(ZYX_WF_SAVE, mean_dst_idx, group_id, 0, nullptr, 0);
}
ALWI void welford_restore_state(uint32_t mean_dst_idx, uint32_t group_id = 0) {
  ZYX_API.welford(ZYX_WF_RESTORE, mean_dst_idx, group_id, 0, nullptr, 0);
}
template <std::size_t N>
ALWI void welford_finalize_to_row(uint32_t mean_dst_idx, uint32_t scale_idx, const std::array<uint32_t, N>& lut) {
  ZYX_API.welford(ZYX_WF_TO_ROW, mean_dst_idx, scale_idx, 0, lut.data(), N);
}
// The mean and variance in the SFPU's raw layout (see api_welford):
// group_id selects four rows of the tiles per group.
template <std::size_t N>
ALWI void welford_finalize_to_face(uint32_t mean_dst_idx, uint32_t scale_idx, const std::array<uint32_t, N>& lut) {
  ZYX_API.welford(ZYX_WF_TO_FACE, mean_dst_idx, scale_idx, 0, lut.data(), N);
}
template <std::size_t N>
ALWI void welford_finalize_to_face(uint32_t mean_dst_idx, uint32_t group_id, uint32_t scale_idx,
                                   const std::array<uint32_t, N>& lut) {
  ZYX_API.welford(ZYX_WF_TO_FACE, mean_dst_idx, scale_idx, group_id, lut.data(), N);
}

}  // namespace ckernel

#include "zyx_emu/compute_sfpu.h"

// The math processor's build sees SFPI and tt-llk's SFPU wrappers, as
// tt-metal's compute API gives them to code under #ifdef TRISC_MATH.
#ifdef TRISC_MATH
#include "zyx_emu/sfpi_llk.h"
using namespace sfpi;
#endif
#include "zyx_emu/llk_api.h"
