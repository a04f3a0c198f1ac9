// The FPU model (src/numerics.hpp) on the data formats added after the first
// model: Float16 operands (the 5-bit-exponent datapath, hw::Config::fp16)
// and the packer's conversions from an fp16 DST. Expected words come from
// words worked out by hand and from a reference written here from the
// documented datapath (the Tensix ISA documentation's ELWADD/ELWMUL and
// Dst pages, the packer's format conversion tables, ttsim's description of
// the accumulator), as integer arithmetic on the significands rather than
// the model's code: an fp16 value is (1 + m / 1024) * 2^(e - 15) for e > 0,
// exponent 0 is zero to the FPU, exponent 31 is a normal, and a 16-bit DST
// rounds half away from zero to 11 significant bits and saturates at
// exponent 31 with every mantissa bit set.
// Group `model`: the model alone, and against words ttsim computed. Group `hw`: every FPU call on Float16
// tiles through the compute API, word for word against the model's words:
// with a 16-bit DST packed to Float16, Float32 and Float16_b, with a 32-bit
// DST (the calls modelled there) packed to Float32 and Float16_b. Group
// `int`: the integer formats with hardware numerics (numerics.hpp's integer
// section) through the compute API: copies, add_int_tile, typecast_tile,
// the FPU's int8 ops, sfpu_reduce's Int32 max/min and Int8 tilize and
// untilize, every word against the model and hand-worked words.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "compute_harness.hpp"
#include "numerics.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;
using namespace zyx::emu::hw;

namespace {

int failures = 0;

void expect(uint32_t got, uint32_t want, const char* what, int line) {
  if (got == want) return;
  std::fprintf(stderr, "numerics_formats_tests.cpp:%d: %s: got 0x%08x, want 0x%08x\n", line, what, got, want);
  failures++;
}
#define EXPECT(got, want) expect(static_cast<uint32_t>(got), static_cast<uint32_t>(want), #got, __LINE__)

constexpr Config kF16{false, true, true};      // fp16 operands, 16-bit DST, Wormhole
constexpr Config kF16Fp32{true, true, true};   // fp16 operands, 32-bit DST

// ---- The reference ----

// An 11-bit-significand result S * 2^(scale) (S >= 0 an integer) with sign
// `neg`, as a 16-bit fp16 DST holds it: rounded half away from zero to 11
// significant bits; +0 below the normal range, saturated above it.
uint16_t ref_round_f16(uint32_t neg, uint64_t s, int scale) {
  if (s == 0) return 0;
  int lead = 63 - __builtin_clzll(s);
  if (lead > 10) {
    const int r = lead - 10;
    s = (s + (uint64_t(1) << (r - 1))) >> r;
    scale += r;
    if (s == 2048) s = 1024, scale++;
  } else {
    s <<= 10 - lead;
    scale -= 10 - lead;
  }
  const int e = scale + 10 + 15;  // the value is (s / 1024) * 2^(e - 15)
  if (e <= 0) return 0;
  if (e >= 32) return static_cast<uint16_t>((neg << 15) | 0x7fff);
  return static_cast<uint16_t>((neg << 15) | (e << 10) | (s & 0x3ff));
}

// ELWADD of fp16 a and b into a cleared 16-bit DST: the smaller magnitude's
// significand is aligned to the larger's exponent rounding half up (bits
// beyond 11 are lost), then the sum is rounded as above.
uint16_t ref_add_f16(uint16_t a, uint16_t b) {
  if (!(a & 0x7c00)) a = 0;
  if (!(b & 0x7c00)) b = 0;
  if ((a & 0x7fff) < (b & 0x7fff)) std::swap(a, b);
  const int ea = (a >> 10) & 31, eb = (b >> 10) & 31;
  const int64_t ma = a ? (a & 0x3ff) | 0x400 : 0;
  int64_t mb = b ? (b & 0x3ff) | 0x400 : 0;
  const int d = ea - eb;
  if (d > 0) mb = d < 12 ? (mb + (int64_t(1) << (d - 1))) >> d : 0;
  const int64_t s = ((a ^ b) & 0x8000) ? ma - mb : ma + mb;
  return ref_round_f16(a >> 15, uint64_t(s), ea - 25);
}

// ELWMUL at LoFi into a cleared 16-bit DST: the top 5 bits of a's
// significand times the top 7 of b's, rounded as above.
uint16_t ref_mul_lofi_f16(uint16_t a, uint16_t b) {
  const int ea = (a >> 10) & 31, eb = (b >> 10) & 31;
  if (!ea || !eb || ea + eb - 15 <= 0) return 0;
  const uint64_t p = uint64_t(((a & 0x3ff) | 0x400) >> 6) * (((b & 0x3ff) | 0x400) >> 4);
  return ref_round_f16(((a ^ b) >> 15) & 1, p, ea + eb - 40);
}

uint32_t word(uint16_t h) { return src_from_f16(h); }

// ---- Tests ----

void test_layout() {
  EXPECT(src_from_f16(0x3c00), 0x07800000);  // 1.0: exponent 15 in the f32 field's low bits
  EXPECT(src_from_f16(0xfbff), 0x8f7fe000);  // -65504
  for (uint32_t h = 0; h < 0x10000; h++) EXPECT(f16_bits(src_from_f16(uint16_t(h))), h);
  // The DST value conversions are exact for every fp16 normal, both ways.
  for (uint32_t h = 0x0400; h < 0x8000; h++) {
    const uint32_t w = src_from_f16(uint16_t(h));
    const float v = std::ldexp(1.0f + (h & 0x3ff) / 1024.0f, int(h >> 10) - 15);
    EXPECT(f16_word_to_f32(w), float_bits(v));
    EXPECT(f32_to_f16_word(f16_word_to_f32(w)), w);
  }
  EXPECT(f16_word_to_f32(src_from_f16(0x0001)), 0);       // exponent 0 is zero
  EXPECT(f32_to_f16_word(float_bits(1e-6f)), 0);                  // below 2^-14: +0
  EXPECT(f32_to_f16_word(float_bits(-1e6f)), 0x8fffe000);  // saturated: exponent 31, all mantissa bits
  EXPECT(f32_to_f16_word(float_bits(1.0f + 0x1p-12f)), 0x07800000);  // bits below fp16's dropped
}

void test_add_hand() {
  EXPECT(f16_bits(elwadd(word(0x3c00), word(0x3c00), false, 0, false, kF16)), 0x4000);  // 1 + 1
  EXPECT(f16_bits(elwadd(word(0x3c00), word(0x3c00), true, 0, false, kF16)), 0x0000);   // 1 - 1 = +0
  // 1 + 2^-11: the aligned addend keeps half a unit, the sum rounds away: 1 + 2^-10.
  EXPECT(f16_bits(elwadd(word(0x3c00), word(0x1000), false, 0, false, kF16)), 0x3c01);
  // 1 + 2^-12: below half a unit after alignment (rounded half up at 11 bits: 0).
  EXPECT(f16_bits(elwadd(word(0x3c00), word(0x0c00), false, 0, false, kF16)), 0x3c00);
  // A denormal operand (exponent 0) is zero.
  EXPECT(f16_bits(elwadd(word(0x3c00), word(0x03ff), false, 0, false, kF16)), 0x3c00);
  // 65504 + 65504 = 131008 is a normal (exponent 31); twice that saturates.
  EXPECT(f16_bits(elwadd(word(0x7bff), word(0x7bff), false, 0, false, kF16)), 0x7fff);
  EXPECT(f16_bits(elwadd(word(0x7fff), word(0x7fff), false, 0, false, kF16)), 0x7fff);
  EXPECT(f16_bits(elwadd(word(0xfbff), word(0xffff), false, 0, false, kF16)), 0xffff);
  // A sum below 2^-14 is +0: 2^-13 * (1.5 - 1.25) = 2^-15.
  EXPECT(f16_bits(elwadd(word(0x0a00), word(0x0900), true, 0, false, kF16)), 0x0000);
  // Into a 32-bit DST the sum is rebiased to f32's exponent, exact.
  EXPECT(elwadd(word(0x3c00), word(0x3c00), false, 0, false, kF16Fp32), float_bits(2.0f));
  EXPECT(elwadd(word(0x7bff), word(0x7bff), false, 0, false, kF16Fp32), float_bits(131008.0f));
  EXPECT(elwadd(word(0x3c01), word(0x8000), false, 0, false, kF16Fp32), float_bits(1.0f + 0x1p-10f));
  // acc_to_dest: DST (1.5, fp16 word) plus 1 + 1.
  EXPECT(f16_bits(elwadd(word(0x3c00), word(0x3c00), false, word(0x3e00), true, kF16)), 0x4300);
}

void test_add_reference() {
  std::mt19937 rng(11);
  static const uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x8400, 0x3c00, 0xbc00,
                                     0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7fff, 0xffff, 0x3c01, 0x1000};
  for (int n = 0; n < 400000; n++) {
    uint16_t a = static_cast<uint16_t>(rng()), b = static_cast<uint16_t>(rng());
    if (n % 4 == 1) b = static_cast<uint16_t>((b & 0x83ff) | (a & 0x7c00));  // equal exponents: cancellation
    if (n % 4 == 2) a = special[rng() % 16];
    if (n % 8 == 3) b = special[rng() % 16];
    const uint16_t got = f16_bits(elwadd(word(a), word(b), false, 0, false, kF16));
    const uint16_t want = ref_add_f16(a, b);
    if (got != want) {
      std::fprintf(stderr, "fp16 add 0x%04x + 0x%04x: got 0x%04x, want 0x%04x\n", a, b, got, want);
      if (++failures > 20) return;
    }
  }
}

