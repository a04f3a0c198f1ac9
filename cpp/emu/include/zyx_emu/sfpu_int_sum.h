// The int32 column and row sums of tt-metal's
// api/compute/eltwise_unary/sfpu_int_sum.h (moreh_sum's int path). zyx-tt's
// emulator does not model these SFPU sums yet, so each call stops the run
// with an error that names it; a kernel that includes the header but takes
// another path builds and runs as usual. The signatures are tt-metal's.
#pragma once

#include "zyx_emu/compute.h"

namespace ckernel {
ALWI void sfpu_sum_int_init() { ZYX_API.fail("sfpu_sum_int_init: the SFPU int32 sums are not emulated"); }
ALWI void sfpu_sum_int_col(uint32_t) { ZYX_API.fail("sfpu_sum_int_col: the SFPU int32 sums are not emulated"); }
ALWI void sfpu_sum_int_row(uint32_t) { ZYX_API.fail("sfpu_sum_int_row: the SFPU int32 sums are not emulated"); }
ALWI void sfpu_add_int(uint32_t, uint32_t = 2, int32_t = 8) {
  ZYX_API.fail("sfpu_add_int: the SFPU int32 sums are not emulated");
}
}  // namespace ckernel
