// Compute API tests of the SFPU calls written as SFPI code on the emulator's
// SFPU model: the int32 partial sums of sfpu_int_sum.h, the int32
// quantization calls of quantization.h, xielu_tile; and lgamma_stirling_tile.
// Each checks every element against a reference computed here: the lane
// walk of the SFPU program, modelled on the tile's DST rows, and where the
// call has an arithmetic meaning also that meaning (column and row sums,
// float64 xielu and lgamma, hand-worked roundings).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "compute_harness.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// Tile i of cb i copied to DST i (NIN inputs), then BODY; DST 0 .. NOUT-1
// packed to cb 16.
const char* kKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/quantization.h"
#include "api/compute/eltwise_unary/sfpu_int_sum.h"
#include "api/compute/eltwise_unary/xielu.h"
#include "api/compute/eltwise_unary/lgamma.h"
void kernel_main() {
  init_sfpu(0, 16);
  tile_regs_acquire();
  for (uint32_t i = 0; i < NIN; i++) {
    cb_wait_front(i, 1);
    copy_tile_to_dst_init_short(i);
    copy_tile(i, 0, i);
  }
  BODY;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, NOUT);
  for (uint32_t i = 0; i < NOUT; i++) pack_tile(i, 16);
  cb_push_back(16, NOUT);
  tile_regs_release();
}
)";

