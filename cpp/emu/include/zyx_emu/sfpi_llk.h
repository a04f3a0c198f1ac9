// tt-llk's SFPU parameter wrappers on the emulator
// (llk_math_eltwise_unary_sfpu_params.h, llk_math_eltwise_binary_sfpu_params.h):
// an SFPI face function called once per face the vector mode covers, with
// the SFPU's Dst counter at the face, moved between calls as tt-llk's
// SETRWC pairs move it (16 rows a face, the face function's own dst_reg++
// undone by the carriage return).
#pragma once

#include <cstdint>
#include <utility>

#include "zyx_emu/compute.h"
#include "zyx_emu/sfpi.h"

namespace sfpi::impl_ {

// One SFPU call: the counter at `tile`, the lane enables reset (a kernel
// failure inside a v_if may have left them), released when done.
class SfpuCall {
 public:
  explicit SfpuCall(uint32_t tile) {
    state().enabled = kAllLanes;
    state().depth = 0;
    ZYX_API.sfpu_dst(ZYX_SFPU_SET_TILE, int32_t(tile), nullptr);
  }
  ~SfpuCall() { ZYX_API.sfpu_dst(ZYX_SFPU_SET_TILE, 0, nullptr); }
  SfpuCall(const SfpuCall&) = delete;
  SfpuCall& operator=(const SfpuCall&) = delete;
  // SETRWC CR_D by 8 rows, `n` times.
  static void advance(int n) { ZYX_API.sfpu_dst(ZYX_SFPU_CR_ADD, 8 * n, nullptr); }
};

// Calls face() per face of the vector mode: R faces 0-1, C faces 0 and 2
// (the counter skips a face between), RC all four, any other mode once.
template <class Face>
inline void for_faces(int vector_mode, Face&& face) {
  VectorMode mode = static_cast<VectorMode>(vector_mode);
  if (mode == VectorMode::R) {
    for (int f = 0; f < 2; f++) face(), SfpuCall::advance(2);
    SfpuCall::advance(4);
  } else if (mode == VectorMode::C) {
    for (int f = 0; f < 2; f++) face(), SfpuCall::advance(4);
  } else if (mode == VectorMode::RC) {
    for (int f = 0; f < 4; f++) face(), SfpuCall::advance(2);
  } else {
    face();
  }
}

}  // namespace sfpi::impl_

// The int32 conversions tt-llk's integer SFPU code wraps around the SFPU's
// integer ops: DST holds two's complement, some of the SFPU's conversions
// (SFPCAST, SFPSTOCHRND) take and give sign-magnitude.
namespace zyx_emu_sfpu {

// Two's complement to sign-magnitude: a negative lane keeps its sign bit
// over the low 31 bits of its magnitude.
inline sfpi::vInt to_sign_magnitude(const sfpi::vInt& v) {
  sfpi::vInt r = v;
  v_if(v < 0) { r = ((sfpi::vInt(0) - v) & 0x7fffffff) | sfpi::vInt(int32_t(0x80000000u)); }
  v_endif;
  return r;
}

// Sign-magnitude to two's complement: a lane with its sign bit set becomes
// the negation of its low 31 bits.
inline sfpi::vInt to_twos_complement(const sfpi::vInt& v) {
  sfpi::vInt r = v;
  v_if(v < 0) { r = sfpi::vInt(0) - (v & 0x7fffffff); }
  v_endif;
  return r;
}

}  // namespace zyx_emu_sfpu

template <typename Callable, typename... Args>
inline void _llk_math_eltwise_unary_sfpu_params_(Callable&& sfpu_func, std::uint32_t dst_index,
                                                 int vector_mode = static_cast<int>(VectorMode::RC), Args&&... args) {
  sfpi::impl_::SfpuCall call(dst_index);
  sfpi::impl_::for_faces(vector_mode, [&] { sfpu_func(args...); });
}

template <typename Callable, typename... Args>
inline void _llk_math_eltwise_binary_sfpu_params_(Callable&& sfpu_func, std::uint32_t dst_index_in0,
                                                  std::uint32_t dst_index_in1, std::uint32_t dst_index_out,
                                                  int vector_mode = static_cast<int>(VectorMode::RC),
                                                  Args&&... args) {
  sfpi::impl_::SfpuCall call(0);
  sfpi::impl_::for_faces(vector_mode,
                          [&] { sfpu_func(dst_index_in0, dst_index_in1, dst_index_out, args...); });
}
