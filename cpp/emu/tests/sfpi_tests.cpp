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
#include <functional>
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
// or, with fp32 off, on Float16_b tiles in a 16-bit DST; `approx` is the
// compute config's math_approx_mode.
std::vector<uint32_t> run_sfpi(DeviceLayer& layer, const std::string& src, const std::vector<std::vector<uint32_t>>& in,
                               uint32_t out0, uint32_t nout, bool fp32 = true, bool approx = false) {
  Run r;
  r.math_approx = approx;
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

// What check_approx found for a tile: in how many words it differs from the
// exact one (the exact mode's tile when given, else the f32 nearest the exact
// function), and its worst absolute and relative distance from the function.
struct ApproxStats {
  int differ = 0;
  double worst = 0, worst_rel = 0;
};

// The check every card-algorithm test shares: each word of `got` (a tile for
// inputs x) must equal model(e), the word an independent reference gives for
// element e; `exact_tile`, when given, is the exact mode's tile, each word
// within exact_tol of the function.
ApproxStats check_approx(const std::vector<uint32_t>& x, const uint32_t* got, const std::function<uint32_t(int)>& model,
                         const std::function<double(double)>& exact, const std::string& what,
                         const uint32_t* exact_tile = nullptr, double exact_tol = 0) {
  ApproxStats s;
  for (int e = 0; e < 1024; e++) {
    const double want = exact(bits_float(x[e]));
    check_word(got[e], model(e), what + " " + std::to_string(e));
    const double err = std::fabs(double(bits_float(got[e])) - want);
    if (std::isfinite(want)) s.worst = std::max(s.worst, err);
    if (std::isfinite(want) && want != 0) s.worst_rel = std::max(s.worst_rel, err / std::fabs(want));
    uint32_t ref = float_bits(float(want));
    if (exact_tile) {
      CHECK(std::fabs(bits_float(exact_tile[e]) - want) <= exact_tol);
      ref = exact_tile[e];
    }
    s.differ += got[e] != ref;
  }
  return s;
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
  auto model = [&](int e) {
    float m = std::fabs(bits_float(x[e]));
    float a = m < 1.0f ? 0.90625f : m < 2.0f ? 0.09375f : 0.0f, c = m < 1.0f ? 0.0f : m < 2.0f ? 0.8125f : 1.0f;
    return lut_ref(a, c, x[e], true);
  };
  auto tanh_exact = [](double v) { return std::tanh(v); };
  ApproxStats st = check_approx(x, out.data(), model, tanh_exact, "tanh approx", out.data() + 1024, 1e-6);
  // 0.5 -> 0.453125 (tanh 0.4621), -1.5 -> -0.953125 (-0.9051), 3 -> 1 (0.9951)
  check_word(out[0], 0x3ee80000, "tanh approx 0.5");
  check_word(out[1], 0xbf740000, "tanh approx -1.5");
  check_word(out[2], 0x3f800000, "tanh approx 3");
  CHECK(st.differ > 900);
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
  auto model = [&](int e) {
    float m = std::fabs(bits_float(x[e]));
    float a = m < 1.0f ? 0.2265625f : m < 2.0f ? 0.265625f : 0.0f, c = m < 1.0f ? 0.0f : m < 2.0f ? -0.046875f : 0.5f;
    return flushed(bits_float(lut_ref(a, c, x[e], true)) + 0.5f);
  };
  auto sigmoid_exact = [](double v) { return 1 / (1 + std::exp(-v)); };
  ApproxStats st = check_approx(x, out.data(), model, sigmoid_exact, "sigmoid approx", out.data() + 1024, 1e-6);
  // 0.5 -> 0.61328125, -1.5 -> 0.1484375, 3 -> 1, -3 -> 0, -0 -> 0.5
  check_word(out[0], 0x3f1d0000, "sigmoid approx 0.5");
  check_word(out[1], 0x3e180000, "sigmoid approx -1.5");
  check_word(out[2], 0x3f800000, "sigmoid approx 3");
  check_word(out[3], 0x00000000, "sigmoid approx -3");
  check_word(out[4], 0x3f000000, "sigmoid approx -0");
  CHECK(st.worst > 0.05 && st.worst < 0.125);
  CHECK(st.differ > 900);
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
  auto model = [&](int e) {
    float v = bits_float(x[e]);
    int r = 0;
    while (r < 5 && std::fabs(v) >= kCut[r]) r++;
    float table = bits_float(lut_ref(lut16_ref(kSlope[r]), lut16_ref(kOffset[r]), x[e], false));
    return flushed(v * 0.5f + table);
  };
  auto gelu_exact = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  ApproxStats st = check_approx(x, out.data(), model, gelu_exact, "gelu approx", out.data() + 1024, 1e-6);
  // 1.25: 0.625 + (0.61865234375 * 1.25 - 0.279541015625) = 1.1187744140625;
  // 4 -> 2 + 2, -4 -> -2 + 2; 0 -> the first offset, -1.0443e-4.
  check_word(out[0], 0x3f8f3400, "gelu approx 1.25");
  check_word(out[1], 0x40800000, "gelu approx 4");
  check_word(out[2], 0x00000000, "gelu approx -4");
  check_word(out[3], 0xb8db0000, "gelu approx 0");
  CHECK(st.worst > 0.005 && st.worst <= 0.0235);
  CHECK(st.differ > 900);
  // Into a 16-bit DST the result goes through SFPSTORE: truncated to bf16.
  auto out16 = run_sfpi(layer, sfpi_kernel("", call), {x}, 0, 2, false);
  for (int e = 0; e < 1024; e++) check_word(out16[e], out[e] & 0xffff0000u, "gelu approx bf16 " + std::to_string(e));
}
ZYX_TEST(approx, test_gelu_approx);

// ---- the built-in exp, recip, sqrt and rsqrt as the card computes them ----

// The reference: tt-llk's algorithms written again as SFPI code (from the
// algorithms' facts: constants, order of operations, iteration counts) and
// run on the emulator's SFPI model, a separate path from the runtime's
// lane functions (sfpu_card.cpp) that compute the built-in calls. FP32 says
// whether DST is 32-bit; APPROX is math_approx_mode.
const char* kCardRefFaces = R"(
inline vFloat round16(vFloat v) { return FP32 ? v : float_to_fp16b(v, 0); }
inline vFloat ref_exp21(vFloat x) {
  vFloat t = x * 1.4426950216293334961f + 127.0f, lo = 0.0f, hi = 255.0f;
  vec_min_max(lo, t);
  vec_min_max(t, hi);
  vInt z = reinterpret<vInt>(shft(reinterpret<vUInt>(exman8(t)), exexp(t)));
  vFloat f = int32_to_float(exman9(reinterpret<vFloat>(z)), 0);
  f = f * (f * 4.791750143340323e-15f + 7.839635491371155e-08f) + 1.0017248f;
  return setexp(f, exexp_nodebias(reinterpret<vFloat>(z)));
}
inline vFloat ref_exp_bf16(vFloat x) { return float_to_fp16b(ref_exp21(x), 0); }
inline vFloat ref_exp_fp32(vFloat x) {
  vFloat r = 0.0f, z = x * 1.4426950408889634f;
  v_if (z >= 128.0f) { r = __builtin_inff(); }
  v_elseif (z <= -127.0f) { r = 0.0f; }
  v_else {
    vFloat big = 12582912.0f;  // 2^23 + 2^22: adding it rounds to an integer
    vFloat s = z + big;
    vFloat k = s - big;
    vInt ki = reinterpret<vInt>(s) - reinterpret<vInt>(big);
    vFloat d = k * -0.6931152343750000f + x;
    d = k * -3.19461832987e-05f + d;
    vFloat p = 1.0f / 5040.0f;
    p = p * d + 1.0f / 720.0f;
    p = p * d + 1.0f / 120.0f;
    p = p * d + 1.0f / 24.0f;
    p = p * d + 1.0f / 6.0f;
    p = p * d + 0.5f;
    p = p * d + 1.0f;
    p = p * d + 1.0f;
    r = setexp(p, exexp_nodebias(p) + ki);
  }
  v_endif;
  return r;
}
inline vFloat ref_exp_default(vFloat x) { return FP32 ? ref_exp_fp32(x) : ref_exp_bf16(x); }
inline vFloat ref_exp_clamped(vFloat x) {
  vFloat lo = -88.5f;
  vec_min_max(lo, x);
  vFloat t = x * 369.329925537109375f + 32500.818359375f;
  return reinterpret<vFloat>(float_to_uint16(t, 0) << 15);
}
inline vFloat ref_exp_unclamped(vFloat x) {
  vInt v = float_to_int16(x * 369.329925537109375f + 32500.818359375f, 0);
  return setsgn(reinterpret<vFloat>(v << 15), v);
}
inline vFloat ref_recip_compat(vFloat in) {
  vFloat m = setexp(setsgn(in, 1), 126), c = 1.442695f, two = 2.0f;
  vFloat y = c * (m * c + two);
  for (int i = 1; i < (APPROX ? 2 : 3); i++) y = y * (m * y + two);
  vInt e = exexp(y) - exexp(in) + 126;
  v_if (e < 0) {
    y = 0.0f;
    e = 0;
  }
  v_endif;
  y = setexp(y, e);
  v_if (in < 0.0f) { y = -y; }
  v_endif;
  return APPROX ? y : round16(y);
}
inline vFloat ref_recip_core(vFloat in, int iterations) {
  vFloat nx = setman(vConstNeg1, reinterpret<vInt>(in));
  vFloat y = vFloat(0.3232325017452239990234375f) * nx + 1.4545459747314453125f;
  y = y * nx + 2.121212482452392578125f;
  vFloat scale = setman(reinterpret<vFloat>(~reinterpret<vUInt>(in)), 0) * 0.5f;
  for (int i = 0; i < iterations; i++) y = y * (nx * y + vConst1) + y;
  vFloat scaled = y * scale;
  return setsgn(scaled, in);
}
inline vFloat ref_recip_newton(vFloat in) {
  vFloat y = ref_recip_core(in, APPROX || !FP32 ? 1 : 2);
  return APPROX ? y : round16(y);
}
template <bool kFast>
inline vFloat ref_log_bf16(vFloat in) {
  vInt e = exexp(in);
  v_if (e < 0) { e = setsgn(~e + 1, 1); }
  v_endif;
  vFloat m = setexp(in, 127), p = float(0.04224011301994324);
  p = p * m + float(-0.3706687390804291);
  p = p * m + float(1.3681391477584839);
  p = p * m + float(-2.800232410430908);
  p = p * m + float(3.767500400543213);
  p = p * m + float(-2.0069785118103027);
  vFloat r = int32_to_float(e, 0) * 0.69314718246459961f + p;
  v_if (in == 0.0f) { r = -__builtin_inff(); }
  v_endif;
  if (!kFast) {
    v_if (reinterpret<vInt>(in) == 0x7f800000) { r = __builtin_inff(); }
    v_elseif (exexp(in) == 128 || in < 0.0f) { r = __builtin_nanf(""); }
    v_endif;
  }
  return float_to_fp16b(r, 0);
}
inline vFloat ref_log_fp32(vFloat in) {
  vFloat r = 0.0f;
  vInt e = exexp(in);
  v_if (reinterpret<vInt>(in) == 0x7f800000) { r = __builtin_inff(); }
  v_elseif (e == 128 || in < 0.0f) { r = __builtin_nanf(""); }
  v_elseif (in == 0.0f) { r = -__builtin_inff(); }
  v_else {
    vFloat m = setexp(in, 127);
    v_if (m >= 1.4142135381698608f) {
      m = m * 0.5f;
      e = e + 1;
    }
    v_endif;
    vFloat z = (m - vConst1) * ref_recip_core(m + vConst1, 2);
    vFloat z2 = z * z, p = 0.09090909090909091f;
    p = p * z2 + 0.1111111111111111f;
    p = p * z2 + 0.14285714285714285f;
    p = p * z2 + 0.2f;
    p = p * z2 + 0.3333333333333333f;
    p = p * z2 + vConst1;
    vFloat zp = z * p;
    vFloat ln_m = zp * 2.0f;
    v_if (e < 0) { e = setsgn(~e + 1, 1); }
    v_endif;
    r = int32_to_float(e, 0) * 0.69314718246459961f + ln_m;
  }
  v_endif;
  return r;
}
inline vFloat ref_log(vFloat in) { return FP32 ? ref_log_fp32(in) : ref_log_bf16<false>(in); }
inline vFloat ref_log_fast(vFloat in) { return FP32 ? ref_log_fp32(in) : ref_log_bf16<true>(in); }
template <bool kRecip>
inline vFloat ref_sqrt(vFloat x) {
  vInt xb = reinterpret<vInt>(x), inf = 0x7f800000, inf_minus_x = inf - xb;
  vFloat y = reinterpret<vFloat>(vInt(APPROX ? 0x5f0b3892 : 0x5f1110a0) - reinterpret<vInt>(reinterpret<vUInt>(x) >> 1));
  vFloat ny = -y;
  if (APPROX) {
    vFloat c = x * y, t = ny * c + 1.89099014875f;
    if (kRecip) {
      v_if (inf_minus_x != 0 && xb != 0) { y = y * t; }
      v_else { y = reinterpret<vFloat>(inf_minus_x); }
      v_endif;
    } else {
      y = c;
      v_if (xb != inf) { y = c * t; }
      v_endif;
    }
  } else {
    vFloat c = ny * (x * y);
    y = y * (c * (c + 2.2533049f) + 2.2825186f);
    vFloat xy = x * y, ny2 = -y;
    vFloat one_minus_xyy = ny2 * xy + vConst1;
    if (kRecip) {
      vFloat half_y = addexp(y, -1);
      v_if (inf_minus_x != 0 && xb != 0) { y = one_minus_xyy * half_y + y; }
      v_else { y = reinterpret<vFloat>(inf_minus_x); }
      v_endif;
    } else {
      vFloat half_xy = xy * 0.5f;
      v_if (xb < inf) { y = one_minus_xyy * half_xy + xy; }
      v_endif;
    }
  }
  v_if (x < 0.0f) { y = vFloat(__builtin_nanf("")); }
  v_endif;
  return round16(y);
}
inline vFloat ref_rsqrt_compat(vFloat x) {
  vFloat s = x;
  if (APPROX) {
    s = reinterpret<vFloat>((reinterpret<vUInt>(x) + vUInt(0x3f800000u)) >> 1);
  } else {
    v_if (x != 0.0f) {
      vFloat y = reinterpret<vFloat>(vUInt(0x5f370000u) - (reinterpret<vUInt>(x) >> 1));
      for (int i = 0; i < 2; i++) y = ((y * y) * (x * -0.5f) + 1.5f) * y;
      s = y * x;
    }
    v_endif;
  }
  dst_reg[0] = s;  // the card stores the square root and loads it again
  s = dst_reg[0];
  return ref_recip_compat(s);  // then takes the legacy reciprocal of it
}
inline vFloat ref_sigmoid_core(vFloat x) {
  vFloat e = FP32 ? ref_exp_fp32(-x) : ref_exp21(-x);
  return ref_recip_core(vConst1 + e, FP32 ? 2 : 1);
}
inline vFloat ref_sigmoid(vFloat x) { return round16(ref_sigmoid_core(x)); }
inline vFloat ref_silu(vFloat x) {
  vFloat r = x * ref_sigmoid_core(x);
  return round16(r);
}
inline vFloat ref_tanh(vFloat x) {
  vFloat a = abs(x);
  if (FP32) {
    vFloat r = 0.0f;
    v_if (a < 0.6f) {
      vFloat x2 = x * x, p = 1.5497927553951740264892578125e-2f;
      p = p * x2 + -5.21197654306888580322265625e-2f;
      p = p * x2 + 0.13310669362545013427734375f;
      p = p * x2 + -0.33332359790802001953125f;
      p = p * x2 + 0.999999940395355224609375f;
      r = x * p;
    }
    v_else {
      vFloat s = ref_sigmoid_core(x * 2.0f);
      r = s * 2.0f - vConst1;
    }
    v_endif;
    return r;
  }
  vFloat p = float(5.876733921468257904052734375e-3), one = vConst1;
  p = p * a + float(-6.6649019718170166015625e-2);
  p = p * a + float(0.281917631626129150390625);
  p = p * a + float(-0.4890659749507904052734375);
  p = p * a + float(3.0897438526153564453125e-2);
  p = p * a + float(0.999004364013671875);
  p = p * a + vConst0;
  vec_min_max(p, one);
  return float_to_fp16b(setsgn(p, x), 0);
}
// exp_tile<false, true>(d, RC, 0x3f00) and exp_tile_init<true, 0.5f>: x
// halved first, or the approximation's constants scaled by 0.5.
inline void exp_scaled(uint32_t d) { exp_tile<false, true>(d, (int)VectorMode::RC, 0x3f00); }
inline void exp_approx_scaled(uint32_t d) {
  exp_tile_init<true, 0x3f000000>();
  exp_tile<true>(d);
  exp_tile_init<true>();
}
inline vFloat ref_exp_scaled(vFloat x) {
  vFloat h = x * 0.5f;
  return ref_exp_default(h);
}
inline vFloat ref_exp_approx_scaled(vFloat x) {
  vFloat lo = -177.0f;
  vec_min_max(lo, x);
  vFloat t = x * 184.6649627685546875f + 32500.818359375f;
  return reinterpret<vFloat>(float_to_uint16(t, 0) << 15);
}
#define ZYX_REF_FACE(name, fn) \
  inline void name() {         \
    for (int i = 0; i < 8; i++) { dst_reg[0] = fn(dst_reg[0]); dst_reg++; } \
  }
ZYX_REF_FACE(exp_default_face, ref_exp_default)
ZYX_REF_FACE(log_face, ref_log)
ZYX_REF_FACE(exp_scaled_face, ref_exp_scaled)
ZYX_REF_FACE(exp_approx_scaled_face, ref_exp_approx_scaled)
ZYX_REF_FACE(log_fast_face, ref_log_fast)
ZYX_REF_FACE(sigmoid_face, ref_sigmoid)
ZYX_REF_FACE(silu_face, ref_silu)
ZYX_REF_FACE(tanh_face, ref_tanh)
ZYX_REF_FACE(exp_clamped_face, ref_exp_clamped)
ZYX_REF_FACE(exp_unclamped_face, ref_exp_unclamped)
ZYX_REF_FACE(recip_compat_face, ref_recip_compat)
ZYX_REF_FACE(recip_newton_face, ref_recip_newton)
ZYX_REF_FACE(sqrt_face, ref_sqrt<false>)
ZYX_REF_FACE(rsqrt_face, ref_sqrt<true>)
ZYX_REF_FACE(rsqrt_compat_face, ref_rsqrt_compat)
)";

