// zyx-tt example: writer of matmul_bfp8: output tile t of c (f32, tiled).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
  const uint32_t c_addr = get_arg_val<uint32_t>(0);
  const uint32_t tiles = get_arg_val<uint32_t>(1);
  const uint32_t core = get_arg_val<uint32_t>(2), cores = get_arg_val<uint32_t>(3);
  constexpr uint32_t cb_c = tt::CBIndex::c_16;
  const InterleavedAddrGen<true> c = {.bank_base_address = c_addr, .page_size = get_tile_size(cb_c)};
  for (uint32_t t = core; t < tiles; t += cores) {
    cb_wait_front(cb_c, 1);
    noc_async_write_page(t, c, get_read_ptr(cb_c));
    noc_async_write_barrier();
    cb_pop_front(cb_c, 1);
  }
}
