// zyx-tt kernel library: add_tiles (compute). One tile of CB 0 + CB 1 into
// CB 16 per step, through DST register 0, for the tiles t = core,
// core + cores, ... of ceil(n / 1024) (the chunks of read_chunks_binary and
// write_chunks). Runtime args: n, core index, core count.
#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
  const uint32_t n = get_arg_val<uint32_t>(0);
  const uint32_t core = get_arg_val<uint32_t>(1);
  const uint32_t cores = get_arg_val<uint32_t>(2);

  constexpr auto cb_x = tt::CBIndex::c_0;
  constexpr auto cb_y = tt::CBIndex::c_1;
  constexpr auto cb_z = tt::CBIndex::c_16;
  const uint32_t tiles = (n + 1023) / 1024;

  binary_op_init_common(cb_x, cb_y, cb_z);
  add_tiles_init(cb_x, cb_y);
  for (uint32_t t = core; t < tiles; t += cores) {
    cb_wait_front(cb_x, 1);
    cb_wait_front(cb_y, 1);
    tile_regs_acquire();
    add_tiles(cb_x, cb_y, 0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb_z, 1);
    pack_tile(0, cb_z);
    cb_push_back(cb_z, 1);
    tile_regs_release();
    cb_pop_front(cb_x, 1);
    cb_pop_front(cb_y, 1);
  }
}