void test_mul_lofi_reference() {
  std::mt19937 rng(12);
  for (int n = 0; n < 400000; n++) {
    const uint16_t a = static_cast<uint16_t>(rng()), b = static_cast<uint16_t>(rng());
    const uint16_t got = f16_bits(elwmul(word(a), word(b), Fidelity::LoFi, kF16));
    const uint16_t want = ref_mul_lofi_f16(a, b);
    if (got != want) {
      std::fprintf(stderr, "fp16 LoFi mul 0x%04x * 0x%04x: got 0x%04x, want 0x%04x\n", a, b, got, want);
      if (++failures > 20) return;
    }
  }
}

// HiFi4 into a 32-bit DST: the four phases cover SrcA's top ten significand
// bits (its last bit is in no slice) and all eleven of SrcB's, and every
// partial sum fits f32's 24 bits, so the result is the exact product of a
// (last bit cleared) and b.
void test_mul_hifi4_fp32_exact() {
  std::mt19937 rng(13);
  for (int n = 0; n < 200000; n++) {
    const uint16_t a = static_cast<uint16_t>(rng() | 0x0400), b = static_cast<uint16_t>(rng() | 0x0400);
    const int ea = (a >> 10) & 31, eb = (b >> 10) & 31;
    const double ma = ((a & 0x3ff) | 0x400) & ~1, mb = (b & 0x3ff) | 0x400;
    const double v = std::ldexp(ma * mb, ea + eb - 50) * (((a ^ b) & 0x8000) ? -1 : 1);
    const uint32_t got = elwmul(word(a), word(b), Fidelity::HiFi4, kF16Fp32);
    if (got != float_bits(static_cast<float>(v))) {
      std::fprintf(stderr, "fp16 HiFi4 mul 0x%04x * 0x%04x into fp32 DST: got 0x%08x, want 0x%08x\n", a, b, got,
                   float_bits(static_cast<float>(v)));
      if (++failures > 20) return;
    }
  }
  // The last bit of SrcA's significand is in no slice: (1 + 2^-10) * 1 = 1.
  EXPECT(elwmul(word(0x3c01), word(0x3c00), Fidelity::HiFi4, kF16Fp32), float_bits(1.0f));
  EXPECT(elwmul(word(0x3c00), word(0x3c01), Fidelity::HiFi4, kF16Fp32), float_bits(1.0f + 0x1p-10f));
}

void test_mul_hand() {
  // 1.5 * 1.5 = 2.25 exactly at LoFi (both slices hold the significands).
  EXPECT(f16_bits(elwmul(word(0x3e00), word(0x3e00), Fidelity::LoFi, kF16)), 0x4080);
  // 2^-8 * 2^-8 = 2^-16: below fp16's normal range, +0.
  EXPECT(f16_bits(elwmul(word(0x1c00), word(0x1c00), Fidelity::HiFi4, kF16)), 0x0000);
  // 256 * 512 = 2^17: saturated.
  EXPECT(f16_bits(elwmul(word(0x5c00), word(0x6000), Fidelity::HiFi4, kF16)), 0x7fff);
  // Into a 32-bit DST the product is rebiased: 256 * 512 = 131072 exactly.
  EXPECT(elwmul(word(0x5c00), word(0x6000), Fidelity::HiFi4, kF16Fp32), float_bits(131072.0f));
  // A zero product stands at exponent 97 (2^-30) of a 32-bit DST: ELWMUL's
  // accumulation aligns a DST word below it to it, losing its low bits.
  const uint32_t tiny = (90u << 23) | 0x7fu;  // 2^-37 * (1 + 127 * 2^-23)
  EXPECT(elwmul_phase(0, word(0x3c00), tiny, 0, kF16Fp32), (90u << 23) | 0x80u);
  EXPECT(elwmul_phase(0, word(0x3c00), 0x0d800000u, 0, kF16Fp32), 0u);  // 2^-100: gone
  EXPECT(elwmul_phase(0, word(0x3c00), float_bits(1.0f), 0, kF16Fp32), float_bits(1.0f));
  // With bf16 operands a zero product stands at 0 and DST is kept.
  EXPECT(elwmul_phase(0, 0x3f800000u, tiny, 0, Config{true, true}), tiny);
}

void test_mvmul_hand() {
  uint32_t a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = word(0x3c00), b[i] = word(0x3c00);
  // Sixteen products of 1 in one phase: 16 in fp16.
  EXPECT(f16_bits(mvmul_phase(a, 1, b, 1, 0, 0, kF16)), 0x4c00);
  EXPECT(mvmul_phase(a, 1, b, 1, 0, 0, kF16Fp32), float_bits(16.0f));
  // Half of them -1: the groups cancel to exactly 0.
  for (int i = 8; i < 16; i++) b[i] = word(0xbc00);
  EXPECT(mvmul_phase(a, 1, b, 1, 0, 0, kF16), 0u);
  // One product of 1.5 * 1.5 among zeros, into DST 1.0: 3.25.
  for (int i = 0; i < 16; i++) a[i] = 0, b[i] = word(0x3e00);
  a[5] = word(0x3e00);
  EXPECT(f16_bits(mvmul_phase(a, 1, b, 1, word(0x3c00), 0, kF16)), 0x4280);
  // Every product zero into a 32-bit DST: the groups stand at 2^-30, so a
  // DST word far below is lost, as in ELWMUL.
  a[5] = 0;
  EXPECT(mvmul_phase(a, 1, b, 1, 0x0d800000u, 0, kF16Fp32), 0u);
  EXPECT(mvmul_phase(a, 1, b, 1, float_bits(3.0f), 0, kF16Fp32), float_bits(3.0f));
}

void test_copy_and_pack() {
  EXPECT(src_to_dst(word(0x3c01), kF16), word(0x3c01));  // fp16 kept whole in a 16-bit DST
  EXPECT(src_to_dst(word(0x0200), kF16), 0u);             // a denormal flushes
  EXPECT(src_to_dst(word(0x8000), kF16), 0u);             // -0 becomes +0
  // Float16 out: as it is; exponent 0 (denormals, -0) to +0.
  EXPECT(pack_f16(word(0xfbff)), 0xfbff);
  EXPECT(pack_f16(word(0x7fff)), 0x7fff);
  EXPECT(pack_f16(word(0x83ff)), 0x0000);
  EXPECT(pack_f16(word(0x8000)), 0x0000);
  // Float32 out: rebiased, exact.
  for (uint32_t h = 0x0400; h < 0x8000; h += 7) {
    EXPECT(pack_f32_from_f16(word(uint16_t(h))), float_bits(std::ldexp(1.0f + (h & 0x3ff) / 1024.0f, int(h >> 10) - 15)));
    EXPECT(pack_f32_from_f16(word(uint16_t(h | 0x8000))),
           float_bits(-std::ldexp(1.0f + (h & 0x3ff) / 1024.0f, int(h >> 10) - 15)));
  }
  EXPECT(pack_f32_from_f16(word(0x7fff)), float_bits(131008.0f));
  EXPECT(pack_f32_from_f16(word(0x0001)), 0u);
  // Float16_b out: rebiased, the low three mantissa bits truncated (no rounding).
  EXPECT(pack_bf16_from_f16(word(0x3c07)), 0x3f80);
  EXPECT(pack_bf16_from_f16(word(0x3fff)), 0x3fff);
  EXPECT(pack_bf16_from_f16(word(0xc3ff)), 0xc07f);
  EXPECT(pack_bf16_from_f16(word(0x7fff)), 0x47ff);
  EXPECT(pack_bf16_from_f16(word(0x8001)), 0x0000);
  // The late conversions of an intermediate with exponent 0 (a ReLU
  // threshold can be one): Float32 keeps the mantissa as a denormal,
  // Float16_b flushes.
  EXPECT(f16_late_f32(0x0001), 0x00002000u);
  EXPECT(f16_late_f32(0x8200), 0x80400000u);
  EXPECT(f16_late_bf16(0x0200), 0x0000);
  // L1 accumulation of Float16: f32 sums rounded to nearest even.
  EXPECT(l1_acc_f16(0x3c00, 0x3c00), 0x4000);
  EXPECT(l1_acc_f16(0x3c00, 0x1000), 0x3c00);  // 1 + 2^-11: a tie, to even
  EXPECT(l1_acc_f16(0x3c01, 0x1000), 0x3c02);  // 1 + 3 * 2^-11: a tie, to even (up)
  EXPECT(l1_acc_f16(0x3c00, 0x03ff), 0x3c00);  // a denormal is zero
  EXPECT(l1_acc_f16(0x7bff, 0x7bff), 0x7fff);  // 131008: exponent 31
  EXPECT(l1_acc_f16(0x7fff, 0x7fff), 0x7fff);  // saturated
  EXPECT(l1_acc_f16(0x3c00, 0xbc00), 0x0000);  // exact cancellation
  EXPECT(l1_acc_f16(0x7800, 0xf800), 0x7fff);  // cancellation of exponent 30: the saturated word
  EXPECT(l1_acc_f16(0x0400, 0x8401), 0xffff);  // -2^-24, below the range: saturated, negative
  EXPECT(l1_acc_f16(0x0800, 0x8600), 0x0000);  // 2^-15: exponent 0, a zero of its sign
}

