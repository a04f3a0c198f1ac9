// The int32 quantization calls of tt-metal's api/compute/quantization.h
// (quant, requant, dequant with a scale tile and a zero point). zyx-tt's
// emulator does not model their SFPU arithmetic yet, so each call stops the
// run with an error that names it; a kernel that includes the header but
// takes another path builds and runs as usual.
#pragma once

#include "zyx_emu/compute.h"

namespace ckernel {
ALWI void quant_tile_init(uint32_t) { ZYX_API.fail("quant_tile_init: int32 quantization is not emulated"); }
ALWI void requant_tile_init(uint32_t) { ZYX_API.fail("requant_tile_init: int32 quantization is not emulated"); }
ALWI void dequant_tile_init(uint32_t) { ZYX_API.fail("dequant_tile_init: int32 quantization is not emulated"); }
ALWI void quant_tile(uint32_t, uint32_t, uint32_t) { ZYX_API.fail("quant_tile: int32 quantization is not emulated"); }
ALWI void requant_tile(uint32_t, uint32_t, uint32_t) {
  ZYX_API.fail("requant_tile: int32 quantization is not emulated");
}
ALWI void dequant_tile(uint32_t, uint32_t, uint32_t) {
  ZYX_API.fail("dequant_tile: int32 quantization is not emulated");
}
}  // namespace ckernel
