// zyx-tt example: DRAM loopback. Each core copies the pages
// p = core, core + cores, ... of x to y through a scratch area in its L1
// (circular buffer 0's memory, used directly without push or pop).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
  const uint32_t x_addr = get_arg_val<uint32_t>(0);
  const uint32_t y_addr = get_arg_val<uint32_t>(1);
  const uint32_t page_size = get_arg_val<uint32_t>(2);
  const uint32_t pages = get_arg_val<uint32_t>(3);
  const uint32_t size = get_arg_val<uint32_t>(4);
  const uint32_t core = get_arg_val<uint32_t>(5);
  const uint32_t cores = get_arg_val<uint32_t>(6);

  constexpr auto x_args = TensorAccessorArgs<0>();
  constexpr auto y_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
  const auto x = TensorAccessor(x_args, x_addr, page_size);
  const auto y = TensorAccessor(y_args, y_addr, page_size);
  const uint32_t scratch = get_write_ptr(tt::CBIndex::c_0);
  const uint32_t scratch_bytes = get_tile_size(tt::CBIndex::c_0);

  for (uint32_t p = core; p < pages; p += cores) {
    const uint32_t len = size - p * page_size < page_size ? size - p * page_size : page_size;
    for (uint32_t done = 0; done < len; done += scratch_bytes) {
      const uint32_t chunk = len - done < scratch_bytes ? len - done : scratch_bytes;
      noc_async_read(x.get_noc_addr(p, done), scratch, chunk);
      noc_async_read_barrier();
      noc_async_write(scratch, y.get_noc_addr(p, done), chunk);
      noc_async_write_barrier();
    }
  }
}
