// zyx-tt example: compute of bcast_rows: z = x + b with b's row 0 broadcast
// over the 32 rows of the tile.
#include <cstdint>

#include "api/compute/bcast.h"

void kernel_main() {
  const uint32_t m = get_arg_val<uint32_t>(0), n = get_arg_val<uint32_t>(1);
  const uint32_t core = get_arg_val<uint32_t>(2), cores = get_arg_val<uint32_t>(3);
  const uint32_t tiles = (m / 32) * (n / 32);
  compute_kernel_hw_startup(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
  init_bcast<EltwiseBinaryType::ELWADD, BroadcastType::ROW>(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
  for (uint32_t t = core; t < tiles; t += cores) {
    cb_wait_front(tt::CBIndex::c_0, 1);
    cb_wait_front(tt::CBIndex::c_1, 1);
    tile_regs_acquire();
    add_tiles_bcast_rows(tt::CBIndex::c_0, tt::CBIndex::c_1, 0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(tt::CBIndex::c_16, 1);
    pack_tile(0, tt::CBIndex::c_16);
    cb_push_back(tt::CBIndex::c_16, 1);
    tile_regs_release();
    cb_pop_front(tt::CBIndex::c_0, 1);
    cb_pop_front(tt::CBIndex::c_1, 1);
  }
}
