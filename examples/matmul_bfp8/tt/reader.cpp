// zyx-tt example: reader of matmul_bfp8. a (M x K, bf16) and b (K x N, the
// weights, Bfp8_b) are stored tiled: one page per 32x32 tile, tiles in
// row-major tile order. For each output tile (tr, tc) this core owns it
// streams a's tiles (tr, 0..Kt) into cb 0 and b's tiles (0..Kt, tc) into
// cb 1. A Bfp8_b page is 1088 bytes (64 shared exponents, 1024 mantissas).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0), b_addr = get_arg_val<uint32_t>(1);
  const uint32_t mt = get_arg_val<uint32_t>(2), nt = get_arg_val<uint32_t>(3), kt = get_arg_val<uint32_t>(4);
  const uint32_t core = get_arg_val<uint32_t>(5), cores = get_arg_val<uint32_t>(6);
  constexpr uint32_t cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1;
  const InterleavedAddrGen<true> a = {.bank_base_address = a_addr, .page_size = get_tile_size(cb_a)};
  const InterleavedAddrGen<true> b = {.bank_base_address = b_addr, .page_size = get_tile_size(cb_b)};
  for (uint32_t t = core; t < mt * nt; t += cores) {
    const uint32_t tr = t / nt, tc = t % nt;
    for (uint32_t k = 0; k < kt; k++) {
      cb_reserve_back(cb_a, 1);
      noc_async_read_page(tr * kt + k, a, get_write_ptr(cb_a));
      cb_reserve_back(cb_b, 1);
      noc_async_read_page(k * nt + tc, b, get_write_ptr(cb_b));
      noc_async_read_barrier();
      cb_push_back(cb_a, 1);
      cb_push_back(cb_b, 1);
    }
  }
}
