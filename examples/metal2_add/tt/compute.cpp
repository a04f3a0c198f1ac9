// zyx-tt example metal2_add: compute, a Metal 2.0 kernel. It adds
// args::num_tiles tiles of dfb::in0 and dfb::in1 into dfb::out; the
// dataflow-buffer bindings stand for the CB ids the compute calls take.
#include <cstdint>

#include "api/compute/eltwise_binary.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
  const uint32_t num_tiles = get_arg(args::num_tiles);
  binary_op_init_common(dfb::in0, dfb::in1, dfb::out);
  add_tiles_init(dfb::in0, dfb::in1);
  for (uint32_t t = 0; t < num_tiles; t++) {
    cb_wait_front(dfb::in0, 1);
    cb_wait_front(dfb::in1, 1);
    tile_regs_acquire();
    add_tiles(dfb::in0, dfb::in1, 0, 0, 0);
    tile_regs_commit();
    cb_reserve_back(dfb::out, 1);
    tile_regs_wait();
    pack_tile(0, dfb::out);
    tile_regs_release();
    cb_push_back(dfb::out, 1);
    cb_pop_front(dfb::in0, 1);
    cb_pop_front(dfb::in1, 1);
  }
}