// A kernel computing, for each (built-in call, reference face) pair k, the
// built-in call on DST 2k and the reference on DST 2k + 1, both from input 0.
std::string card_kernel(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string call;
  for (size_t k = 0; k < pairs.size(); k++) {
    const std::string a = std::to_string(2 * k), b = std::to_string(2 * k + 1);
    if (k) call += "copy_tile(0, 0, " + a + ");\n";
    call += "copy_tile(0, 0, " + b + ");\n";
    call += pairs[k].first + "(" + a + ");\n";
    call += "_llk_math_eltwise_unary_sfpu_params_(" + pairs[k].second + ", " + b + ");\n";
  }
  return sfpi_kernel(kCardRefFaces, call);
}

// Runs card_kernel on x with a 32-bit (Float32 tiles) or 16-bit (Float16_b)
// DST, math_approx_mode off or on; returns the 2 * pairs tiles.
std::vector<uint32_t> run_card(DeviceLayer& layer, const std::vector<std::pair<std::string, std::string>>& pairs,
                               const std::vector<uint32_t>& x, bool fp32, bool approx) {
  std::string src = "#define FP32 " + std::string(fp32 ? "true" : "false") + "\n" + card_kernel(pairs);
  return run_sfpi(layer, src, {x}, 0, uint32_t(2 * pairs.size()), fp32, approx);
}

