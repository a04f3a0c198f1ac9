// SFPI kernels on the emulator (zyx_emu/sfpi.h, zyx_emu/sfpi_llk.h): kernels
// that program the SFPU through sfpi::vFloat, dst_reg, v_if and the SFPI
// library, run through tt-llk's SFPU parameter wrappers, and compared word
// for word with the Wormhole SFPU's documented arithmetic. The expected
// words come from host IEEE arithmetic where the Tensix ISA documentation
// says the SFPU's result is the IEEE one (adds, multiplies, and a multiply-add
// whose product and sum fit the SFPU's 27-bit product), with the SFPU's
// denormal and zero flushing applied, and from words worked out by hand from
// the documented SFPMAD/SFPLUT/SFPSTORE models for the edge cases.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "compute_harness.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// The SFPU's view of an IEEE result: denormal and zero results are +0.
uint32_t flushed(float r) {
  uint32_t u = float_bits(r);
  return ((u >> 23) & 255) == 0 ? 0u : u;
}

// A compute kernel: the NIN input tiles copied to DST 0 .. NIN-1, then CALL
// (SFPI face functions defined in FACES), then DST OUT0 .. OUT0 + NOUT - 1
// packed to cb 16.
std::string sfpi_kernel(const std::string& faces, const std::string& call) {
  return R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "sfpi.h"
#include "llk_math_eltwise_unary_sfpu_params.h"
#include "llk_math_eltwise_binary_sfpu_params.h"
using namespace sfpi;
)" + faces + R"(
void kernel_main() {
  init_sfpu(0, 16);
  for (uint32_t i = 0; i < NIN; i++) cb_wait_front(i, 1);
  tile_regs_acquire();
  for (uint32_t i = 0; i < NIN; i++) {
    copy_tile_to_dst_init_short(i);
    copy_tile(i, 0, i);
  }
)" + call + R"(
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, NOUT);
  for (uint32_t t = 0; t < NOUT; t++) pack_tile(OUT0 + t, 16);
  cb_push_back(16, NOUT);
  tile_regs_release();
}
)";
}

// A tile of fp32 words (bf16 values) as Float16_b bytes, and back.
std::vector<uint8_t> bf16_tile(const std::vector<uint32_t>& w) {
  std::vector<uint8_t> b(2 * w.size());
  for (size_t e = 0; e < w.size(); e++) {
    uint16_t h = uint16_t(w[e] >> 16);
    std::memcpy(&b[2 * e], &h, 2);
  }
  return b;
}
std::vector<uint32_t> bf16_words(const std::vector<uint8_t>& b) {
  std::vector<uint32_t> w(b.size() / 2);
  for (size_t e = 0; e < w.size(); e++) {
    uint16_t h;
    std::memcpy(&h, &b[2 * e], 2);
    w[e] = uint32_t(h) << 16;
  }
  return w;
}

// Runs an SFPI kernel on Float32 tiles (unpacked whole into a 32-bit DST)
// or, with fp32 off, on Float16_b tiles in a 16-bit DST.
std::vector<uint32_t> run_sfpi(DeviceLayer& layer, const std::string& src, const std::vector<std::vector<uint32_t>>& in,
                               uint32_t out0, uint32_t nout, bool fp32 = true) {
  Run r;
  std::string fmt = fp32 ? "Float32" : "Float16_b";
  for (size_t i = 0; i < in.size(); i++) {
    r.formats.push_back(fmt);
    if (fp32) {
      r.inputs.push_back(to_bytes(in[i]));
      r.unpack_to_dest_fp32.push_back(uint32_t(i));
    } else {
      r.inputs.push_back(bf16_tile(in[i]));
    }
  }
  r.out_format = fmt;
  r.out_tiles = nout;
  r.fp32 = fp32;
  r.dst_full_sync = true;
  r.compute = src;
  r.defines = {{"NIN", std::to_string(in.size())}, {"NOUT", std::to_string(nout)}, {"OUT0", std::to_string(out0)}};
  std::vector<uint8_t> b = run(layer, r);
  return fp32 ? from_bytes<uint32_t>(b) : bf16_words(b);
}

