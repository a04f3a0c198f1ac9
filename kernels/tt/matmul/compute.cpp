// zyx-tt kernel library: matmul compute. Each output tile of this core
// accumulates the k/32 tile products of CBs 0 and 1 in DST register 0 and
// goes to CB 16, in reader_rm's tile order.
// Runtime args: m, n, k, core index, core count.
#include <cstdint>

#include "compute_kernel_api/matmul.h"
#include "compute_kernel_api/tile_move_copy.h"

namespace NAMESPACE {
void MAIN {
  const uint32_t m = get_arg_val<uint32_t>(0);
  const uint32_t n = get_arg_val<uint32_t>(1);
  const uint32_t k = get_arg_val<uint32_t>(2);
  const uint32_t core = get_arg_val<uint32_t>(3);
  const uint32_t cores = get_arg_val<uint32_t>(4);
  constexpr uint32_t cb_a = tt::CBIndex::c_0;
  constexpr uint32_t cb_b = tt::CBIndex::c_1;
  constexpr uint32_t cb_c = tt::CBIndex::c_16;

  mm_init(cb_a, cb_b, cb_c);
  const uint32_t tiles = (m / 32) * (n / 32), kt_count = k / 32;
  for (uint32_t t = core; t < tiles; t += cores) {
    tile_regs_acquire();
    for (uint32_t kt = 0; kt < kt_count; kt++) {
      cb_wait_front(cb_a, 1);
      cb_wait_front(cb_b, 1);
      matmul_tiles(cb_a, cb_b, 0, 0, 0, false);
      cb_pop_front(cb_a, 1);
      cb_pop_front(cb_b, 1);
    }
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb_c, 1);
    pack_tile(0, cb_c);
    cb_push_back(cb_c, 1);
    tile_regs_release();
  }
}
}  // namespace NAMESPACE
