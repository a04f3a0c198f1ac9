// zyx-tt kernel library: matmul reader_rm (data movement). a (m x k) and
// b (k x n) are row-major interleaved buffers; m, n and k are multiples of
// 32. For each output tile (mt, nt) of this core (tiles core, core + cores,
// ... in row-major order) it streams the tile pairs a(mt, kt), b(kt, nt) for
// kt = 0 .. k/32 - 1 into CBs 0 and 1, converting each 32x32 block to the
// tiled layout (four 16x16 faces) as it reads.
// Runtime args: a address, b address, a page size, b page size, m, n, k,
// core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

static void read_span(const InterleavedAddrGen<true>& buf, uint32_t offset, uint32_t l1, uint32_t len) {
  while (len) {
    uint32_t page = offset / buf.page_size, within = offset % buf.page_size;
    uint32_t n = buf.page_size - within < len ? buf.page_size - within : len;
    noc_async_read(buf.get_noc_addr(page, within), l1, n);
    offset += n, l1 += n, len -= n;
  }
}

// Reads the 32x32 block at (row0, col0) of a row-major matrix with `cols`
// columns into L1 in tiled order.
static void read_tile(const InterleavedAddrGen<true>& buf, uint32_t cols, uint32_t elem, uint32_t row0, uint32_t col0,
                      uint32_t l1) {
  for (uint32_t r = 0; r < 32; r++) {
    for (uint32_t half = 0; half < 2; half++) {
      uint32_t face = (r / 16) * 2 + half;
      uint32_t dst = l1 + (face * 256 + (r % 16) * 16) * elem;
      read_span(buf, ((row0 + r) * cols + col0 + half * 16) * elem, dst, 16 * elem);
    }
  }
}

void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0);
  const uint32_t b_addr = get_arg_val<uint32_t>(1);
  const uint32_t a_page = get_arg_val<uint32_t>(2);
  const uint32_t b_page = get_arg_val<uint32_t>(3);
  const uint32_t m = get_arg_val<uint32_t>(4);
  const uint32_t n = get_arg_val<uint32_t>(5);
  const uint32_t k = get_arg_val<uint32_t>(6);
  const uint32_t core = get_arg_val<uint32_t>(7);
  const uint32_t cores = get_arg_val<uint32_t>(8);

  constexpr uint32_t cb_a = tt::CBIndex::c_0;
  constexpr uint32_t cb_b = tt::CBIndex::c_1;
  const uint32_t elem = get_tile_size(cb_a) / 1024;
  const InterleavedAddrGen<true> a = {.bank_base_address = a_addr, .page_size = a_page};
  const InterleavedAddrGen<true> b = {.bank_base_address = b_addr, .page_size = b_page};
  const uint32_t mt_count = m / 32, nt_count = n / 32, kt_count = k / 32;
  for (uint32_t t = core; t < mt_count * nt_count; t += cores) {
    const uint32_t mt = t / nt_count, nt = t % nt_count;
    for (uint32_t kt = 0; kt < kt_count; kt++) {
      cb_reserve_back(cb_a, 1);
      read_tile(a, k, elem, mt * 32, kt * 32, get_write_ptr(cb_a));
      noc_async_read_barrier();
      cb_push_back(cb_a, 1);
      cb_reserve_back(cb_b, 1);
      read_tile(b, n, elem, kt * 32, nt * 32, get_write_ptr(cb_b));
      noc_async_read_barrier();
      cb_push_back(cb_b, 1);
    }
  }
}
