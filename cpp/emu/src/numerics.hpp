// A bit-level model of the Tensix FPU datapath (Wormhole B0; Blackhole where
// it is the same): what unpacking puts in the source registers, the
// multipliers' fidelity phases, MVMUL's groups of eight products, the DST
// accumulator's alignment and rounding, and the packer's conversions.
//
// It depends on nothing else of the emulator, so it is tested on its own
// (cpp/emu/tests/numerics_tests.cpp); the compute API's hardware numerics
// (api_compute*.cpp) are built on it.
//
// Values are carried as f32 bit patterns:
// - a source-register entry (SrcA/SrcB) is 19 bits: sign, 8-bit exponent,
//   10-bit mantissa, held as the f32 word with the low 13 bits zero;
// - a 32-bit DST word is an f32 word; a 16-bit DST word (bf16) is held as
//   bf16 << 16.
// Exponent 0 is zero to the FPU (denormals flush). The FPU has no NaN: an
// exponent of 255 is a large normal on input and infinity on output.
//
// Float16 operands (Config::fp16) run the datapath with a 5-bit exponent:
// a source entry, and a 16-bit DST word, holds an fp16 value as sign << 31
// | (fp16 bits 0-14) << 13, the exponent (bias 15) in the low five bits of
// the f32 exponent field. Such a DST word saturates at exponent 31 with
// every mantissa bit set (the card's fp16 has no infinity or NaN). With a
// 32-bit DST the products and sums are rebiased to f32 exponents.
#pragma once

#include <cstdint>

namespace zyx::emu::hw {

// tt-metal's MathFidelity values; the number of phases is 1 for LoFi, else
// the value (HiFi2: 2, HiFi3: 3, HiFi4: 4).
enum class Fidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };
inline int phases(Fidelity f) { return f == Fidelity::LoFi ? 1 : static_cast<int>(f); }

// The FPU and DST configuration of one operation.
struct Config {
  bool fp32_dest = false;  // 32-bit DST (fp32_dest_acc_en); else 16-bit bf16 DST
  bool wormhole = true;    // Wormhole's renormalisation quirk (see accumulate)
  bool fp16 = false;       // Float16 operands: the 5-bit-exponent datapath
};

// ---- Unpack: tile elements into a source register ----

// A float32 element in SrcA/SrcB. With a 32-bit DST tt-metal programs the
// source registers as TF32: the low 13 mantissa bits are dropped (no
// rounding). Otherwise as bf16: denormals flush to zero and the low 16 bits
// are dropped (no rounding).
inline uint32_t src_from_f32(uint32_t u, bool tf32) {
  if (tf32) return u & 0xffffe000u;
  if ((u & 0x7fffffffu) < 0x00800000u) u &= 0x80000000u;
  return u & 0xffff0000u;
}
// A bf16 element: exact.
inline uint32_t src_from_bf16(uint16_t h) { return uint32_t(h) << 16; }
// A Float16 element: exact, in the 5-bit-exponent layout (denormals stay,
// the FPU takes exponent 0 as zero).
inline uint32_t src_from_f16(uint16_t h) { return (uint32_t(h & 0x8000u) << 16) | (uint32_t(h & 0x7fffu) << 13); }
// The fp16 bits of a 5-bit-exponent word.
inline uint16_t f16_bits(uint32_t w) { return static_cast<uint16_t>(((w >> 16) & 0x8000u) | ((w >> 13) & 0x7fffu)); }
// A Bfp8_b element (sign and 7-bit magnitude) with its block's exponent, as
// the unpacker widens it to bf16: the magnitude is normalised, the exponent
// drops by the shift (modulo 256), and a negative zero magnitude becomes
// -infinity. Bfp4_b elements (sign and 3 bits) are widened to Bfp8_b first:
// pass (sign << 7) | (mag << 4).
uint16_t bfp8_to_bf16(uint8_t element, uint8_t exponent);

// ---- The FPU ----

// The source-register value the multipliers and adders see: a register
// programmed as TF32 keeps its 10-bit mantissa, any other float format its
// top 7 bits.
inline uint32_t src_operand(uint32_t src, bool tf32) { return tf32 ? src : (src & 0xffff0000u); }

// ELWADD / ELWSUB: DST = (acc ? DST : 0) + (A ± B), A and B source values
// (src_operand), dst the DST word (bf16 << 16 for a 16-bit DST). Returns the
// new DST word.
uint32_t elwadd(uint32_t a, uint32_t b, bool sub, uint32_t dst, bool acc, const Config& c);

