// Block-float tile formats (Bfp8_b, Bfp4_b) as tt-metal lays them out: a
// 32x32 tile in face order is 64 groups of 16 values (one face row each);
// the tile holds the 64 shared exponents (one byte per group, face 0 row 0
// first) and then the elements in face order, each a sign bit and a
// magnitude of 7 (Bfp8_b) or 3 (Bfp4_b) bits aligned to the group's largest
// exponent, rounded to nearest with ties to even. Bfp4_b packs two elements
// per byte, the first in the low nibble.
#pragma once

#include <cstdint>

#include "emu.hpp"

namespace zyx::emu {

// Packs 1024 f32 values (face order) into a tile of format_tile_bytes(f) bytes.
void bfp_pack_tile(const float* values, Format f, uint8_t* out);
// Unpacks a block-float tile into 1024 f32 values (face order).
void bfp_unpack_tile(const uint8_t* in, Format f, float* out);

}  // namespace zyx::emu