// Random fp32 words in +-[lo, hi), with `mant_bits` mantissa bits kept.
std::vector<uint32_t> rand_words(uint32_t seed, float lo, float hi, int mant_bits = 23) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<uint32_t> w(1024);
  uint32_t mask = ~((1u << (23 - mant_bits)) - 1);
  for (auto& x : w) x = (float_bits(d(g)) & mask) ^ (g() & 1 ? 0x80000000u : 0u);
  return w;
}

void check_word(uint32_t got, uint32_t want, const std::string& what) {
  if (got != want) std::fprintf(stderr, "%s: got 0x%08x, want 0x%08x\n", what.c_str(), got, want);
  CHECK_EQ(got, want);
}

// ---- arithmetic: add, subtract, multiply, fused multiply-add ----

const char* kArithFaces = R"(
inline void arith(uint32_t a, uint32_t b, uint32_t c) {
  for (int i = 0; i < 8; i++) {
    vFloat x = dst_reg[a * 32 + i], y = dst_reg[b * 32 + i], z = dst_reg[c * 32 + i];
    dst_reg[3 * 32 + i] = x + y;
    dst_reg[4 * 32 + i] = x - y;
    dst_reg[5 * 32 + i] = x * y;
    dst_reg[6 * 32 + i] = x * y + z;
  }
}
)";

// Edge cases (a, b, c) and the words of a + b, a - b, a * b and a * b + c,
// worked out from the SFPMAD model (ties to even, denormal inputs as zero,
// zero and denormal results +0, invalid operations NaN 0x7f800001).
struct ArithEdge {
  uint32_t a, b, c, add, sub, mul, mad;
};
const ArithEdge kArithEdges[] = {
    // 1 + 2^-24 is a tie: even 1.0; (1 + 2^-23) + 2^-24 ties up to 1 + 2^-22
    {0x3f800000, 0x33800000, 0, 0x3f800000, 0x3f7fffff, 0x33800000, 0x33800000},
    {0x3f800001, 0x33800000, 0, 0x3f800002, 0x3f800000, 0x33800001, 0x33800001},
    // a denormal input is zero; -0 results are +0
    {0x00400000, 0x3f800000, 0x80000000, 0x3f800000, 0xbf800000, 0x00000000, 0x00000000},
    {0x80000000, 0x80000000, 0x80000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000},
    // 2^-125 + 2^-149 ties to even; a result below the normal range is +0
    // (the difference, and a product whose exponent underflows: then the
    // addend as it is)
    {0x00800000, 0x00800001, 0x00800000, 0x01000000, 0x00000000, 0x00000000, 0x00800000},
    // (1 + 2^-12)^2 - 1: the product is not rounded first (2^-11 + 2^-24)
    {0x3f800800, 0x3f800800, 0xbf800000, 0x40000800, 0x00000000, 0x3f801000, 0x3a000400},
    // (1 + 2^-23)(1 - 2^-24) - 1: the product keeps 27 bits (3 * 2^-26),
    // neither the IEEE fma (2^-24 - 2^-47) nor mul-then-add (0)
    {0x3f800001, 0x3f7fffff, 0xbf800000, 0x40000000, 0x34400000, 0x3f800000, 0x33400000},
    // infinity: inf - inf is NaN (the sign of the product, here inf * -1);
    // inf * 0 is NaN
    {0x7f800000, 0x7f800000, 0xff800000, 0x7f800000, 0xff800001, 0x7f800000, 0x7f800001},
    {0x7f800000, 0x00000000, 0x3f800000, 0x7f800000, 0x7f800000, 0x7f800001, 0x7f800001},
    // NaN in, NaN 0x7f800001 out
    {0x7fc00000, 0x3f800000, 0x3f800000, 0x7f800001, 0x7f800001, 0x7f800001, 0x7f800001},
    // overflow to infinity
    {0x7f7fffff, 0x7f7fffff, 0x00000000, 0x7f800000, 0x00000000, 0x7f800000, 0x7f800000},
};

