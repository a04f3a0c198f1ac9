// zyx-tt example: writer of reduce_rows. Column 0 of each result tile holds
// the 32 row sums (rows 0-15 in face 0, 16-31 in face 2); they are gathered to
// the front of the page and written as one 128-byte span of s.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/row_major.h"

void kernel_main() {
  const uint32_t s_addr = get_arg_val<uint32_t>(0), s_page = get_arg_val<uint32_t>(1);
  const uint32_t m = get_arg_val<uint32_t>(2);
  const uint32_t core = get_arg_val<uint32_t>(3), cores = get_arg_val<uint32_t>(4);
  constexpr auto s_args = TensorAccessorArgs<0>();
  const auto s = TensorAccessor(s_args, s_addr, s_page);
  for (uint32_t tr = core; tr < m / 32; tr += cores) {
    cb_wait_front(16, 1);
    volatile tt_l1_ptr float* t = reinterpret_cast<volatile tt_l1_ptr float*>(get_read_ptr(16));
    float col[32];
    for (uint32_t r = 0; r < 32; r++) col[r] = t[((r >> 4) * 2) * 256 + (r & 15) * 16];
    for (uint32_t r = 0; r < 32; r++) t[r] = col[r];
    zyx::write_span(s, s_page, tr * 32 * 4, get_read_ptr(16), 128);
    noc_async_write_barrier();
    cb_pop_front(16, 1);
  }
}
