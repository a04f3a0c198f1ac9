// zyx-tt example: compute of matmul_bfp8: c = a · b with b unpacked from
// Bfp8_b; DST accumulates in fp32 over the Kt tiles of the inner dimension.
#include <cstdint>

#include "api/compute/matmul.h"

void kernel_main() {
  const uint32_t mt = get_arg_val<uint32_t>(0), nt = get_arg_val<uint32_t>(1), kt = get_arg_val<uint32_t>(2);
  const uint32_t core = get_arg_val<uint32_t>(3), cores = get_arg_val<uint32_t>(4);
  constexpr uint32_t cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1, cb_c = tt::CBIndex::c_16;
  compute_kernel_hw_startup(cb_a, cb_b, cb_c);
  mm_init(cb_a, cb_b, cb_c);
  for (uint32_t t = core; t < mt * nt; t += cores) {
    tile_regs_acquire();
    for (uint32_t k = 0; k < kt; k++) {
      cb_wait_front(cb_a, 1);
      cb_wait_front(cb_b, 1);
      matmul_tiles(cb_a, cb_b, 0, 0, 0);
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