void test_arith(DeviceLayer& layer) {
  // Random lanes: a, b bf16 values in +-[1, 1.41) (their product has at most
  // 16 bits and is below 2, so the SFPU's partly fused multiply-add is the
  // IEEE fma), c any fp32 in +-[2^-8, 2^8).
  auto a = rand_words(1, 1.0f, 1.41f, 7), b = rand_words(2, 1.0f, 1.41f, 7), c = rand_words(3, 1.0f / 256, 256.0f);
  size_t n = sizeof kArithEdges / sizeof kArithEdges[0];
  for (size_t i = 0; i < n; i++) a[i] = kArithEdges[i].a, b[i] = kArithEdges[i].b, c[i] = kArithEdges[i].c;
  auto out = run_sfpi(layer, sfpi_kernel(kArithFaces, "_llk_math_eltwise_binary_sfpu_params_(arith, 0, 1, 2);"),
                      {a, b, c}, 3, 4);
  for (size_t i = 0; i < n; i++) {
    const ArithEdge& e = kArithEdges[i];
    std::string tag = "edge " + std::to_string(i);
    check_word(out[i], e.add, tag + " add");
    check_word(out[1024 + i], e.sub, tag + " sub");
    check_word(out[2048 + i], e.mul, tag + " mul");
    check_word(out[3072 + i], e.mad, tag + " mad");
  }
  for (size_t i = n; i < 1024; i++) {
    float x = bits_float(a[i]), y = bits_float(b[i]), z = bits_float(c[i]);
    check_word(out[i], flushed(x + y), "add " + std::to_string(i));
    check_word(out[1024 + i], flushed(x - y), "sub " + std::to_string(i));
    check_word(out[2048 + i], flushed(x * y), "mul " + std::to_string(i));
    check_word(out[3072 + i], flushed(std::fmaf(x, y, z)), "mad " + std::to_string(i));
  }
}
ZYX_TEST(arith, test_arith);

// ---- predication, the Dst counter, vector modes, lane layout ----

const char* kPredFaces = R"(
// tt-llk style: one dst_reg row a step, dst_reg++ between.
inline void piecewise() {
  for (int i = 0; i < 8; i++) {
    vFloat x = dst_reg[0];
    vFloat r = 8.0f;
    v_if (x < 0.0f) {
      v_if (x < -2.0f) { r = -4.0f; }
      v_else { r = x * 2.0f; }
      v_endif;
    }
    v_elseif (x < 1.0f) { r = 0.5f; }
    v_elseif (x < 3.0f) {
      r = x + 1.0f;
      v_if (x >= 2.0f) { r = -r; }
      v_endif;
    }
    v_endif;
    dst_reg[0] = r;
    dst_reg++;
  }
}
// Lane i of row step s holds 64 s + 2 i: shows where each lane lands.
inline void lane_ids() {
  for (int s = 0; s < 8; s++) dst_reg[s] = int32_to_float(vConstTileId + vInt(64 * s));
}
inline void fill(float v) {
  for (int s = 0; s < 8; s++) dst_reg[s] = v;
}
)";

// The piecewise function as the SFPU decides it: compares with a literal 0
// test the sign bit (-0 and negative denormals count as negative), others
// subtract (x - 2 flushes as SFPMAD does); a product of a denormal is +0.
uint32_t piecewise_ref(uint32_t xw) {
  float x = bits_float(xw);
  bool neg = xw >> 31;
  bool denormal = ((xw >> 23) & 255) == 0;
  if (neg) {
    if (x < -2.0f) return float_bits(-4.0f);
    return denormal ? 0u : flushed(x * 2.0f);
  }
  if (x < 1.0f) return float_bits(0.5f);
  if (x < 3.0f) return x >= 2.0f ? float_bits(-(x + 1.0f)) : float_bits(x + 1.0f);
  return float_bits(8.0f);
}

