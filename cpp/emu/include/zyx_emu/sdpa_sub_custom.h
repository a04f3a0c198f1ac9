// tt-metal's api/compute/experimental/sdpa_sub_custom.h (sdpa's streaming
// compute): a column-broadcast subtract over ct_dim tiles through custom LLK
// unpack and math paths. zyx-tt's emulator does not model these paths yet, so
// each call stops the run with an error that names it; the signatures are
// tt-metal's, so a kernel that includes the header builds.
#pragma once

#include "zyx_emu/compute.h"

namespace ckernel {
ALWI void sub_bcast_cols_init_short_custom(uint32_t, uint32_t, uint32_t, uint32_t = 0) {
  ZYX_API.fail("sub_bcast_cols_init_short_custom: sdpa's custom column-broadcast subtract is not emulated");
}
ALWI void sub_tiles_bcast_cols_custom(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {
  ZYX_API.fail("sub_tiles_bcast_cols_custom: sdpa's custom column-broadcast subtract is not emulated");
}
}  // namespace ckernel
