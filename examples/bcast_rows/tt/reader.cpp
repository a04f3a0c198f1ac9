// zyx-tt example: reader of bcast_rows. For each tile (tr, tc) of x this core
// owns (t = core, core + cores, ...), it pushes the tile of b holding
// b[32 tc .. 32 tc + 31] in its row 0 to cb 1 and the tile of x to cb 0. The
// matrices are row-major in DRAM; tiles are gathered face row by face row.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

// Reads bytes [offset, offset + len) of an interleaved buffer into L1,
// splitting at page boundaries.
template <typename Accessor>
inline void read_span(const Accessor& buf, uint32_t page_size, uint32_t offset, uint32_t l1, uint32_t len) {
  while (len) {
    uint32_t page = offset / page_size, within = offset % page_size;
    uint32_t n = page_size - within < len ? page_size - within : len;
    noc_async_read(buf.get_noc_addr(page, within), l1, n);
    offset += n, l1 += n, len -= n;
  }
}

template <typename Accessor>
inline void write_span(const Accessor& buf, uint32_t page_size, uint32_t offset, uint32_t l1, uint32_t len) {
  while (len) {
    uint32_t page = offset / page_size, within = offset % page_size;
    uint32_t n = page_size - within < len ? page_size - within : len;
    noc_async_write(l1, buf.get_noc_addr(page, within), n);
    offset += n, l1 += n, len -= n;
  }
}

// Byte offset of face row (r, half h) inside a tile page of f32.
inline uint32_t face_row_offset(uint32_t r, uint32_t h) { return (((r >> 4) * 2 + h) * 256 + (r & 15) * 16) * 4; }

// Tile (tr, tc) of an m x n row-major f32 matrix into L1 at `l1`.
template <typename Accessor>
inline void read_tile(const Accessor& buf, uint32_t page_size, uint32_t n, uint32_t tr, uint32_t tc, uint32_t l1) {
  for (uint32_t r = 0; r < 32; r++)
    for (uint32_t h = 0; h < 2; h++)
      read_span(buf, page_size, ((tr * 32 + r) * n + tc * 32 + h * 16) * 4, l1 + face_row_offset(r, h), 64);
}

template <typename Accessor>
inline void write_tile(const Accessor& buf, uint32_t page_size, uint32_t n, uint32_t tr, uint32_t tc, uint32_t l1) {
  for (uint32_t r = 0; r < 32; r++)
    for (uint32_t h = 0; h < 2; h++)
      write_span(buf, page_size, ((tr * 32 + r) * n + tc * 32 + h * 16) * 4, l1 + face_row_offset(r, h), 64);
}

void kernel_main() {
  const uint32_t x_addr = get_arg_val<uint32_t>(0), b_addr = get_arg_val<uint32_t>(1);
  const uint32_t x_page = get_arg_val<uint32_t>(2), b_page = get_arg_val<uint32_t>(3);
  const uint32_t m = get_arg_val<uint32_t>(4), n = get_arg_val<uint32_t>(5);
  const uint32_t core = get_arg_val<uint32_t>(6), cores = get_arg_val<uint32_t>(7);
  constexpr auto x_args = TensorAccessorArgs<0>();
  constexpr auto b_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
  const auto x = TensorAccessor(x_args, x_addr, x_page);
  const auto b = TensorAccessor(b_args, b_addr, b_page);
  const uint32_t tiles_c = n / 32, tiles = (m / 32) * tiles_c;
  for (uint32_t t = core; t < tiles; t += cores) {
    const uint32_t tr = t / tiles_c, tc = t % tiles_c;
    cb_reserve_back(1, 1);
    const uint32_t bl1 = get_write_ptr(1);
    volatile tt_l1_ptr uint32_t* bt = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(bl1);
    for (uint32_t i = 0; i < 1024; i++) bt[i] = 0;
    read_span(b, b_page, tc * 32 * 4, bl1 + face_row_offset(0, 0), 64);
    read_span(b, b_page, (tc * 32 + 16) * 4, bl1 + face_row_offset(0, 1), 64);
    cb_reserve_back(0, 1);
    read_tile(x, x_page, n, tr, tc, get_write_ptr(0));
    noc_async_read_barrier();
    cb_push_back(1, 1);
    cb_push_back(0, 1);
  }
}