void test_predication(DeviceLayer& layer) {
  auto x = rand_words(4, 0.0f, 4.0f, 12);
  const uint32_t edges[] = {0x80000000, 0x80000001, 0x00000001, 0xc0000000, 0x40000000, 0x3f800000,
                            0x40400000, 0xbf800000, 0x00000000, 0x7f800000, 0xff800000};
  for (size_t i = 0; i < sizeof edges / 4; i++) x[i] = edges[i];
  std::string call =
      "_llk_math_eltwise_unary_sfpu_params_(piecewise, 0, VectorMode::RC);\n"
      "_llk_math_eltwise_unary_sfpu_params_(lane_ids, 1, (int)VectorMode::RC);\n"
      "_llk_math_eltwise_unary_sfpu_params_(fill, 2, VectorMode::R, 5.0f);\n"
      "_llk_math_eltwise_unary_sfpu_params_(fill, 2, VectorMode::C, 7.0f);\n";
  auto out = run_sfpi(layer, sfpi_kernel(kPredFaces, call), {x, x, x}, 0, 3);
  for (int e = 0; e < 1024; e++) check_word(out[e], piecewise_ref(x[e]), "piecewise " + std::to_string(e));
  // SFPLOAD's layout: a step covers four rows of a face, the even columns
  // and then the odd ones; lane i is row i / 8, column 2 (i % 8).
  for (int e = 0; e < 1024; e++) {
    int r = (e % 256) / 16, c = e % 16;
    int step = (r / 4) * 2 + (c & 1), lane = (r % 4) * 8 + c / 2;
    check_word(out[1024 + e], float_bits(float(64 * step + 2 * lane)), "lane id " + std::to_string(e));
  }
  // VectorMode::R covers faces 0 and 1, C faces 0 and 2 (C ran last).
  const float face_val[4] = {7.0f, 5.0f, 7.0f, 0.0f};
  for (int e = 0; e < 1024; e++) {
    int f = e / 256;
    check_word(out[2048 + e], f == 3 ? x[e] : float_bits(face_val[f]), "vector mode " + std::to_string(e));
  }
}
ZYX_TEST(predication, test_predication);
// Blackhole runs the same SFPU model (docs/emulator.md, "SFPI").
ZYX_TEST_ON(predication, test_predication, "p150a");

// ---- lookup tables ----

const char* kLutFaces = R"(
inline void luts(uint32_t, uint32_t, uint32_t) {
  // lut: a 2^-1, c 2^-2 below 1; a 2^-2, c -1.25 * 2^-3 below 2; a 2^-3, c 0xff (0) above
  vUInt l0 = 0x1020u, l1 = 0x20b4u, l2 = 0x30ffu;
  // lut2 fp16 pairs (a << 16 | c): a 0.5 / 0.25 / 2^-10, c 0.3333 / -0.75 / exponent 31 (0)
  vUInt h0 = (0x3800u << 16) | 0x3555u, h1 = (0x3400u << 16) | 0xba00u, h2 = (0x1400u << 16) | 0x7c00u;
  for (int i = 0; i < 8; i++) {
    vFloat x = dst_reg[i];
    dst_reg[32 + i] = lut(x, l0, l1, l2);
    dst_reg[64 + i] = lut_sign(x, l0, l1, l2);
    dst_reg[96 + i] = lut2(x, h0, h1, h2);
    dst_reg[128 + i] = lut2_sign(x, 0.5f, 0.25f, 0.125f, 0.1f, -0.7f, 3.0f);
  }
}
)";

// The coefficient of an SFPLUT byte: +-(1 + m/16) 2^-e from the sign bit, the
// 3-bit e and the 4-bit m; 0xff is 0.
float lut8_ref(uint32_t b) {
  if (b == 0xff) return 0.0f;
  float v = std::ldexp(1.0f + float(b & 15) / 16.0f, -int((b >> 4) & 7));
  return (b & 0x80) ? -v : v;
}
// An SFPLUTFP32 fp16 coefficient: exponent 31 reads as 0.
float lut16_ref(uint32_t h) {
  uint32_t e = (h >> 10) & 31;
  if (e == 31) return (h & 0x8000) ? -0.0f : 0.0f;
  float v = std::ldexp(1.0f + float(h & 0x3ff) / 1024.0f, int(e) - 15);
  return (h & 0x8000) ? -v : v;
}

