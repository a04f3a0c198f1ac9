// The int32 partial sums of tt-metal's api/compute/eltwise_unary/sfpu_int_sum.h
// (moreh_sum's int path), written as SFPI code on the emulator's SFPU model,
// so that each lane adds the DST rows the card's lane adds. The signatures
// are tt-metal's. Each sum converts its operands from two's complement to
// sign-magnitude, adds them with the SFPU's wrapping integer add and
// converts the sum back, as tt-metal's SFPU code does (so operands of mixed
// signs do not sum arithmetically; docs/emulator.md, "SFPU integer sums").
#pragma once

#include "zyx_emu/compute.h"
#include "zyx_emu/sfpi_llk.h"

namespace ckernel {

namespace zyx_emu_int_sum {

using zyx_emu_sfpu::to_sign_magnitude;
using zyx_emu_sfpu::to_twos_complement;

// One face of sfpu_sum_int_col: per half (even, odd columns) the four row
// groups of this face and of the face 32 rows on, summed into rows 0-3.
inline void col_sums_of_face() {
  for (int half = 0; half < 2; half++) {
    sfpi::vInt sum = to_sign_magnitude(sfpi::dst_reg[half]);
    for (int group = 1; group < 4; group++) sum += to_sign_magnitude(sfpi::dst_reg[half + 2 * group]);
    for (int group = 0; group < 4; group++) sum += to_sign_magnitude(sfpi::dst_reg[half + 16 + 2 * group]);
    sfpi::dst_reg[half] = to_twos_complement(sum);
  }
}

// One face of sfpu_sum_int_row: per row group, its even and odd columns and
// those of the face 16 rows on, summed into the group's even columns.
inline void row_sums_of_face() {
  for (int group = 0; group < 4; group++) {
    const int even = 2 * group;
    sfpi::vInt sum = to_sign_magnitude(sfpi::dst_reg[even]);
    sum += to_sign_magnitude(sfpi::dst_reg[even + 1]);
    sum += to_sign_magnitude(sfpi::dst_reg[even + 8]);
    sum += to_sign_magnitude(sfpi::dst_reg[even + 9]);
    sfpi::dst_reg[even] = to_twos_complement(sum);
  }
}

// One face of sfpu_add_int: each row group of the tile plus the same group
// of the next DST tile (64 rows on); the second operand is read as
// sign-magnitude, as tt-metal's code converts it.
inline void add_next_tile_of_face() {
  for (int step = 0; step < 8; step++) {
    sfpi::vInt a = to_sign_magnitude(sfpi::dst_reg[0]);
    sfpi::vInt b = to_twos_complement(sfpi::dst_reg[32]);
    sfpi::dst_reg[0] = to_twos_complement(a + b);
    sfpi::dst_reg++;
  }
}

}  // namespace zyx_emu_int_sum

ALWI void sfpu_sum_int_init() {}
// Column partial sums: faces 0 and 1 (VectorMode::R), rows 0-3 of each.
ALWI void sfpu_sum_int_col(uint32_t idst) {
  MATH((_llk_math_eltwise_unary_sfpu_params_(zyx_emu_int_sum::col_sums_of_face, idst, VectorMode::R)));
}
// Row partial sums: faces 0 and 2 (VectorMode::C), the even columns of each.
ALWI void sfpu_sum_int_row(uint32_t idst) {
  MATH((_llk_math_eltwise_unary_sfpu_params_(zyx_emu_int_sum::row_sums_of_face, idst, VectorMode::C)));
}
// DST[idst] += DST[idst + 1]; tt-metal's code reads neither dst_offset nor
// iterations (the second tile is always the next one, every face walked).
ALWI void sfpu_add_int(uint32_t idst, uint32_t dst_offset = 2, int32_t iterations = 8) {
  (void)dst_offset, (void)iterations;
  MATH((_llk_math_eltwise_unary_sfpu_params_(zyx_emu_int_sum::add_next_tile_of_face, idst, VectorMode::RC)));
}

}  // namespace ckernel
