// zyx-tt example: compute of tilize_square. Per 32-row strip: tilize the
// row-major strip (cb 0) into nt tiles (cb 24), square each tile on the SFPU
// (cb 25), and untilize the tiles back into a row-major strip (cb 16).
#include <cstdint>

#include "api/compute/tilize.h"
#include "api/compute/untilize.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/compute_kernel_api.h"

void kernel_main() {
  const uint32_t m = get_arg_val<uint32_t>(0), n = get_arg_val<uint32_t>(1);
  const uint32_t core = get_arg_val<uint32_t>(2), cores = get_arg_val<uint32_t>(3);
  constexpr auto cb_rm = tt::CBIndex::c_0, cb_tiles = tt::CBIndex::c_24, cb_sq = tt::CBIndex::c_25;
  constexpr auto cb_out = tt::CBIndex::c_16;
  const uint32_t nt = n / 32;
  compute_kernel_hw_startup(cb_rm, cb_tiles);
  for (uint32_t r = core; r < m / 32; r += cores) {
    tilize_init(cb_rm, nt, cb_tiles);
    cb_wait_front(cb_rm, nt);
    cb_reserve_back(cb_tiles, nt);
    tilize_block(cb_rm, nt, cb_tiles);
    cb_push_back(cb_tiles, nt);
    cb_pop_front(cb_rm, nt);
    tilize_uninit(cb_rm, cb_tiles);

    copy_tile_to_dst_init_short(cb_tiles);
    square_tile_init();
    cb_wait_front(cb_tiles, nt);
    cb_reserve_back(cb_sq, nt);
    for (uint32_t t = 0; t < nt; t++) {
      tile_regs_acquire();
      copy_tile(cb_tiles, t, 0);
      square_tile(0);
      tile_regs_commit();
      tile_regs_wait();
      pack_tile(0, cb_sq);
      tile_regs_release();
    }
    cb_push_back(cb_sq, nt);
    cb_pop_front(cb_tiles, nt);

    untilize_init(cb_sq);
    cb_wait_front(cb_sq, nt);
    cb_reserve_back(cb_out, nt);
    untilize_block(cb_sq, nt, cb_out);
    cb_push_back(cb_out, nt);
    cb_pop_front(cb_sq, nt);
    untilize_uninit(cb_sq);
  }
}