// a |x| + c, the product exact (a is a power of two), rounded once; with
// `retain` the result takes x's sign (zero included).
uint32_t lut_ref(float a, float c, uint32_t xw, bool retain) {
  uint32_t r = flushed(std::fmaf(a, std::fabs(bits_float(xw)), c));
  return retain ? (r & 0x7fffffffu) | (xw & 0x80000000u) : r;
}

void test_lut(DeviceLayer& layer) {
  auto x = rand_words(5, 0.0f, 4.0f, 7);
  const uint32_t edges[] = {0x80000000, 0x3f800000, 0xbf800000, 0x40000000, 0xc0a00000, 0x3f7f0000, 0x00000000};
  for (size_t i = 0; i < sizeof edges / 4; i++) x[i] = edges[i];
  auto out = run_sfpi(layer, sfpi_kernel(kLutFaces, "_llk_math_eltwise_binary_sfpu_params_(luts, 0, 0, 0);"), {x}, 1,
                      4);
  const uint32_t l[3] = {0x1020, 0x20b4, 0x30ff}, h[3] = {0x38003555, 0x3400ba00, 0x14007c00};
  const float a2[3] = {0.5f, 0.25f, 0.125f}, c2[3] = {0.1f, -0.7f, 3.0f};
  for (int e = 0; e < 1024; e++) {
    float m = std::fabs(bits_float(x[e]));
    int i = m < 1.0f ? 0 : m < 2.0f ? 1 : 2;
    std::string tag = " " + std::to_string(e);
    check_word(out[e], lut_ref(lut8_ref(l[i] >> 8), lut8_ref(l[i] & 0xff), x[e], true), "lut" + tag);
    check_word(out[1024 + e], lut_ref(lut8_ref(l[i] >> 8), lut8_ref(l[i] & 0xff), x[e], false), "lut_sign" + tag);
    check_word(out[2048 + e], lut_ref(lut16_ref(h[i] >> 16), lut16_ref(h[i] & 0xffff), x[e], true), "lut2" + tag);
    check_word(out[3072 + e], lut_ref(a2[i], c2[i], x[e], false), "lut2_sign" + tag);
  }
  // Hand-worked words: lut(-0) is 0.25 with x's sign; lut(-5) = 5/8 + 0 with
  // x's sign; lut2(1.0) = 0.25 - 0.75 (fp16 0xba00) with x's sign, +0.5;
  // lut2(2.0): 2^-9 + 0 (exponent 31 reads as 0).
  check_word(out[0], 0xbe800000, "lut(-0)");
  check_word(out[4], 0xbf200000, "lut(-5)");
  check_word(out[2048 + 1], 0x3f000000, "lut2(1)");
  check_word(out[2048 + 3], 0x3b000000, "lut2(2)");
}
ZYX_TEST(lut, test_lut);

// ---- a custom_sfpi_add-style kernel on a 16-bit DST ----

const char* kAddFaces = R"(
// One face of DST[in0] + DST[in1] into DST[out]; the wrapper calls it per face.
inline void my_add_tile_face(const uint32_t in0, const uint32_t in1, const uint32_t out) {
  constexpr uint32_t n_vector_in_tile = 32;
  for (size_t i = 0; i < 8; i++) {
    vFloat a = dst_reg[in0 * n_vector_in_tile + i];
    vFloat b = dst_reg[in1 * n_vector_in_tile + i];
    dst_reg[out * n_vector_in_tile + i] = a + b;
    dst_reg[(out + 1) * n_vector_in_tile + i] = float_to_fp16b(a + b, 0);
  }
}
inline void my_add_tile(uint32_t idx_dst0, uint32_t idx_dst1, uint32_t idx_out0) {
  MATH(_llk_math_eltwise_binary_sfpu_params_(my_add_tile_face, idx_dst0, idx_dst1, idx_out0));
}
)";

