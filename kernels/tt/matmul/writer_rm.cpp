// zyx-tt kernel library: matmul writer_rm (data movement). Converts each
// output tile of this core from CB 16 (the tiled layout) back to rows of the
// row-major interleaved c (m x n), in reader_rm's tile order.
// Runtime args: c address, c page size, m, n, core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

static void write_span(const InterleavedAddrGen<true>& buf, uint32_t offset, uint32_t l1, uint32_t len) {
  while (len) {
    uint32_t page = offset / buf.page_size, within = offset % buf.page_size;
    uint32_t n = buf.page_size - within < len ? buf.page_size - within : len;
    noc_async_write(l1, buf.get_noc_addr(page, within), n);
    offset += n, l1 += n, len -= n;
  }
}

void kernel_main() {
  const uint32_t c_addr = get_arg_val<uint32_t>(0);
  const uint32_t c_page = get_arg_val<uint32_t>(1);
  const uint32_t m = get_arg_val<uint32_t>(2);
  const uint32_t n = get_arg_val<uint32_t>(3);
  const uint32_t core = get_arg_val<uint32_t>(4);
  const uint32_t cores = get_arg_val<uint32_t>(5);

  constexpr uint32_t cb_c = tt::CBIndex::c_16;
  const uint32_t elem = get_tile_size(cb_c) / 1024;
  const InterleavedAddrGen<true> c = {.bank_base_address = c_addr, .page_size = c_page};
  const uint32_t nt_count = n / 32;
  for (uint32_t t = core; t < (m / 32) * nt_count; t += cores) {
    const uint32_t mt = t / nt_count, nt = t % nt_count;
    cb_wait_front(cb_c, 1);
    const uint32_t l1 = get_read_ptr(cb_c);
    for (uint32_t r = 0; r < 32; r++) {
      for (uint32_t half = 0; half < 2; half++) {
        uint32_t face = (r / 16) * 2 + half;
        write_span(c, ((mt * 32 + r) * n + nt * 32 + half * 16) * elem, l1 + (face * 256 + (r % 16) * 16) * elem,
                   16 * elem);
      }
    }
    noc_async_write_barrier();
    cb_pop_front(cb_c, 1);
  }
}