struct Input {
  std::string format;
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> run_body(DeviceLayer& layer, const std::vector<Input>& inputs, const std::string& out_format,
                              uint32_t nout, const std::string& body, bool fp32 = true) {
  Run r;
  for (uint32_t i = 0; i < inputs.size(); i++) {
    r.formats.push_back(inputs[i].format);
    r.inputs.push_back(inputs[i].bytes);
    if (inputs[i].format == "Float32") r.unpack_to_dest_fp32.push_back(i);  // fp32 words reach DST as they are
  }
  r.out_format = out_format;
  r.out_tiles = nout;
  r.compute = kKernel;
  r.defines = {{"BODY", body}, {"NIN", std::to_string(inputs.size())}, {"NOUT", std::to_string(nout)}};
  r.fp32 = fp32;
  return run(layer, r);
}

std::vector<int32_t> randi(int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int32_t> v(1024);
  for (auto& x : v) x = d(rng);
  return v;
}

// ---- the SFPU's integer conversions and lane layout ----

uint32_t sign_magnitude(uint32_t v) { return int32_t(v) < 0 ? 0x80000000u | ((0u - v) & 0x7fffffffu) : v; }
uint32_t twos_complement(uint32_t v) { return int32_t(v) < 0 ? 0u - (v & 0x7fffffffu) : v; }

// The tile word (face-ordered: DST row * 16 + column) that SFPU lane `lane`
// reads at row address `addr` from `base`: rows addr & ~3 .. +3, lane / 8 the
// row, the even columns for even addr / 2, else the odd ones.
int lane_word(int base, int addr, int lane) {
  return (base + (addr & ~3) + lane / 8) * 16 + 2 * (lane % 8) + ((addr >> 1) & 1);
}

void check_words(const std::vector<int32_t>& got, const std::vector<uint32_t>& want, const std::string& what) {
  for (int i = 0; i < 1024; i++)
    if (uint32_t(got[i]) != want[i])
      throw Failure(what + ": word " + std::to_string(i) + " (DST row " + std::to_string(i / 16) + ") = " +
                    std::to_string(got[i]) + ", want " + std::to_string(int32_t(want[i])));
}

// sfpu_sum_int_col: faces 0 and 1; per lane the four row groups of the face
// and of the face two on (32 rows), summed into the face's rows 0-3.
std::vector<uint32_t> col_sum_walk(const std::vector<int32_t>& in) {
  std::vector<uint32_t> t(in.begin(), in.end());
  for (int face = 0; face < 2; face++)
    for (int half = 0; half < 2; half++)
      for (int lane = 0; lane < 32; lane++) {
        uint32_t sum = 0;
        for (int group = 0; group < 4; group++) {
          sum += sign_magnitude(t[lane_word(16 * face, 2 * half + 4 * group, lane)]);
          sum += sign_magnitude(t[lane_word(16 * face, 2 * half + 32 + 4 * group, lane)]);
        }
        t[lane_word(16 * face, 2 * half, lane)] = twos_complement(sum);
      }
  return t;
}

// sfpu_sum_int_row: faces 0 and 2; per row group its even and odd columns
// and those of the next face, summed into the even columns.
std::vector<uint32_t> row_sum_walk(const std::vector<int32_t>& in) {
  std::vector<uint32_t> t(in.begin(), in.end());
  for (int face : {0, 2})
    for (int group = 0; group < 4; group++)
      for (int lane = 0; lane < 32; lane++) {
        uint32_t sum = 0;
        for (int addr : {4 * group, 4 * group + 2, 4 * group + 16, 4 * group + 18})
          sum += sign_magnitude(t[lane_word(16 * face, addr, lane)]);
        t[lane_word(16 * face, 4 * group, lane)] = twos_complement(sum);
      }
  return t;
}

void test_int_sums(DeviceLayer& layer) {
  // Non-negative values: the partial sums add up to the columns' and rows' sums.
  auto pos = randi(0, 100000, 3);
  auto in = [](const std::vector<int32_t>& v) { return std::vector<Input>{{"Int32", to_bytes(v)}}; };
  auto col = from_bytes<int32_t>(run_body(layer, in(pos), "Int32", 1, "sfpu_sum_int_init(); sfpu_sum_int_col(0)"));
  check_words(col, col_sum_walk(pos), "sfpu_sum_int_col");
  for (int c = 0; c < 32; c++) {
    int64_t want = 0, got = 0;
    for (int r = 0; r < 32; r++) want += pos[fi(r, c)];
    for (int r = 0; r < 4; r++) got += col[fi(r, c)];
    if (got != want)
      throw Failure("sfpu_sum_int_col: rows 0-3 of column " + std::to_string(c) + " sum to " + std::to_string(got) +
                    ", the column to " + std::to_string(want));
  }
  auto row = from_bytes<int32_t>(run_body(layer, in(pos), "Int32", 1, "sfpu_sum_int_init(); sfpu_sum_int_row(0)"));
  check_words(row, row_sum_walk(pos), "sfpu_sum_int_row");
  for (int r = 0; r < 32; r++) {
    int64_t want = 0, got = 0;
    for (int c = 0; c < 32; c++) want += pos[fi(r, c)];
    for (int c = 0; c < 16; c += 2) got += row[fi(r, c)];
    if (got != want)
      throw Failure("sfpu_sum_int_row: the even columns 0-14 of row " + std::to_string(r) + " sum to " +
                    std::to_string(got) + ", the row to " + std::to_string(want));
  }
  // Mixed signs: the sign-magnitude sums of the card's code, word for word.
  auto mixed = randi(-5000, 5000, 4);
  mixed[0] = INT32_MIN, mixed[1] = -1;
  check_words(from_bytes<int32_t>(run_body(layer, in(mixed), "Int32", 1, "sfpu_sum_int_col(0)")), col_sum_walk(mixed),
              "sfpu_sum_int_col (mixed signs)");
  check_words(from_bytes<int32_t>(run_body(layer, in(mixed), "Int32", 1, "sfpu_sum_int_row(0)")), row_sum_walk(mixed),
              "sfpu_sum_int_row (mixed signs)");
}
ZYX_TEST(int_sums, test_int_sums);

void test_add_int(DeviceLayer& layer) {
  auto a = randi(0, 1 << 29, 5), b = randi(0, 1 << 29, 6);
  std::vector<Input> in = {{"Int32", to_bytes(a)}, {"Int32", to_bytes(b)}};
  std::vector<uint32_t> want(1024);
  for (int i = 0; i < 1024; i++) want[i] = uint32_t(a[i] + b[i]);
  check_words(from_bytes<int32_t>(run_body(layer, in, "Int32", 1, "sfpu_add_int(0)")), want, "sfpu_add_int");
  // Negative operands: a read as two's complement, b as sign-magnitude, as
  // the card's code converts them (so -3 + -5 is not -8).
  auto na = randi(-1000, 1000, 7), nb = randi(-1000, 1000, 8);
  std::vector<Input> neg = {{"Int32", to_bytes(na)}, {"Int32", to_bytes(nb)}};
  for (int i = 0; i < 1024; i++)
    want[i] = twos_complement(sign_magnitude(uint32_t(na[i])) + twos_complement(uint32_t(nb[i])));
  check_words(from_bytes<int32_t>(run_body(layer, neg, "Int32", 1, "sfpu_add_int(0, 2, 8)")), want,
              "sfpu_add_int (mixed signs)");
}
ZYX_TEST(add_int, test_add_int);

// SFPSTOCHRND's fp32 to int8: nearest, ties away from zero, saturating at 127.
int32_t to_int8(float f) {
  double r = std::round(double(f));
  return int32_t(std::clamp(r, -127.0, 127.0));
}

void test_quant(DeviceLayer& layer) {
  // Values and scales of 8-bit mantissas: x * scale is exact, + zero point
  // rounds once (fmaf, as SFPMAD for normal results).
  auto x = round_bf16(randf(1024, -300, 300, 9));
  auto scale = round_bf16(randf(1024, 0.05, 1.5, 10));
  const float zp = 3.0f;
  // Hand-worked: ties round away from zero, the ends saturate.
  x[0] = 2.5f, scale[0] = 1.0f;     // 5.5 -> 6
  x[1] = -8.5f, scale[1] = 1.0f;    // -5.5 -> -6
  x[2] = 1000.0f, scale[2] = 1.0f;  // 1003 -> 127
  x[3] = -1000.0f, scale[3] = 1.0f; // -997 -> -127
  std::vector<Input> in = {{"Float32", f32_bytes(x)}, {"Float32", f32_bytes(scale)}};
  std::string init = "quant_tile_init(" + std::to_string(float_bits(zp)) + "u); ";
  auto got = from_bytes<int32_t>(run_body(layer, in, "Int32", 1, init + "quant_tile(0, 1, 0)"));
  std::vector<uint32_t> want(1024);
  for (int i = 0; i < 1024; i++) want[i] = uint32_t(to_int8(std::fmaf(x[i], scale[i], zp)));
  if (int32_t(want[0]) != 6 || int32_t(want[1]) != -6 || int32_t(want[2]) != 127 || int32_t(want[3]) != -127)
    throw Failure("quant_tile: the hand-worked references are wrong");
  check_words(got, want, "quant_tile");

  // requant: int32 in, converted to fp32 (exact below 2^24) first.
  auto q = randi(-20000, 20000, 11);
  q[0] = 5, q[1] = -7;
  scale[0] = 0.5f, scale[1] = 0.5f;  // 2.5 + 3 -> 6, -3.5 + 3 = -0.5 -> -1
  std::vector<Input> rin = {{"Int32", to_bytes(q)}, {"Float32", f32_bytes(scale)}};
  init = "requant_tile_init(" + std::to_string(float_bits(zp)) + "u); ";
  got = from_bytes<int32_t>(run_body(layer, rin, "Int32", 1, init + "requant_tile(0, 1, 0)"));
  for (int i = 0; i < 1024; i++) want[i] = uint32_t(to_int8(std::fmaf(float(q[i]), scale[i], zp)));
  if (int32_t(want[0]) != 6 || int32_t(want[1]) != -1) throw Failure("requant_tile: the hand-worked references are wrong");
  check_words(got, want, "requant_tile");
}
ZYX_TEST(quant, test_quant);

void test_dequant(DeviceLayer& layer) {
  auto q = randi(-128, 127, 12);
  auto scale = randf(1024, 0.001, 0.1, 13);  // full fp32 mantissas: the product rounds
  const float zp = -5.0f;                    // tt-metal passes the zero point as the card adds it
  std::vector<Input> in = {{"Int32", to_bytes(q)}, {"Float32", f32_bytes(scale)}};
  std::string body = "dequant_tile_init(" + std::to_string(float_bits(zp)) + "u); dequant_tile(0, 1, 0)";
  auto got = bytes_f32(run_body(layer, in, "Float32", 1, body));
  std::vector<double> g(got.begin(), got.end()), want(1024);
  for (int i = 0; i < 1024; i++) {
    float shifted = float(q[i]) + zp;  // exact
    float w = shifted * scale[i];      // one IEEE rounding, as SFPMAD's for normal results
    if (std::memcmp(&w, &got[i], 4) != 0)
      throw Failure("dequant_tile: element " + std::to_string(i) + " = " + std::to_string(got[i]) + ", want " +
                    std::to_string(w));
    want[i] = (double(q[i]) + zp) * scale[i];
  }
  check_close(g, want, 1e-30, 1e-7, "dequant_tile (float64)");
}
ZYX_TEST(dequant, test_dequant);

double xielu_ref(double x, double ap, double an) {
  if (x > 0) return ap * x * x + 0.5 * x;
  return an * (std::expm1(std::min(x, -1e-6)) - x) + 0.5 * x;
}

void test_xielu(DeviceLayer& layer) {
  const float ap = 0.8f, an = 0.6f;
  // Every branch: positives, [-1e-6, 0], (-0.5, -1e-6), below -0.5 to exp's
  // clamp. Below it (x / ln 2 < -126.5, x < -87.68) the range reduction no
  // longer leaves a small r, and the exponent tt-metal's code puts in wraps:
  // not an exp there, and not checked.
  auto x = randf(1024, -0.6, 3, 14);
  auto far = randf(256, -87, -0.5, 15);
  std::copy(far.begin(), far.end(), x.begin());
  x[256] = -5e-7f, x[257] = -1e-6f, x[258] = 0.0f, x[259] = -1e-3f, x[260] = -0.5f, x[261] = 2.0f;
  std::vector<Input> in = {{"Float32", f32_bytes(x)}};
  std::string body = "xielu_tile_init(); xielu_tile(0, " + std::to_string(float_bits(ap)) + "u, " +
                     std::to_string(float_bits(an)) + "u)";
  auto got = bytes_f32(run_body(layer, in, "Float32", 1, body));
  std::vector<double> g(got.begin(), got.end()), want(1024);
  for (int i = 0; i < 1024; i++) want[i] = xielu_ref(x[i], ap, an);
  // The card's algorithm is within a few fp32 ulps of the exact function.
  check_close(g, want, 1e-9, 4e-6, "xielu_tile");
  // 2: 0.8 * 2 = 1.6, 1.6 * 2 + 1 = 4.2 rounded once (as fmaf).
  float two = std::fmaf(0.8f * 2.0f, 2.0f, 1.0f);
  if (std::memcmp(&two, &got[261], 4) != 0)
    throw Failure("xielu_tile(2) = " + std::to_string(got[261]) + ", want " + std::to_string(two));
  // A 16-bit DST: the result rounded to bf16 (nearest even) before the store.
  auto bf = bytes_bf16(run_body(layer, {{"Float16_b", bf16_bytes(x)}}, "Float16_b", 1, body, false));
  auto xb = round_bf16(x);
  std::vector<double> gb(bf.begin(), bf.end()), wb(1024);
  for (int i = 0; i < 1024; i++) wb[i] = xielu_ref(xb[i], ap, an);
  check_close(gb, wb, 1e-9, 1.0 / 256, "xielu_tile (bf16 DST)");
}
ZYX_TEST(xielu, test_xielu);

void test_lgamma_stirling(DeviceLayer& layer) {
  auto x = randf(1024, -4.7, 12, 16);
  std::vector<Input> in = {{"Float32", f32_bytes(x)}};
  auto got = bytes_f32(run_body(layer, in, "Float32", 1, "lgamma_stirling_tile_init(); lgamma_stirling_tile(0)"));
  std::vector<double> g(got.begin(), got.end()), want(1024);
  // The Stirling stage: lgamma of x, reflected to 1 - x below 0.5 (the
  // reflection's other terms are lgamma_adjusted_tile's).
  for (int i = 0; i < 1024; i++) want[i] = std::lgamma(x[i] < 0.5f ? 1.0 - x[i] : double(x[i]));
  check_close(g, want, 1e-6, 1e-6, "lgamma_stirling_tile");
}
ZYX_TEST(lgamma_stirling, test_lgamma_stirling);

// exp_packthread_tile: exp on the tile the pack thread holds, after math
// committed it; with scale_en the input is scaled by a bf16 first. PACKED
// is the call, BUILDS_3 wraps it in PACK(...) (so the kernel runs as its
// three TRISC builds) or not (the single build).
const char* kPackExpKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/exp.h"
void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 1);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  tile_regs_commit();
  tile_regs_wait();
  exp_packthread_tile_init();
  CALL;
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
}
)";

