// zyx-tt kernel library: read_chunks_binary (data movement). Streams two
// interleaved input buffers x and y chunk by chunk into circular buffers 0
// and 1: chunk t = core, core + cores, ... holds the bytes [t * S, (t + 1) * S)
// of each input, S = get_tile_size(0); a partial last chunk is read as far
// as the buffers go. Each buffer holds n elements of S / 1024 bytes.
// Compile args: x's accessor args, then y's. Runtime args: x address,
// y address, page size (both), n, core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

// Reads bytes [offset, offset + len) of an interleaved buffer into L1,
// splitting at page boundaries.
template <typename Accessor>
static void read_span(const Accessor& buf, uint32_t page_size, uint32_t offset, uint32_t l1, uint32_t len) {
  while (len) {
    uint32_t page = offset / page_size, within = offset % page_size;
    uint32_t n = page_size - within < len ? page_size - within : len;
    noc_async_read(buf.get_noc_addr(page, within), l1, n);
    offset += n, l1 += n, len -= n;
  }
}

void kernel_main() {
  const uint32_t x_addr = get_arg_val<uint32_t>(0);
  const uint32_t y_addr = get_arg_val<uint32_t>(1);
  const uint32_t page_size = get_arg_val<uint32_t>(2);
  const uint32_t n = get_arg_val<uint32_t>(3);
  const uint32_t core = get_arg_val<uint32_t>(4);
  const uint32_t cores = get_arg_val<uint32_t>(5);

  constexpr uint32_t cb_x = tt::CBIndex::c_0;
  constexpr uint32_t cb_y = tt::CBIndex::c_1;
  constexpr auto x_args = TensorAccessorArgs<0>();
  constexpr auto y_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
  const auto x = TensorAccessor(x_args, x_addr, page_size);
  const auto y = TensorAccessor(y_args, y_addr, page_size);

  const uint32_t tile_bytes = get_tile_size(cb_x);
  const uint32_t total = n * (tile_bytes / 1024);
  const uint32_t tiles = (total + tile_bytes - 1) / tile_bytes;
  for (uint32_t t = core; t < tiles; t += cores) {
    const uint32_t offset = t * tile_bytes;
    const uint32_t len = total - offset < tile_bytes ? total - offset : tile_bytes;
    cb_reserve_back(cb_x, 1);
    cb_reserve_back(cb_y, 1);
    read_span(x, page_size, offset, get_write_ptr(cb_x), len);
    read_span(y, page_size, offset, get_write_ptr(cb_y), len);
    noc_async_read_barrier();
    cb_push_back(cb_x, 1);
    cb_push_back(cb_y, 1);
  }
}