// ELWMUL in one fidelity phase (0-3): DST += slice(A) * slice(B). The phase
// picks a 5-bit slice of A's 11-bit significand (phase bit 0 clear: the top
// five bits; set: the next five) and a 7-bit slice of B's (phase bit 1
// clear: the top seven; set: the low four, weighted 2^-7 lower).
uint32_t elwmul_phase(uint32_t a, uint32_t b, uint32_t dst, int phase, const Config& c);
// ELWMUL as tt-llk runs it: DST = 0, then every phase of the fidelity in
// order 0, 1, 2, 3, each accumulating into DST (and rounding to its width).
uint32_t elwmul(uint32_t a, uint32_t b, Fidelity f, const Config& c);

// MVMUL's dot product for one output element in one fidelity phase: DST +=
// sum_k slice(a[k]) * slice(b[k]) over 16 products, summed in two groups
// of eight (k 0-7, 8-15). Each group aligns its products to the group's
// largest exponent (rounding half up in magnitude at the products' 12-bit
// precision); the two group sums and DST are aligned to the largest of the
// three exponents, added and rounded to DST's width. `a` is SrcA (in1 of a
// matmul, the input of a reduce), `b` SrcB (in0, the scaler), `stride`
// the distance between consecutive k in each array.
uint32_t mvmul_phase(const uint32_t* a, int a_stride, const uint32_t* b, int b_stride, uint32_t dst, int phase,
                     const Config& c);

// GMPOOL, one column of a max reduction: the largest of the DST word `dst`
// and 16 SrcA values a[i * a_stride], each first scaled by the exponent of
// SrcB's b[i] alone (2^(e - 127); 1.0 leaves it as it is, exponent 0 drops
// the row). The comparison is on sign and magnitude, (exponent, mantissa):
// a SrcA value with exponent 0 is +0 (below every DST word with the sign
// bit clear, +0 included; above -0 and every negative one); a DST word keeps its 10-bit (32-bit DST) or
// 7-bit (16-bit DST) mantissa and an exponent field of 0 counts as the
// lowest exponent, not as zero; a SrcA operand keeps 10 bits if it is TF32
// (tf32_src), else 7. No NaN or infinity: exponent 255 is the largest
// normal. The result is written in DST's width; a scaled exponent outside
// 1-254 wraps modulo 256, as the card's does.
uint32_t gmpool(const uint32_t* a, int a_stride, const uint32_t* b, uint32_t dst, bool tf32_src, const Config& c);
// What GMPOOL reads from DST rows cleared since they were last written
// (ZEROACC, a new DST section): every bit set, below any other value.
constexpr uint32_t kPoolEmpty = 0xffffffffu;

// MOVA2D (copy_tile, transpose_wh_tile): a source value into DST. Exponent
// 0 flushes to zero; a 16-bit DST keeps the top 16 bits (bf16) or, for
// Float16 operands, the whole fp16 value.
inline uint32_t src_to_dst(uint32_t src, const Config& c) {
  if ((src & 0x7f800000u) == 0) return 0;
  if (c.fp16 && !c.fp32_dest) return src;
  return c.fp32_dest ? src : (src & 0xffff0000u);
}
// MOVD2A/MOVD2B (binary_dest_reuse, the reductions' trips through SrcB): a
// DST word into a source register. The register's format decides: TF32 (a
// Float32 operand with a 32-bit DST) keeps 19 bits, every other float format
// the top 16 (bf16); no rounding, and exponents 0 and 255 pass as they are.
inline uint32_t dst_to_src(uint32_t d, bool tf32) { return d & (tf32 ? 0xffffe000u : 0xffff0000u); }

// ---- Pack: DST to tile elements ----