// Random words over a wide range of exponents (2^lo_exp to 2^hi_exp), both
// signs, with `mant_bits` mantissa bits, and the words of `edges` first.
std::vector<uint32_t> wide_words(uint32_t seed, int lo_exp, int hi_exp, int mant_bits,
                                 const std::vector<uint32_t>& edges) {
  std::mt19937 g(seed);
  std::vector<uint32_t> w(1024);
  const uint32_t mask = ~((1u << (23 - mant_bits)) - 1);
  for (auto& v : w) {
    uint32_t e = uint32_t(127 + lo_exp + int(g() % uint32_t(hi_exp - lo_exp)));
    v = ((e << 23) | (g() & 0x7fffffu & mask)) ^ (g() & 1 ? 0x80000000u : 0u);
  }
  std::copy(edges.begin(), edges.end(), w.begin());
  return w;
}

// exp_tile as the card computes it: <true> (Schraudolph's construction with
// and without ClampToNegative) and the default (exp_21f rounded to bf16 on
// a 16-bit DST, Cody-Waite and a degree-7 polynomial on a 32-bit DST), every
// word against the SFPI reference, the approximation's and the default's
// distance from e^x, and words worked out by hand.
void test_exp_card(DeviceLayer& layer) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"exp_tile_init<true>(); exp_tile<true>", "exp_clamped_face"},
      {"exp_tile<true, false, InputClamping::None>", "exp_unclamped_face"},
      {"exp_tile_init(); exp_tile", "exp_default_face"}};
  const std::vector<uint32_t> edges = {0, float_bits(1.0f), float_bits(-1.0f), float_bits(-100.0f),
                                       float_bits(100.0f), float_bits(-88.5f), 0x80000000u, float_bits(0.5f)};
  auto exp_exact = [](double v) { return std::exp(v); };
  for (bool fp32 : {true, false}) {
    auto x = wide_words(20 + fp32, -6, 7, fp32 ? 23 : 7, edges);
    auto out = run_card(layer, pairs, x, fp32, false);
    auto ref = [&](int tile) { return [&out, tile](int e) { return out[tile * 1024 + e]; }; };
    const std::string tag = fp32 ? " fp32" : " bf16";
    check_approx(x, out.data(), ref(1), exp_exact, "exp approx" + tag);
    check_approx(x, out.data() + 2048, ref(3), exp_exact, "exp approx unclamped" + tag);
    check_approx(x, out.data() + 4096, ref(5), exp_exact, "exp default" + tag);
    // Distances from e^x where the result is a normal number (|x| < 80).
    double approx_rel = 0, default_rel = 0;
    int differ = 0;
    for (int e = 0; e < 1024; e++) {
      double v = bits_float(x[e]), want = std::exp(v);
      if (std::fabs(v) >= 80) continue;
      approx_rel = std::max(approx_rel, std::fabs(bits_float(out[e]) - want) / want);
      default_rel = std::max(default_rel, std::fabs(bits_float(out[4096 + e]) - want) / want);
      differ += out[e] != out[4096 + e];
    }
    std::printf("exp%s: approx rel %.3g, default rel %.3g, %d words differ\n", tag.c_str(), approx_rel, default_rel,
                differ);
    // Schraudolph with 8 mantissa bits: a few percent, as the card's
    CHECK(approx_rel > 0.01 && approx_rel < 0.05);
    CHECK(differ > 900);
    // the default: within 2 fp32 ulp, or one bf16 ulp (its rounding plus
    // exp_21f's error)
    CHECK(default_rel < (fp32 ? 2.5e-7 : 1.0 / 128));
    // exp(0): approx t = 32500.82 -> 32501 << 15 (a 16-bit DST truncates
    // it); default exactly 1.
    check_word(out[0], fp32 ? 0x3f7a8000u : 0x3f7a0000u, "exp approx 0" + tag);
    check_word(out[4096], 0x3f800000u, "exp default 0" + tag);
    // -100 clamps to -88.5: t = -184.88, its magnitude 185 << 15 (a
    // denormal word; a 16-bit DST's store flushes it to 0).
    check_word(out[3], fp32 ? 0x005c8000u : 0u, "exp approx -100" + tag);
    // Unclamped: 1 saturates at 32767 << 15; -100 gives -(4432 << 15).
    check_word(out[2048 + 1], fp32 ? 0x3fff8000u : 0x3fff0000u, "exp unclamped 1" + tag);
    check_word(out[2048 + 3], 0x88a80000u, "exp unclamped -100" + tag);
    // Default: 100 overflows to infinity, -100 underflows to 0.
    check_word(out[4096 + 4], 0x7f800000u, "exp default 100" + tag);
    check_word(out[4096 + 3], 0u, "exp default -100" + tag);
    // the scale: exp_tile's scale_en (x times bf16 0.5 first) and
    // exp_tile_init<true, 0.5f> (A and the clamp scaled)
    auto sc = run_card(layer, {{"exp_scaled", "exp_scaled_face"}, {"exp_approx_scaled", "exp_approx_scaled_face"}}, x,
                       fp32, false);
    auto sc_ref = [&sc](int tile) { return [&sc, tile](int e) { return sc[tile * 1024 + e]; }; };
    auto half_exp = [](double v) { return std::exp(0.5 * v); };
    ApproxStats scaled = check_approx(x, sc.data(), sc_ref(1), half_exp, "exp scaled" + tag);
    ApproxStats approx_scaled = check_approx(x, sc.data() + 2048, sc_ref(3), half_exp, "exp approx scaled" + tag);
    CHECK(scaled.differ < approx_scaled.differ);
    // -1: t = 184.66496 * -1 + 32500.818 = 32316.15 -> 32316 << 15 (0.6172)
    check_word(sc[2048 + 2], 0x3f1e0000u, "exp approx scaled -1" + tag);
  }
  // With ZYX_EMU_NUMERICS=exact the default mode is the exact function
  // (rounded to f32); the approximation stays the card's.
  setenv("ZYX_EMU_NUMERICS", "exact", 1);
  auto x = wide_words(22, -6, 7, 23, edges);
  auto out = run_card(layer, pairs, x, true, false);
  setenv("ZYX_EMU_NUMERICS", "hardware", 1);
  for (int e = 0; e < 1024; e++)
    check_word(out[4096 + e], float_bits(float(std::exp(double(bits_float(x[e]))))), "exp exact " + std::to_string(e));
  setenv("ZYX_EMU_NUMERICS", "exact", 1);
  auto sc = run_card(layer, {{"exp_scaled", "exp_scaled_face"}}, x, true, false);
  setenv("ZYX_EMU_NUMERICS", "hardware", 1);
  for (int e = 0; e < 1024; e++)
    check_word(sc[e], float_bits(float(std::exp(0.5 * bits_float(x[e])))), "exp scaled exact " + std::to_string(e));
  check_word(out[0], 0x3f7a8000u, "exp approx 0 exact numerics");
}
ZYX_TEST(card, test_exp_card);

