// zyx-tt example: writer of tilize_square: each untilized strip in cb 16 is
// 32 row-major rows, written back in one span.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/row_major.h"

void kernel_main() {
  const auto [y_addr, y_page, m, n, core, cores] = zyx::MatrixArgs::from_args(0);
  constexpr auto y_args = TensorAccessorArgs<0>();
  const auto y = TensorAccessor(y_args, y_addr, y_page);
  const uint32_t nt = n / 32;
  for (uint32_t r = core; r < m / 32; r += cores) {
    cb_wait_front(16, nt);
    zyx::write_span(y, y_page, r * 32 * n * 4, get_read_ptr(16), 32 * n * 4);
    noc_async_write_barrier();
    cb_pop_front(16, nt);
  }
}