// From a 16-bit DST of fp16 words (5-bit-exponent layout). The packer's
// early conversion keeps fp16 and flushes exponent 0 (denormals, -0) to +0
// (pack_f16: the intermediate, which ReLU then acts on); the late
// conversion writes Float16 as it is, widens to Float32 (a non-zero
// exponent rebiased by 112, mantissa exact; exponent 0 keeps its mantissa
// as an f32 denormal) or narrows to Float16_b (rebiased, the low three
// mantissa bits truncated, exponent 0 to +0).
inline uint16_t pack_f16(uint32_t d) {
  const uint16_t h = f16_bits(d);
  return (h & 0x7fffu) < 0x400u ? 0 : h;
}
inline uint32_t f16_late_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  if (!(h & 0x7c00u)) return sign | (uint32_t(h & 0x3ffu) << 13);
  return sign | (((h & 0x7fffu) + (112u << 10)) << 13);
}
inline uint16_t f16_late_bf16(uint16_t h) {
  if (!(h & 0x7c00u)) return 0;
  return static_cast<uint16_t>((h & 0x8000u) | ((((h >> 10) & 31u) + 112u) << 7) | ((h & 0x3ffu) >> 3));
}
inline uint32_t pack_f32_from_f16(uint32_t d) { return f16_late_f32(pack_f16(d)); }
inline uint16_t pack_bf16_from_f16(uint32_t d) { return f16_late_bf16(pack_f16(d)); }
// The value of a 16-bit fp16 DST word as an f32 word (exact: exponent 0 is
// +0, exponent 31 the largest normal) and back (an f32 word holding such a
// value; below the fp16 normal range +0, above it the saturated word, low
// 13 mantissa bits dropped). The emulator keeps fp16 DST tiles as f32
// values; these convert at the FPU model's edges.
inline uint32_t f16_word_to_f32(uint32_t w) {
  const uint32_t e = (w >> 23) & 31u;
  return e ? (w & 0x80000000u) | ((e + 112u) << 23) | (w & 0x7fe000u) : 0;
}
inline uint32_t f32_to_f16_word(uint32_t f) {
  const int32_t e = int32_t((f >> 23) & 255u) - 112;
  if (e <= 0) return 0;
  if (e > 31) return (f & 0x80000000u) | (31u << 23) | 0x7fe000u;
  return (f & 0x80000000u) | (uint32_t(e) << 23) | (f & 0x7fe000u);
}

// DST word to bf16: a 32-bit DST rounds half away from zero; NaN becomes
// infinity of its sign; a denormal or zero result is +0.
inline uint16_t pack_bf16(uint32_t d, bool fp32_dest) {
  uint32_t h;
  if (fp32_dest) {
    uint32_t x = (d & 0x7fffffffu) > 0x7f800000u ? (d & 0x80000000u) | 0x7f800000u : d;
    h = (x + 0x8000u) >> 16;
  } else {
    h = d >> 16;
    h = (h & 0x7fffu) > 0x7f80u ? (h & 0x8000u) | 0x7f80u : h;
  }
  return static_cast<uint16_t>((h & 0x7fffu) < 0x80u ? 0u : h);
}
// DST word to float32: a 32-bit DST as it is; a 16-bit DST widened, NaN
// becoming infinity and denormals +0.
inline uint32_t pack_f32(uint32_t d, bool fp32_dest) {
  return fp32_dest ? d : uint32_t(pack_bf16(d, false)) << 16;
}
// The bf16 value the block-float packer starts from. Without
// bfp8_pack_precise the packer's intermediate format is Bfp8_b: the value
// is rounded to 6 mantissa bits (half up, on the bf16 bits; from a 32-bit
// DST after truncating to bf16). With it the intermediate is the DST
// format: a 32-bit DST truncates to bf16 (NaN kept as an exponent-255
// normal), a 16-bit DST passes (NaN to infinity). Denormals become +0.
uint16_t bfp_intermediate(uint32_t d, bool fp32_dest, bool precise);
// Packs 16 intermediate bf16 values (one face row) into a Bfp8_b or Bfp4_b
// block: the shared exponent is the largest element exponent (255 counts
// as a normal); each significand (with its hidden bit) is shifted right by
// its distance from it, rounding half up in magnitude, 128 clamped to 127
// (Bfp4_b then keeps the top 3 of those 7 bits, truncating); the sign is
// kept only on a non-zero magnitude. Writes `out` (16 bytes, each sign <<
// 7 | magnitude, or sign << 3 | magnitude for Bfp4_b) and returns the
// exponent.
uint8_t bfp_block(const uint16_t* v, bool bfp4, uint8_t* out);

