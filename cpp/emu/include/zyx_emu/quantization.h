// The int32 quantization calls of tt-metal's api/compute/quantization.h,
// written as SFPI code on the emulator's SFPU model so that they round as
// the card's SFPU does. The init puts the zero point (fp32 bits) in LReg 2,
// where the card's tile calls read it; each tile call walks the three DST
// tiles (in0, in1 the scale, out) face by face:
//   quant:   out = int8(in0 * scale + zero_point), one SFPMAD, SFPSTOCHRND's
//            nearest rounding and saturation to [-127, 127];
//   requant: the same with in0 an int32 tile, converted to fp32 first;
//   dequant: out = (float(in0) + zero_point) * scale, two SFPMADs.
// Integer tiles are two's complement in DST, as tt-metal's default
// (SIGN_MAGNITUDE_FORMAT false) loads and stores them. The results need a
// 32-bit DST (fp32_dest_acc_en), as int32 tiles do on the card.
#pragma once

#include "zyx_emu/compute.h"
#include "zyx_emu/sfpi_llk.h"

namespace ckernel {

namespace zyx_emu_quant {

using zyx_emu_sfpu::to_sign_magnitude;
using zyx_emu_sfpu::to_twos_complement;

enum class Op { Quant, Requant, Dequant };

// One face of a quantization call; tiles are addressed from DST row 0 (64
// rows, 32 dst_reg steps a tile), as the binary SFPU wrapper sets it.
template <Op op>
inline void quant_face(uint32_t in0, uint32_t in1, uint32_t out) {
  const sfpi::vFloat zero_point = sfpi::l_reg[sfpi::LRegs::LReg2];
  for (int step = 0; step < 8; step++) {
    const sfpi::vFloat scale = sfpi::dst_reg[in1 * 32];
    if constexpr (op == Op::Dequant) {
      sfpi::vFloat x = sfpi::int32_to_float(to_sign_magnitude(sfpi::dst_reg[in0 * 32]));
      sfpi::vFloat shifted = x + zero_point;
      sfpi::dst_reg[out * 32] = shifted * scale;
    } else {
      sfpi::vFloat x = op == Op::Quant ? sfpi::vFloat(sfpi::dst_reg[in0 * 32])
                                       : sfpi::int32_to_float(to_sign_magnitude(sfpi::dst_reg[in0 * 32]));
      sfpi::vFloat scaled = x * scale + zero_point;
      sfpi::dst_reg[out * 32] = to_twos_complement(sfpi::float_to_int8(scaled));
    }
    sfpi::dst_reg++;
  }
}

template <Op op>
inline void run(uint32_t in0, uint32_t in1, uint32_t out) {
  // The stores write integer (quant, requant) or fp32 (dequant) words,
  // whatever the out tile held before.
  ZYX_API.sfpu_dst(op == Op::Dequant ? ZYX_SFPU_MARK_F32 : ZYX_SFPU_MARK_INT, int32_t(out), nullptr);
  _llk_math_eltwise_binary_sfpu_params_(quant_face<op>, in0, in1, out, VectorMode::RC);
}

inline void set_zero_point(uint32_t zero_point_bits) {
  sfpi::l_reg[sfpi::LRegs::LReg2] = sfpi::vInt(zero_point_bits);
}

}  // namespace zyx_emu_quant

ALWI void quant_tile_init(const uint32_t zero_point) { MATH((zyx_emu_quant::set_zero_point(zero_point))); }
ALWI void requant_tile_init(const uint32_t zero_point) { MATH((zyx_emu_quant::set_zero_point(zero_point))); }
ALWI void dequant_tile_init(const uint32_t zero_point) { MATH((zyx_emu_quant::set_zero_point(zero_point))); }
ALWI void quant_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
  MATH((zyx_emu_quant::run<zyx_emu_quant::Op::Quant>(idst0, idst1, odst)));
}
ALWI void requant_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
  MATH((zyx_emu_quant::run<zyx_emu_quant::Op::Requant>(idst0, idst1, odst)));
}
ALWI void dequant_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
  MATH((zyx_emu_quant::run<zyx_emu_quant::Op::Dequant>(idst0, idst1, odst)));
}

}  // namespace ckernel