void test_add_bf16(DeviceLayer& layer) {
  auto a = rand_words(6, 0.5f, 8.0f, 7), b = rand_words(7, 0.5f, 8.0f, 7);
  // 1 + 0.75 ulp: SFPSTORE truncates to 1.0, float_to_fp16b rounds up;
  // 1 + 0.5 ulp: a tie, which float_to_fp16b rounds away from zero.
  a[0] = 0x3f800000, b[0] = 0x3bc00000;
  a[1] = 0x3f800000, b[1] = 0x3b800000;
  auto out = run_sfpi(layer, sfpi_kernel(kAddFaces, "my_add_tile(0, 1, 2);"), {a, b}, 2, 2, false);
  check_word(out[0], 0x3f800000, "truncating store");
  check_word(out[1024], 0x3f810000, "float_to_fp16b");
  check_word(out[1025], 0x3f810000, "float_to_fp16b tie");
  for (int e = 2; e < 1024; e++) {
    uint32_t s = flushed(bits_float(a[e]) + bits_float(b[e]));  // exact in fp32: both are bf16 within 2^5 of each other
    check_word(out[e], s & 0xffff0000u, "bf16 add " + std::to_string(e));
    uint32_t low = s & 0xffff;
    check_word(out[1024 + e], (s - low) + (low >= 0x8000 ? 0x10000 : 0), "fp16b add " + std::to_string(e));
  }
}
ZYX_TEST(add_bf16, test_add_bf16);

// ---- approximate modes: tanh ----

// tanh_tile<true> is the card's tt-llk approximation, one SFPLUT: 0.90625
// |x| below 1, 0.09375 |x| + 0.8125 below 2, 1 above, with x's sign (the
// products of these coefficients and bf16 inputs are exact, so the SFPU's
// single rounding is fmaf's); tanh_tile<false> stays the exact function.
void test_tanh_approx(DeviceLayer& layer) {
  auto x = rand_words(10, 0.0f, 4.0f, 7);
  x[0] = float_bits(0.5f), x[1] = float_bits(-1.5f), x[2] = float_bits(3.0f);
  std::string call =
      "copy_tile(0, 0, 1);\n"
      "tanh_tile_init<true>();\n"
      "tanh_tile<true>(0);\n"
      "tanh_tile_init();\n"
      "tanh_tile(1);\n";
  auto out = run_sfpi(layer, sfpi_kernel("", call), {x}, 0, 2);
  int differ = 0;
  for (int e = 0; e < 1024; e++) {
    float m = std::fabs(bits_float(x[e]));
    float a = m < 1.0f ? 0.90625f : m < 2.0f ? 0.09375f : 0.0f, c = m < 1.0f ? 0.0f : m < 2.0f ? 0.8125f : 1.0f;
    uint32_t want = lut_ref(a, c, x[e], true);
    check_word(out[e], want, "tanh approx " + std::to_string(e));
    CHECK(std::fabs(bits_float(out[1024 + e]) - std::tanh(bits_float(x[e]))) <= 1e-6f);
    differ += out[e] != out[1024 + e];
  }
  // 0.5 -> 0.453125 (tanh 0.4621), -1.5 -> -0.953125 (-0.9051), 3 -> 1 (0.9951)
  check_word(out[0], 0x3ee80000, "tanh approx 0.5");
  check_word(out[1], 0xbf740000, "tanh approx -1.5");
  check_word(out[2], 0x3f800000, "tanh approx 3");
  CHECK(differ > 900);
}
ZYX_TEST(approx, test_tanh_approx);

