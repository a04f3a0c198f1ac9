// zyx-tt example: compute of reduce_rows: for each tile row, reduce_tile
// sums every tile's rows into column 0 of DST 0 (times the scaler, 1.0).
#include <cstdint>

#include "api/compute/reduce.h"

void kernel_main() {
  const uint32_t m = get_arg_val<uint32_t>(0), n = get_arg_val<uint32_t>(1);
  const uint32_t core = get_arg_val<uint32_t>(2), cores = get_arg_val<uint32_t>(3);
  constexpr auto cb_x = tt::CBIndex::c_0, cb_scaler = tt::CBIndex::c_2, cb_s = tt::CBIndex::c_16;
  compute_kernel_hw_startup(cb_x, cb_scaler, cb_s);
  reduce_init<PoolType::SUM, ReduceDim::REDUCE_ROW>(cb_x, cb_scaler, cb_s);
  cb_wait_front(cb_scaler, 1);
  for (uint32_t tr = core; tr < m / 32; tr += cores) {
    tile_regs_acquire();
    for (uint32_t tc = 0; tc < n / 32; tc++) {
      cb_wait_front(cb_x, 1);
      reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(cb_x, cb_scaler, 0, 0, 0);
      cb_pop_front(cb_x, 1);
    }
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb_s, 1);
    pack_tile(0, cb_s);
    cb_push_back(cb_s, 1);
    tile_regs_release();
  }
  reduce_uninit();
}
