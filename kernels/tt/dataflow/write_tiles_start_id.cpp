// zyx-tt kernel library: write_tiles_start_id (data movement). Writes the
// tiles start_id .. start_id + num_tiles - 1 of an interleaved, tile-paged
// output buffer from circular buffer 16, one tile at a time.
// Compile args: the output's accessor args. Runtime args: out address,
// start_id, num_tiles.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
  const uint32_t c_addr = get_arg_val<uint32_t>(0);
  const uint32_t start_id = get_arg_val<uint32_t>(1);
  const uint32_t num_tiles = get_arg_val<uint32_t>(2);

  constexpr uint32_t cb_c = tt::CBIndex::c_16;
  const uint32_t tile_bytes = get_tile_size(cb_c);
  constexpr auto c_args = TensorAccessorArgs<0>();
  const auto c = TensorAccessor(c_args, c_addr, tile_bytes);

  for (uint32_t t = start_id; t < start_id + num_tiles; t++) {
    cb_wait_front(cb_c, 1);
    noc_async_write_tile(t, c, get_read_ptr(cb_c));
    noc_async_write_barrier();
    cb_pop_front(cb_c, 1);
  }
}
