// The FPU datapath model (src/numerics.hpp) on its own: words worked out by
// hand from the documented datapath (unpack truncation, fidelity slices,
// MVMUL's group alignment, DST rounding half away from zero, the packer),
// and properties the model must have whatever its details (HiFi4 with a
// 32-bit DST multiplies bf16 exactly; an add whose exponents differ by at
// most 3 is exact in 32-bit DST).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "numerics.hpp"

using namespace zyx::emu::hw;

namespace {

int failures = 0;

void expect(uint32_t got, uint32_t want, const char* what, int line) {
  if (got == want) return;
  std::fprintf(stderr, "numerics_tests.cpp:%d: %s: got 0x%08x, want 0x%08x\n", line, what, got, want);
  failures++;
}
#define EXPECT(got, want) expect(static_cast<uint32_t>(got), static_cast<uint32_t>(want), #got, __LINE__)

uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

const Config kBf16{false, true}, kFp32{true, true}, kFp32Bh{true, false};

void unpack_words() {
  // TF32 source (32-bit DST): the low 13 bits dropped, denormals kept for
  // the FPU to flush; bf16 source: the low 16 dropped, denormals zero.
  EXPECT(src_from_f32(0x3f812345u, true), 0x3f812000u);
  EXPECT(src_from_f32(0x3f812345u, false), 0x3f810000u);
  EXPECT(src_from_f32(0xbf81ffffu, false), 0xbf810000u);  // truncation, not rounding
  EXPECT(src_from_f32(0x00400000u, false), 0u);
  EXPECT(src_from_f32(0x80400000u, false), 0x80000000u);
  EXPECT(src_from_f32(0x00400000u, true), 0x00400000u);
  EXPECT(src_operand(0x3f812000u, false), 0x3f810000u);
  EXPECT(src_operand(0x3f812000u, true), 0x3f812000u);
  // Bfp8_b: magnitude 64 is 1.0 at the shared exponent.
  EXPECT(bfp8_to_bf16(0x40, 127), 0x3f80);
  EXPECT(bfp8_to_bf16(0x7f, 127), 0x3ffe);   // 127/64
  EXPECT(bfp8_to_bf16(0xc0, 128), 0xc000);   // -2.0
  EXPECT(bfp8_to_bf16(0x01, 127), 0x3c80);   // 1/64
  EXPECT(bfp8_to_bf16(0x80, 127), 0xff80);   // negative zero magnitude: -inf
  EXPECT(bfp8_to_bf16(0x00, 127), 0x0000);
  EXPECT(bfp8_to_bf16(0x01, 3), 0x7e80);     // the exponent wraps modulo 256
  EXPECT(bfp8_to_bf16(0x4 << 4, 127), 0x3f80);  // Bfp4_b 1.0 (magnitude 4) widened
  // Copy through SrcA: exponent 0 is zero; a 16-bit DST keeps the top half.
  EXPECT(src_to_dst(0x3f812000u, kFp32), 0x3f812000u);
  EXPECT(src_to_dst(0x3f812000u, kBf16), 0x3f810000u);
  EXPECT(src_to_dst(0x00400000u, kFp32), 0u);
  EXPECT(src_to_dst(0x7fc00000u, kBf16), 0x7fc00000u);
}

void add_words() {
  const uint32_t one = 0x3f800000u;
  EXPECT(elwadd(one, one, false, 0, false, kBf16), 0x40000000u);
  EXPECT(elwadd(one, one, true, 0, false, kBf16), 0u);
  // 1 + 2^-8 is a tie on the bf16 grid: away from zero (nearest-even: 1.0).
  EXPECT(elwadd(one, 0x3b800000u, false, 0, false, kBf16), 0x3f810000u);
  EXPECT(elwadd(0xbf800000u, 0xbb800000u, false, 0, false, kBf16), 0xbf810000u);
  EXPECT(elwadd(one, 0x3b800000u, false, 0, false, kFp32), 0x3f808000u);
  // 1 - 2^-9: the tie between 1 - 2^-8 and 1 goes to 1.
  EXPECT(elwadd(one, 0x3b000000u, true, 0, false, kBf16), 0x3f800000u);
  // B aligned to A's exponent keeps 11 bits, rounding half up: 2^-11 is a
  // half unit at 1.0 and rounds to 2^-10 even with a 32-bit DST.
  EXPECT(elwadd(one, 0x3a000000u, false, 0, false, kFp32), 0x3f802000u);
  EXPECT(elwadd(one, 0x39800000u, false, 0, false, kFp32), one);  // 2^-12 is gone
  // TF32 operands keep 10 mantissa bits.
  EXPECT(elwadd(0x3f802000u, 0x3f802000u, false, 0, false, kFp32), 0x40002000u);
  // Denormal operands are zero; a denormal result is +0.
  EXPECT(elwadd(0x00400000u, one, false, 0, false, kFp32), one);
  EXPECT(elwadd(0x00c00000u, 0x00800000u, true, 0, false, kFp32), 0u);
  EXPECT(elwadd(0x80800000u, 0x00000000u, false, 0, false, kFp32), 0x80800000u);
  // Infinity and NaN are exponent-255 normals in, infinity out.
  EXPECT(elwadd(0x7f800000u, one, false, 0, false, kBf16), 0x7f800000u);
  EXPECT(elwadd(0x7fc00000u, one, false, 0, false, kFp32), 0x7f800000u);
  EXPECT(elwadd(0xffc00000u, one, false, 0, false, kBf16), 0xff800000u);
  EXPECT(elwadd(0x7f000000u, 0x7f000000u, false, 0, false, kFp32), 0x7f800000u);  // overflow
  // acc_to_dest: DST + (A + B), one rounding.
  EXPECT(elwadd(one, one, false, 0x40000000u, true, kBf16), 0x40800000u);
  EXPECT(elwadd(one, one, false, 0x40000000u, false, kBf16), 0x40000000u);
  // 16-bit DST: each aligned addend is first rounded to 11 bits (at 256,
  // units of 2^-2: 1 + 2^-4 becomes 1), and 257 is a tie on the bf16 grid
  // (2 there) that goes away from zero, to 258 (nearest-even: 256).
  EXPECT(elwadd(one, 0x3d800000u, false, 0x43800000u, true, kBf16), 0x43810000u);
  EXPECT(elwadd(0x3f000000u, 0x3f000000u, false, 0x43800000u, true, kBf16), 0x43810000u);
}

void mul_words() {
  const uint32_t one = 0x3f800000u, almost2 = 0x3fff0000u;  // 1.9921875: all 7 mantissa bits set
  EXPECT(elwmul(one, one, Fidelity::LoFi, kBf16), one);
  // LoFi sees the top 5 bits of A's significand: 1.1111 (1.9375).
  EXPECT(elwmul(almost2, one, Fidelity::LoFi, kFp32), 0x3ff80000u);
  EXPECT(elwmul(almost2, one, Fidelity::HiFi2, kFp32), almost2);
  // and the top 7 of B's: B's last bf16 bit needs phase 2 (HiFi3).
  EXPECT(elwmul(one, 0x3f810000u, Fidelity::LoFi, kFp32), one);
  EXPECT(elwmul(one, 0x3f810000u, Fidelity::HiFi2, kFp32), one);
  EXPECT(elwmul(one, 0x3f810000u, Fidelity::HiFi3, kFp32), 0x3f810000u);
  // Phase by phase into a 16-bit DST (grid 2^-6 in [2, 4)): 1.9921875^2 =
  // 3.96878...; phase 0: 1.9375 * 1.984375 = 3.8447... -> 3.84375; phase 1
  // adds 0.875/32 * 1.984375 = 0.10852... -> 3.953125; phase 2 adds 1.9375
  // * 2^-7 = 0.01513671875 (11 bits at 2^-22 units: 0.015625) -> 3.96875;
  // phase 3 adds 0.000427..., which rounds to nothing at 11 bits.
  EXPECT(elwmul_phase(almost2, almost2, 0, 0, kBf16), 0x40760000u);
  EXPECT(elwmul(almost2, almost2, Fidelity::HiFi2, kBf16), 0x407d0000u);
  EXPECT(elwmul(almost2, almost2, Fidelity::HiFi3, kBf16), 0x407e0000u);
  EXPECT(elwmul(almost2, almost2, Fidelity::HiFi4, kBf16), 0x407e0000u);
  // 32-bit DST, HiFi4: the exact product (3.96878052 = 0x407e01 << 8).
  EXPECT(elwmul(almost2, almost2, Fidelity::HiFi4, kFp32), f2u(1.9921875f * 1.9921875f));
  // Signs, zeros, denormals, infinity, NaN, underflow.
  EXPECT(elwmul(0xbf800000u, 0x40000000u, Fidelity::HiFi4, kBf16), 0xc0000000u);
  EXPECT(elwmul(0x00400000u, one, Fidelity::HiFi4, kFp32), 0u);
  EXPECT(elwmul(0x7f800000u, 0x40000000u, Fidelity::HiFi4, kFp32), 0x7f800000u);
  EXPECT(elwmul(0xffc00000u, one, Fidelity::LoFi, kBf16), 0xff800000u);
  EXPECT(elwmul(0x7f800000u, 0u, Fidelity::HiFi4, kFp32), 0u);  // inf * 0 = 0
  EXPECT(elwmul(0x1f800000u, 0x1f800000u, Fidelity::HiFi4, kFp32), 0u);  // 2^-128: flushed
}

// A 16-element dot product through mvmul_phase, all phases of `f`.
uint32_t dot(const uint32_t* a, const uint32_t* b, Fidelity f, const Config& c, uint32_t dst = 0) {
  for (int p = 0; p < phases(f); p++) dst = mvmul_phase(a, 1, b, 1, dst, p, c);
  return dst;
}

void mvmul_words() {
  uint32_t a[16], b[16];
  const uint32_t one = 0x3f800000u;
  for (int i = 0; i < 16; i++) a[i] = b[i] = one;
  EXPECT(dot(a, b, Fidelity::LoFi, kBf16), 0x41800000u);  // 16
  EXPECT(dot(a, b, Fidelity::HiFi4, kFp32), 0x41800000u);
  // Group alignment: products below the group's largest exponent keep the
  // product precision at its scale (2^-10 units), rounding half up.
  std::fill(a, a + 16, 0u);
  a[0] = one;
  a[1] = 0x3a000000u;  // 2^-11: a half unit, rounds up to 2^-10
  EXPECT(dot(a, b, Fidelity::LoFi, kFp32), 0x3f802000u);
  a[1] = 0x39800000u;  // 2^-12: rounds to nothing
  EXPECT(dot(a, b, Fidelity::LoFi, kFp32), one);
  // The same product in the other group survives: groups align only at
  // the accumulator, at 24 bits.
  a[1] = 0;
  a[8] = 0x39800000u;
  EXPECT(dot(a, b, Fidelity::LoFi, kFp32), 0x3f800800u);
  // Cancellation inside a group: 1 - 1 + 2^-20 is 0 (the 2^-20 product is
  // shifted out), across groups it is exactly 2^-20 in a 32-bit DST and 0
  // in a 16-bit one (each addend rounded to 11 bits first).
  std::fill(a, a + 16, 0u);
  a[0] = one, a[1] = 0xbf800000u, a[2] = 0x35800000u;
  EXPECT(dot(a, b, Fidelity::HiFi4, kFp32), 0u);
  a[2] = 0, a[8] = 0x35800000u;
  EXPECT(dot(a, b, Fidelity::HiFi4, kFp32), 0x35800000u);
  EXPECT(dot(a, b, Fidelity::HiFi4, kBf16), 0u);
  // Wormhole normalises a negative sum of exactly one unit four bits too
  // high: DST 1 - 2^-23 (aligned: 2^23 - 1 units at 2^0) minus 1 is -1 unit.
  std::fill(a, a + 16, 0u);
  a[0] = 0xbf800000u;
  EXPECT(dot(a, b, Fidelity::LoFi, kFp32, 0x3f7ffffeu), 0xc1800000u);
  EXPECT(dot(a, b, Fidelity::LoFi, kFp32Bh, 0x3f7ffffeu), 0xb4000000u);
  // A 16-bit DST rounds every MVMUL: DST 256 plus a product of 1 is 257,
  // a tie on the bf16 grid (2 there), away from zero to 258.
  std::fill(a, a + 16, 0u);
  a[0] = one;
  EXPECT(dot(a, b, Fidelity::LoFi, kBf16, 0x43800000u), 0x43810000u);
  // Infinity in, infinity out; NaN is a large normal.
  a[0] = 0x7f800000u;
  EXPECT(dot(a, b, Fidelity::LoFi, kFp32), 0x7f800000u);
  a[0] = 0xffc00000u;
  EXPECT(dot(a, b, Fidelity::LoFi, kBf16), 0xff800000u);
  // Strides: a column of a row-major 16x16 matrix.
  uint32_t m[256] = {};
  for (int k = 0; k < 16; k++) m[k * 16 + 3] = 0x40000000u;  // column 3 = 2.0
  for (int i = 0; i < 16; i++) b[i] = one;
  EXPECT(mvmul_phase(m + 3, 16, b, 1, 0, 0, kFp32), 0x42000000u);  // 32
}

void pack_words() {
  EXPECT(pack_bf16(0x3f808000u, true), 0x3f81);  // tie: away from zero
  EXPECT(pack_bf16(0xbf808000u, true), 0xbf81);
  EXPECT(pack_bf16(0x3f807fffu, true), 0x3f80);
  EXPECT(pack_bf16(0x3f818000u, true), 0x3f82);  // nearest-even would give 0x3f82 too
  EXPECT(pack_bf16(0x3f828000u, true), 0x3f83);  // ... and 0x3f82 here
  EXPECT(pack_bf16(0x7fc00001u, true), 0x7f80);  // NaN: infinity
  EXPECT(pack_bf16(0xffc00000u, true), 0xff80);
  EXPECT(pack_bf16(0x7f7fffffu, true), 0x7f80);  // rounds up to infinity
  EXPECT(pack_bf16(0x00400000u, true), 0x0000);  // denormal: +0
  EXPECT(pack_bf16(0x80000000u, true), 0x0000);  // -0: +0
  EXPECT(pack_bf16(0x807fffffu, true), 0x8080);  // rounds up into the normal range
  EXPECT(pack_bf16(0x7fc00000u, false), 0x7f80);
  EXPECT(pack_bf16(0x3f810000u, false), 0x3f81);
  EXPECT(pack_f32(0x7fc00000u, false), 0x7f800000u);
  EXPECT(pack_f32(0x7fc00000u, true), 0x7fc00000u);
  EXPECT(pack_f32(0x3f812345u, true), 0x3f812345u);
  // Block float: the intermediate, then the block.
  EXPECT(bfp_intermediate(0x3fff0000u, true, false), 0x4000);  // 6-bit rounding carries
  EXPECT(bfp_intermediate(0x3fff0000u, true, true), 0x3fff);
  EXPECT(bfp_intermediate(0x3f81ffffu, true, true), 0x3f81);   // precise truncates to bf16
  EXPECT(bfp_intermediate(0x3f81ffffu, true, false), 0x3f82);
  EXPECT(bfp_intermediate(0x3f810000u, false, false), 0x3f82);
  EXPECT(bfp_intermediate(0x7fc00000u, false, false), 0x7f80);
  EXPECT(bfp_intermediate(0x00400000u, true, false), 0x0000);
  uint16_t v[16];
  uint8_t out[16];
  std::fill(v, v + 16, 0x3f80);
  EXPECT(bfp_block(v, false, out), 127);
  EXPECT(out[0], 0x40);
  v[1] = 0x4000;  // 2.0 sets the exponent; 1.0 is then 32 units
  v[2] = 0x3fff;  // 1.9921875 at its own exponent... in 2.0's block: 255/4 -> 64 (63.75 up)
  v[3] = 0x3f82;  // 130/4 = 32.5: half up to 33
  v[4] = 0xbf80;  // -1.0
  v[5] = 0x3400;  // 2^-23: shifted out
  v[6] = 0x8000;  // -0: no sign bit
  EXPECT(bfp_block(v, false, out), 128);
  EXPECT(out[0], 0x20);
  EXPECT(out[1], 0x40);
  EXPECT(out[2], 0x40);
  EXPECT(out[3], 0x21);
  EXPECT(out[4], 0xa0);
  EXPECT(out[5], 0x00);
  EXPECT(out[6], 0x00);
  std::fill(v, v + 16, 0x3fff);  // 255/2 = 127.5 -> 128 -> clamped to 127
  bfp_block(v, false, out);
  EXPECT(out[0], 0x7f);
  bfp_block(v, true, out);  // Bfp4_b keeps the top 3 of the 7 bits
  EXPECT(out[0], 0x7);
  v[0] = 0xbf80;
  bfp_block(v, true, out);
  EXPECT(out[0], 0xc);  // -1.0: 64 >> 4 = 4, with the sign
}

// The packer's ReLU on its intermediate's bits, and its L1 accumulation.
void packer_option_words() {
  EXPECT(relu_bf16(0xbf80, 0, 0), 0xbf80);      // off
  EXPECT(relu_bf16(0xbf80, 1, 0), 0x0000);      // negative: +0
  EXPECT(relu_bf16(0x8000, 1, 0), 0x0000);      // -0 too
  EXPECT(relu_bf16(0x3f80, 1, 0), 0x3f80);
  EXPECT(relu_bf16(0x3f80, 2, 0x3f80), 0x0000);  // at the threshold: zeroed
  EXPECT(relu_bf16(0x3f81, 2, 0x3f80), 0x3f81);
  EXPECT(relu_bf16(0x3f7f, 2, 0x3f80), 0x0000);
  EXPECT(relu_bf16(0x4001, 3, 0x4000), 0x4000);  // above: the threshold
  EXPECT(relu_bf16(0x4000, 3, 0x4000), 0x4000);
  EXPECT(relu_bf16(0x7f80, 3, 0x4000), 0x4000);  // infinity clamps
  EXPECT(relu_bf16(0xc000, 3, 0x4000), 0x0000);
  EXPECT(relu_f32(0x3f800000u, 2, 0x3f80), 0u);
  EXPECT(relu_f32(0x3f800001u, 2, 0x3f80), 0x3f800001u);
  EXPECT(relu_f32(0x40000001u, 3, 0x4000), 0x40000001u);  // same top 19 bits: kept
  EXPECT(relu_f32(0x40002000u, 3, 0x4000), 0x40000000u);
  EXPECT(relu_f32(0x80000001u, 1, 0), 0u);
  EXPECT(l1_acc_f32(0x3f800000u, 0x40000000u), 0x40400000u);
  EXPECT(l1_acc_f32(0x00000001u, 0x3f800000u), 0x3f800000u);  // denormal input flushed
  EXPECT(l1_acc_f32(0x00800000u, 0x80800001u), 0x80000000u);  // denormal result: zero of its sign
  EXPECT(l1_acc_f32(0x7f800000u, 0xff800000u), 0x7fc00000u);  // canonical NaN
  EXPECT(l1_acc_f32(0x7f800001u, 0x3f800000u), 0x7fc00000u);
  EXPECT(l1_acc_bf16(0x3f80, 0x3f80), 0x4000);
  EXPECT(l1_acc_bf16(0x3f80, 0x3b80), 0x3f80);  // 1 + 2^-8: a tie, to even (the packer would round up)
  EXPECT(l1_acc_bf16(0x3f81, 0x3b80), 0x3f82);  // a tie, to even upward
  EXPECT(l1_acc_bf16(0x7f80, 0xff80), 0x7fc0);
  EXPECT(l1_acc_bf16(0x7f80, 0x7f80), 0x7f80);
  EXPECT(l1_acc_bf16(0x7fc0, 0x3f80), 0x7f80);  // a NaN in L1 is a huge normal: infinity
  EXPECT(l1_acc_bf16(0x3f80, 0x7fc1), 0x7f80);
  EXPECT(l1_acc_bf16(0x0001, 0x0000), 0x0000);  // denormals flushed
  EXPECT(l1_acc_bf16(0xbf80, 0x3f80), 0x0000);
  EXPECT(l1_acc_bf16(0x7f7f, 0x7f7f), 0x7f80);  // overflow
  EXPECT(l1_acc_bf16(0x0080, 0x8081), 0x8000);  // below the normal range: zero of its sign
}

// Properties: bf16 operands whose product needs at most 16 bits multiply
// exactly at HiFi4 into a 32-bit DST; LoFi equals the product of A's top 5
// and B's top 7 significand bits; adds with exponents at most 3 apart are
// exact into a 32-bit DST and round half away from zero into a 16-bit one.
void properties() {
  std::mt19937 rng(24);
  std::uniform_int_distribution<uint32_t> mant(0, 127), ex(100, 150), sg(0, 1);
  auto bf = [&](int e) { return (sg(rng) << 31) | (uint32_t(e) << 23) | (mant(rng) << 16); };
  int bad = 0;
  for (int i = 0; i < 20000; i++) {
    uint32_t a = bf(ex(rng)), b = bf(ex(rng));
    float exact = u2f(a) * u2f(b);
    if (elwmul(a, b, Fidelity::HiFi4, kFp32) != f2u(exact)) bad++;
    uint32_t a5 = a & 0xfff80000u, b7 = b & 0xfffe0000u;  // top 5 / 7 significand bits
    if (elwmul(a, b, Fidelity::LoFi, kFp32) != f2u(u2f(a5) * u2f(b7))) bad++;
    int e = int(ex(rng));
    uint32_t x = bf(e), y = bf(e - int(sg(rng)) * 3);
    float s = u2f(x) + u2f(y);
    uint32_t su = f2u(s);
    if (s == 0.0f) su = 0;
    if (elwadd(x, y, false, 0, false, kFp32) != su) bad++;
    uint32_t r = su ? round_bf16_rhaz(su) : 0;
    if (elwadd(x, y, false, 0, false, kBf16) != r) bad++;
  }
  EXPECT(bad, 0);
}

// Words with the edge cases mixed in: exponents near 1 and far apart,
// zeros, denormals, infinities, NaN, TF32 low bits.
uint32_t word(std::mt19937& rng) {
  static const uint32_t special[] = {0, 0x80000000u, 0x00400000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                     0x3f800000u, 0x3b800000u, 0x7f7f0000u, 0x00800000u, 0xbf802000u, 0x3fffe000u};
  uint32_t k = rng() % 100, sign = (rng() & 1) << 31, mant = rng() & 0x7fe000u;
  if (k < 8) return special[rng() % 12];
  if (k < 25) return sign | ((rng() % 256) << 23) | mant;
  return sign | ((118 + rng() % 16) << 23) | mant;
}

// The whole-tile fast paths against the element model.
void tiles() {
  std::mt19937 rng(7);
  for (const Config& c : {kBf16, kFp32, kFp32Bh}) {
    std::vector<uint32_t> a(4096), b(4096), d(4096);
    for (int i = 0; i < 4096; i++) a[i] = word(rng), b[i] = word(rng);
    for (bool sub : {false, true}) {
      elwadd_tile(a.data(), b.data(), d.data(), 4096, sub, c);
      int bad = 0;
      for (int i = 0; i < 4096; i++) bad += d[i] != elwadd(a[i], b[i], sub, 0, false, c);
      EXPECT(bad, 0);
    }
    for (Fidelity f : {Fidelity::LoFi, Fidelity::HiFi2, Fidelity::HiFi3, Fidelity::HiFi4}) {
      elwmul_tile(a.data(), b.data(), d.data(), 4093, f, c);  // 4093: the scalar tail too
      int bad = 0;
      for (int i = 0; i < 4093; i++) bad += d[i] != elwmul(a[i], b[i], f, c);
      EXPECT(bad, 0);
    }
    auto fp = [](int r, int col) { return ((r >> 4) * 2 + (col >> 4)) * 256 + (r & 15) * 16 + (col & 15); };
    for (Fidelity f : {Fidelity::LoFi, Fidelity::HiFi2, Fidelity::HiFi3, Fidelity::HiFi4}) {
      std::vector<uint32_t> want(1024), got(1024);
      for (int i = 0; i < 1024; i++) want[i] = got[i] = (i % 3) ? word(rng) & (c.fp32_dest ? ~0u : 0xffff0000u) : 0;
      for (int p = 0; p < phases(f); p++)
        for (int r = 0; r < 32; r++)
          for (int col = 0; col < 32; col++)
            for (int kh = 0; kh < 2; kh++)
              want[fp(r, col)] = mvmul_phase(&b[fp(16 * kh, col)], 16, &a[fp(r, 16 * kh)], 1, want[fp(r, col)], p, c);
      matmul_tile(a.data(), b.data(), got.data(), f, c);
      int bad = 0;
      for (int i = 0; i < 1024; i++) bad += got[i] != want[i];
      EXPECT(bad, 0);
    }
  }
}

// The matmul's tile path (alignment shared across phases, zero operands as
// far-below exponents) against the element model, on random tiles of four
// kinds: the mixed edge-case words above (zeros, denormals, exponent 255,
// far-apart exponents), exponents within a few binades (most products
// aligned by small shifts), products that cancel in pairs (k and k + 1 with
// equal magnitudes, opposite signs) with small perturbations, and sparse
// tiles (mostly zeros and denormals). Every fidelity, both DST widths, on
// Wormhole and Blackhole, from a non-zero DST.
void matmul_random() {
  std::mt19937 rng(2024);
  const Config bf16_bh{false, false};
  auto fp = [](int r, int col) { return ((r >> 4) * 2 + (col >> 4)) * 256 + (r & 15) * 16 + (col & 15); };
  auto near = [&](int e0) { return ((rng() & 1) << 31) | (uint32_t(e0 + int(rng() % 5)) << 23) | (rng() & 0x7fe000u); };
  for (const Config& c : {kBf16, kFp32, kFp32Bh, bf16_bh}) {
    for (int kind = 0; kind < 4; kind++) {
      std::vector<uint32_t> a(1024), b(1024);  // a: in0 (SrcB), b: in1 (SrcA)
      for (int i = 0; i < 1024; i++) {
        if (kind == 0) a[i] = word(rng), b[i] = word(rng);
        if (kind == 1 || kind == 2) a[i] = near(120), b[i] = near(125);
        if (kind == 3) a[i] = rng() % 4 ? (rng() & 0x807fe000u) : word(rng), b[i] = rng() % 3 ? 0 : word(rng);
      }
      if (kind == 2)  // rows of in1 in pairs: k + 1 is -k, rarely nudged by one unit
        for (int k = 0; k < 32; k += 2)
          for (int col = 0; col < 32; col++) {
            b[fp(k + 1, col)] = b[fp(k, col)] ^ 0x80000000u;
            if (rng() % 8 == 0) b[fp(k + 1, col)] += 0x2000u;
          }
      for (int r = 0; r < 32 && kind == 2; r++)
        for (int k = 0; k < 32; k += 2) a[fp(r, k + 1)] = a[fp(r, k)];
      for (auto* t : {&a, &b})
        for (auto& x : *t) x = src_operand(x, c.fp32_dest);
      for (Fidelity f : {Fidelity::LoFi, Fidelity::HiFi2, Fidelity::HiFi3, Fidelity::HiFi4}) {
        std::vector<uint32_t> want(1024), got(1024);
        for (int i = 0; i < 1024; i++) want[i] = got[i] = (i % 2) ? near(118) & (c.fp32_dest ? ~0u : 0xffff0000u) : 0;
        for (int p = 0; p < phases(f); p++)
          for (int r = 0; r < 32; r++)
            for (int col = 0; col < 32; col++)
              for (int kh = 0; kh < 2; kh++)
                want[fp(r, col)] =
                    mvmul_phase(&b[fp(16 * kh, col)], 16, &a[fp(r, 16 * kh)], 1, want[fp(r, col)], p, c);
        matmul_tile(a.data(), b.data(), got.data(), f, c);
        int bad = 0;
        for (int i = 0; i < 1024; i++) bad += got[i] != want[i];
        EXPECT(bad, 0);
      }
    }
  }
}

// The matmul's tile path against the element model on many random tiles,
// in the AVX-512 build (where the host has it) and the baseline build:
// edge-case words (zeros, denormals, exponent 255, far-apart exponents),
// exponents anywhere in 1-254 (products that underflow and overflow, group
// exponents far apart), bf16-valued operands (slices that are all zero in
// the phases that take B's low bits), dense near exponents, cancelling
// pairs, sparse tiles, a DST that cancels the product to within a unit or
// two (sums of -1, 0, 1 units: Wormhole's normalisation quirk), a DST 2^6
// to 2^21 above the products (terms aligned by large shifts), from DST
// words of every kind (zeros, denormals, infinities, NaN). Every
// fidelity, both DST widths, Wormhole and Blackhole.
void matmul_random_many() {
  std::mt19937 rng(4242);
  auto fp = [](int r, int col) { return ((r >> 4) * 2 + (col >> 4)) * 256 + (r & 15) * 16 + (col & 15); };
  auto near = [&](int e0) { return ((rng() & 1) << 31) | (uint32_t(e0 + int(rng() % 5)) << 23) | (rng() & 0x7fe000u); };
  auto any_exp = [&] { return ((rng() & 1) << 31) | ((1 + rng() % 254) << 23) | (rng() & 0x7fe000u); };
  const Config bf16_bh{false, false};
  const Fidelity fids[] = {Fidelity::LoFi, Fidelity::HiFi2, Fidelity::HiFi3, Fidelity::HiFi4};
  int bad = 0, tiles_checked = 0;
  for (bool simd : {true, false}) {
    use_avx512_tiles(simd);
    for (const Config& c : {kBf16, kFp32, kFp32Bh, bf16_bh}) {
      const uint32_t dmask = c.fp32_dest ? ~0u : 0xffff0000u;
      for (int t = 0; t < 30; t++) {
        const int kind = t % 10;
        std::vector<uint32_t> a(1024), b(1024), d0(1024);  // a: in0 (SrcB), b: in1 (SrcA)
        for (int i = 0; i < 1024; i++) {
          switch (kind) {
            case 0: a[i] = word(rng), b[i] = word(rng); break;
            case 1: a[i] = any_exp(), b[i] = any_exp(); break;
            case 2: a[i] = near(120) & 0xffff0000u, b[i] = near(126) & 0xffff0000u; break;
            case 3: a[i] = near(110 + int(rng() % 30)), b[i] = near(120); break;
            case 4: a[i] = rng() % 4 ? (rng() & 0x807fe000u) : word(rng), b[i] = rng() % 3 ? 0 : word(rng); break;
            default: a[i] = near(124), b[i] = near(124); break;
          }
          const uint32_t k = rng() % 8;
          d0[i] = (k == 0 ? 0 : k == 1 ? word(rng) : k == 2 ? any_exp() : near(118)) & dmask;
          if (kind == 8) d0[i] = near(133 + int(rng() % 16)) & dmask;
        }
        if (kind == 5)  // rows of in1 in pairs: k + 1 is -k, sometimes nudged by one unit
          for (int k = 0; k < 32; k += 2)
            for (int col = 0; col < 32; col++) {
              b[fp(k + 1, col)] = b[fp(k, col)] ^ 0x80000000u;
              if (rng() % 4 == 0) b[fp(k + 1, col)] += 0x2000u;
              a[fp(col, k + 1)] = a[fp(col, k)];
            }
        for (auto* v : {&a, &b})
          for (auto& x : *v) x = src_operand(x, c.fp32_dest);
        for (Fidelity f : fids) {
          std::vector<uint32_t> want = d0, got;
          auto model = [&](std::vector<uint32_t>& w) {
            for (int p = 0; p < phases(f); p++)
              for (int r = 0; r < 32; r++)
                for (int col = 0; col < 32; col++)
                  for (int kh = 0; kh < 2; kh++)
                    w[fp(r, col)] = mvmul_phase(&b[fp(16 * kh, col)], 16, &a[fp(r, 16 * kh)], 1, w[fp(r, col)], p, c);
          };
          if (kind == 6 || kind == 7) {
            // DST minus the product's first MVMUL, within a unit or two.
            std::vector<uint32_t> first(1024, 0);
            for (int r = 0; r < 32; r++)
              for (int col = 0; col < 32; col++)
                first[fp(r, col)] = mvmul_phase(&b[fp(0, col)], 16, &a[fp(r, 0)], 1, 0, 0, c);
            for (int i = 0; i < 1024; i++) {
              const uint32_t unit = c.fp32_dest ? 1u : 0x10000u;
              const uint32_t x = first[i] ^ 0x80000000u;
              const uint32_t k = rng() % 3;
              want[i] = (x & 0x7f800000u) == 0 ? 0 : k == 0 ? x : k == 1 ? x + unit : x - unit;
            }
          }
          got = want;
          model(want);
          matmul_tile(a.data(), b.data(), got.data(), f, c);
          for (int i = 0; i < 1024; i++) bad += got[i] != want[i];
          tiles_checked++;
        }
      }
    }
  }
  use_avx512_tiles(true);
  EXPECT(tiles_checked, 2 * 4 * 30 * 4);
  EXPECT(bad, 0);
}

// The integer conversions, words worked out by hand from the facts in
// numerics.hpp: Int8 as sign and magnitude, the packer's clamps, the
// SFPU's typecast programs (truncation, INT32_MIN on overflow, rounding
// half away from zero to UInt16 and bf16, nearest even from Int32).
void integer_words() {
  // Int8 bytes into DST: sign-magnitude words; -0 keeps its sign.
  EXPECT(int8_to_dst(0x05, false), 5);
  EXPECT(int8_to_dst(0x85, false), 0x80000005u);
  EXPECT(int8_to_dst(0x80, false), 0x80000000u);
  EXPECT(int8_to_dst(0xff, false), 0x8000007fu);
  EXPECT(int8_to_dst(0xff, true), 255);
  // The packer to Int8: sign bit 31 and the magnitude clamped to 127, so
  // two's complement -1 and -5 both become -127 (0xff).
  EXPECT(pack_int8(5, false), 0x05);
  EXPECT(pack_int8(127, false), 0x7f);
  EXPECT(pack_int8(128, false), 0x7f);
  EXPECT(pack_int8(200, false), 0x7f);
  EXPECT(pack_int8(0xffffffffu, false), 0xff);
  EXPECT(pack_int8(0xfffffffbu, false), 0xff);
  EXPECT(pack_int8(0x80000005u, false), 0x85);
  EXPECT(pack_int8(0x80000000u, false), 0x80);  // -0, and INT32_MIN
  // To UInt8: a set bit 31 is 0, above 255 is 255.
  EXPECT(pack_int8(0, true), 0);
  EXPECT(pack_int8(100, true), 100);
  EXPECT(pack_int8(255, true), 255);
  EXPECT(pack_int8(256, true), 255);
  EXPECT(pack_int8(0x7fffffffu, true), 255);
  EXPECT(pack_int8(0x80000001u, true), 0);
  EXPECT(pack_int8(0xffffffffu, true), 0);
  // UInt16 from a 16-bit DST wraps.
  EXPECT(pack_uint16_16b(0x10001u), 1);
  EXPECT(pack_uint16_16b(0xffffu), 0xffff);
  // SFPCAST: sign-magnitude to f32, nearest even.
  EXPECT(sfpcast_int_to_f32(0), 0);
  EXPECT(sfpcast_int_to_f32(0x80000000u), 0x80000000u);
  EXPECT(sfpcast_int_to_f32(1), 0x3f800000u);
  EXPECT(sfpcast_int_to_f32(0x80000001u), 0xbf800000u);
  EXPECT(sfpcast_int_to_f32(0x7fffffffu), 0x4f000000u);  // rounds up to 2^31
  EXPECT(sfpcast_int_to_f32(0x01000001u), 0x4b800000u);  // 2^24 + 1: a tie, to even
  EXPECT(sfpcast_int_to_f32(0x01000003u), 0x4b800002u);  // 2^24 + 3: a tie, up to even
  // Int32 (two's complement) to f32; INT32_MIN is -2^31.
  EXPECT(sfpu_int32_to_f32(5), 0x40a00000u);
  EXPECT(sfpu_int32_to_f32(0xffffffffu), 0xbf800000u);
  EXPECT(sfpu_int32_to_f32(0xfeffffffu), 0xcb800000u);  // -(2^24 + 1)
  EXPECT(sfpu_int32_to_f32(0x80000000u), 0xcf000000u);
  EXPECT(sfpu_int32_to_f32(0), 0);
  // f32 to Int32: toward zero; 2^31 and beyond, infinity and NaN: INT32_MIN.
  EXPECT(sfpu_f32_to_int32(0x4039999au), 2);           // 2.9
  EXPECT(sfpu_f32_to_int32(0xc039999au), 0xfffffffeu);  // -2.9
  EXPECT(sfpu_f32_to_int32(0x3f7d70a4u), 0);           // 0.99
  EXPECT(sfpu_f32_to_int32(0x80000000u), 0);
  EXPECT(sfpu_f32_to_int32(0x00000001u), 0);
  EXPECT(sfpu_f32_to_int32(0x4effffffu), 0x7fffff80u);
  EXPECT(sfpu_f32_to_int32(0x4f000000u), 0x80000000u);  // 2^31
  EXPECT(sfpu_f32_to_int32(0xcf000000u), 0x80000000u);  // -2^31
  EXPECT(sfpu_f32_to_int32(0x4f32d05eu), 0x80000000u);  // 3e9
  EXPECT(sfpu_f32_to_int32(0x7f800000u), 0x80000000u);
  EXPECT(sfpu_f32_to_int32(0xff800000u), 0x80000000u);
  EXPECT(sfpu_f32_to_int32(0x7fc00000u), 0x80000000u);
  // f32 to UInt32: negative 0, 2^32 and beyond all ones.
  EXPECT(sfpu_f32_to_uint32(0xbf800000u), 0);
  EXPECT(sfpu_f32_to_uint32(0x3fc00000u), 1);           // 1.5
  EXPECT(sfpu_f32_to_uint32(0x4f32d05eu), 0xb2d05e00u);  // 3e9
  EXPECT(sfpu_f32_to_uint32(0x4f800000u), 0xffffffffu);  // 2^32
  EXPECT(sfpu_f32_to_uint32(0x7fc00000u), 0xffffffffu);
  EXPECT(sfpu_f32_to_uint32(0xffc00000u), 0);
  // f32 to UInt16: half away from zero, clamped; negative 0.
  EXPECT(sfpu_f32_to_uint16(0x40200000u), 3);  // 2.5 (nearest even would give 2)
  EXPECT(sfpu_f32_to_uint16(0x3f000000u), 1);  // 0.5
  EXPECT(sfpu_f32_to_uint16(0x3efae148u), 0);  // 0.49
  EXPECT(sfpu_f32_to_uint16(0x3fb33333u), 1);  // 1.4
  EXPECT(sfpu_f32_to_uint16(0x477fff80u), 0xffff);  // 65535.5 rounds to 65536, clamped
  EXPECT(sfpu_f32_to_uint16(0x47800000u), 0xffff);  // 65536
  EXPECT(sfpu_f32_to_uint16(0xc0400000u), 0);       // -3
  EXPECT(sfpu_f32_to_uint16(0x501502f9u), 0xffff);  // 1e10
  // f32 to bf16: half away from zero; exponent 0 to +0, 255 to infinity.
  EXPECT(sfpu_f32_to_bf16(0x3f808000u), 0x3f810000u);  // a tie, away (even: 0x3f800000)
  EXPECT(sfpu_f32_to_bf16(0xbf808000u), 0xbf810000u);
  EXPECT(sfpu_f32_to_bf16(0x3f807fffu), 0x3f800000u);
  EXPECT(sfpu_f32_to_bf16(0x80400000u), 0);
  EXPECT(sfpu_f32_to_bf16(0x7fc00001u), 0x7f800000u);
  EXPECT(sfpu_f32_to_bf16(0x7f7f8000u), 0x7f800000u);
  // The FPU's int8 datapath: sign-magnitude DST words, saturation at
  // ±(2^31 - 1), and the fidelity slices of 100 * 100 (96 * 96 + 4 * 96 +
  // 96 * 4 + 4 * 4 = 10000).
  EXPECT(dst_int_word(-5), 0x80000005u);
  EXPECT(dst_int_value(0x80000005u), uint32_t(-5));
  EXPECT(dst_int_value(0x80000000u), 0);
  EXPECT(saturating_add_int32(0x7fffffff, 1), 0x7fffffff);
  EXPECT(saturating_add_int32(-0x7fffffff, -5), uint32_t(-0x7fffffff));
  EXPECT(int8_mul_phase(100, 100, 0), 9216);
  EXPECT(int8_mul_phase(100, 100, 1), 384);
  EXPECT(int8_mul_phase(100, 100, 2), 384);
  EXPECT(int8_mul_phase(100, 100, 3), 16);
  EXPECT(int8_mul_phase(-100, 100, 0), uint32_t(-9216));
  EXPECT(int8_mul_phase(255, 255, 0), 224 * 240);
  // INT32_2S_COMP loads and stores (Wormhole): two's complement -5 loads as
  // sign-magnitude -5 and stores back; INT32_MIN loads as 0; SFPSWAP's order
  // puts -0 below +0.
  EXPECT(sfpload_int32_2s_comp(0xfffffffbu), 0x80000005u);
  EXPECT(sfpstore_int32_2s_comp(0x80000005u), 0xfffffffbu);
  EXPECT(sfpload_int32_2s_comp(0x80000000u), 0);
  EXPECT(sfpload_int32_2s_comp(7), 7);
  EXPECT(sfpstore_int32_2s_comp(7), 7);
  EXPECT(sign_magnitude_order(0x80000000u) < sign_magnitude_order(0), 1);
  EXPECT(sign_magnitude_order(0x80000005u) < sign_magnitude_order(0x80000002u), 1);
  // UInt32 to f32 rounds twice: 2^31 + 2^30 + 129 casts its low 31 bits to
  // 2^30 + 128, and 2^31 plus that is a tie, to even: 2^31 + 2^30 (one
  // rounding would give 0x4f400001).
  EXPECT(sfpu_uint32_to_f32(0xc0000081u), 0x4f400000u);
  EXPECT(sfpu_uint32_to_f32(0xffffffffu), 0x4f800000u);
  EXPECT(sfpu_uint32_to_f32(0x80000000u), 0x4f000000u);
  EXPECT(sfpu_uint32_to_f32(5), 0x40a00000u);
  // UInt16 to f32 takes the low 16 bits; to bf16 257 is a tie, away: 258.
  EXPECT(sfpu_uint16_to_f32(0x10005u), 0x40a00000u);
  EXPECT(sfpu_f32_to_bf16(sfpu_uint16_to_f32(257)), 0x43810000u);
  // Int32 to bf16 rounds twice: 2^24 + 2^16 is exact in f32 and a bf16 tie,
  // which goes away from zero (2^24 + 2^17).
  EXPECT(sfpu_f32_to_bf16(sfpu_int32_to_f32(0x01010000u)), 0x4b810000u);
}

}  // namespace

int main() {
  unpack_words();
  add_words();
  mul_words();
  mvmul_words();
  pack_words();
  packer_option_words();
  properties();
  tiles();
  matmul_random();
  matmul_random_many();
  integer_words();
  if (failures) {
    std::fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  std::printf("numerics: all checks passed\n");
  return 0;
}
