// zyx-tt example: reader of tilize_square. For each 32-row strip this core
// owns (strips R = core, core + cores, ...) it reads the strip's 32 rows, as
// they lie in DRAM (row-major), into n/32 consecutive pages of cb 0.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/row_major.h"

void kernel_main() {
  const auto [x_addr, x_page, m, n, core, cores] = zyx::MatrixArgs::from_args(0);
  constexpr auto x_args = TensorAccessorArgs<0>();
  const auto x = TensorAccessor(x_args, x_addr, x_page);
  const uint32_t nt = n / 32;
  for (uint32_t r = core; r < m / 32; r += cores) {
    cb_reserve_back(0, nt);
    zyx::read_span(x, x_page, r * 32 * n * 4, get_write_ptr(0), 32 * n * 4);
    noc_async_read_barrier();
    cb_push_back(0, nt);
  }
}
