// zyx-tt example matmul_mcast: compute. For each block of the inner
// dimension it multiplies the Mb x Kb tiles of a by the Kb x Nb tiles of b
// into this core's Mb x Nb output block, one output tile at a time in DST
// (fp32); partial sums go to circular buffer 24 between blocks and come
// back into DST for the next, and the last block packs into circular buffer
// 16. Buffers 16 and 24 share one allocation: a tile's partial is read
// before its output is packed over it.
#include <cstdint>

#include "api/compute/matmul.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
  constexpr uint32_t blocks = get_compile_time_arg_val(0);
  constexpr uint32_t Mb = get_compile_time_arg_val(1);
  constexpr uint32_t Nb = get_compile_time_arg_val(2);
  constexpr uint32_t Kb = get_compile_time_arg_val(3);
  constexpr uint32_t cb_in0 = tt::CBIndex::c_0, cb_in1 = tt::CBIndex::c_1;
  constexpr uint32_t cb_out = tt::CBIndex::c_16, cb_partial = tt::CBIndex::c_24;

  mm_init(cb_in0, cb_in1, cb_out);
  for (uint32_t blk = 0; blk < blocks; blk++) {
    cb_wait_front(cb_in0, Mb * Kb);
    cb_wait_front(cb_in1, Kb * Nb);
    const uint32_t dst_cb = blk + 1 == blocks ? cb_out : cb_partial;
    for (uint32_t i = 0; i < Mb; i++) {
      for (uint32_t j = 0; j < Nb; j++) {
        tile_regs_acquire();
        if (blk > 0) {
          cb_wait_front(cb_partial, 1);
          copy_tile_to_dst_init_short(cb_partial);
          copy_tile(cb_partial, 0, 0);
          cb_pop_front(cb_partial, 1);
          mm_init_short(cb_in0, cb_in1);
        }
        for (uint32_t kk = 0; kk < Kb; kk++) {
          matmul_tiles(cb_in0, cb_in1, i * Kb + kk, kk * Nb + j, 0);
        }
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(dst_cb, 1);
        pack_tile(0, dst_cb);
        cb_push_back(dst_cb, 1);
        tile_regs_release();
      }
    }
    cb_pop_front(cb_in0, Mb * Kb);
    cb_pop_front(cb_in1, Kb * Nb);
  }
}
