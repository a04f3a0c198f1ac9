// The SFPU's built-in operations as the card computes them: tt-llk's
// algorithms (the version tt-metal a8c5af0f builds, tt_metal/tt-llk) restated
// lane by lane on the SFPU arithmetic model of zyx_emu/sfpi_arith.h, so every
// step rounds as the card's does. docs/emulator.md ("SFPU") lists the
// operations and modes.
#pragma once

#include <cstdint>

namespace zyx::emu {

// Flags of an SFPU op's p0, set by the compute API (zyx_emu/compute_sfpu.h)
// from the kernel's template arguments and math_approx_mode.
constexpr uint32_t kSfpuApprox = 1;  // APPROX (math_approx_mode)
constexpr uint32_t kSfpuLegacy = 2;  // legacy_compat
constexpr uint32_t kSfpuFast = 4;    // FAST_APPROX
constexpr uint32_t kSfpuInpF32 = 8;  // ttnn's INP_FLOAT32 define (erf's degree-16 fit)

// What an operation's card algorithm depends on besides its input.
struct SfpuCardMode {
  bool fp32_dest = false;  // DST_ACCUM_MODE: 32-bit DST
  bool blackhole = false;
  bool hw_numerics = true;  // false: ZYX_EMU_NUMERICS=exact
  uint32_t p0 = 0, p1 = 0, p2 = 0;  // the op's params (flags, clamping, scale, softplus's three)
  uint32_t exp_scale = 0x3f800000u;  // exp_tile_init's scale (fp32 bits)
};

// True when op, with these params, runs the card's algorithm (then
// sfpu_card_word gives each result word); false where it keeps the exact
// function: a mode not modelled, or a default mode under exact numerics.
bool sfpu_card_op(uint32_t op, const SfpuCardMode& m);

// The word the card's algorithm leaves in its LReg for input word x, before
// SFPSTORE (the caller applies the store's conversion to a 16-bit DST).
uint32_t sfpu_card_word(uint32_t op, uint32_t x, const SfpuCardMode& m);

}  // namespace zyx::emu
