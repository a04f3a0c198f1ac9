// tt-metal's LLK layer (llk_api/*.h, llk_io/*.h, and tt-llk's llk_lib
// headers that tt-metal's per-thread test kernels include) as kernels and
// ttnn's kernel_lib call it directly, under the API calls: each entry point
// maps onto the emulator's compute model. In the three TRISC builds an
// unpack call queues its operand tiles for the math build, as the matching
// kernel-API op's unpack part does, and the math call computes what unpack
// queued (docs/emulator.md, "Compute model"); in the single build the unpack
// call names the tiles and the math call after it computes them. The DST
// hand-over calls are the tile_regs_* calls of the same thread, the CB calls
// cb_wait_front and its kin. The calls that only program hardware (data
// formats, MOPs, address counters: each unpack and pack reads its CB's
// format) are accepted and do nothing, as the API's own inits are; a form
// whose effect is not emulated (a transposing or row-broadcast unpack, DST
// reuse, the packer's untilize) is a run error. The template args that choose
// hardware fidelity, throttling, or which register an operand lands in change
// nothing: the numerics take the fidelity from the kernel's compute config.
#pragma once

#include "zyx_emu/compute.h"

// The matmul throttle level a program may define (tt-metal's default 0), and
// the level Blackhole's firmware-controlled throttle uses.
#ifndef MM_THROTTLE
#define MM_THROTTLE 0
#endif
#ifndef MM_THROTTLE_MAX
#define MM_THROTTLE_MAX 5
#endif

