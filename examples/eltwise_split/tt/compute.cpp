// zyx-tt example eltwise_split: compute. The number of tiles is a
// compile-time arg, so each of the two core groups of the split (the cores
// that take one tile more, and the rest) runs its own build of this kernel.
#include <cstdint>

#include "api/compute/common.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
  constexpr uint32_t per_core_tiles = get_compile_time_arg_val(0);
  constexpr auto cb_a = tt::CBIndex::c_0;
  constexpr auto cb_b = tt::CBIndex::c_1;
  constexpr auto cb_c = tt::CBIndex::c_16;

  binary_op_init_common(cb_a, cb_b, cb_c);
  add_tiles_init(cb_a, cb_b);
  for (uint32_t t = 0; t < per_core_tiles; t++) {
    cb_wait_front(cb_a, 1);
    cb_wait_front(cb_b, 1);
    tile_regs_acquire();
    add_tiles(cb_a, cb_b, 0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb_c, 1);
    pack_tile(0, cb_c);
    cb_push_back(cb_c, 1);
    tile_regs_release();
    cb_pop_front(cb_a, 1);
    cb_pop_front(cb_b, 1);
  }
}