void test_exp_packthread(DeviceLayer& layer) {
  auto x = randf(1024, -5, 5, 17);
  struct Case {
    std::string call;
    double scale;
  } cases[] = {
      {"exp_packthread_tile(0)", 1.0},
      {"PACK((exp_packthread_tile(0)))", 1.0},  // three builds: the pack build's call
      {"exp_packthread_tile<false, true>(0, (int)VectorMode::RC, 0x3fc0)", 1.5},
      {"PACK((exp_packthread_tile<false, true>(0, (int)VectorMode::RC, 0x3fc0)))", 1.5},
  };
  for (const Case& c : cases) {
    Run r;
    r.formats = {"Float32"};
    r.inputs = {f32_bytes(x)};
    r.unpack_to_dest_fp32 = {0};
    r.out_format = "Float32";
    r.compute = kPackExpKernel;
    r.defines = {{"CALL", c.call}};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), want(1024);
    for (int i = 0; i < 1024; i++) want[i] = std::exp(double(float(x[i] * float(c.scale))));
    check_close(g, want, 0, 2e-7, c.call);
  }
}
ZYX_TEST(exp_packthread, test_exp_packthread);

// The special-value flags: cleared, then an FPU add that overflows (the
// FPU's infinity bit 5), cleared, an SFPU exp that overflows (the SFPU's
// infinity bit 2), an SFPU sqrt of a negative (its NaN bit 3), tt-metal's
// field extractions, and xielu (SFPI code) on infinities after a clear.
// The flags read at each step and the stored register come back in the
// first words of the packed tile.
const char* kFlagsKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/sqrt.h"
#include "api/compute/eltwise_unary/xielu.h"
void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 1);
  cb_wait_front(1, 1);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  copy_tile_to_dst_init_short(1);
  copy_tile(1, 0, 1);
  uint32_t f[10];
  clear_compute_special_value_flags();
  f[0] = get_compute_special_value_flags();
  add_tiles_init(0, 0);
  add_tiles(0, 0, 0, 0, 2);
  f[1] = get_compute_special_value_flags();
  clear_compute_special_value_flags();
  f[2] = get_compute_special_value_flags();
  exp_tile_init();
  exp_tile(1);
  f[3] = get_compute_special_value_flags();
  sqrt_tile_init();
  sqrt_tile(0);
  f[4] = get_compute_special_value_flags();
  f[5] = get_compute_special_value_flags_sfpu(f[4]);
  f[6] = get_compute_special_value_flags_fpu(f[1]);
  f[7] = get_compute_special_value_flags_sfpu(f[1]);
  clear_compute_special_value_flags();
  xielu_tile_init();
  xielu_tile(2, 0x3f4ccccdu, 0x3f4ccccdu);
  f[8] = get_compute_special_value_flags();
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(2, 16);
  volatile uint32_t* out = reinterpret_cast<volatile uint32_t*>(get_write_ptr(16));
  store_compute_special_value_flags_to_l1(get_write_ptr(16));
  for (int i = 0; i < 9; i++) out[1 + i] = f[i];
  cb_push_back(16, 1);
  tile_regs_release();
}
)";

