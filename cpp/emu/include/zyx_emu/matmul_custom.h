// tt-metal's api/compute/experimental/matmul_custom.h (sdpa's streaming
// compute): the matmul block without the LLK's MOP replay. The replay is how
// the card issues the instructions, not what they compute, so each form here
// is the emulator's matmul block and its init.
#pragma once

#include "zyx_emu/compute.h"

#ifndef MM_THROTTLE
#define MM_THROTTLE 0
#endif

namespace ckernel {
ALWI void mm_no_mop_init_short(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                               uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
  mm_block_init_short(in0_cb_id, in1_cb_id, transpose, ct_dim, rt_dim, kt_dim);
}
ALWI void mm_no_mop_reinit_short(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                                 uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
  mm_block_init_short(in0_cb_id, in1_cb_id, transpose, ct_dim, rt_dim, kt_dim);
}
ALWI void matmul_block_no_mop(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                              uint32_t idst, const bool transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
  matmul_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim, rt_dim, kt_dim);
}
}  // namespace ckernel
