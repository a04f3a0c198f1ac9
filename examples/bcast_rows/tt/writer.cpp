// zyx-tt example: writer of bcast_rows: scatters each result tile back into
// the row-major output matrix.
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
  const uint32_t z_addr = get_arg_val<uint32_t>(0), z_page = get_arg_val<uint32_t>(1);
  const uint32_t m = get_arg_val<uint32_t>(2), n = get_arg_val<uint32_t>(3);
  const uint32_t core = get_arg_val<uint32_t>(4), cores = get_arg_val<uint32_t>(5);
  constexpr auto z_args = TensorAccessorArgs<0>();
  const auto z = TensorAccessor(z_args, z_addr, z_page);
  const uint32_t tiles_c = n / 32, tiles = (m / 32) * tiles_c;
  for (uint32_t t = core; t < tiles; t += cores) {
    cb_wait_front(16, 1);
    write_tile(z, z_page, n, t / tiles_c, t % tiles_c, get_read_ptr(16));
    noc_async_write_barrier();
    cb_pop_front(16, 1);
  }
}
