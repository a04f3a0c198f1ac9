// zyx-tt example metal2_add: writer, a Metal 2.0 kernel. It drains
// args::num_tiles tiles from dfb::out into tensor ta::c from tile
// args::start_id on, args::step (a named compile-time arg) at a time,
// shifted by its first runtime vararg (0).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "experimental/dataflow_buffer.h"

void kernel_main() {
  constexpr uint32_t step = get_arg(args::step);
  static_assert(step == 1, "the program steps one tile at a time");
  const uint32_t start_id = get_arg(args::start_id);
  const uint32_t num_tiles = get_arg(args::num_tiles);
  const uint32_t c_shift = get_vararg(0);

  const TensorAccessor c(ta::c);
  experimental::DataflowBuffer out(dfb::out);
  for (uint32_t t = start_id; t < start_id + num_tiles; t += step) {
    out.wait_front(step);
    noc_async_write_tile(t + c_shift, c, out.get_read_ptr());
    noc_async_write_barrier();
    out.pop_front(step);
  }
}
