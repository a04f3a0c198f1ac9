// zyx-tt kernel library: matmul writer_rm (data movement). Converts each
// output tile of this core from CB 16 (the tiled layout) back to rows of the
// row-major interleaved c (m x n), in reader_rm's tile order (zyx/row_major.h).
// The tile plan is zyx/matmul_plan.h. Runtime args: c address, c page size,
// m, n, core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/matmul_plan.h"
#include "zyx/row_major.h"

void kernel_main() {
  const uint32_t c_addr = get_arg_val<uint32_t>(0);
  const uint32_t c_page = get_arg_val<uint32_t>(1);
  const zyx::MatmulPlan plan = zyx::MatmulPlan::output_from_args(2);

  constexpr uint32_t cb_c = tt::CBIndex::c_16;
  const uint32_t elem = get_tile_size(cb_c) / 1024;
  const InterleavedAddrGen<true> c = {.bank_base_address = c_addr, .page_size = c_page};
  plan.for_each_tile([&](uint32_t mt, uint32_t nt) {
    cb_wait_front(cb_c, 1);
    zyx::write_tile(c, c_page, plan.n, mt, nt, get_read_ptr(cb_c), elem);
    noc_async_write_barrier();
    cb_pop_front(cb_c, 1);
  });
}