// The packer's ReLU (tt-metal's ReluType: 1 zero, 2 min threshold, 3 max
// threshold; 0 none), applied to the intermediate value after the DST
// conversion, on its bits: a negative value becomes +0; mode 2 zeroes a value
// at or below the threshold (bf16 bits, compared as unsigned integers); mode 3
// clamps a value above it to it. relu_bf16 works on bf16 intermediates
// (Float16_b and block-float packs), relu_f32 on Float32 ones, where the
// threshold is widened to f32 and mode 3 compares the top 19 bits.
uint16_t relu_bf16(uint16_t v, uint32_t mode, uint16_t threshold);
uint32_t relu_f32(uint32_t v, uint32_t mode, uint16_t threshold);
// The packer's L1 accumulation: the value already in L1 plus the packed
// value. Float32: an IEEE single add with denormal inputs and results
// flushed to zero (sign kept) and every NaN made the canonical 0x7fc00000.
// Float16_b: +inf plus -inf is the canonical NaN 0x7fc0; denormal inputs are
// flushed; a NaN input counts as a huge normal of its sign; the exact sum is
// rounded to nearest even (not away from zero, as the packer's conversion
// rounds), below the normal range to zero of its sign, above it to infinity.
uint32_t l1_acc_f32(uint32_t in_l1, uint32_t packed);
uint16_t l1_acc_bf16(uint16_t in_l1, uint16_t packed);
// Float16: both words widened exactly to f32 (every non-zero exponent a
// normal, exponent 0 a zero of its sign), added in f32 (to nearest even),
// then rounded to fp16 to nearest even. An exact cancellation gives +0, or
// 0x7fff when the value in L1 has exponent 30 or 31; a sum whose exponent
// falls below fp16's (under 2^-15) gives the saturated word 0x7fff of its
// sign, one at exponent 0 a zero of its sign; a sum above the range
// saturates. These follow ttsim's model of the card.
uint16_t l1_acc_f16(uint16_t in_l1, uint16_t packed);

// ---- Integer formats ----
//
// Int8 in L1 and integers in DST are sign-magnitude to the card (the Tensix
// ISA documentation; ttsim's unpacker, packer and FPU int8 datapath). Int32
// tiles are the exception that matters in practice: tt-metal hosts write
// them in two's complement, the unpacker moves 32-bit data to DST unchanged
// (unpack_to_dest), tt-metal's SFPU int ops load and store them with
// SFPLOAD/SFPSTORE's raw INT32 mode and add in two's complement, and the
// packer writes Int32 unchanged, so two's complement survives end to end.
// The conversions below are where the card reads a word's sign and
// magnitude, or converts between integers and floats.

// An Int8 byte (sign bit 7 and a 7-bit magnitude) or UInt8 byte (an 8-bit
// magnitude) as the unpacker delivers it: a sign and a magnitude, held in
// DST as a sign-magnitude integer word.
inline uint32_t int8_to_dst(uint8_t b, bool is_unsigned) {
  if (is_unsigned) return b;
  return (uint32_t(b & 0x80u) << 24) | (b & 0x7fu);
}
// The packer's Int32-to-Int8 conversion of a 32-bit DST word: Int8 keeps
// bit 31 as the sign and clamps the 31-bit magnitude to 127 (so two's
// complement -1 becomes -127); UInt8 makes a word with bit 31 set 0 and
// clamps the rest to 255.
inline uint8_t pack_int8(uint32_t w, bool is_unsigned) {
  const uint32_t mag = w & 0x7fffffffu;
  if (is_unsigned) return (w & 0x80000000u) ? 0 : static_cast<uint8_t>(mag > 255 ? 255 : mag);
  return static_cast<uint8_t>(((w >> 24) & 0x80u) | (mag > 127 ? 127 : mag));
}
// UInt16 from a 16-bit DST: the register holds 16 bits (the SFPU's LO16
// store keeps the low half), so the value wraps modulo 2^16.
inline uint16_t pack_uint16_16b(uint32_t w) { return static_cast<uint16_t>(w); }

// The FPU's int8 datapath (INT8 math, which tt-llk enables for Int8 and
// UInt8 sources): source values are a sign and a magnitude (int8_to_dst's
// value), DST a 32-bit sign-magnitude integer. ELWADD/ELWSUB give a ± b,
// added to DST with saturation at ±(2^31 - 1) when accumulating; ELWMUL
// adds, per fidelity phase, the product of magnitude slices: SrcA bits 5-7
// (phase bit 0 clear) or 0-4 (set), SrcB bits 4-9 (bit 1 clear) or 0-3
// (set), so HiFi4 gives the whole product and LoFi the high slices' only.
inline int32_t dst_int_value(uint32_t w) {
  const int32_t mag = static_cast<int32_t>(w & 0x7fffffffu);
  return (w & 0x80000000u) ? -mag : mag;
}
inline uint32_t dst_int_word(int32_t v) {
  return v < 0 ? 0x80000000u | (0u - static_cast<uint32_t>(v)) : static_cast<uint32_t>(v);
}
inline int32_t saturating_add_int32(int32_t x, int32_t y) {
  const int64_t r = int64_t(x) + int64_t(y);
  return r > 0x7fffffff ? 0x7fffffff : r < -0x7fffffff ? -0x7fffffff : static_cast<int32_t>(r);
}
int32_t int8_mul_phase(int32_t a, int32_t b, int phase);

