// zyx-tt kernel library: zyx/matmul.h, for matmul compute kernels that take
// the tile pairs of a and b from CBs one pair at a time (matmul/compute.cpp,
// matmul/compute_n_tiles.cpp). The kernel calls mm_init once, then computes
// its output tiles one by one.
#pragma once

#include <cstdint>

#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"
#include "zyx/pack.h"

namespace zyx {

// Accumulates kt_count tile products in DST register 0, each of the front
// tiles of cb_a and cb_b (popped after it), and packs the sum into a new
// tile at the back of cb_out.
inline void matmul_tile(uint32_t cb_a, uint32_t cb_b, uint32_t cb_out, uint32_t kt_count) {
  tile_regs_acquire();
  for (uint32_t kt = 0; kt < kt_count; kt++) {
    cb_wait_front(cb_a, 1);
    cb_wait_front(cb_b, 1);
    matmul_tiles(cb_a, cb_b, 0, 0, 0);
    cb_pop_front(cb_a, 1);
    cb_pop_front(cb_b, 1);
  }
  pack_dst0(cb_out);
}

}  // namespace zyx