// recip_tile (legacy_compat, the default, and <false>), sqrt_tile and
// rsqrt_tile (<false>, the default, and legacy_compat) as the card's
// tt-llk code for a 32- and a 16-bit DST, math_approx_mode off and on: every
// word against the SFPI reference, the distance from the function.
void test_recip_sqrt_card(DeviceLayer& layer) {
  const std::vector<std::pair<std::string, std::string>> recips = {
      {"recip_tile_init(); recip_tile", "recip_compat_face"},
      {"recip_tile_init<false>(); recip_tile<false>", "recip_newton_face"}};
  const std::vector<std::pair<std::string, std::string>> roots = {
      {"sqrt_tile_init(); sqrt_tile", "sqrt_face"},
      {"rsqrt_tile_init(); rsqrt_tile", "rsqrt_face"},
      {"rsqrt_tile_init<true>(); rsqrt_tile<true>", "rsqrt_compat_face"}};
  const std::vector<uint32_t> edges = {0, 0x80000000u, 0x7f800000u, float_bits(1.0f), float_bits(2.0f),
                                       float_bits(-4.0f), float_bits(0.25f), float_bits(3.0f)};
  auto recip_exact = [](double v) { return 1 / v; };
  auto sqrt_exact = [](double v) { return std::sqrt(v); };
  auto rsqrt_exact = [](double v) { return 1 / std::sqrt(v); };
  for (bool fp32 : {true, false})
    for (bool approx : {false, true}) {
      const std::string tag = std::string(fp32 ? " fp32" : " bf16") + (approx ? " approx" : "");
      auto x = wide_words(30 + 2 * fp32 + approx, -30, 30, fp32 ? 23 : 7, edges);
      auto ref = [](const std::vector<uint32_t>& o, int tile) { return [&o, tile](int e) { return o[tile * 1024 + e]; }; };
      auto r = run_card(layer, recips, x, fp32, approx);
      ApproxStats compat = check_approx(x, r.data(), ref(r, 1), recip_exact, "recip" + tag);
      ApproxStats newton = check_approx(x, r.data() + 2048, ref(r, 3), recip_exact, "recip<false>" + tag);
      // the roots on non-negative inputs (negative ones give NaN, checked below)
      auto xp = x;
      for (size_t e = 8; e < xp.size(); e++) xp[e] &= 0x7fffffffu;
      auto q = run_card(layer, roots, xp, fp32, approx);
      ApproxStats sq = check_approx(xp, q.data(), ref(q, 1), sqrt_exact, "sqrt" + tag);
      ApproxStats rs = check_approx(xp, q.data() + 2048, ref(q, 3), rsqrt_exact, "rsqrt" + tag);
      ApproxStats rc = check_approx(xp, q.data() + 4096, ref(q, 5), rsqrt_exact, "rsqrt<true>" + tag);
      std::printf("%s: recip rel %.3g (<false> %.3g), sqrt %.3g, rsqrt %.3g (<true> %.3g); differ %d %d %d %d %d\n",
                  tag.c_str(), compat.worst_rel, newton.worst_rel, sq.worst_rel, rs.worst_rel, rc.worst_rel,
                  compat.differ, newton.differ, sq.differ, rs.differ, rc.differ);
      // The distances the algorithms give. Legacy recip: its estimate
      // 1.442695 (2 - 1.442695 m) is worst at m = 1, off by e0 = (1 -
      // 1.442695)^2, and each Newton step squares the error: e0^4 (e0^2 with
      // APPROX). The others: within 2 fp32 ulp, or (APPROX) one Newton step
      // from their estimates; a 16-bit DST adds up to one bf16 ulp.
      const double e0 = (1 - 1.442695) * (1 - 1.442695), legacy = approx ? e0 * e0 : e0 * e0 * e0 * e0;
      const double ulp = fp32 ? 1e-6 : 1.0 / 128;
      CHECK(compat.worst_rel <= legacy + ulp);
      if (fp32) CHECK(compat.worst_rel >= 0.9 * legacy);
      CHECK(newton.worst_rel <= (approx ? 1.1e-4 : 2.5e-7) + ulp);
      CHECK(sq.worst_rel <= (approx ? 1e-3 : 2.5e-7) + ulp);
      CHECK(rs.worst_rel <= (approx ? 1e-3 : 2.5e-7) + ulp);
      // legacy rsqrt: the legacy recip's error on a square root that is
      // close (two Newton steps) or, with APPROX, halved bits (up to 6.1 %)
      CHECK(rc.worst_rel <= (approx ? 0.061 + legacy : legacy + 1e-4) + ulp);
      CHECK(compat.differ > 500 && rc.differ > 900);
      // sqrt of -4 and of -0 (the sign bit is the card's test) is NaN,
      // infinity after a 16-bit DST's rounding; a Float16_b -0 reaches DST
      // as +0, whose square root is 0.
      check_word(q[5], fp32 ? 0x7fc00000u : 0x7f800000u, "sqrt -4" + tag);
      check_word(q[1], fp32 ? 0x7fc00000u : 0u, "sqrt -0" + tag);
    }
}
ZYX_TEST(card, test_recip_sqrt_card);

