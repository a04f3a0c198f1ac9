// zyx-tt kernel library: zyx/row_major.h, for data-movement kernels that
// move row-major matrices in interleaved buffers to and from tiles: byte
// spans split at page boundaries, and 32x32 tiles gathered or scattered face
// row by face row. Elements are f32 (4 bytes) unless a call gives elem, the
// element size in bytes. A bundle gets it with "includes": "zyx:tt/include"
// (or "zyx:tt/include/zyx/row_major.h", then #include "row_major.h"); a
// program with a library kernel has it anyway.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace zyx {

// The runtime args of a kernel that moves one row-major m x n matrix, its
// cores sharing the work (as zyx/chunks.h's Chunks reads its plan): from
// runtime arg `first` on, the buffer's address, its page size, m, n, this
// core's index and the number of cores.
struct MatrixArgs {
  uint32_t addr, page, m, n, core, cores;

  static MatrixArgs from_args(uint32_t first) {
    return {get_arg_val<uint32_t>(first),     get_arg_val<uint32_t>(first + 1), get_arg_val<uint32_t>(first + 2),
            get_arg_val<uint32_t>(first + 3), get_arg_val<uint32_t>(first + 4), get_arg_val<uint32_t>(first + 5)};
  }
};

// Calls f(page, within, l1, n) for each page that bytes [offset, offset +
// len) of an interleaved buffer touch: the page, the byte in it the piece
// starts at, the piece's L1 address and its length. The offset is 64 bits:
// a buffer may hold more than 4 GiB (its pages, each at most 4 GiB, number
// fewer than 2^32).
template <typename F>
inline void for_each_page_piece(uint32_t page_size, uint64_t offset, uint32_t l1, uint32_t len, F f) {
  uint32_t page = static_cast<uint32_t>(offset / page_size), within = static_cast<uint32_t>(offset % page_size);
  while (len) {
    uint32_t n = page_size - within < len ? page_size - within : len;
    f(page, within, l1, n);
    page++, within = 0, l1 += n, len -= n;
  }
}

// Reads bytes [offset, offset + len) of an interleaved buffer into L1 at l1,
// one NOC read per page touched.
template <typename Accessor>
inline void read_span(const Accessor& buf, uint32_t page_size, uint64_t offset, uint32_t l1, uint32_t len) {
  for_each_page_piece(page_size, offset, l1, len, [&](uint32_t page, uint32_t within, uint32_t at, uint32_t n) {
    noc_async_read(buf.get_noc_addr(page, within), at, n);
  });
}

// Writes len bytes from L1 at l1 to bytes [offset, offset + len) of an
// interleaved buffer, one NOC write per page touched.
template <typename Accessor>
inline void write_span(const Accessor& buf, uint32_t page_size, uint64_t offset, uint32_t l1, uint32_t len) {
  for_each_page_piece(page_size, offset, l1, len, [&](uint32_t page, uint32_t within, uint32_t at, uint32_t n) {
    noc_async_write(at, buf.get_noc_addr(page, within), n);
  });
}

// Byte offset of the half row h (columns 16h .. 16h + 15) of row r inside a
// tile page: faces 0 and 1 hold rows 0-15, faces 2 and 3 rows 16-31.
inline uint32_t face_row_offset(uint32_t r, uint32_t h, uint32_t elem = 4) {
  return (((r >> 4) * 2 + h) * 256 + (r & 15) * 16) * elem;
}

// Calls f(offset, at, len) for each of the 64 half rows of tile (tr, tc) of
// a row-major matrix with n columns: offset is the half row's byte offset in
// the matrix, at its byte offset in the tile page, len its bytes.
template <typename F>
inline void for_each_face_row(uint32_t n, uint32_t tr, uint32_t tc, uint32_t elem, F f) {
  for (uint32_t r = 0; r < 32; r++)
    for (uint32_t h = 0; h < 2; h++)
      f(((tr * 32 + r) * n + tc * 32 + h * 16) * elem, face_row_offset(r, h, elem), 16 * elem);
}

// Gathers tile (tr, tc) of a row-major matrix with n columns into L1 at l1,
// in the tiled layout.
template <typename Accessor>
inline void read_tile(const Accessor& buf, uint32_t page_size, uint32_t n, uint32_t tr, uint32_t tc, uint32_t l1,
                      uint32_t elem = 4) {
  for_each_face_row(n, tr, tc, elem, [&](uint32_t offset, uint32_t at, uint32_t len) {
    read_span(buf, page_size, offset, l1 + at, len);
  });
}

// Scatters a tile in the tiled layout at l1 to tile (tr, tc) of a row-major
// matrix with n columns.
template <typename Accessor>
inline void write_tile(const Accessor& buf, uint32_t page_size, uint32_t n, uint32_t tr, uint32_t tc, uint32_t l1,
                       uint32_t elem = 4) {
  for_each_face_row(n, tr, tc, elem, [&](uint32_t offset, uint32_t at, uint32_t len) {
    write_span(buf, page_size, offset, l1 + at, len);
  });
}

}  // namespace zyx