// sigmoid_tile<RC, true> is tt-metal's sigmoid_appx (Wormhole and Blackhole
// alike): one SFPLUT with sign retained, 0.2265625 |x| below 1, 0.265625 |x|
// - 0.046875 below 2, 0.5 above, then + 0.5 as a second rounded addition.
// The piecewise line is coarse: up to about 0.12 off the true sigmoid (at
// |x| = 2), which the exact mode does not show.
void test_sigmoid_approx(DeviceLayer& layer) {
  auto x = rand_words(11, -4.0f, 4.0f, 7);
  x[0] = float_bits(0.5f), x[1] = float_bits(-1.5f), x[2] = float_bits(3.0f), x[3] = float_bits(-3.0f);
  x[4] = 0x80000000u;
  std::string call =
      "copy_tile(0, 0, 1);\n"
      "sigmoid_tile_init<true>();\n"
      "sigmoid_tile<VectorMode::RC, true>(0);\n"
      "sigmoid_tile_init();\n"
      "sigmoid_tile(1);\n";
  auto out = run_sfpi(layer, sfpi_kernel("", call), {x}, 0, 2);
  int differ = 0;
  float worst = 0;
  for (int e = 0; e < 1024; e++) {
    float m = std::fabs(bits_float(x[e]));
    float a = m < 1.0f ? 0.2265625f : m < 2.0f ? 0.265625f : 0.0f, c = m < 1.0f ? 0.0f : m < 2.0f ? -0.046875f : 0.5f;
    uint32_t want = flushed(bits_float(lut_ref(a, c, x[e], true)) + 0.5f);
    check_word(out[e], want, "sigmoid approx " + std::to_string(e));
    double exact = 1 / (1 + std::exp(-double(bits_float(x[e]))));
    CHECK(std::fabs(bits_float(out[1024 + e]) - exact) <= 1e-6);
    worst = std::max(worst, float(std::fabs(bits_float(out[e]) - exact)));
    differ += out[e] != out[1024 + e];
  }
  // 0.5 -> 0.61328125, -1.5 -> 0.1484375, 3 -> 1, -3 -> 0, -0 -> 0.5
  check_word(out[0], 0x3f1d0000, "sigmoid approx 0.5");
  check_word(out[1], 0x3e180000, "sigmoid approx -1.5");
  check_word(out[2], 0x3f800000, "sigmoid approx 3");
  check_word(out[3], 0x00000000, "sigmoid approx -3");
  check_word(out[4], 0x3f000000, "sigmoid approx -0");
  CHECK(worst > 0.05f && worst < 0.125f);
  CHECK(differ > 900);
}
ZYX_TEST(approx, test_sigmoid_approx);