// data/ttsim_fp16_vectors.txt: ELWMUL phases, ELWADD/ELWSUB (with and
// without DST accumulation) and MVMUL phases on fp16 operands, both DST
// widths, Wormhole and Blackhole, and the packer's Float16 L1
// accumulation, as ttsim computed them (the file says where from); every
// line replayed through the model.
void test_ttsim_vectors() {
  std::ifstream file(ZYX_TTSIM_FP16_VECTORS);
  if (!file) throw Failure(std::string("cannot read ") + ZYX_TTSIM_FP16_VECTORS);
  auto hex = [](std::istringstream& in) {
    std::string s;
    in >> s;
    return static_cast<uint32_t>(std::stoul(s, nullptr, 16));
  };
  std::string line;
  int lines = 0;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "l1f16") {
      const uint32_t l1 = hex(in), packed = hex(in), want = hex(in);
      if (in.fail()) throw Failure("cannot parse: " + line);
      lines++;
      const uint16_t got = l1_acc_f16(static_cast<uint16_t>(l1), static_cast<uint16_t>(packed));
      if (got != want) std::fprintf(stderr, "ttsim fp16 vector: %s: got %04x\n", line.c_str(), got), failures++;
      continue;
    }
    int arch = 0, fp32 = 0, x = 0, y = 0;
    in >> arch >> fp32 >> x;
    const Config c{fp32 != 0, arch == 0, true};
    uint32_t got = 0;
    if (kind == "elwmul") {
      const uint32_t a = hex(in), b = hex(in), d = hex(in);
      got = elwmul_phase(a, b, d, x, c);
    } else if (kind == "elwadd") {
      in >> y;
      const uint32_t a = hex(in), b = hex(in), d = hex(in);
      got = elwadd(a, b, y != 0, d, x != 0, c);
    } else if (kind == "mvmul") {
      uint32_t d = hex(in), a[16], b[16];
      for (uint32_t& v : a) v = hex(in);
      for (uint32_t& v : b) v = hex(in);
      got = mvmul_phase(a, 1, b, 1, d, x, c);
    } else {
      throw Failure("unknown vector: " + line);
    }
    const uint32_t want = hex(in);
    if (in.fail()) throw Failure("cannot parse: " + line);
    lines++;
    if (got != want) {
      std::fprintf(stderr, "ttsim fp16 vector: %s: got %08x\n", line.c_str(), got);
      failures++;
    }
  }
  if (lines < 1800) throw Failure("too few fp16 vectors: " + std::to_string(lines));
}

void test_model(DeviceLayer&) {
  failures = 0;
  test_layout();
  test_add_hand();
  test_add_reference();
  test_mul_lofi_reference();
  test_mul_hifi4_fp32_exact();
  test_mul_hand();
  test_mvmul_hand();
  test_copy_and_pack();
  test_ttsim_vectors();
  if (failures) throw Failure(std::to_string(failures) + " model words differ (listed above)");
}
ZYX_TEST(model, test_model);

// ---- Group hw: Float16 tiles through the compute API ----

// The FPU call of each op on the front tiles of cbs 0 (A) and 1 (B), DST 0
// packed (copy_op with no copy first).
const std::string kF16Cases = op_switch(
    "case 0: add_tiles_init(0, 1); add_tiles(0, 1, 0, 0, 0); break;"
    "case 1: sub_tiles_init(0, 1); sub_tiles(0, 1, 0, 0, 0); break;"
    "case 2: mul_tiles_init(0, 1); mul_tiles(0, 1, 0, 0, 0); break;"
    "case 3: add_tiles_bcast<BroadcastType::ROW>(0, 1, 0, 0, 0); break;"
    "case 4: mul_tiles_bcast<BroadcastType::COL>(0, 1, 0, 0, 0); break;"
    "case 5: mm_init(0, 1, 16); matmul_tiles(0, 1, 0, 0, 0); break;"
    "case 6: reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(0, 1, 0, 0, 0); break;"
    "case 7: reduce_tile<PoolType::SUM, ReduceDim::REDUCE_COL>(0, 1, 0, 0, 0); break;"
    "case 8: reduce_tile<PoolType::SUM, ReduceDim::REDUCE_SCALAR>(0, 1, 0, 0, 0); break;"
    "case 9: copy_tile_to_dst_init_short(0); copy_tile(0, 0, 0); break;"
    "case 10: transpose_wh_init(0, 16); transpose_wh_tile(0, 0, 0); break;"
    "case 11: copy_tile_to_dst_init_short(0); copy_tile(0, 0, 0);"
    "  binary_dest_reuse_tiles_init<EltwiseBinaryType::ELWADD, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1);"
    "  binary_dest_reuse_tiles<EltwiseBinaryType::ELWADD, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1, 0, 0); break;"
    "case 12: copy_tile_to_dst_init_short(0); copy_tile(0, 0, 0);"
    "  binary_dest_reuse_tiles_init<EltwiseBinaryType::ELWMUL, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1);"
    "  binary_dest_reuse_tiles<EltwiseBinaryType::ELWMUL, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1, 0, 0); break;"
    "case 13: copy_tile_to_dst_init_short(0); copy_tile(0, 0, 0);"
    "  binary_dest_reuse_tiles_init<EltwiseBinaryType::ELWSUB, EltwiseBinaryReuseDestType::DEST_TO_SRCB>(1);"
    "  binary_dest_reuse_tiles<EltwiseBinaryType::ELWSUB, EltwiseBinaryReuseDestType::DEST_TO_SRCB>(1, 0, 0); break;");
const char* kF16OpNames[] = {"add", "sub", "mul", "add bcast row", "mul bcast col", "matmul", "reduce row",
                             "reduce col", "reduce scalar", "copy", "transpose", "copy, add reusing DST as SrcA",
                             "copy, mul reusing DST as SrcA", "copy, sub reusing DST as SrcB"};
constexpr uint32_t kF16Ops = 14;

// fp16 words: mostly normals near 1, some with exponents far apart, and the
// edge cases (zeros of both signs, denormals, exponent 31, the IEEE
// infinity and NaN patterns, which the card takes as normals).
std::vector<uint16_t> f16_words(uint32_t seed) {
  static const uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00,
                                     0xfc00, 0x7e00, 0x7fff, 0x3c00, 0xbc00, 0x3c01, 0x1000, 0x5c00};
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(1024);
  for (auto& w : v) {
    const uint32_t k = rng() % 100, sign = (rng() & 1) << 15, mant = rng() & 0x3ff;
    if (k < 8) w = special[rng() % 16];
    else if (k < 25) w = static_cast<uint16_t>(sign | ((1 + rng() % 30) << 10) | mant);
    else w = static_cast<uint16_t>(sign | ((13 + rng() % 5) << 10) | mant);
  }
  return v;
}

// DST (fp16 words, or f32 with a 32-bit DST) after op on source tiles a and
// b, in tt-llk's order.
std::vector<uint32_t> f16_expect_dst(uint32_t op, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                                     Fidelity fid, const Config& c) {
  std::vector<uint32_t> d(1024, 0);
  const int np = phases(fid);
  for (int i = 0; i < 1024; i++) {
    const int r = (i >> 9) * 16 + ((i >> 4) & 15), col = ((i >> 8) & 1) * 16 + (i & 15);
    if (op <= 1) d[i] = elwadd(a[i], b[i], op == 1, 0, false, c);
    if (op == 2) d[i] = elwmul(a[i], b[i], fid, c);
    if (op == 3) d[i] = elwadd(a[i], b[fi(0, col)], false, 0, false, c);
    if (op == 4) d[i] = elwmul(a[i], b[fi(r, 0)], fid, c);
    if (op == 9) d[i] = src_to_dst(a[i], c);
    if (op == 10) d[fi(col, r)] = src_to_dst(a[i], c);
    // Dest reuse: the copy of a moves back to a source register whole.
    if (op == 11) d[i] = elwadd(src_to_dst(a[i], c), b[i], false, 0, false, c);
    if (op == 12) d[i] = elwmul(src_to_dst(a[i], c), b[i], fid, c);
    if (op == 13) d[i] = elwadd(b[i], src_to_dst(a[i], c), true, 0, false, c);
  }
  uint32_t s[16];
  for (auto& x : s) x = b[0];
  if (op == 5) {  // in0 (a) in SrcB, in1 (b) in SrcA; per phase, k 0-15 then 16-31
    for (int p = 0; p < np; p++)
      for (int r = 0; r < 32; r++)
        for (int col = 0; col < 32; col++)
          for (int kh = 0; kh < 2; kh++)
            d[fi(r, col)] = mvmul_phase(&b[fi(16 * kh, col)], 16, &a[fi(r, 16 * kh)], 1, d[fi(r, col)], p, c);
  } else if (op == 6 || op == 7) {  // a face's phases, then the next face
    for (int x = 0; x < 32; x++)
      for (int h = 0; h < 2; h++)
        for (int p = 0; p < np; p++) {
          if (op == 6) d[fi(x, 0)] = mvmul_phase(&a[fi(x, 16 * h)], 1, s, 1, d[fi(x, 0)], p, c);
          else d[fi(0, x)] = mvmul_phase(&a[fi(16 * h, x)], 16, s, 1, d[fi(0, x)], p, c);
        }
  } else if (op == 8) {  // 16 column sums, through SrcB whole (fp16), pooled again
    uint32_t v[16] = {};
    for (int f = 0; f < 4; f++)
      for (int col = 0; col < 16; col++)
        for (int p = 0; p < np; p++) v[col] = mvmul_phase(&a[f * 256 + col], 16, s, 1, v[col], p, c);
    for (int p = 0; p < np; p++) d[0] = mvmul_phase(v, 1, s, 1, d[0], p, c);
  }
  return d;
}

