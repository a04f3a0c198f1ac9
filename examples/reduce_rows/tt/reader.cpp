// zyx-tt example: reader of reduce_rows. Fills the scaler tile (cb 2) with
// 1.0 once, then streams the n/32 tiles of every tile row this core owns
// (rows R = core, core + cores, ...) into cb 0, gathered face row by face row
// from the row-major matrix.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/row_major.h"

void kernel_main() {
  const auto [x_addr, x_page, m, n, core, cores] = zyx::MatrixArgs::from_args(0);
  constexpr auto x_args = TensorAccessorArgs<0>();
  const auto x = TensorAccessor(x_args, x_addr, x_page);
  cb_reserve_back(2, 1);
  volatile tt_l1_ptr float* one = reinterpret_cast<volatile tt_l1_ptr float*>(get_write_ptr(2));
  for (uint32_t i = 0; i < 1024; i++) one[i] = 1.0f;
  cb_push_back(2, 1);
  for (uint32_t tr = core; tr < m / 32; tr += cores)
    for (uint32_t tc = 0; tc < n / 32; tc++) {
      cb_reserve_back(0, 1);
      zyx::read_tile(x, x_page, n, tr, tc, get_write_ptr(0));
      noc_async_read_barrier();
      cb_push_back(0, 1);
    }
}
