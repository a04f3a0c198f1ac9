// zyx-tt example l1_loopback: copies tiles start_id .. start_id + num_tiles - 1
// of x to y through this core's shard of an L1 buffer: the buffer's address
// is a pointer into this core's L1, used as the staging area of each tile.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
  const uint32_t l1_buffer_addr = get_arg_val<uint32_t>(0);
  const uint32_t src_addr = get_arg_val<uint32_t>(1);
  const uint32_t dst_addr = get_arg_val<uint32_t>(2);
  const uint32_t start_id = get_arg_val<uint32_t>(3);
  const uint32_t num_tiles = get_arg_val<uint32_t>(4);
  const uint32_t tile_bytes = get_arg_val<uint32_t>(5);

  const InterleavedAddrGenFast<true> src = {
      .bank_base_address = src_addr, .page_size = tile_bytes, .data_format = DataFormat::Float16_b};
  const InterleavedAddrGenFast<true> dst = {
      .bank_base_address = dst_addr, .page_size = tile_bytes, .data_format = DataFormat::Float16_b};
  for (uint32_t t = start_id; t < start_id + num_tiles; t++) {
    noc_async_read_tile(t, src, l1_buffer_addr);
    noc_async_read_barrier();
    noc_async_write_tile(t, dst, l1_buffer_addr);
    noc_async_write_barrier();
  }
}