std::vector<uint8_t> f16_expect_pack(const std::vector<uint32_t>& d, const std::string& fmt, bool fp32) {
  std::vector<uint8_t> out(tile_bytes(fmt));
  for (int i = 0; i < 1024; i++) {
    if (fp32) {  // a 32-bit DST packs as for any float operands
      if (fmt == "Float32") std::memcpy(&out[4 * i], &d[i], 4);
      const uint16_t h = pack_bf16(d[i], true);
      if (fmt == "Float16_b") std::memcpy(&out[2 * i], &h, 2);
    } else if (fmt == "Float32") {
      const uint32_t w = pack_f32_from_f16(d[i]);
      std::memcpy(&out[4 * i], &w, 4);
    } else {
      const uint16_t w = fmt == "Float16" ? pack_f16(d[i]) : pack_bf16_from_f16(d[i]);
      std::memcpy(&out[2 * i], &w, 2);
    }
  }
  return out;
}

void check_f16_words(DeviceLayer& layer, const char* fid_name, bool fp32) {
  const Fidelity fid = std::string(fid_name) == "LoFi" ? Fidelity::LoFi : Fidelity::HiFi4;
  uint32_t seed = 7;
  for (uint32_t op = 0; op < kF16Ops; op++, seed += 2) {
    if (fp32 && op >= 8) continue;  // reduce scalar, copy, transpose, reuse: not modelled with a 32-bit DST
    const std::vector<uint16_t> ha = f16_words(seed), hb = f16_words(seed + 1);
    std::vector<uint32_t> a(1024), b(1024);
    for (int i = 0; i < 1024; i++) a[i] = src_from_f16(ha[i]), b[i] = src_from_f16(hb[i]);
    const std::vector<uint32_t> d = f16_expect_dst(op, a, b, fid, fp32 ? kF16Fp32 : kF16);
    for (const char* fout : {"Float16", "Float32", "Float16_b"}) {
      if (fp32 && std::string(fout) == "Float16") continue;  // the fp32-to-fp16 pack is not modelled
      Run r;
      r.formats = {"Float16", "Float16"};
      r.inputs = {to_bytes(ha), to_bytes(hb)};
      r.compute = copy_op_kernel();
      r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", kF16Cases}};
      r.args = {op, 0, 0, 0};
      r.out_format = fout;
      r.fp32 = fp32;
      r.fidelity = fid_name;
      const std::vector<uint8_t> got = run(layer, r), want = f16_expect_pack(d, fout, fp32);
      if (got == want) continue;
      const size_t w = std::string(fout) == "Float32" ? 4 : 2;
      size_t at = 0;
      while (got[at] == want[at]) at++;
      at -= at % w;
      uint32_t g = 0, x = 0;
      std::memcpy(&g, &got[at], w);
      std::memcpy(&x, &want[at], w);
      char words[64];
      std::snprintf(words, sizeof words, ": got 0x%0*x, want 0x%0*x", int(2 * w), g, int(2 * w), x);
      throw Failure(std::string(kF16OpNames[op]) + " Float16 -> " + fout + ", " + fid_name +
                    (fp32 ? ", fp32 DST" : ", 16-bit DST") + ": element " + std::to_string(at / w) + words);
    }
  }
}

void test_f16_words_lofi(DeviceLayer& layer) { check_f16_words(layer, "LoFi", false); }
ZYX_TEST(hw, test_f16_words_lofi);
void test_f16_words_hifi4(DeviceLayer& layer) { check_f16_words(layer, "HiFi4", false); }
ZYX_TEST(hw, test_f16_words_hifi4);
void test_f16_words_fp32_dst(DeviceLayer& layer) {
  check_f16_words(layer, "LoFi", true);
  check_f16_words(layer, "HiFi4", true);
}
ZYX_TEST(hw, test_f16_words_fp32_dst);

// The packer's ReLU on an fp16 DST (pack_relu_config, modes 1-3, the
// threshold's 16 bits compared with the fp16 intermediate's), before the
// late conversion to each output format.
void test_f16_relu(DeviceLayer& layer) {
  const uint16_t threshold = 0x3c00;  // fp16 1.0
  const std::vector<uint16_t> ha = f16_words(41), hb = f16_words(42);
  std::vector<uint32_t> a(1024), b(1024);
  for (int i = 0; i < 1024; i++) a[i] = src_from_f16(ha[i]), b[i] = src_from_f16(hb[i]);
  const std::vector<uint32_t> d = f16_expect_dst(0, a, b, Fidelity::HiFi4, kF16);
  for (uint32_t mode = 1; mode <= 3; mode++)
    for (const char* fout : {"Float16", "Float32", "Float16_b"}) {
      Run r;
      r.formats = {"Float16", "Float16"};
      r.inputs = {to_bytes(ha), to_bytes(hb)};
      r.compute = copy_op_kernel();
      r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", kF16Cases}, {"INIT", "pack_relu_config(p0)"}};
      r.args = {0, (uint32_t(threshold) << 16) | mode, 0, 0};
      r.fp32 = false;
      r.out_format = fout;
      std::vector<uint8_t> want(tile_bytes(fout));
      for (int i = 0; i < 1024; i++) {
        const uint16_t h = relu_bf16(pack_f16(d[i]), mode, threshold);
        const uint32_t w = std::string(fout) == "Float16" ? h : std::string(fout) == "Float32" ? f16_late_f32(h)
                                                                                                : f16_late_bf16(h);
        std::memcpy(&want[i * (want.size() / 1024)], &w, want.size() / 1024);
      }
      if (run(layer, r) != want)
        throw Failure("relu mode " + std::to_string(mode) + " on an fp16 DST -> " + fout + ": words differ");
    }
}
ZYX_TEST(hw, test_f16_relu);

// Words worked out by hand end to end: 1 + 2^-11 rounds away from zero to
// 1 + 2^-10 in the fp16 DST (an f32 path would round to even: 1); 65504 +
// 65504 is 131008, a normal of the card's fp16 (0x7fff, IEEE's NaN
// pattern), which Float32 gets exactly; twice that saturates.
void test_f16_hand(DeviceLayer& layer) {
  std::vector<uint16_t> a(1024, 0x3c00), b(1024, 0x1000);
  a[1] = 0x7bff, b[1] = 0x7bff;
  a[2] = 0x7fff, b[2] = 0x7fff;
  a[3] = 0x3c00, b[3] = 0x03ff;  // a denormal operand is zero
  Run r;
  r.formats = {"Float16", "Float16"};
  r.inputs = {to_bytes(a), to_bytes(b)};
  r.compute = copy_op_kernel();
  r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", kF16Cases}};
  r.args = {0, 0, 0, 0};
  r.fp32 = false;
  r.out_format = "Float16";
  const std::vector<uint16_t> h = from_bytes<uint16_t>(run(layer, r));
  CHECK(h[0] == 0x3c01);
  CHECK(h[1] == 0x7fff);
  CHECK(h[2] == 0x7fff);
  CHECK(h[3] == 0x3c00);
  r.out_format = "Float32";
  const std::vector<uint32_t> f = from_bytes<uint32_t>(run(layer, r));
  CHECK(f[0] == float_bits(1.0f + 0x1p-10f));
  CHECK(f[1] == float_bits(131008.0f));
  CHECK(f[3] == float_bits(1.0f));
}
ZYX_TEST(hw, test_f16_hand);

// ---- Integer formats through the compute API (hardware numerics) ----

// Int32 words as a tt-metal host writes them (two's complement), with the
// edge cases: zero, -1, INT32_MIN and INT32_MAX, values past 127 and 255.
std::vector<int32_t> int32_words() {
  std::vector<int32_t> v(1024);
  static const int32_t special[] = {0, 1, -1, 5, -5, 127, 128, -127, -128, 200, 255, 256, -300,
                                    INT32_MIN, INT32_MAX, 65535, 65536, -65536};
  std::mt19937 rng(91);
  for (size_t i = 0; i < v.size(); i++)
    v[i] = i < std::size(special) ? special[i] : static_cast<int32_t>(rng()) >> (rng() % 31);
  return v;
}