// log_tile as the card computes it: on a 16-bit DST a degree-5 polynomial in
// the mantissa plus the exponent's ln 2, rounded to bf16 (<true>, FAST_APPROX,
// skips the special cases); on a 32-bit DST 2 atanh((m - 1) / (m + 1)) by its
// series, with the Newton reciprocal. Every word against the SFPI reference,
// the distance from ln x, special values by hand.
void test_log_card(DeviceLayer& layer) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"log_tile_init(); log_tile", "log_face"}, {"log_tile_init<true>(); log_tile<true>", "log_fast_face"}};
  const std::vector<uint32_t> edges = {0, 0x80000000u, 0x7f800000u, float_bits(1.0f), float_bits(2.0f),
                                       float_bits(-1.0f), float_bits(0.5f), 0x7fc00000u};
  auto log_exact = [](double v) { return std::log(v); };
  for (bool fp32 : {true, false}) {
    const std::string tag = fp32 ? " fp32" : " bf16";
    auto x = wide_words(40 + fp32, -60, 60, fp32 ? 23 : 7, edges);
    for (size_t e = 8; e < x.size(); e++) x[e] &= 0x7fffffffu;
    auto out = run_card(layer, pairs, x, fp32, false);
    auto ref = [&out](int tile) { return [&out, tile](int e) { return out[tile * 1024 + e]; }; };
    ApproxStats st = check_approx(x, out.data(), ref(1), log_exact, "log" + tag);
    check_approx(x, out.data() + 2048, ref(3), log_exact, "log<true>" + tag);
    std::printf("log%s: worst %.3g, %d words differ from the nearest f32\n", tag.c_str(), st.worst, st.differ);
    // |ln x| < 42 here: within one fp32 ulp of the largest (3.8e-6), or one
    // bf16 ulp (0.25)
    CHECK(st.worst <= (fp32 ? 3.8e-6 : 0.25));
    // log 0 = -inf, log inf = inf, log -1 and log -0 are NaN (infinity after
    // the bf16 rounding; a Float16_b -0 reaches DST as +0); log 1 = 0 on a
    // 32-bit DST.
    check_word(out[0], 0xff800000u, "log 0" + tag);
    check_word(out[2], 0x7f800000u, "log inf" + tag);
    check_word(out[5], fp32 ? 0x7fc00000u : 0x7f800000u, "log -1" + tag);
    check_word(out[1], fp32 ? 0x7fc00000u : 0xff800000u, "log -0" + tag);  // +0 in a Float16_b DST
    if (fp32) check_word(out[3], 0u, "log 1" + tag);
  }
}
ZYX_TEST(card, test_log_card);

