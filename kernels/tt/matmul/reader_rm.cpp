// zyx-tt kernel library: matmul reader_rm (data movement). a (m x k) and
// b (k x n) are row-major interleaved buffers; m, n and k are multiples of
// 32. For each output tile (mt, nt) of this core (tiles core, core + cores,
// ... in row-major order) it streams the tile pairs a(mt, kt), b(kt, nt) for
// kt = 0 .. k/32 - 1 into CBs 0 and 1, converting each 32x32 block to the
// tiled layout (four 16x16 faces) as it reads (zyx/row_major.h; the tile
// plan is zyx/matmul_plan.h).
// Runtime args: a address, b address, a page size, b page size, m, n, k,
// core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/matmul_plan.h"
#include "zyx/row_major.h"

void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0);
  const uint32_t b_addr = get_arg_val<uint32_t>(1);
  const uint32_t a_page = get_arg_val<uint32_t>(2);
  const uint32_t b_page = get_arg_val<uint32_t>(3);
  const zyx::MatmulPlan plan = zyx::MatmulPlan::from_args(4);

  constexpr uint32_t cb_a = tt::CBIndex::c_0;
  constexpr uint32_t cb_b = tt::CBIndex::c_1;
  const uint32_t elem = get_tile_size(cb_a) / 1024;
  const InterleavedAddrGen<true> a = {.bank_base_address = a_addr, .page_size = a_page};
  const InterleavedAddrGen<true> b = {.bank_base_address = b_addr, .page_size = b_page};
  plan.for_each_tile([&](uint32_t mt, uint32_t nt) {
    for (uint32_t kt = 0; kt < plan.kt_count(); kt++) {
      cb_reserve_back(cb_a, 1);
      zyx::read_tile(a, a_page, plan.k, mt, kt, get_write_ptr(cb_a), elem);
      noc_async_read_barrier();
      cb_push_back(cb_a, 1);
      cb_reserve_back(cb_b, 1);
      zyx::read_tile(b, b_page, plan.n, kt, nt, get_write_ptr(cb_b), elem);
      noc_async_read_barrier();
      cb_push_back(cb_b, 1);
    }
  });
}
