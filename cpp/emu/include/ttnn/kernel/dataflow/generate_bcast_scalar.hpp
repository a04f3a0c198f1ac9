// zyx-tt emulator: the broadcast-scalar tile helpers ttnn's kernels include
// as "ttnn/kernel/dataflow/generate_bcast_scalar.hpp". Names and arguments
// are ttnn's; the bodies are the emulator's own. Tiles hold 16-bit elements;
// `scalar` is a 16-bit value packed twice into a 32-bit word. Like ttnn's,
// these write only the elements the broadcast reads; the rest of the page
// keeps what it held. Each takes the CB as a CircularBuffer or, as ttnn's
// older and newer kernels pass it, as a CB index.
#pragma once

#include "zyx_emu/dataflow.h"

// Column broadcast: element (r, 0) of every row (faces 0 and 2, column 0).
FORCE_INLINE void generate_bcast_col_scalar(CircularBuffer cb, uint32_t scalar) {
  cb.reserve_back(1);
  auto* h = static_cast<volatile uint16_t*>(ZYX_API.l1_range(cb.get_write_ptr(), 2048, "generate_bcast_col_scalar"));
  for (uint32_t face : {0u, 2u})
    for (uint32_t r = 0; r < 16; r++) h[face * 256 + r * 16] = static_cast<uint16_t>(scalar >> 16);
  cb.push_back(1);
}

// Row broadcast: row 0 (the first row of faces 0 and 1).
FORCE_INLINE void generate_bcast_row_scalar(CircularBuffer cb, uint32_t scalar) {
  cb.reserve_back(1);
  auto* w = static_cast<volatile uint32_t*>(ZYX_API.l1_range(cb.get_write_ptr(), 1024, "generate_bcast_row_scalar"));
  for (uint32_t face = 0; face < 2; face++)
    for (uint32_t j = 0; j < 8; j++) w[face * 128 + j] = scalar;
  cb.push_back(1);
}

// Scalar broadcast: element (0, 0) (and element (0, 1) cleared).
FORCE_INLINE void generate_bcast_unary_scalar(CircularBuffer cb, uint32_t scalar) {
  cb.reserve_back(1);
  auto* w = static_cast<volatile uint32_t*>(ZYX_API.l1_range(cb.get_write_ptr(), 4, "generate_bcast_unary_scalar"));
  w[0] = scalar >> 16;
  cb.push_back(1);
}

FORCE_INLINE void generate_bcast_col_scalar(uint32_t cb_id, uint32_t scalar) {
  generate_bcast_col_scalar(CircularBuffer(cb_id), scalar);
}
FORCE_INLINE void generate_bcast_row_scalar(uint32_t cb_id, uint32_t scalar) {
  generate_bcast_row_scalar(CircularBuffer(cb_id), scalar);
}
FORCE_INLINE void generate_bcast_unary_scalar(uint32_t cb_id, uint32_t scalar) {
  generate_bcast_unary_scalar(CircularBuffer(cb_id), scalar);
}
