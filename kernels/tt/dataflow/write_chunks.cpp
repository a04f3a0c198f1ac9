// zyx-tt kernel library: write_chunks (data movement). Drains circular
// buffer 16 into an interleaved output buffer, one page of CB 16 per chunk:
// chunk t = core, core + cores, ... holds the bytes [t * S, (t + 1) * S) of
// the output, S = get_tile_size(16), and a partial last chunk writes only
// the bytes inside the buffer. The buffer holds n elements of S / 1024 bytes.
// Runtime args: out address, out page size, n, core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

template <typename Gen>
static void write_span(const Gen& buf, uint32_t page_size, uint32_t offset, uint32_t l1, uint32_t len) {
  while (len) {
    uint32_t page = offset / page_size, within = offset % page_size;
    uint32_t n = page_size - within < len ? page_size - within : len;
    noc_async_write(l1, buf.get_noc_addr(page, within), n);
    offset += n, l1 += n, len -= n;
  }
}

void kernel_main() {
  const uint32_t z_addr = get_arg_val<uint32_t>(0);
  const uint32_t page_size = get_arg_val<uint32_t>(1);
  const uint32_t n = get_arg_val<uint32_t>(2);
  const uint32_t core = get_arg_val<uint32_t>(3);
  const uint32_t cores = get_arg_val<uint32_t>(4);

  constexpr uint32_t cb_z = tt::CBIndex::c_16;
  const InterleavedAddrGen<true> z = {.bank_base_address = z_addr, .page_size = page_size};
  const uint32_t tile_bytes = get_tile_size(cb_z);
  const uint32_t total = n * (tile_bytes / 1024);
  const uint32_t tiles = (total + tile_bytes - 1) / tile_bytes;
  for (uint32_t t = core; t < tiles; t += cores) {
    const uint32_t offset = t * tile_bytes;
    const uint32_t len = total - offset < tile_bytes ? total - offset : tile_bytes;
    cb_wait_front(cb_z, 1);
    write_span(z, page_size, offset, get_read_ptr(cb_z), len);
    noc_async_write_barrier();
    cb_pop_front(cb_z, 1);
  }
}
