// zyx-tt example: writer of bcast_rows: scatters each result tile back into
// the row-major output matrix.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/row_major.h"

void kernel_main() {
  const auto [z_addr, z_page, m, n, core, cores] = zyx::MatrixArgs::from_args(0);
  constexpr auto z_args = TensorAccessorArgs<0>();
  const auto z = TensorAccessor(z_args, z_addr, z_page);
  const uint32_t tiles_c = n / 32, tiles = (m / 32) * tiles_c;
  for (uint32_t t = core; t < tiles; t += cores) {
    cb_wait_front(16, 1);
    zyx::write_tile(z, z_page, n, t / tiles_c, t % tiles_c, get_read_ptr(16));
    noc_async_write_barrier();
    cb_pop_front(16, 1);
  }
}