namespace ckernel {

// ---- matmul: in0 goes to srcB and in1 to srcA on a card; here a pair ----
template <MathFidelity math_fidelity, int THROTTLE_LEVEL = 0>
ALWI void llk_math_matmul_init(uint32_t in0, uint32_t in1, uint32_t transpose = 0, uint32_t = 1, uint32_t = 1) {
  matmul_init(in0, in1, transpose);
}
ALWI void llk_unpack_AB_matmul_init(uint32_t in0, uint32_t in1, uint32_t transpose = 0, uint32_t = 1, uint32_t = 1,
                                    uint32_t = 1) {
  matmul_init(in0, in1, transpose);
}
// rt_dim x ct_dim pairs: row r takes in0 tile tile0 + r * kt_dim, column c
// in1 tile tile1 + c (matmul_block's layout).
ALWI void llk_unpack_AB_matmul(uint32_t in0, uint32_t in1, uint32_t tile0, uint32_t tile1, uint32_t ct_dim = 1,
                               uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
  for (uint32_t r = 0; r < rt_dim; r++)
    for (uint32_t c = 0; c < ct_dim; c++) ZYX_API.compute_special(ZYX_CS_UNPACK_AB, in0, in1, tile0 + r * kt_dim, tile1 + c);
}
// DST[dst + r * ct_dim + c] += the pairs llk_unpack_AB_matmul unpacked, in order.
template <MathFidelity math_fidelity, int THROTTLE_LEVEL = 0, uint32_t num_faces = 4>
ALWI void llk_math_matmul(uint32_t dst, uint32_t ct_dim = 1, uint32_t rt_dim = 1) {
  static_assert(num_faces == 4, "llk_math_matmul takes whole tiles (num_faces 4)");
  for (uint32_t i = 0; i < ct_dim * rt_dim; i++) ZYX_API.compute_special(ZYX_CS_LLK_MATMUL, dst + i, 0, 0, 0);
}

// ---- data formats: each unpack and pack reads its CB's format ----
template <auto... P>
ALWI void llk_unpack_reconfig_data_format_srca(uint32_t) {}
template <auto... P>
ALWI void llk_unpack_reconfig_data_format_srca(uint32_t, uint32_t) {}
template <auto... P>
ALWI void llk_unpack_reconfig_data_format_srcb(uint32_t) {}
template <auto... P>
ALWI void llk_unpack_reconfig_data_format_srcb(uint32_t, uint32_t) {}
template <auto... P>
ALWI void llk_unpack_reconfig_data_format(uint32_t, uint32_t, uint32_t, uint32_t) {}
template <auto... P>
ALWI void llk_math_reconfig_data_format_srca(uint32_t) {}
template <auto... P>
ALWI void llk_math_reconfig_data_format_srca(uint32_t, uint32_t) {}
template <auto... P>
ALWI void llk_math_reconfig_data_format_srcb(uint32_t) {}
template <auto... P>
ALWI void llk_math_reconfig_data_format_srcb(uint32_t, uint32_t) {}
template <auto... P>
ALWI void llk_math_reconfig_data_format(uint32_t, uint32_t, uint32_t, uint32_t) {}
template <auto... P>
ALWI void llk_pack_reconfig_data_format(uint32_t) {}
template <auto... P>
ALWI void llk_pack_reconfig_data_format(uint32_t, uint32_t) {}

// ---- reduce: configuration only, as reduce_init ----
template <PoolType type, ReduceDim dim, bool enforce_fp32_accumulation = false>
ALWI void llk_unpack_AB_reduce_init(uint32_t, uint32_t) {}
template <PoolType type, ReduceDim dim, bool is_fp32_dest_acc_en, MathFidelity math_fidelity,
          bool enforce_fp32_accumulation = false>
ALWI void llk_math_reduce_init() {}

// ---- unpack A to DST (copy_tile's halves) ----
template <BroadcastType BType = BroadcastType::NONE, bool acc_to_dest = false,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE, bool unpack_to_dest = false>
ALWI void llk_unpack_A_init(uint32_t transpose_of_faces = 0, uint32_t within_face_16x16_transpose = 0,
                            uint32_t operand = 0) {
  copy_tile_to_dst_init_short(operand, transpose_of_faces, within_face_16x16_transpose);
}
template <BroadcastType BType = BroadcastType::NONE, bool acc_to_dest = false,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE, bool unpack_to_dest = false>
ALWI void llk_unpack_A(uint32_t operand, uint32_t tile_index) {
  if constexpr (BType != BroadcastType::NONE || acc_to_dest ||
                binary_reuse_dest != EltwiseBinaryReuseDestType::NONE)
    ZYX_API.fail("llk_unpack_A: a broadcast, DST accumulation or DST reuse unpack is not emulated (use unary_bcast)");
  ZYX_API.compute_special(ZYX_CS_UNPACK_A, operand, tile_index, 0, 0);
}
template <DataCopyType type, bool is_fp32_dest_acc_en, BroadcastType src_b_bcast_type = BroadcastType::NONE,
          bool is_int_fpu_en = false, bool tilize = false>
ALWI void llk_math_eltwise_unary_datacopy_init(uint32_t = 0) {}
// Copies the tile llk_unpack_A named into DST[dst] (A2D; B2D, the broadcast
// path, is not emulated).
template <DataCopyType type, bool is_fp32_dest_acc_en, BroadcastType src_b_bcast_type = BroadcastType::NONE,
          bool unpack_to_dest = false>
ALWI void llk_math_eltwise_unary_datacopy(uint32_t dst, uint32_t = 0) {
  if constexpr (type != A2D) ZYX_API.fail("llk_math_eltwise_unary_datacopy: B2D (a broadcast copy) is not emulated");
  ZYX_API.compute_special(ZYX_CS_DATACOPY, dst, 0, 0, 0);
}


// ---- hardware configuration: formats come from each CB ----
template <bool is_fp32_dest_acc_en, bool disable_src_zero_flag = false>
ALWI void llk_unpack_hw_configure(uint32_t, uint32_t = 0, uint32_t = 16, uint32_t = 4) {}
template <bool is_fp32_dest_acc_en>
ALWI void llk_math_hw_configure(uint32_t, uint32_t) {}
template <bool is_fp32_dest_acc_en, auto... P>
ALWI void llk_pack_hw_configure(uint32_t) {}
template <bool untilize = false, bool zero_output = false, bool tilize = false>
ALWI void llk_pack_init(uint32_t = 16, uint32_t = 1) {
  if constexpr (untilize) ZYX_API.fail("llk_pack_init: the packer's untilize is not emulated (use pack_untilize_block)");
}
template <bool is_fp32_dest_acc_en, bool untilize = false>
ALWI void llk_pack_dest_init(uint32_t = 16) {}
template <bool untilize = false, bool diagonal = false>
ALWI void llk_init_packer_dest_offset_registers(uint32_t = 16) {}
template <bool is_fp32_dest_acc_en>
ALWI void llk_math_pack_sync_init() {}
// pack_untilize_dest's packer setup (pack_untilize_dest_init does no more).
template <bool is_fp32_dest_acc_en, auto... P>
ALWI void llk_pack_untilize_hw_configure_disaggregated(uint32_t, uint32_t = 16, uint32_t = 4) {}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, auto... P>
ALWI void llk_pack_untilize_init(uint32_t, uint32_t = 16, uint32_t = 4) {}
// Blackhole's DST remap for pack_untilize_dest: the emulator's DST has one layout.
ALWI void llk_math_reconfig_remap(bool) {}

// ---- DST hand-over between math and pack ----
ALWI void llk_math_wait_for_dest_available() { tile_regs_acquire(); }
template <bool is_fp32_dest_acc_en>
ALWI void llk_math_dest_section_done() { tile_regs_commit(); }
ALWI void llk_packer_wait_for_math_done() { tile_regs_wait(); }
template <bool is_fp32_dest_acc_en>
ALWI void llk_pack_dest_section_done() { tile_regs_release(); }

// ---- CBs (llk_io): the unpack thread's front, the pack thread's back ----
ALWI void llk_wait_tiles(int operand, int32_t num_tiles) { cb_wait_front(operand, num_tiles); }
ALWI void llk_pop_tiles(int32_t operand, int32_t num_tiles, int32_t = 0) { cb_pop_front(operand, num_tiles); }
template <bool skip_sync = false, bool wait_for_blocks = false, bool brisc_pack = false>
ALWI void llk_wait_for_free_tiles(int32_t operand, int32_t num_tiles) { cb_reserve_back(operand, num_tiles); }
template <bool push_blocks = false, bool brisc_pack = false>
ALWI void llk_push_tiles(int32_t operand, int32_t num_tiles) { cb_push_back(operand, num_tiles); }

// ---- pack ----
template <bool is_fp32_dest_acc_en, bool out_of_order_output = false, bool untilize = false>
ALWI void llk_pack(uint32_t tile_index, uint32_t output, uint32_t output_tile_index = 0) {
  if constexpr (untilize) ZYX_API.fail("llk_pack: the packer's untilize is not emulated (use pack_untilize_block)");
  pack_tile<out_of_order_output>(tile_index, output, output_tile_index);
}

// ---- binary: unpack loads A and B, math chooses the op ----
template <BroadcastType BType = BroadcastType::NONE>
ALWI void llk_unpack_AB_init(uint32_t, uint32_t, uint32_t transpose = 0) {
  if (transpose) ZYX_API.fail("llk_unpack_AB_init: a transposed unpack is not emulated (use transpose_wh_tile)");
}
template <BroadcastType BType = BroadcastType::NONE>
ALWI void llk_unpack_AB(uint32_t operand_a, uint32_t operand_b, uint32_t tile_a, uint32_t tile_b,
                        uint32_t bcast_row_idx = 0) {
  if (bcast_row_idx) ZYX_API.fail("llk_unpack_AB: a broadcast of B's row other than 0 is not emulated here");
  ZYX_API.compute_special(ZYX_CS_LLK_UNPACK_AB, operand_a, operand_b, tile_a, tile_b);
}
namespace zyx_emu_c {
constexpr uint32_t llk_bin_op(EltwiseBinaryType t) {
  return t == ELWADD ? ZYX_BIN_ADD : t == ELWSUB ? ZYX_BIN_SUB : t == ELWMUL ? ZYX_BIN_MUL : ~0u;
}
}  // namespace zyx_emu_c
// acc_to_dest accumulates add and sub into DST, as binary_tiles_init's.
template <EltwiseBinaryType type, BroadcastType bcast, MathFidelity math_fidelity,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE>
ALWI void llk_math_eltwise_binary_init(uint32_t acc_to_dest = 0) {
  ZYX_API.compute_config(ZYX_CK_ACC_TO_DEST, (type != ELWMUL && acc_to_dest) ? 1 : 0);
}
template <EltwiseBinaryType type, BroadcastType bcast, MathFidelity math_fidelity,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE>
ALWI void llk_math_eltwise_binary_init_with_operands(uint32_t, uint32_t, uint32_t acc_to_dest = 0) {
  llk_math_eltwise_binary_init<type, bcast, math_fidelity, binary_reuse_dest>(acc_to_dest);
}
// DST[dst] = A op B (B broadcast as bcast says) from the tiles llk_unpack_AB
// (or unpack_tilizeA_B_block) unpacked.
template <EltwiseBinaryType type, BroadcastType bcast, bool is_fp32_dest_acc_en, MathFidelity math_fidelity,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE>
ALWI void llk_math_eltwise_binary(uint32_t dst, bool = true) {
  if constexpr (binary_reuse_dest != EltwiseBinaryReuseDestType::NONE)
    ZYX_API.fail("llk_math_eltwise_binary: DST reuse is not emulated in the LLK form (use binary_dest_reuse_tiles)");
  ZYX_API.compute_special(ZYX_CS_LLK_BINARY, dst, zyx_emu_c::llk_bin_op(type), static_cast<uint32_t>(bcast), 0);
}
template <EltwiseBinaryType type, BroadcastType bcast, bool is_fp32_dest_acc_en, MathFidelity math_fidelity,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE>
ALWI void llk_math_eltwise_binary(uint32_t, uint32_t, uint32_t dst, bool clear_fp32_dst_acc = true) {
  llk_math_eltwise_binary<type, bcast, is_fp32_dest_acc_en, math_fidelity, binary_reuse_dest>(dst, clear_fp32_dst_acc);
}

// ---- untilize by the unpacker: math copies the rows, pack writes them ----
ALWI void llk_unpack_untilize_init(uint32_t = 0) {}
ALWI void llk_unpack_untilize_uninit(uint32_t = 0) {}
// One pass of the two: the first queues the block's top rows, the second the rest.
template <bool first_pass = true>
ALWI void llk_unpack_untilize_pass(uint32_t operand, uint32_t block_tile_cols) {
  ZYX_API.compute_special(ZYX_CS_LLK_UNTILIZE, operand, block_tile_cols, first_pass ? 1 : 2, 0);
}
// The block of block_c_tiles tiles at the front, row by row, as that many
// tiles for llk_math_eltwise_unary_datacopy (see api_compute_tilize.cpp).
ALWI void llk_unpack_untilize(uint32_t operand, uint32_t block_c_tiles) {
  ZYX_API.compute_special(ZYX_CS_LLK_UNTILIZE, operand, block_c_tiles, 0, 0);
}

// ---- tilize A with B (unpack_tilizeA_B_block's setup) ----
template <bool neginf_srcA = true, uint32_t reload_srcB = true, bool zero_srcA = false, bool zero_srcA_reduce = false>
ALWI void llk_unpack_tilizeA_B_init(uint32_t, uint32_t, uint32_t, uint32_t = 4, uint32_t = 16, uint32_t = 16) {}

}  // namespace ckernel
