// zyx-tt kernel library: zyx/eltwise_binary.h, for compute kernels that add
// two streams of tiles (add_tiles, add_n_tiles). The kernel initializes the
// unit once (binary_op_init_common, add_tiles_init) and then adds tile by
// tile.
#pragma once

#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/tile_move_copy.h"
#include "zyx/pack.h"

namespace zyx {

// Waits for the front tiles of cb_a and cb_b, adds them through DST
// register 0 into a new tile at the back of cb_out, and pops both inputs.
inline void add_front_tiles(uint32_t cb_a, uint32_t cb_b, uint32_t cb_out) {
  cb_wait_front(cb_a, 1);
  cb_wait_front(cb_b, 1);
  tile_regs_acquire();
  add_tiles(cb_a, cb_b, 0, 0, 0);
  pack_dst0(cb_out);
  cb_pop_front(cb_a, 1);
  cb_pop_front(cb_b, 1);
}

}  // namespace zyx
