// zyx-tt kernel library: read_chunks_unary (data movement). Streams one
// interleaved input buffer x chunk by chunk into circular buffer 0: chunk
// t = core, core + cores, ... holds the bytes [t * S, (t + 1) * S) of x,
// S = get_tile_size(0); a partial last chunk is read as far as the buffer
// goes. x holds n elements of S / 1024 bytes.
// Runtime args: x address, x page size, n, core index, core count.
#include <cstdint>

#include "dataflow_api.h"

void kernel_main() {
  const uint32_t x_addr = get_arg_val<uint32_t>(0);
  const uint32_t page_size = get_arg_val<uint32_t>(1);
  const uint32_t n = get_arg_val<uint32_t>(2);
  const uint32_t core = get_arg_val<uint32_t>(3);
  const uint32_t cores = get_arg_val<uint32_t>(4);

  constexpr uint32_t cb_x = tt::CBIndex::c_0;
  const InterleavedAddrGen<true> x = {.bank_base_address = x_addr, .page_size = page_size};
  const uint32_t tile_bytes = get_tile_size(cb_x);
  const uint32_t total = n * (tile_bytes / 1024);
  const uint32_t tiles = (total + tile_bytes - 1) / tile_bytes;
  for (uint32_t t = core; t < tiles; t += cores) {
    uint32_t offset = t * tile_bytes;
    uint32_t len = total - offset < tile_bytes ? total - offset : tile_bytes;
    cb_reserve_back(cb_x, 1);
    uint32_t l1 = get_write_ptr(cb_x);
    while (len) {
      uint32_t page = offset / page_size, within = offset % page_size;
      uint32_t chunk = page_size - within < len ? page_size - within : len;
      noc_async_read(x.get_noc_addr(page, within), l1, chunk);
      offset += chunk, l1 += chunk, len -= chunk;
    }
    noc_async_read_barrier();
    cb_push_back(cb_x, 1);
  }
}