// The default (accurate) sigmoid_tile, silu_tile and tanh_tile as tt-metal's
// SFPI code: sigmoid 1 / (1 + e^-x) from the DST width's exp and the Newton
// reciprocal, silu x sigmoid(x), tanh an odd polynomial below 0.6 and 2
// sigmoid(2x) - 1 above (32-bit DST) or a polynomial in |x| capped at 1
// (16-bit). Every word against the SFPI reference, the distance from the
// function.
void test_sigmoid_tanh_card(DeviceLayer& layer) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"sigmoid_tile_init(); sigmoid_tile", "sigmoid_face"},
      {"silu_tile_init(); silu_tile", "silu_face"},
      {"tanh_tile_init(); tanh_tile", "tanh_face"}};
  const std::vector<uint32_t> edges = {0, 0x80000000u, float_bits(0.5f), float_bits(-0.6f), float_bits(0.6f),
                                       float_bits(1.0f), float_bits(-3.0f), float_bits(20.0f)};
  auto sigmoid_exact = [](double v) { return 1 / (1 + std::exp(-v)); };
  auto silu_exact = [](double v) { return v / (1 + std::exp(-v)); };
  auto tanh_exact = [](double v) { return std::tanh(v); };
  for (bool fp32 : {true, false}) {
    const std::string tag = fp32 ? " fp32" : " bf16";
    auto x = wide_words(50 + fp32, -8, 5, fp32 ? 23 : 7, edges);
    auto out = run_card(layer, pairs, x, fp32, false);
    auto ref = [&out](int tile) { return [&out, tile](int e) { return out[tile * 1024 + e]; }; };
    ApproxStats sg = check_approx(x, out.data(), ref(1), sigmoid_exact, "sigmoid" + tag);
    ApproxStats sl = check_approx(x, out.data() + 2048, ref(3), silu_exact, "silu" + tag);
    ApproxStats th = check_approx(x, out.data() + 4096, ref(5), tanh_exact, "tanh" + tag);
    std::printf("%s: sigmoid worst %.3g, silu rel %.3g, tanh worst %.3g; differ %d %d %d\n", tag.c_str(), sg.worst,
                sl.worst_rel, th.worst, sg.differ, sl.differ, th.differ);
    // Within 2 fp32 ulp (tanh: tt-metal's 5 ulp target) of results below 1,
    // or one bf16 ulp (2^-8 below 1; silu relative, 2^-7).
    CHECK(sg.worst <= (fp32 ? 2.4e-7 : 1.0 / 256));
    CHECK(sl.worst_rel <= (fp32 ? 2.4e-7 : 1.0 / 128));
    CHECK(th.worst <= (fp32 ? 3e-7 : 1.0 / 256));
    // sigmoid(0) = 0.5 and tanh(0) = 0 exactly; tanh(20) = 1.
    check_word(out[0], 0x3f000000u, "sigmoid 0" + tag);
    check_word(out[4096], 0u, "tanh 0" + tag);
    check_word(out[4096 + 7], 0x3f800000u, "tanh 20" + tag);
  }
}
ZYX_TEST(card, test_sigmoid_tanh_card);

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