void test_special_flags(DeviceLayer& layer) {
  std::vector<float> a(1024, 1.5f), b(1024, 0.25f);
  for (int i = 0; i < 1024; i += 7) a[i] = 3e38f;   // a + a overflows in the FPU
  for (int i = 3; i < 1024; i += 11) a[i] = -2.0f;  // sqrt: NaN
  for (int i = 5; i < 1024; i += 13) b[i] = 100.0f; // exp: overflows in the SFPU
  Run r;
  r.formats = {"Float32", "Float32"};
  r.inputs = {f32_bytes(a), f32_bytes(b)};
  r.unpack_to_dest_fp32 = {0, 1};
  r.out_format = "Float32";
  r.compute = kFlagsKernel;
  auto words = from_bytes<uint32_t>(run(layer, r));
  const uint32_t fpu_inf = 1u << 5, sfpu_nan = 1u << 3, sfpu_inf = 1u << 2;
  const uint32_t want[10] = {sfpu_inf,  // stored after the xielu step
                             0, fpu_inf, 0, sfpu_inf, sfpu_inf | sfpu_nan, sfpu_inf | sfpu_nan,
                             0,  // tt-metal's FPU field: (reg & 0x7) >> 4
                             0, sfpu_inf};
  const char* what[10] = {"stored to L1", "after clear", "after the FPU overflow", "after clear",
                          "after the SFPU exp overflow", "after the SFPU sqrt of a negative", "the SFPU field",
                          "the FPU field", "the SFPU field of the FPU flags", "after xielu of infinities"};
  for (int i = 0; i < 10; i++)
    if (words[i] != want[i])
      throw Failure(std::string("special value flags ") + what[i] + ": " + std::to_string(words[i]) + ", want " +
                    std::to_string(want[i]));
  // And the packed tile kept its infinities (word 21 is xielu(a[21] + a[21])).
  if (bits_float(words[21]) != std::numeric_limits<float>::infinity())
    throw Failure("special value flags: xielu(3e38 + 3e38) = " + std::to_string(bits_float(words[21])));
}
ZYX_TEST(special_flags, test_special_flags);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "compute_api_sfpu_more_"); }
