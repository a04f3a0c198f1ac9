// What the LLK's ckernel_defs.h gives kernels of zyx-tt's Tensix emulator:
// llk_defs.h's enums and the tile and face shape, in ckernel (so unqualified
// in a compute kernel, which includes this through compute.h, as on the
// card; a data-movement kernel that includes ckernel_defs.h names them
// ckernel::TILE_HEIGHT and so on).
#pragma once

#include <cstdint>

#include "zyx_emu/llk_defs.h"

namespace ckernel {
constexpr std::uint32_t FACE_HEIGHT = 16;
constexpr std::uint32_t FACE_WIDTH = 16;
constexpr std::uint32_t TILE_HEIGHT = 32;
constexpr std::uint32_t TILE_WIDTH = 32;
constexpr std::uint32_t FACE_R_DIM = FACE_HEIGHT;
constexpr std::uint32_t FACE_C_DIM = FACE_WIDTH;
constexpr std::uint32_t TILE_R_DIM = TILE_HEIGHT;
constexpr std::uint32_t TILE_C_DIM = TILE_WIDTH;
constexpr std::uint32_t TILE_NUM_FACES = (TILE_R_DIM * TILE_C_DIM) / (FACE_R_DIM * FACE_C_DIM);
}  // namespace ckernel