// SFPLOAD/SFPSTORE's INT32_2S_COMP mode (InstrMod 12) on Wormhole: the load
// takes the DST word as sign and magnitude and gives two's complement, the
// store the reverse. On a two's complement word from the host the load
// gives the sign-magnitude encoding of its value, which SFPSWAP orders
// correctly, and the store undoes it; INT32_MIN loads as 0 (its magnitude
// bits are zero). tt-llk uses it for the column max/min of sfpu_reduce on
// Int32 and for relu_min on integers.
inline uint32_t sfpload_int32_2s_comp(uint32_t w) { return (w & 0x80000000u) ? 0u - (w & 0x7fffffffu) : w; }
inline uint32_t sfpstore_int32_2s_comp(uint32_t v) { return (v & 0x80000000u) ? 0x80000000u | (0u - v) : v; }
// SFPSWAP's order of words: sign and magnitude (-0 below +0).
inline int32_t sign_magnitude_order(uint32_t w) {
  return (w & 0x80000000u) ? static_cast<int32_t>(w ^ 0x7fffffffu) : static_cast<int32_t>(w);
}

// SFPCAST (int to fp32, round to nearest even) of a sign-magnitude word.
uint32_t sfpcast_int_to_f32(uint32_t sign_magnitude);
// The SFPU typecasts tt-llk runs (ckernel_sfpu_typecast.h), on the f32 word
// SFPLOAD reads from DST:
// - to Int32: truncated toward zero; magnitudes from 2^31 up, infinity and
//   NaN give 0x80000000 (INT32_MIN) whatever the sign; below 1, 0.
// - to UInt32: negative values (sign bit set) 0; truncated toward zero;
//   from 2^32 up (infinity, NaN) 0xffffffff.
// - to UInt16: negative values 0, else SFP_STOCH_RND's rounding, half away
//   from zero, clamped to 65535.
// - Int32 (two's complement) to f32: the magnitude cast by SFPCAST, the sign
//   set, INT32_MIN as -2^31: round to nearest even.
// - UInt32 to f32: bits 0-30 cast by SFPCAST, then, where bit 31 is set,
//   2^31 added by SFPADDI (an SFPMAD: the exact sum rounded to nearest
//   even), so the value rounds twice. UInt16 to f32: the low 16 bits (the
//   LO16 load) cast, exactly.
// - f32 to bf16 (SFP_STOCH_RND FP32_TO_FP16B): half away from zero in
//   magnitude; exponent 0 becomes +0, exponent 255 infinity of its sign.
uint32_t sfpu_f32_to_int32(uint32_t f);
uint32_t sfpu_f32_to_uint32(uint32_t f);
uint16_t sfpu_f32_to_uint16(uint32_t f);
uint32_t sfpu_int32_to_f32(uint32_t twos_complement);
uint32_t sfpu_uint32_to_f32(uint32_t w);
inline uint32_t sfpu_uint16_to_f32(uint32_t w) { return sfpcast_int_to_f32(w & 0xffffu); }
uint32_t sfpu_f32_to_bf16(uint32_t f);

// ---- Whole tiles (the compute API's fast paths; equal to the element
// model above, which the tests check) ----

// d[i] = a[i] ± b[i] (ELWADD/ELWSUB without DST accumulation), n elements.
void elwadd_tile(const uint32_t* a, const uint32_t* b, uint32_t* d, int n, bool sub, const Config& c);
// d[i] = a[i] * b[i] (ELWMUL from DST = 0 through every phase of f).
void elwmul_tile(const uint32_t* a, const uint32_t* b, uint32_t* d, int n, Fidelity f, const Config& c);
// DST += in0 * in1 for 32x32 face-ordered tiles of source values, as
// tt-llk's matmul issues MVMUL: in0 in SrcB, in1 in SrcA; for every phase
// of the fidelity, each output element takes the MVMUL of k 0-15, then of
// k 16-31 (mvmul_phase for each).
void matmul_tile(const uint32_t* in0, const uint32_t* in1, uint32_t* d, Fidelity f, const Config& c);
// The tile loops run their AVX-512 build where the host has it; false makes
// them run the baseline build instead (for the tests, which check both).
void use_avx512_tiles(bool yes);

// ---- Helpers shared by the compute API ----

// Rounds an f32 word to the bf16 grid as the 16-bit DST holds it, half away
// from zero (for values that reach DST without the FPU's adder).
inline uint32_t round_bf16_rhaz(uint32_t u) { return (u + 0x8000u) & 0xffff0000u; }

}  // namespace zyx::emu::hw