// gelu_tile<true> (tt-metal's default) is tt-llk's table form, the same for
// Wormhole and Blackhole: 0.5 x + (a |x| + c), a and c fp16 per range of |x|
// cut at 0.5, 1, 1.5, 2 and 3, the table term and the sum each rounded once.
// Over [-4, 4] it stays within 0.0235 of erf's GELU (worst near |x| = 0.25).
void test_gelu_approx(DeviceLayer& layer) {
  static const uint32_t kSlope[6] = {0x322b, 0x37e7, 0x38f3, 0x38e1, 0x3852, 0x3800};
  static const uint32_t kOffset[6] = {0x86d8, 0xb122, 0xb479, 0xb437, 0xafa4, 0x7c00};
  static const float kCut[5] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f};
  auto x = rand_words(12, -4.0f, 4.0f, 7);
  x[0] = float_bits(1.25f), x[1] = float_bits(4.0f), x[2] = float_bits(-4.0f), x[3] = 0;
  std::string call =
      "copy_tile(0, 0, 1);\n"
      "gelu_tile_init();\n"
      "gelu_tile(0);\n"
      "gelu_tile_init<false>();\n"
      "gelu_tile<false>(1);\n";
  auto out = run_sfpi(layer, sfpi_kernel("", call), {x}, 0, 2);
  int differ = 0;
  double worst = 0;
  for (int e = 0; e < 1024; e++) {
    float v = bits_float(x[e]);
    int r = 0;
    while (r < 5 && std::fabs(v) >= kCut[r]) r++;
    float table = bits_float(lut_ref(lut16_ref(kSlope[r]), lut16_ref(kOffset[r]), x[e], false));
    check_word(out[e], flushed(v * 0.5f + table), "gelu approx " + std::to_string(e));
    double exact = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    CHECK(std::fabs(bits_float(out[1024 + e]) - exact) <= 1e-6);
    worst = std::max(worst, std::fabs(bits_float(out[e]) - exact));
    differ += out[e] != out[1024 + e];
  }
  // 1.25: 0.625 + (0.61865234375 * 1.25 - 0.279541015625) = 1.1187744140625;
  // 4 -> 2 + 2, -4 -> -2 + 2; 0 -> the first offset, -1.0443e-4.
  check_word(out[0], 0x3f8f3400, "gelu approx 1.25");
  check_word(out[1], 0x40800000, "gelu approx 4");
  check_word(out[2], 0x00000000, "gelu approx -4");
  check_word(out[3], 0xb8db0000, "gelu approx 0");
  CHECK(worst > 0.005 && worst <= 0.0235);
  CHECK(differ > 900);
  // Into a 16-bit DST the result goes through SFPSTORE: truncated to bf16.
  auto out16 = run_sfpi(layer, sfpi_kernel("", call), {x}, 0, 2, false);
  for (int e = 0; e < 1024; e++) check_word(out16[e], out[e] & 0xffff0000u, "gelu approx bf16 " + std::to_string(e));
}
ZYX_TEST(approx, test_gelu_approx);

// ---- tt-metal's custom SFPI programming examples ----

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Skip("cannot read " + path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs tt-metal's kernel as its host does (one tile here) and checks its
// golden within the host's 1e-2: add's a + b (here also word for word: the
// SFPU's sum truncated by the bf16 store), smoothstep's t^2 (3 - 2t) with
// t = clamp(x, 0, 1).
void test_ttmetal_examples(DeviceLayer& layer) {
  const char* dir = std::getenv("ZYX_TTMETAL_EXAMPLES");
  if (!dir || !*dir) throw Skip("ZYX_TTMETAL_EXAMPLES is not set (a copy of tt_metal/programming_examples)");
  std::string base = dir;
  std::string add = read_text(base + "/custom_sfpi_add/kernels/compute/tiles_add.cpp");
  std::string smooth = read_text(base + "/custom_sfpi_smoothstep/kernels/compute/tiles_smoothstep.cpp");
  // The hosts' inputs: bf16 values in [0, 1).
  auto a = rand_words(8, 0.0f, 1.0f, 7), b = rand_words(9, 0.0f, 1.0f, 7);
  for (int e = 0; e < 1024; e++) a[e] &= 0x7fffffffu, b[e] &= 0x7fffffffu;
  Run r;
  r.formats = {"Float16_b", "Float16_b"};
  r.inputs = {bf16_tile(a), bf16_tile(b)};
  r.out_format = "Float16_b";
  r.fp32 = false;
  r.compute = add;
  r.args = {1};
  // Their SFPI code is under #ifdef TRISC_MATH and called through MATH(...):
  // the kernel builder sees that and builds them three times, as the card.
  auto got = bf16_words(run(layer, r));
  for (int e = 0; e < 1024; e++)
    check_word(got[e], flushed(bits_float(a[e]) + bits_float(b[e])) & 0xffff0000u, "custom_sfpi_add " + std::to_string(e));
  r.inputs = {bf16_tile(a)};
  r.formats = {"Float16_b"};
  r.compute = smooth;
  got = bf16_words(run(layer, r));
  for (int e = 0; e < 1024; e++) {
    float t = std::fmin(std::fmax(bits_float(a[e]), 0.0f), 1.0f);
    CHECK(std::fabs(bits_float(got[e]) - t * t * (3.0f - 2.0f * t)) <= 1e-2f);
  }
}
ZYX_TEST(ttmetal, test_ttmetal_examples);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "sfpi_"); }