Run int_copy(const std::string& in_format, std::vector<uint8_t> in, const std::string& out_format) {
  Run r = one_tile_op(in_format, std::move(in), "(void)0");
  r.out_format = out_format;
  r.fp32 = true;  // tt-metal needs a 32-bit DST for 32-bit integers
  if (in_format == "Int32") r.unpack_to_dest_fp32 = {0};  // as tt-metal unpacks 32-bit integers
  return r;
}

// An integer copy: Int32 moves to DST and back unchanged (two's complement
// survives); packed to Int8 the packer keeps bit 31 as the sign and clamps
// the magnitude to 127, to UInt8 a set bit 31 is 0 and the rest clamps to
// 255. An Int8 tile (sign-magnitude) copies unchanged, -0 included, and
// reaches an Int32 output as sign-magnitude words.
void test_int_copy(DeviceLayer& layer) {
  const int before = failures;
  const std::vector<int32_t> w = int32_words();
  const std::vector<int32_t> same = from_bytes<int32_t>(run(layer, int_copy("Int32", to_bytes(w), "Int32")));
  for (int i = 0; i < 1024; i++) EXPECT(same[i], w[i]);
  const std::vector<uint8_t> i8 = run(layer, int_copy("Int32", to_bytes(w), "Int8"));
  const std::vector<uint8_t> u8 = run(layer, int_copy("Int32", to_bytes(w), "UInt8"));
  for (int i = 0; i < 1024; i++) {
    EXPECT(i8[i], pack_int8(uint32_t(w[i]), false));
    EXPECT(u8[i], pack_int8(uint32_t(w[i]), true));
  }
  // Hand-worked words (w[0..]: 0, 1, -1, 5, -5, 127, 128, -127, -128, 200, 255, 256, -300, INT32_MIN, INT32_MAX).
  const uint8_t want_i8[] = {0x00, 0x01, 0xff, 0x05, 0xff, 0x7f, 0x7f, 0xff, 0xff, 0x7f, 0x7f, 0x7f, 0xff, 0x80, 0x7f};
  const uint8_t want_u8[] = {0, 1, 0, 5, 0, 127, 128, 0, 0, 200, 255, 255, 0, 0, 255};
  for (size_t i = 0; i < std::size(want_i8); i++) {
    EXPECT(i8[i], want_i8[i]);
    EXPECT(u8[i], want_u8[i]);
  }
  std::vector<uint8_t> b(1024);
  for (int i = 0; i < 1024; i++) b[i] = static_cast<uint8_t>(i * 37 + 11);
  b[0] = 0x80, b[1] = 0x85, b[2] = 0x05, b[3] = 0xff;
  CHECK(run(layer, int_copy("Int8", b, "Int8")) == b);
  const std::vector<uint32_t> wide = from_bytes<uint32_t>(run(layer, int_copy("Int8", b, "Int32")));
  EXPECT(wide[0], 0x80000000u);
  EXPECT(wide[1], 0x80000005u);
  EXPECT(wide[2], 5);
  EXPECT(wide[3], 0x8000007fu);
  for (int i = 0; i < 1024; i++) EXPECT(wide[i], int8_to_dst(b[i], false));
  if (failures != before) throw Failure("integer copy: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int_copy);

// unpack_to_dest on integer tiles: tt-llk's unpacker writes DST directly
// only for 32-bit data (is_32bit_input: Int32, UInt32, Float32); Int8, UInt8
// and UInt16 with the mode set still go through SrcA and MOVA2D, so every
// word is the one the copy without the mode gives: Int8 sign and magnitude,
// UInt8 its eight bits, UInt16 its 16 bits, Int32 and UInt32 unchanged.
void test_int_unpack_to_dest(DeviceLayer& layer) {
  const int before = failures;
  std::vector<uint8_t> b(1024);
  for (int i = 0; i < 1024; i++) b[i] = static_cast<uint8_t>(i * 53 + 7);
  b[0] = 0x80, b[1] = 0x85, b[2] = 0xff, b[3] = 0x7f;
  std::vector<uint16_t> h(1024);
  for (int i = 0; i < 1024; i++) h[i] = static_cast<uint16_t>(i * 4099 + 3);
  h[0] = 0xffff, h[1] = 0x8000, h[2] = 0x0100;
  std::vector<uint32_t> w(1024);
  for (int i = 0; i < 1024; i++) w[i] = static_cast<uint32_t>(i) * 0x9e3779b9u;
  w[0] = 0x80000000u, w[1] = 0xffffffffu;
  struct Case {
    const char* in;
    std::vector<uint8_t> bytes;
    const char* out;
  };
  const Case cases[] = {{"Int8", b, "Int32"},
                        {"Int8", b, "Int8"},
                        {"UInt8", b, "UInt32"},
                        {"UInt8", b, "UInt8"},
                        {"UInt16", to_bytes(h), "UInt16"},
                        {"Int32", to_bytes(w), "Int32"},
                        {"UInt32", to_bytes(w), "UInt32"}};
  for (const Case& c : cases) {
    Run r = int_copy(c.in, c.bytes, c.out);
    r.unpack_to_dest_fp32 = {0};
    const std::vector<uint8_t> with = run(layer, r);
    r.unpack_to_dest_fp32 = {};
    const std::vector<uint8_t> without = run(layer, r);
    if (with != without) throw Failure(std::string(c.in) + " to " + c.out + ": unpack_to_dest changes the words");
    const std::string in = c.in, out = c.out;
    if (out == "Int32" && in == "Int8") {
      const std::vector<uint32_t> got = from_bytes<uint32_t>(with);
      EXPECT(got[0], 0x80000000u);  // -0
      EXPECT(got[1], 0x80000005u);
      EXPECT(got[2], 0x8000007fu);
      for (int i = 0; i < 1024; i++) EXPECT(got[i], int8_to_dst(b[i], false));
    } else if (in == "UInt8" && out == "UInt32") {
      const std::vector<uint32_t> got = from_bytes<uint32_t>(with);
      for (int i = 0; i < 1024; i++) EXPECT(got[i], b[i]);
    } else {
      CHECK(with == c.bytes);  // the same format in and out: every word back
    }
  }
  if (failures != before) throw Failure("unpack_to_dest: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int_unpack_to_dest);

// A float DST packed to an integer format: the packer converts no float to
// an integer but reads the DST word as an integer one (ttsim's packer). From
// a 32-bit DST, Int32 gets the f32 bits, Int8 and UInt8 their sign and
// clamped magnitude, UInt16 the high half as the register stores it; from a
// 16-bit DST, UInt16 gets the register's storage of the bf16 (mantissa in
// bits 8-14, exponent in bits 0-7).
uint16_t dst16_storage(uint16_t h) {
  return static_cast<uint16_t>((h & 0x8000) | ((h & 0x7f) << 8) | ((h >> 7) & 0xff));
}

void test_float_dst_int_pack(DeviceLayer& layer) {
  const int before = failures;
  std::vector<uint32_t> f(1024);
  std::mt19937 rng(29);
  for (auto& x : f) x = rng();
  const uint32_t special[] = {0x3f800000u, 0xbf800000u, 0,           0x80000000u,
                              0x00000005u, 0x80000064u, 0x7f800000u, 0x40490fdbu};
  std::copy(std::begin(special), std::end(special), f.begin());
  auto pack = [&](const std::string& out) {
    Run r = int_copy("Float32", to_bytes(f), out);
    r.unpack_to_dest_fp32 = {0};  // the f32 words reach DST whole
    return run(layer, r);
  };
  const std::vector<uint32_t> i32 = from_bytes<uint32_t>(pack("Int32"));
  const std::vector<uint8_t> i8 = pack("Int8"), u8 = pack("UInt8");
  const std::vector<uint16_t> u16 = from_bytes<uint16_t>(pack("UInt16"));
  for (int i = 0; i < 1024; i++) {
    EXPECT(i32[i], f[i]);
    EXPECT(i8[i], pack_int8(f[i], false));
    EXPECT(u8[i], pack_int8(f[i], true));
    EXPECT(u16[i], dst16_storage(static_cast<uint16_t>(f[i] >> 16)));
  }
  // Hand-worked: 1.0, -1.0, +0, -0, the denormal words 5 and -100, +inf, pi.
  const uint8_t want_i8[] = {0x7f, 0xff, 0x00, 0x80, 0x05, 0xe4, 0x7f, 0x7f};
  const uint8_t want_u8[] = {255, 0, 0, 0, 5, 0, 255, 255};
  const uint16_t want_u16[] = {0x007f, 0x807f, 0, 0x8000, 0, 0x8000, 0x00ff, 0x4980};
  for (size_t i = 0; i < std::size(special); i++) {
    EXPECT(i8[i], want_i8[i]);
    EXPECT(u8[i], want_u8[i]);
    EXPECT(u16[i], want_u16[i]);
  }
  std::vector<uint16_t> h(1024);
  for (auto& x : h) x = static_cast<uint16_t>(rng());
  for (auto& x : h)
    if ((x & 0x7f80) == 0 || (x & 0x7f80) == 0x7f80) x ^= 0x0400;  // no denormals or NaN: DST keeps the word
  h[0] = 0x3f80, h[1] = 0xc020, h[2] = 0;  // 1.0, -2.5, +0
  Run r = int_copy("Float16_b", to_bytes(h), "UInt16");
  r.fp32 = false;
  const std::vector<uint16_t> s = from_bytes<uint16_t>(run(layer, r));
  EXPECT(s[0], 0x007f);
  EXPECT(s[1], 0xa080);
  EXPECT(s[2], 0);
  for (int i = 0; i < 1024; i++) EXPECT(s[i], dst16_storage(h[i]));
  if (failures != before)
    throw Failure("float DST to integer packs: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_float_dst_int_pack);

// An int32 add on the SFPU (add_int_tile, tt-llk's raw INT32 loads and a
// two's complement add): words of two's complement sums, wrapping at
// INT32_MAX. UInt16 with a 16-bit DST wraps modulo 2^16 (LO16 stores).
void test_int_add(DeviceLayer& layer) {
  const int before = failures;
  const std::vector<int32_t> a = int32_words();
  std::vector<int32_t> b(1024);
  std::mt19937 rng(5);
  for (auto& x : b) x = static_cast<int32_t>(rng()) >> (rng() % 31);
  b[0] = -1, b[1] = -1, b[13] = -1, b[14] = 1;  // 0 + -1, 1 + -1, INT32_MIN - 1, INT32_MAX + 1
  Run r;
  r.formats = {"Int32", "Int32"};
  r.inputs = {to_bytes(a), to_bytes(b)};
  r.out_format = "Int32";
  r.unpack_to_dest_fp32 = {0, 1};
  r.compute = copy_op_kernel();
  r.defines = {{"NIN", "2"}, {"OP", "add_int_tile_init(); add_int_tile<DataFormat::Int32>(0, 1, 0)"}};
  r.args = {0, 0, 0, 0};
  const std::vector<uint32_t> got = from_bytes<uint32_t>(run(layer, r));
  for (int i = 0; i < 1024; i++) EXPECT(got[i], uint32_t(a[i]) + uint32_t(b[i]));
  EXPECT(got[0], 0xffffffffu);
  EXPECT(got[1], 0);
  EXPECT(got[13], 0x7fffffffu);
  EXPECT(got[14], 0x80000000u);
  std::vector<uint16_t> ua(1024, 0xffff), ub(1024, 2);
  ua[1] = 100, ub[1] = 23;
  r.formats = {"UInt16", "UInt16"};
  r.inputs = {to_bytes(ua), to_bytes(ub)};
  r.out_format = "UInt16";
  r.fp32 = false;
  r.unpack_to_dest_fp32 = {};
  r.defines["OP"] = "add_int_tile_init(); add_int_tile<DataFormat::UInt16>(0, 1, 0)";
  const std::vector<uint16_t> u = from_bytes<uint16_t>(run(layer, r));
  EXPECT(u[0], 1);  // 0xffff + 2 wraps
  EXPECT(u[1], 123);
  if (failures != before) throw Failure("add_int_tile: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int_add);

// typecast_tile as tt-llk's SFPU programs compute it: Float32 to Int32
// truncates, 2^31 and beyond and NaN give INT32_MIN; to UInt16 rounds half
// away from zero; Int32 to Float32 rounds to nearest even and to Float16_b
// then rounds half away from zero.
void test_int_typecast(DeviceLayer& layer) {
  const int before = failures;
  std::vector<uint32_t> f(1024, 0x3f800000u);
  const uint32_t fw[] = {0x4039999au, 0xc039999au, 0x3f7d70a4u, 0x4f32d05eu, 0x7fc00000u, 0xcf000000u, 0x40200000u,
                         0x3f000000u, 0xc0400000u, 0x477fff80u};
  std::copy(std::begin(fw), std::end(fw), f.begin());
  auto cast = [&](const std::string& in, std::vector<uint8_t> bytes, const std::string& out) {
    Run r = one_tile_op(in, std::move(bytes), "typecast_tile_init(); typecast_tile<(uint32_t)DataFormat::" + in +
                                                  ", (uint32_t)DataFormat::" + out + ">(0)");
    r.out_format = out;
    r.fp32 = true;
    if (in == "Float32" || in == "Int32") r.unpack_to_dest_fp32 = {0};  // all 32 bits reach DST
    return run(layer, r);
  };
  const std::vector<uint32_t> i32 = from_bytes<uint32_t>(cast("Float32", to_bytes(f), "Int32"));
  const uint32_t want_i32[] = {2, 0xfffffffeu, 0, 0x80000000u, 0x80000000u, 0x80000000u, 2, 0, 0xfffffffdu, 65535};
  for (size_t i = 0; i < std::size(want_i32); i++) EXPECT(i32[i], want_i32[i]);
  for (int i = 0; i < 1024; i++) EXPECT(i32[i], sfpu_f32_to_int32(f[i]));
  const std::vector<uint16_t> u16 = from_bytes<uint16_t>(cast("Float32", to_bytes(f), "UInt16"));
  const uint16_t want_u16[] = {3, 0, 1, 0xffff, 0xffff, 0, 3, 1, 0, 0xffff};
  for (size_t i = 0; i < std::size(want_u16); i++) EXPECT(u16[i], want_u16[i]);
  std::vector<int32_t> n = int32_words();
  n[20] = 0x01010000, n[21] = 0x01000001, n[22] = -0x01010000;
  const std::vector<uint32_t> f32 = from_bytes<uint32_t>(cast("Int32", to_bytes(n), "Float32"));
  const std::vector<uint16_t> bf = from_bytes<uint16_t>(cast("Int32", to_bytes(n), "Float16_b"));
  EXPECT(f32[2], 0xbf800000u);   // -1
  EXPECT(f32[13], 0xcf000000u);  // INT32_MIN
  EXPECT(f32[14], 0x4f000000u);  // INT32_MAX rounds to 2^31
  EXPECT(f32[21], 0x4b800000u);  // 2^24 + 1: to even
  EXPECT(bf[20], 0x4b81);        // 2^24 + 2^16: a bf16 tie, away from zero
  EXPECT(bf[22], 0xcb81);
  EXPECT(bf[13], 0xcf00);
  for (int i = 0; i < 1024; i++) {
    EXPECT(f32[i], sfpu_int32_to_f32(uint32_t(n[i])));
    EXPECT(bf[i], sfpu_f32_to_bf16(sfpu_int32_to_f32(uint32_t(n[i]))) >> 16);
  }
  // UInt32 and UInt16 inputs: the double rounding of UInt32 (0xc0000081 to
  // 2^31 + 2^30) and UInt16 257 to bf16 258 (away from zero).
  std::vector<uint32_t> u32(1024, 7);
  u32[0] = 0xc0000081u, u32[1] = 0xffffffffu, u32[2] = 257;
  const std::vector<uint32_t> fu = from_bytes<uint32_t>(cast("UInt32", to_bytes(u32), "Float32"));
  EXPECT(fu[0], 0x4f400000u);
  EXPECT(fu[1], 0x4f800000u);
  for (int i = 0; i < 1024; i++) EXPECT(fu[i], sfpu_uint32_to_f32(u32[i]));
  std::vector<uint16_t> u16in(1024, 3);
  u16in[0] = 257, u16in[1] = 0xffff;
  const std::vector<uint16_t> bu = from_bytes<uint16_t>(cast("UInt16", to_bytes(u16in), "Float16_b"));
  EXPECT(bu[0], 0x4381);
  EXPECT(bu[1], 0x4780);  // 65535 rounds away to 65536
  EXPECT(bu[2], 0x4040);
  // An Int8 input is read as sign and magnitude: 0x85 is -5, 0x80 (-0) is 0.
  std::vector<uint8_t> i8(1024, 0x01);
  i8[0] = 0x85, i8[1] = 0x80, i8[2] = 0x7f, i8[3] = 0xff;
  const std::vector<float> from_i8 = from_bytes<float>(cast("Int8", i8, "Float32"));
  CHECK(from_i8[0] == -5.0f && from_i8[1] == 0.0f && from_i8[2] == 127.0f && from_i8[3] == -127.0f);
  if (failures != before) throw Failure("typecast_tile: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int_typecast);

// typecast_tile between integer formats as tt-metal's Wormhole programs
// compute it: UInt16 widens; to UInt16 from UInt32/UInt8 clamps at 65535,
// from Int32 negative values are 0; to UInt8 the low byte (wrapping, -1 is
// 255); pairs without a program (Int32 to UInt32, Int8 to Int32) leave
// the words as they are.
void test_int_int_typecast(DeviceLayer& layer) {
  const int before = failures;
  auto cast = [&](const std::string& in, std::vector<uint8_t> bytes, const std::string& out) {
    const std::string formats = "<(uint32_t)DataFormat::" + in + ", (uint32_t)DataFormat::" + out + ">";
    Run r = one_tile_op(in, std::move(bytes), "typecast_tile_init" + formats + "(); typecast_tile" + formats + "(0)");
    r.out_format = out;
    r.fp32 = true;
    if (in == "Int32" || in == "UInt32") r.unpack_to_dest_fp32 = {0};
    return run(layer, r);
  };
  std::vector<uint16_t> h(1024);
  for (int i = 0; i < 1024; i++) h[i] = static_cast<uint16_t>(i * 7919 + 1);
  h[0] = 0xffff, h[1] = 0x8000, h[2] = 0x1234;
  // 0, 1, -1, 5, -5, 127, 128, -127, -128, 200, 255, 256, -300, INT32_MIN, INT32_MAX, 65535, 65536, -65536, ...
  const std::vector<int32_t> w = int32_words();
  for (const char* out : {"UInt32", "Int32"}) {
    const std::vector<uint32_t> got = from_bytes<uint32_t>(cast("UInt16", to_bytes(h), out));
    for (int i = 0; i < 1024; i++) EXPECT(got[i], h[i]);
  }
  const std::vector<uint16_t> from_u32 = from_bytes<uint16_t>(cast("UInt32", to_bytes(w), "UInt16"));
  const std::vector<uint16_t> from_i32 = from_bytes<uint16_t>(cast("Int32", to_bytes(w), "UInt16"));
  const std::vector<uint8_t> u8_i32 = cast("Int32", to_bytes(w), "UInt8");
  const std::vector<uint8_t> u8_u32 = cast("UInt32", to_bytes(w), "UInt8");
  for (int i = 0; i < 1024; i++) {
    const uint32_t x = uint32_t(w[i]);
    EXPECT(from_u32[i], std::min(x, 0xffffu));
    EXPECT(from_i32[i], w[i] < 0 ? 0 : std::min(x, 0xffffu));
    EXPECT(u8_i32[i], x & 0xff);
    EXPECT(u8_u32[i], x & 0xff);
  }
  EXPECT(from_u32[2], 0xffff);  // UInt32 0xffffffff
  EXPECT(from_i32[2], 0);       // Int32 -1
  EXPECT(from_i32[13], 0);      // INT32_MIN
  EXPECT(from_i32[16], 0xffff);  // 65536
  EXPECT(from_i32[12], 0);       // -300
  EXPECT(from_i32[9], 200);
  EXPECT(u8_i32[2], 0xff);   // -1
  EXPECT(u8_i32[11], 0);     // 256
  EXPECT(u8_i32[12], 0xd4);  // -300
  const std::vector<uint8_t> u8_u16 = cast("UInt16", to_bytes(h), "UInt8");
  for (int i = 0; i < 1024; i++) EXPECT(u8_u16[i], h[i] & 0xff);
  EXPECT(u8_u16[2], 0x34);
  std::vector<uint8_t> b(1024);
  for (int i = 0; i < 1024; i++) b[i] = static_cast<uint8_t>(i * 31 + 5);
  const std::vector<uint16_t> u16_u8 = from_bytes<uint16_t>(cast("UInt8", b, "UInt16"));
  for (int i = 0; i < 1024; i++) EXPECT(u16_u8[i], b[i]);
  // No program: the words stay. Int32 -5 packs to UInt32 as 0xfffffffb; an
  // Int8 -5 (0x85) stays the sign-magnitude word 0x80000005.
  const std::vector<uint32_t> same = from_bytes<uint32_t>(cast("Int32", to_bytes(w), "UInt32"));
  for (int i = 0; i < 1024; i++) EXPECT(same[i], uint32_t(w[i]));
  b[0] = 0x85;
  const std::vector<uint32_t> i8 = from_bytes<uint32_t>(cast("Int8", b, "Int32"));
  EXPECT(i8[0], 0x80000005u);
  for (int i = 0; i < 1024; i++) EXPECT(i8[i], int8_to_dst(b[i], false));
  if (failures != before) throw Failure("integer typecasts: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int_int_typecast);

// add_tiles, sub_tiles and mul_tiles on Int8 and UInt8 tiles: the FPU's
// int8 datapath into sign-magnitude DST words, packed to Int32 (the words)
// and Int8/UInt8 (the packer's clamp); mul_tiles by fidelity slices.
void test_int8_fpu(DeviceLayer& layer) {
  const int before = failures;
  std::vector<uint8_t> a(1024), b(1024);
  std::mt19937 rng(17);
  for (int i = 0; i < 1024; i++) a[i] = static_cast<uint8_t>(rng()), b[i] = static_cast<uint8_t>(rng());
  a[0] = 0x85, b[0] = 0x03;  // -5, 3
  a[1] = 100, b[1] = 0xe4;   // 100, -100
  a[2] = 100, b[2] = 100;
  a[3] = 0x80, b[3] = 0x00;  // -0, 0
  const std::string cases = op_switch(
      "case 0: add_tiles_init(0, 1); add_tiles(0, 1, 0, 0, 0); break;"
      "case 1: sub_tiles_init(0, 1); sub_tiles(0, 1, 0, 0, 0); break;"
      "case 2: mul_tiles_init(0, 1); mul_tiles(0, 1, 0, 0, 0); break;");
  auto fpu = [&](const std::string& fmt, uint32_t op, const std::string& out, const char* fid) {
    Run r;
    r.formats = {fmt, fmt};
    r.inputs = {a, b};
    r.compute = copy_op_kernel();
    r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", cases}};
    r.args = {op, 0, 0, 0};
    r.out_format = out;
    r.fidelity = fid;
    return run(layer, r);
  };
  for (const char* fmt : {"Int8", "UInt8"}) {
    const bool u = std::string(fmt) == "UInt8";
    for (uint32_t op = 0; op < 3; op++)
      for (const char* fid : {"HiFi4", "LoFi"}) {
        if (op < 2 && std::string(fid) == "LoFi") continue;
        const int np = std::string(fid) == "LoFi" ? 1 : 4;
        const std::vector<uint32_t> w = from_bytes<uint32_t>(fpu(fmt, op, "Int32", fid));
        const std::vector<uint8_t> n = fpu(fmt, op, fmt, fid);
        for (int i = 0; i < 1024; i++) {
          const int32_t x = dst_int_value(int8_to_dst(a[i], u)), y = dst_int_value(int8_to_dst(b[i], u));
          int32_t v = op == 0 ? x + y : op == 1 ? x - y : 0;
          for (int p = 0; op == 2 && p < np; p++) v += int8_mul_phase(x, y, p);
          EXPECT(w[i], dst_int_word(v));
          EXPECT(n[i], pack_int8(dst_int_word(v), u));
        }
      }
  }
  // Hand-worked words: -5 + 3 = -2; 100 - -100 = 200 (Int8: clamped to
  // 127); 100 * -100 = -10000; LoFi 100 * 100 = 96 * 96; -0 + 0 = +0.
  const std::vector<uint32_t> add = from_bytes<uint32_t>(fpu("Int8", 0, "Int32", "HiFi4"));
  EXPECT(add[0], 0x80000002u);
  EXPECT(add[3], 0);
  EXPECT(from_bytes<uint32_t>(fpu("Int8", 1, "Int32", "HiFi4"))[1], 200);
  EXPECT(fpu("Int8", 1, "Int8", "HiFi4")[1], 0x7f);
  EXPECT(from_bytes<uint32_t>(fpu("Int8", 2, "Int32", "HiFi4"))[1], 0x80002710u);
  EXPECT(from_bytes<uint32_t>(fpu("Int8", 2, "Int32", "LoFi"))[2], 9216);
  EXPECT(from_bytes<uint32_t>(fpu("Int8", 2, "Int32", "HiFi4"))[2], 10000);
  if (failures != before) throw Failure("int8 FPU ops: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int8_fpu);

// FPU calls on Int32 and UInt32 tiles: the card's unpacker cannot load
// 32-bit integers into SrcA/SrcB, so with hardware numerics add_tiles,
// mul_tiles, a broadcast, binary_dest_reuse_tiles, matmul_tiles and
// reduce_tile on them fail the run, naming the call and the SFPU's integer
// calls. Exact mode adds them as integers.
void test_int32_fpu_refused(DeviceLayer& layer) {
  std::vector<int32_t> a(1024, 7), b(1024, -3);
  const std::string cases = op_switch(
      "case 0: add_tiles_init(0, 1); add_tiles(0, 1, 0, 0, 0); break;"
      "case 1: mul_tiles_init(0, 1); mul_tiles(0, 1, 0, 0, 0); break;"
      "case 2: add_bcast_rows_init_short(0, 1); add_tiles_bcast_rows(0, 1, 0, 0, 0); break;"
      "case 3: mm_init(0, 1, 16); matmul_tiles(0, 1, 0, 0, 0); break;"
      "case 4: reduce_init<PoolType::SUM, ReduceDim::REDUCE_COL>(0, 1, 16);"
      "        reduce_tile<PoolType::SUM, ReduceDim::REDUCE_COL>(0, 1, 0, 0, 0); break;"
      "case 5: copy_tile_init(0); copy_tile(0, 0, 0);"
      "        binary_dest_reuse_tiles_init<EltwiseBinaryType::ELWADD, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1);"
      "        binary_dest_reuse_tiles<EltwiseBinaryType::ELWADD, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1, 0, 0);"
      "        break;");
  const char* calls[] = {"binary op",    "binary op",   "binary op",
                         "matmul_tiles", "reduce_tile", "binary_dest_reuse_tiles"};
  for (const char* fmt : {"Int32", "UInt32"})
    for (uint32_t op = 0; op < 6; op++) {
      Run r;
      r.formats = {fmt, fmt};
      r.inputs = {to_bytes(a), to_bytes(b)};
      r.compute = copy_op_kernel();
      r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", cases}};
      r.args = {op, 0, 0, 0};
      r.out_format = fmt;
      const std::string msg = expect_error("run_error", [&] { run(layer, r); });
      if (msg.find(calls[op]) == std::string::npos || msg.find("source registers") == std::string::npos ||
          msg.find("add_int_tile") == std::string::npos)
        throw Failure(std::string(fmt) + " case " + std::to_string(op) + ": the error does not explain: " + msg);
    }
  Run r;
  r.formats = {"Int32", "Int32"};
  r.inputs = {to_bytes(a), to_bytes(b)};
  r.compute = copy_op_kernel();
  r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", cases}};
  r.args = {0, 0, 0, 0};
  r.out_format = "Int32";
  setenv("ZYX_EMU_NUMERICS", "exact", 1);
  std::vector<int32_t> sum;
  try {
    sum = from_bytes<int32_t>(run(layer, r));
  } catch (...) {
    unsetenv("ZYX_EMU_NUMERICS");
    throw;
  }
  unsetenv("ZYX_EMU_NUMERICS");
  for (int i = 0; i < 1024; i++) EXPECT(sum[i], 4);
}
ZYX_TEST(int, test_int32_fpu_refused);

// sfpu_reduce's Int32 column max and min (INT32_2S_COMP loads, SFPSWAP in
// sign-magnitude order): two's complement values compare as values, but
// INT32_MIN loads as 0, so a column of negatives with INT32_MIN has the
// maximum 0 and a column with INT32_MIN and positives the minimum 0.
void test_int_reduce(DeviceLayer& layer) {
  const int before = failures;
  std::vector<int32_t> v(1024);
  std::mt19937 rng(23);
  for (auto& x : v) x = static_cast<int32_t>(rng()) >> (rng() % 31);
  for (int r = 0; r < 32; r++) {
    v[fi(r, 0)] = -5 - r, v[fi(r, 1)] = 3 + r, v[fi(r, 2)] = -9 - 2 * r;
  }
  v[fi(7, 0)] = INT32_MIN;   // max of column 0: 0, not -5
  v[fi(9, 1)] = INT32_MIN;   // min of column 1: 0, not INT32_MIN
  v[fi(4, 2)] = INT32_MAX;   // column 2: max INT32_MAX, min -71
  for (const char* pool : {"MAX", "MIN"}) {
    const bool max = std::string(pool) == "MAX";
    Run r = one_tile_op("Int32", to_bytes(v), std::string("sfpu_reduce_init<PoolType::") + pool +
                                                   ", DataFormat::Int32>(); sfpu_reduce<PoolType::" + pool +
                                                   ", DataFormat::Int32>(0)");
    r.fp32 = true;
    r.unpack_to_dest_fp32 = {0};
    const std::vector<int32_t> got = from_bytes<int32_t>(run(layer, r));
    for (int c = 0; c < 32; c++) {
      int64_t want = 0;
      for (int row = 0; row < 32; row++) {
        const int64_t x = v[fi(row, c)] == INT32_MIN ? 0 : v[fi(row, c)];
        want = row == 0 ? x : max ? std::max(want, x) : std::min(want, x);
      }
      EXPECT(got[fi(0, c)], want);
      for (int row = 1; row < 32; row++) EXPECT(got[fi(row, c)], v[fi(row, c)]);  // rows 1-31 as they were
    }
    EXPECT(got[fi(0, 0)], max ? 0 : -5 - 31);
    EXPECT(got[fi(0, 1)], max ? 3 + 31 : 0);
    EXPECT(got[fi(0, 2)], max ? INT32_MAX : -9 - 62);
  }
  if (failures != before) throw Failure("sfpu_reduce Int32: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int_reduce);

// Integer ReLU. relu_min_tile_int32 is max(x, threshold) (tt-llk's SFPSWAP
// on INT32_2S_COMP loads: INT32_MIN counts as 0); relu_max_tile_int32 takes
// its threshold as a float's bits (tt-metal passes them), truncated to an
// integer. The packer's ReLU (mode 1) into Int32 and UInt32 makes a word
// with bit 31 set 0, from an integer DST and from a float one.
void test_int_relu(DeviceLayer& layer) {
  const int before = failures;
  std::vector<int32_t> v = int32_words();  // 0, 1, -1, 5, -5, 127, 128, -127, -128, 200, 255, 256, -300, INT32_MIN, ...
  auto sfpu = [&](const std::string& call, uint32_t p0) {
    Run r = one_tile_op("Int32", to_bytes(v), call, p0);
    r.unpack_to_dest_fp32 = {0};
    return from_bytes<int32_t>(run(layer, r));
  };
  const std::vector<int32_t> lo = sfpu("relu_min_tile_init(); relu_min_tile_int32(0, p0)", uint32_t(-100));
  for (int i = 0; i < 1024; i++) EXPECT(lo[i], std::max(v[i] == INT32_MIN ? 0 : v[i], -100));
  EXPECT(lo[2], -1);    // -1 stays: above the threshold -100
  EXPECT(lo[8], -100);  // -128 rises to -100
  EXPECT(lo[12], -100);
  EXPECT(lo[13], 0);  // INT32_MIN loads as 0
  const std::vector<int32_t> lo5 = sfpu("relu_min_tile_init(); relu_min_tile_int32(0, p0)", 5);
  for (int i = 0; i < 1024; i++) EXPECT(lo5[i], std::max(v[i], 5));
  const std::vector<int32_t> hi = sfpu("relu_max_tile_init(); relu_max_tile_int32(0, p0)", 0x42c80000u);  // 100.0f
  for (int i = 0; i < 1024; i++) EXPECT(hi[i], std::max(std::min(v[i], 100), 0));
  EXPECT(hi[6], 100);
  EXPECT(hi[4], 0);
  const std::vector<int32_t> hi_frac = sfpu("relu_max_tile_init(); relu_max_tile_int32(0, p0)", 0x40f00000u);  // 7.5f
  EXPECT(hi_frac[5], 7);
  EXPECT(hi_frac[1], 1);
  // The packer's ReLU.
  Run r = int_copy("Int32", to_bytes(v), "Int32");
  r.defines["INIT"] = "pack_relu_config(1)";
  const std::vector<int32_t> packed = from_bytes<int32_t>(run(layer, r));
  for (int i = 0; i < 1024; i++) EXPECT(packed[i], v[i] < 0 ? 0 : v[i]);
  std::vector<uint32_t> f(1024);
  for (int i = 0; i < 1024; i++) f[i] = uint32_t(v[i]) * 2654435761u;
  f[0] = 0xbf800000u, f[1] = 0x3f800000u, f[2] = 0x80000000u;
  r = int_copy("Float32", to_bytes(f), "UInt32");
  r.unpack_to_dest_fp32 = {0};
  r.defines["INIT"] = "pack_relu_config(1)";
  const std::vector<uint32_t> fr = from_bytes<uint32_t>(run(layer, r));
  for (int i = 0; i < 1024; i++) EXPECT(fr[i], (f[i] & 0x80000000u) ? 0 : f[i]);
  EXPECT(fr[1], 0x3f800000u);
  if (failures != before) throw Failure("integer ReLU: " + std::to_string(failures - before) + " word(s) differ");
}
ZYX_TEST(int, test_int_relu);

// Int8 through tilize, untilize and pack_untilize: unpacked as sign and
// magnitude and packed by the packer's conversion, every byte (-0 and
// every negative value included) comes back unchanged.
const char* kInt8Tilize = R"(
#include "api/compute/tilize.h"
#include "api/compute/untilize.h"
#include "api/compute/pack_untilize.h"
void kernel_main() {
  compute_kernel_hw_startup(0, 16);
  cb_wait_front(0, 1);
  cb_reserve_back(16, 1);
#if defined(TILIZE)
  tilize_init(0, 1, 16);
  tilize_block(0, 1, 16);
  tilize_uninit(0, 16);
#elif defined(UNTILIZE)
  untilize_init(0);
  untilize_block<1>(0, 1, 16);
  untilize_uninit(0);
#else
  pack_untilize_init<1>(0, 16);
  pack_untilize_block<1>(0, 1, 16);
  pack_untilize_uninit(16);
#endif
  cb_push_back(16, 1);
  cb_pop_front(0, 1);
}
)";

void test_int8_tilize(DeviceLayer& layer) {
  std::vector<uint8_t> rows(1024), tiled(1024);
  for (int i = 0; i < 1024; i++) rows[i] = static_cast<uint8_t>(i * 7 + 3);
  for (int r = 0; r < 32; r++)
    for (int c = 0; c < 32; c++) tiled[fi(r, c)] = rows[r * 32 + c];
  for (const char* mode : {"TILIZE", "UNTILIZE", "PACK_UNTILIZE"}) {
    const bool tilize = std::string(mode) == "TILIZE";
    Run r;
    r.formats = {"Int8"};
    r.inputs = {tilize ? rows : tiled};
    r.out_format = "Int8";
    r.compute = kInt8Tilize;
    r.defines = {{mode, "1"}};
    if (run(layer, r) != (tilize ? tiled : rows)) throw Failure(std::string(mode) + " of Int8: bytes differ");
  }
}
ZYX_TEST(int, test_int8_tilize);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "numerics_formats_"); }
