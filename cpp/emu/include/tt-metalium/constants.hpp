// tt-metal include path mirrored by zyx-tt's emulator: tt::constants, the
// tile and face sizes (some kernels include the host-side header for them).
#pragma once
#include <cstdint>

namespace tt::constants {
inline constexpr std::uint32_t TILE_HEIGHT = 32;
inline constexpr std::uint32_t TILE_WIDTH = 32;
inline constexpr std::uint32_t TILE_HW = TILE_HEIGHT * TILE_WIDTH;
inline constexpr std::uint32_t FACE_HEIGHT = 16;
inline constexpr std::uint32_t FACE_WIDTH = 16;
inline constexpr std::uint32_t FACE_HW = FACE_HEIGHT * FACE_WIDTH;
// Bytes of a 32 x 32 block-float tile: one byte (Bfp8_b) or half a byte
// (Bfp4_b) per value, and 64 shared exponents.
inline constexpr std::uint32_t BFLOAT8_B_TILE_HW = TILE_HW + 64;
inline constexpr std::uint32_t BFLOAT4_B_TILE_HW = TILE_HW / 2 + 64;
}  // namespace tt::constants
