// tt-metal's LLK layer (llk_api/*.h) as some kernels and ttnn's kernel_lib
// call it directly, under the API calls: each entry point maps onto the
// emulator's compute model. The unpack, math and pack threads run here as one
// sequential thread, so an unpack call fills the source registers (or names
// the tile) that the math call after it consumes, and the inits only set what
// the API's own inits set. The template args that choose hardware fidelity,
// throttling, or which register an operand lands in are accepted and change
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
  for (uint32_t i = 0; i < ct_dim * rt_dim; i++) matmul_tiles_math<num_faces>(dst + i);
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

}  // namespace ckernel
