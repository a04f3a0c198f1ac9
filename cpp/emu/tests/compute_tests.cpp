// Compute API tests against float64 host references: FPU binary ops with
// acc_to_dest, broadcasts, dest reuse, matmul with transpose from the init
// and matmul_block, copy with transpose, tilize/untilize/pack_untilize on
// the device, pack ReLU, masks, welford, the SFPU unary/binary op tables,
// and the Bfp8_b/Bfp4_b/Int8 formats (including the golden tile shared with
// the Go packer, testdata/blockfloat_golden.bin).
#include <cmath>
#include <numeric>
#include <cstdio>
#include <fstream>
#include <bit>
#include <functional>
#include <iterator>
#include <tuple>

#include "compute_harness.hpp"
#include "formats.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

const char* kBinary = R"(
#include "api/compute/eltwise_binary.h"
#include "api/compute/bcast.h"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
  compute_kernel_hw_startup(0, 1, 16);
  INIT;
  cb_wait_front(0, 1);
  cb_wait_front(1, 1);
  tile_regs_acquire();
  PRE;
  OP(0, 1, 0, 0, 2);
  OP2;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(2, 16);
  cb_push_back(16, 1);
  tile_regs_release();
}
)";

void test_binary(DeviceLayer& layer) {
  auto a = round_bf16(randf(1024, -4, 4, 1)), b = round_bf16(randf(1024, -4, 4, 2));
  struct Case {
    const char *name, *init, *op, *op2, *pre;
    std::function<double(double, double)> f;
  };
  std::vector<Case> cases = {
      // acc_to_dest: a second op adds onto DST[2]
      {"add acc", "add_tiles_init(0, 1, true)", "add_tiles", "add_tiles(0, 1, 0, 0, 2)", "(void)0",
       [](double x, double y) { return 2 * (x + y); }},
      {"add no acc", "add_tiles_init(0, 1, false)", "add_tiles", "add_tiles(0, 1, 0, 0, 2)", "(void)0",
       [](double x, double y) { return x + y; }},
      {"sub acc", "sub_init(0, 1, true)", "sub_tiles", "sub_tiles(0, 1, 0, 0, 2)", "(void)0",
       [](double x, double y) { return 2 * (x - y); }},
      // acc onto a tile copied in first: DST = A + (A + B)
      {"add acc onto copy", "add_init(0, 1, true)", "add_tiles", "(void)0", "copy_tile(0, 0, 2)",
       [](double x, double y) { return x + (x + y); }},
      // mul ignores acc_to_dest (Wormhole/Blackhole); 3-argument init
      {"mul 3-arg init", "mul_tiles_init(0, 1, 1u)", "mul_tiles", "mul_tiles(0, 1, 0, 0, 2)", "(void)0",
       [](double x, double y) { return x * y; }},
      {"mul_init", "mul_init(0, 1)", "mul_tiles", "(void)0", "(void)0", [](double x, double y) { return x * y; }},
  };
  for (auto& c : cases) {
    Run r;
    r.formats = {"Float32", "Float32"};
    r.inputs = {f32_bytes(a), f32_bytes(b)};
    r.compute = kBinary;
    r.defines = {{"INIT", c.init}, {"OP", c.op}, {"OP2", c.op2}, {"PRE", c.pre}};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), w(1024);
    for (int i = 0; i < 1024; i++) w[i] = c.f(a[i], b[i]);
    check_close(g, w, 1e-5, 1e-6, c.name);
  }
  // dest reuse: DST[2] = copy of A, then DST op B, and B op DST.
  for (auto [name, tmpl, f] :
       std::vector<std::tuple<const char*, const char*, std::function<double(double, double)>>>{
           {"sub reuse srca", "binary_dest_reuse_tiles<EltwiseBinaryType::ELWSUB, EltwiseBinaryReuseDestType::DEST_TO_SRCA>",
            [](double x, double y) { return x - y; }},
           {"sub reuse srcb", "sub_reuse_dest_tiles<EltwiseBinaryReuseDestType::DEST_TO_SRCB>",
            [](double x, double y) { return y - x; }},
           {"mul reuse", "mul_reuse_dest_tiles<EltwiseBinaryReuseDestType::DEST_TO_SRCA>",
            [](double x, double y) { return x * y; }}}) {
    Run r;
    r.formats = {"Float32", "Float32"};
    r.inputs = {f32_bytes(a), f32_bytes(b)};
    r.compute = kBinary;
    r.defines = {{"INIT", "binary_dest_reuse_tiles_init<EltwiseBinaryType::ELWSUB>(1)"},
                 {"PRE", "copy_tile(0, 0, 2)"},
                 {"OP(a, b, c, d, e)", std::string(tmpl) + "(1, 0, 2)"},
                 {"OP2", "(void)0"}};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), w(1024);
    for (int i = 0; i < 1024; i++) w[i] = f(a[i], b[i]);
    check_close(g, w, 1e-5, 1e-6, name);
  }
}
ZYX_TEST(binary, test_binary);

void test_bcast(DeviceLayer& layer) {
  auto a = round_bf16(randf(1024, -4, 4, 3)), b = round_bf16(randf(1024, -4, 4, 4));
  for (std::string op : {"add", "sub", "mul"})
    for (std::string dim : {"rows", "cols", "scalar"}) {
      for (int form = 0; form < 2; form++) {
        std::string bt = dim == "rows" ? "ROW" : dim == "cols" ? "COL" : "SCALAR";
        Run r;
        r.formats = {"Float16_b", "Float16_b"};
        r.inputs = {bf16_bytes(a), bf16_bytes(b)};
        r.out_format = "Float32";
        r.fp32 = false;
        r.compute = kBinary;
        std::string OPT = op == "add" ? "ELWADD" : op == "sub" ? "ELWSUB" : "ELWMUL";
        r.defines = {{"INIT", "init_bcast<EltwiseBinaryType::" + OPT + ", BroadcastType::" + bt + ">(0, 1, 16)"},
                     {"OP", form ? op + "_tiles_bcast<BroadcastType::" + bt + ">" : op + "_tiles_bcast_" + dim},
                     {"OP2", "(void)0"},
                     {"PRE", "(void)0"}};
        auto got = bytes_f32(run(layer, r));
        std::vector<double> g(got.begin(), got.end()), w(1024);
        for (int rr = 0; rr < 32; rr++)
          for (int cc = 0; cc < 32; cc++) {
            double x = a[fi(rr, cc)];
            double y = dim == "rows" ? b[fi(0, cc)] : dim == "cols" ? b[fi(rr, 0)] : b[0];
            double v = op == "add" ? x + y : op == "sub" ? x - y : x * y;
            w[fi(rr, cc)] = from_bf16(to_bf16(static_cast<float>(v)));
          }
        check_close(g, w, 0, 0, op + " bcast " + dim + (form ? " (template)" : ""));
      }
    }
}
ZYX_TEST(binary, test_bcast);

const char* kMatmul = R"(
#include "api/compute/matmul.h"
void kernel_main() {
  const uint32_t kt = get_arg_val<uint32_t>(0), rt = get_arg_val<uint32_t>(1), ct = get_arg_val<uint32_t>(2);
  compute_kernel_hw_startup(0, 1, 16);
  INIT;
  cb_wait_front(0, rt * kt);
  cb_wait_front(1, kt * ct);
  tile_regs_acquire();
  for (uint32_t k = 0; k < kt; k++) {
#ifdef BLOCK
    matmul_block(0, 1, k, k * ct, 0, TRANSPOSE, ct, rt, kt);
#else
    for (uint32_t r = 0; r < rt; r++)
      for (uint32_t c = 0; c < ct; c++) matmul_tiles(0, 1, r * kt + k, k * ct + c, r * ct + c);
#endif
  }
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, rt * ct);
  for (uint32_t i = 0; i < rt * ct; i++) pack_tile(i, 16);
  cb_push_back(16, rt * ct);
  tile_regs_release();
}
)";

// A (M x K) and B (K x N) in tiles, row-major tile order; B tiles transposed
// per tile when `tr` (the kernel asks the unpacker to transpose them back).
void test_matmul(DeviceLayer& layer) {
  const uint32_t rt = 2, kt = 3, ct = 2, M = rt * 32, K = kt * 32, N = ct * 32;
  auto A = randf(M * K, -1, 1, 5), B = randf(K * N, -1, 1, 6);
  auto tiles = [](const std::vector<float>& m, uint32_t rows, uint32_t cols, bool tr) {
    std::vector<float> out(m.size());
    uint32_t tr_n = rows / 32, tc_n = cols / 32;
    for (uint32_t ti = 0; ti < tr_n; ti++)
      for (uint32_t tj = 0; tj < tc_n; tj++)
        for (int r = 0; r < 32; r++)
          for (int c = 0; c < 32; c++) {
            int rr = tr ? c : r, cc = tr ? r : c;
            out[(ti * tc_n + tj) * 1024 + fi(rr, cc)] = m[(ti * 32 + r) * cols + tj * 32 + c];
          }
    return out;
  };
  std::vector<double> want(M * N, 0);
  for (uint32_t i = 0; i < M; i++)
    for (uint32_t j = 0; j < N; j++) {
      double s = 0;
      for (uint32_t k = 0; k < K; k++) s += double(A[i * K + k]) * B[k * N + j];
      want[i * N + j] = s;
    }
  struct Case {
    const char* name;
    bool tr, block;
    const char* init;
  };
  for (Case c : {Case{"matmul_tiles", false, false, "mm_init(0, 1, 16)"},
                 Case{"matmul_tiles transposed B from mm_init", true, false, "mm_init(0, 1, 16, 1)"},
                 Case{"matmul_tiles transposed B from mm_init_short", true, false, "mm_init_short(0, 1, 1)"},
                 Case{"matmul_block", false, true, "mm_block_init(0, 1, 16, 0, 2, 2, 3)"},
                 Case{"matmul_block transposed", true, true, "mm_block_init(0, 1, 16, 1, 2, 2, 3)"}}) {
    Run r;
    r.formats = {"Float32", "Float32"};
    r.inputs = {f32_bytes(tiles(A, M, K, false)), f32_bytes(tiles(B, K, N, c.tr))};
    r.out_tiles = rt * ct;
    r.compute = kMatmul;
    r.defines = {{"INIT", c.init}, {"TRANSPOSE", c.tr ? "1" : "0"}};
    if (c.block) r.defines["BLOCK"] = "1";
    r.args = {kt, rt, ct};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(M * N);
    for (uint32_t ti = 0; ti < rt; ti++)
      for (uint32_t tj = 0; tj < ct; tj++)
        for (int rr = 0; rr < 32; rr++)
          for (int cc = 0; cc < 32; cc++) g[(ti * 32 + rr) * N + tj * 32 + cc] = got[(ti * ct + tj) * 1024 + fi(rr, cc)];
    check_close(g, want, 1e-4, 1e-4, c.name);
  }
}
ZYX_TEST(matmul, test_matmul);

void test_copy_transpose(DeviceLayer& layer) {
  auto a = randf(1024, -4, 4, 7);
  struct Case {
    const char *name, *init, *call;
    bool faces;
  };
  for (Case c : {Case{"copy transposed", "copy_tile_to_dst_init_short(0, 1)", "(void)0", false},
                 Case{"copy transposed within faces", "copy_tile_to_dst_init_short(0, 0, 1)", "(void)0", true},
                 Case{"transpose_wh_dest", "copy_tile_to_dst_init_short(0)", "transpose_wh_dest(0)", false}}) {
    Run r;
    r.formats = {"Float32"};
    r.inputs = {f32_bytes(a)};
    r.compute = copy_op_kernel();
    r.defines = {{"INIT", c.init}, {"OP", c.call}};
    r.args = {0, 0, 0, 0};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), w(1024);
    for (int rr = 0; rr < 32; rr++)
      for (int cc = 0; cc < 32; cc++) {
        int sr = c.faces ? ((rr & 16) | (cc & 15)) : cc, sc = c.faces ? ((cc & 16) | (rr & 15)) : rr;
        w[fi(rr, cc)] = a[fi(sr, sc)];
      }
    check_close(g, w, 0, 0, c.name);
  }
  // pack ReLU: zero ReLU, and max threshold 1.5 (bf16 0x3fc0) in the upper
  // half; as the packed word, and in the LLK forms (ReluConfig, ReluType).
  struct Relu {
    uint32_t cfg;
    double thr;
    std::string init;
  };
  auto packed = [](uint32_t cfg) { return "pack_relu_config(" + std::to_string(cfg) + "u)"; };
  for (const Relu& c : std::vector<Relu>{{1u, 0.0, packed(1)},
                                         {3u | (0x3fc0u << 16), 1.5, packed(3u | (0x3fc0u << 16))},
                                         {1u, 0.0, "PACK((llk_pack_relu_config(ReluConfig::zero())))"},
                                         {1u, 0.0, "PACK((llk_pack_relu_config(ReluType::ZERO_RELU)))"},
                                         {3u, 1.5, "llk_pack_relu_config(ReluConfig::max_threshold(0x3fc0))"},
                                         {3u, 1.5, "pack_relu_config(ReluConfig::max_threshold(0x3fc0)); llk_pack_reconfig_l1_acc(0)"},
                                         {1u, 0.0,
                                          "pack_relu_config(ReluConfig::from_packed(1)); static_assert(DST_SYNC_MODE == "
                                          "DstSync::SyncHalf && get_fp32_dest_acc_enabled() == DST_ACCUM_MODE)"}}) {
    const uint32_t cfg = c.cfg;
    const double thr = c.thr;
    Run r;
    r.formats = {"Float32"};
    r.inputs = {f32_bytes(a)};
    r.compute = copy_op_kernel();
    r.defines = {{"INIT", c.init}, {"OP", "(void)0"}};
    r.args = {0, 0, 0, 0};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), w(1024);
    for (int i = 0; i < 1024; i++) w[i] = a[i] < 0 ? 0 : (cfg == 1 ? a[i] : std::min<double>(a[i], thr));
    check_close(g, w, 0, 0, c.init);
  }
}
ZYX_TEST(copy, test_copy_transpose);

// ---- SFPU table ----

struct UOp {
  std::string call;  // uses idst 0 and p0..p2
  double lo, hi;
  std::function<double(double)> f;
  uint32_t p0 = 0, p1 = 0, p2 = 0;
  double tol = 2e-6;  // relative, f32 DST
  bool is_int = false;
};

double digamma_ref(double x) {
  double r = 0;
  while (x < 30) r -= 1 / x, x += 1;
  double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f / 252));
}

void test_sfpu_unary(DeviceLayer& layer) {
  auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  auto sp = [](double x) { return std::log1p(std::exp(x)); };
  std::vector<UOp> ops = {
      {"exp_tile(0)", -4, 4, [](double x) { return std::exp(x); }},
      {"exp2_tile(0)", -4, 4, [](double x) { return std::exp2(x); }},
      {"expm1_tile(0)", -2, 2, [](double x) { return std::expm1(x); }},
      {"log_tile(0)", 0.01, 10, [](double x) { return std::log(x); }},
      {"log_with_base_tile(0, p0)", 0.01, 10, [](double x) { return std::log2(x); }, 0x3fb8aa3bu},
      {"log1p_tile(0)", -0.5, 4, [](double x) { return std::log1p(x); }},
      {"sqrt_tile(0)", 0, 10, [](double x) { return std::sqrt(x); }},
      {"rsqrt_tile(0)", 0.1, 10, [](double x) { return 1 / std::sqrt(x); }},
      {"recip_tile(0)", 0.1, 10, [](double x) { return 1 / x; }},
      {"cbrt_tile(0)", -8, 8, [](double x) { return std::cbrt(x); }},
      {"square_tile(0)", -3, 3, [](double x) { return x * x; }},
      {"abs_tile(0)", -3, 3, [](double x) { return std::fabs(x); }},
      {"negative_tile(0)", -3, 3, [](double x) { return -x; }},
      {"sign_tile(0)", -3, 3, [](double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }},
      {"signbit_tile(0)", -3, 3, [](double x) { return std::signbit(x) ? 1 : 0; }},
      {"identity_tile(0)", -3, 3, [](double x) { return x; }},
      {"relu_tile(0)", -3, 3, [](double x) { return x > 0 ? x : 0; }},
      {"relu_max_tile(0, p0)", -3, 3, [](double x) { return std::min(std::max(x, 0.0), 1.5); }, float_bits(1.5f)},
      {"relu_min_tile(0, p0)", -3, 3, [](double x) { return std::max(x, 0.5); }, float_bits(0.5f)},
      // Below tt-metal's documented range (lower > 0) the card computes
      // max(x, lower) all the same: no clamp at 0.
      {"relu_min_tile(0, p0)", -3, 3, [](double x) { return std::max(x, -1.5); }, float_bits(-1.5f)},
      {"leaky_relu_tile(0, p0)", -3, 3, [](double x) { return x < 0 ? 0.1 * x : x; }, float_bits(0.1f)},
      {"elu_tile(0, p0)", -3, 3, [](double x) { return x < 0 ? 0.5 * std::expm1(x) : x; }, float_bits(0.5f)},
      {"selu_tile(0, p0, p1)", -3, 3,
       [](double x) { return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * std::expm1(x)); },
       float_bits(1.0507009873554805f), float_bits(1.6732632423543772f), 0, 1e-5},
      {"celu_tile(0, p0, p1)", -3, 3, [](double x) { return x > 0 ? x : 2 * std::expm1(x / 2); }, float_bits(2.f), float_bits(0.5f)},
      // gelu_tile<true> (the default) is the card's table: sfpi_tests' approx group.
      {"gelu_tile<false>(0)", -3, 3, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"sigmoid_tile(0)", -6, 6, sig},
      {"silu_tile(0)", -6, 6, [sig](double x) { return x * sig(x); }},
      {"tanh_tile(0)", -3, 3, [](double x) { return std::tanh(x); }},
      {"hardsigmoid_tile(0)", -5, 5, [](double x) { return std::min(1.0, std::max(0.0, x / 6 + 0.5)); }},
      {"hardswish_tile(0)", -5, 5, [](double x) { return x * std::min(1.0, std::max(0.0, x / 6 + 0.5)); }},
      {"hardtanh_tile(0, p0, p1)", -3, 3, [](double x) { return std::min(1.0, std::max(-1.0, x)); }, float_bits(-1.f), float_bits(1.f)},
      {"clamp_tile(0, p0, p1)", -3, 3, [](double x) { return std::min(2.0, std::max(-0.5, x)); }, float_bits(-0.5f), float_bits(2.f)},
      {"hardshrink_tile(0, p0)", -3, 3, [](double x) { return std::fabs(x) > 0.5 ? x : 0; }, float_bits(0.5f)},
      {"softshrink_tile(0, p0)", -3, 3, [](double x) { return x > 0.5 ? x - 0.5 : x < -0.5 ? x + 0.5 : 0; }, float_bits(0.5f)},
      {"softsign_tile(0)", -3, 3, [](double x) { return x / (1 + std::fabs(x)); }},
      {"softplus_tile(0, p0, p1, p2)", -5, 5, [](double x) { return 2 * x > 20 ? x : std::log1p(std::exp(2 * x)) / 2; },
       float_bits(2.f), float_bits(0.5f), float_bits(20.f)},
      {"mish_tile(0)", -4, 4, [sp](double x) { return x * std::tanh(sp(x)); }},
      {"tanhshrink_tile(0)", -3, 3, [](double x) { return x - std::tanh(x); }, 0, 0, 0, 1e-5},
      {"logsigmoid_tile(0)", -5, 5, [sp](double x) { return -sp(-x); }},
      {"softcap_tile(0, p0)", -50, 50, [](double x) { return 10 * std::tanh(x / 10); }, float_bits(10.f)},
      {"sin_tile(0)", -3, 3, [](double x) { return std::sin(x); }, 0, 0, 0, 1e-5},
      {"cos_tile(0)", -3, 3, [](double x) { return std::cos(x); }, 0, 0, 0, 1e-5},
      {"tan_tile(0)", -1.2, 1.2, [](double x) { return std::tan(x); }},
      {"asin_tile(0)", -1, 1, [](double x) { return std::asin(x); }},
      {"acos_tile(0)", -1, 1, [](double x) { return std::acos(x); }},
      {"atan_tile(0)", -5, 5, [](double x) { return std::atan(x); }},
      {"sinh_tile(0)", -3, 3, [](double x) { return std::sinh(x); }},
      {"cosh_tile(0)", -3, 3, [](double x) { return std::cosh(x); }},
      {"asinh_tile(0)", -5, 5, [](double x) { return std::asinh(x); }},
      {"acosh_tile(0)", 1, 5, [](double x) { return std::acosh(x); }},
      {"atanh_tile(0)", -0.9, 0.9, [](double x) { return std::atanh(x); }},
      {"erf_tile(0)", -3, 3, [](double x) { return std::erf(x); }},
      {"erfc_tile(0)", -3, 3, [](double x) { return std::erfc(x); }},
      {"erfinv_tile(0)", -0.95, 0.95, [](double x) {  // bisection on erf
         double lo = -4, hi = 4;
         for (int i = 0; i < 100; i++) {
           double m = (lo + hi) / 2;
           (std::erf(m) < x ? lo : hi) = m;
         }
         return lo;
       }, 0, 0, 0, 1e-5},
      {"i0_tile(0)", -3, 3, [](double x) {  // power series
         double s = 0, t = 1;
         for (int k = 0; k < 40; k++) s += t, t *= (x * x / 4) / ((k + 1.0) * (k + 1.0));
         return s;
       }, 0, 0, 0, 1e-5},
      {"lgamma_tile(0)", 0.1, 6, [](double x) { return std::lgamma(x); }, 0, 0, 0, 1e-5},
      {"digamma_tile(0)", 0.5, 6, digamma_ref, 0, 0, 0, 1e-5},
      {"isinf_tile(0)", -3, 3, [](double x) { return std::isinf(x) ? 1 : 0; }},
      {"isnan_tile(0)", -3, 3, [](double x) { return std::isnan(x) ? 1 : 0; }},
      {"isfinite_tile(0)", -3, 3, [](double x) { return std::isfinite(x) ? 1 : 0; }},
      {"logical_not_unary_tile(0)", -1, 1, [](double x) { return x == 0 ? 1 : 0; }},
      {"ltz_tile(0)", -1, 1, [](double x) { return x < 0 ? 1 : 0; }},
      {"gez_tile(0)", -1, 1, [](double x) { return x >= 0 ? 1 : 0; }},
      {"unary_gt_tile(0, p0)", -1, 1, [](double x) { return x > 0.25 ? 1 : 0; }, float_bits(0.25f)},
      {"unary_max_tile(0, p0)", -1, 1, [](double x) { return std::max(x, 0.25); }, float_bits(0.25f)},
      {"unary_min_tile(0, p0)", -1, 1, [](double x) { return std::min(x, 0.25); }, float_bits(0.25f)},
      {"heaviside_tile(0, p0)", -1, 1, [](double x) { return x < 0 ? 0 : x > 0 ? 1 : 0.5; }, float_bits(0.5f)},
      {"power_tile(0, p0)", 0.1, 3, [](double x) { return std::pow(x, 2.5); }, float_bits(2.5f)},
      {"power_iterative_tile(0, p0)", -2, 2, [](double x) { return x * x * x; }, 3},
      {"rpow_tile(0, p0)", -2, 2, [](double x) { return std::pow(3.0, x); }, float_bits(3.f)},
      {"rsub_tile(0, p0)", -2, 2, [](double x) { return 1.5 - x; }, float_bits(1.5f)},
      {"rdiv_tile(0, p0)", 0.5, 4, [](double x) { return 2 / x; }, float_bits(2.f)},
      {"fmod_tile(0, p0, p1)", -5, 5, [](double x) { return std::fmod(x, 1.5); }, float_bits(1.5f), float_bits(1 / 1.5f)},
      {"remainder_tile(0, p0, p1)", -5, 5, [](double x) { double r = std::fmod(x, 1.5); return r != 0 && r < 0 ? r + 1.5 : r; },
       float_bits(1.5f), float_bits(1 / 1.5f)},
      {"threshold_tile(0, p0, p1)", -2, 2, [](double x) { return x > 0.5 ? x : -7; }, float_bits(0.5f), float_bits(-7.f)},
      {"prelu_tile(0, p0)", -2, 2, [](double x) { return x < 0 ? 0.25 * x : x; }, float_bits(0.25f)},
      {"logit_tile(0, p0)", 0.05, 0.95, [](double x) { return std::log(x / (1 - x)); }, float_bits(0.01f)},
      {"floor_tile(0)", -5, 5, [](double x) { return std::floor(x); }},
      {"ceil_tile(0)", -5, 5, [](double x) { return std::ceil(x); }},
      {"trunc_tile(0)", -5, 5, [](double x) { return std::trunc(x); }},
      {"frac_tile(0)", -5, 5, [](double x) { return x - std::trunc(x); }, 0, 0, 0, 1e-5},
      {"round_tile(0, 1)", -5, 5, [](double x) { return std::nearbyint(x * 10) / 10; }, 0, 0, 0, 1e-5},
      {"fill_tile(0, 2.5f)", -5, 5, [](double) { return 2.5; }},
      {"add_unary_tile(0, p0)", -5, 5, [](double x) { return x + 0.75; }, float_bits(0.75f)},
      {"sub_unary_tile(0, p0)", -5, 5, [](double x) { return x - 0.75; }, float_bits(0.75f)},
      {"mul_unary_tile(0, p0)", -5, 5, [](double x) { return x * 0.75; }, float_bits(0.75f)},
      {"div_unary_tile(0, p0)", -5, 5, [](double x) { return x / 0.75; }, float_bits(0.75f)},
      {"tanh_derivative_tile(0)", -3, 3, [](double x) { return 1 - std::tanh(x) * std::tanh(x); }, 0, 0, 0, 1e-5},
      {"lgamma_stirling_tile(0)", -3, 5, [](double x) { return std::lgamma(x < 0.5 ? 1 - x : x); }, 0, 0, 0, 1e-5},
      {"gelu_derivative_tile(0)", -5, 5,
       [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI); }, 0,
       0, 0, 1e-5},
  };
  // Integer ops on Int32 tiles, exact.
  std::vector<UOp> iops = {
      {"bitwise_and_tile(0, p0)", -1000, 1000, [](double x) { return double(int32_t(x) & 0xff); }, 0xffu},
      {"bitwise_or_tile(0, p0)", -1000, 1000, [](double x) { return double(int32_t(x) | 0xf0); }, 0xf0u},
      {"bitwise_xor_tile(0, p0)", -1000, 1000, [](double x) { return double(int32_t(x) ^ 0x0f); }, 0x0fu},
      {"bitwise_not_tile(0)", -1000, 1000, [](double x) { return double(~int32_t(x)); }},
      {"left_shift_tile(0, p0)", -1000, 1000, [](double x) { return double(int32_t(uint32_t(int32_t(x)) << 3)); }, 3},
      {"right_shift_tile(0, p0)", -1000, 1000, [](double x) { return double(int32_t(x) >> 3); }, 3},
      {"abs_tile_int32(0)", -1000, 1000, [](double x) { return std::fabs(x); }},
      {"abs_tile(0)", -1000, 1000, [](double x) { return std::fabs(x); }},
      {"negative_tile(0)", -1000, 1000, [](double x) { return -x; }},
      {"relu_tile(0)", -1000, 1000, [](double x) { return x > 0 ? x : 0; }},
      {"unary_max_int32_tile(0, p0)", -1000, 1000, [](double x) { return std::max(x, 7.0); }, 7},
      {"unary_min_int32_tile(0, p0)", -1000, 1000, [](double x) { return std::min(x, 7.0); }, 7},
      {"signbit_tile_int32(0)", -1000, 1000, [](double x) { return x < 0 ? 1 : 0; }},
  };
  for (auto& o : iops) o.is_int = true;
  for (int pass = 0; pass < 3; pass++) {
    // pass 0: f32 DST; pass 1: bf16 in and DST (tolerance 2^-8 relative); pass 2: integers
    auto& table = pass == 2 ? iops : ops;
    std::string cases;
    for (size_t i = 0; i < table.size(); i++)
      cases += "case " + std::to_string(i) + ": { " + table[i].call + "; break; } ";
    for (size_t i = 0; i < table.size(); i++) {
      const UOp& o = table[i];
      auto in = randf(1024, o.lo, o.hi, 100 + uint32_t(i));
      Run r;
      r.compute = copy_op_kernel();
      r.defines = {{"OP", op_switch(cases)}};
      r.args = {uint32_t(i), o.p0, o.p1, o.p2};
      std::vector<double> g, w(1024);
      if (pass == 2) {
        std::vector<int32_t> iv(1024);
        for (int k = 0; k < 1024; k++) iv[k] = int32_t(std::lround(in[k]));
        std::vector<uint8_t> b(4096);
        std::memcpy(b.data(), iv.data(), 4096);
        r.formats = {"Int32"};
        r.inputs = {b};
        r.out_format = "Int32";
        auto ob = run(layer, r);
        std::vector<int32_t> ov(1024);
        std::memcpy(ov.data(), ob.data(), 4096);
        g.assign(ov.begin(), ov.end());
        for (int k = 0; k < 1024; k++) w[k] = o.f(iv[k]);
        check_close(g, w, 0, 0, o.call + " Int32");
        continue;
      }
      bool bf = pass == 1;
      if (bf) in = round_bf16(in);
      r.formats = {bf ? "Float16_b" : "Float32"};
      r.inputs = {bf ? bf16_bytes(in) : f32_bytes(in)};
      r.out_format = r.formats[0];
      r.fp32 = !bf;
      auto ob = run(layer, r);
      auto got = bf ? bytes_bf16(ob) : bytes_f32(ob);
      g.assign(got.begin(), got.end());
      for (int k = 0; k < 1024; k++) w[k] = o.f(in[k]);
      // tt-metal's unary tests compare bf16 results with about 2^-8 relative
      // error (plus a small absolute floor near zero crossings).
      double rt = bf ? 1.0 / 128 : o.tol, at = bf ? 1.0 / 64 : o.tol;
      check_close(g, w, at, rt, o.call + (bf ? " bf16" : " f32"));
    }
  }
  // Edge cases: log/sqrt of negatives give NaN, exp(+inf) = inf, isinf/isnan see specials.
  std::vector<float> e(1024, 1.0f);
  e[0] = -1.0f, e[1] = INFINITY, e[2] = -INFINITY, e[3] = NAN, e[4] = 0.0f;
  std::string cases = "case 0: { log_tile(0); break; } case 1: { sqrt_tile(0); break; } case 2: { exp_tile(0); break; }"
                      " case 3: { isinf_tile(0); break; } case 4: { isnan_tile(0); break; }";
  std::vector<std::function<void(const std::vector<float>&)>> checks = {
      [](const std::vector<float>& v) { CHECK(std::isnan(v[0])); CHECK(std::isinf(v[1]) && v[1] > 0); CHECK(std::isinf(v[4]) && v[4] < 0); },
      [](const std::vector<float>& v) { CHECK(std::isnan(v[0])); CHECK(std::isinf(v[1])); CHECK(v[4] == 0); },
      [](const std::vector<float>& v) { CHECK(std::isinf(v[1])); CHECK(v[2] == 0); CHECK(v[4] == 1); },
      [](const std::vector<float>& v) { CHECK(v[0] == 0 && v[1] == 1 && v[2] == 1 && v[3] == 0); },
      [](const std::vector<float>& v) { CHECK(v[0] == 0 && v[1] == 0 && v[3] == 1); },
  };
  for (uint32_t i = 0; i < checks.size(); i++) {
    Run r;
    r.compute = copy_op_kernel();
    r.defines = {{"OP", op_switch(cases)}};
    r.args = {i, 0, 0, 0};
    r.formats = {"Float32"};
    r.inputs = {f32_bytes(e)};
    checks[i](bytes_f32(run(layer, r)));
  }
}
ZYX_TEST(sfpu_unary, test_sfpu_unary);

void test_sfpu_binary(DeviceLayer& layer) {
  struct BOp {
    std::string call;
    std::function<double(double, double)> f;
    bool is_int = false;
    double lo = -4, hi = 4;
  };
  std::vector<BOp> ops = {
      {"add_binary_tile(0, 1, 0)", [](double a, double b) { return a + b; }},
      {"sub_binary_tile(0, 1, 0)", [](double a, double b) { return a - b; }},
      {"mul_binary_tile(0, 1, 0)", [](double a, double b) { return a * b; }},
      {"div_binary_tile(0, 1, 0)", [](double a, double b) { return a / b; }},
      {"rsub_binary_tile(0, 1, 0)", [](double a, double b) { return b - a; }},
      {"power_binary_tile(0, 1, 0)", [](double a, double b) { return std::pow(std::fabs(a), b); }},
      {"eq_binary_tile(0, 1, 0)", [](double a, double b) { return a == b ? 1 : 0; }},
      {"lt_binary_tile(0, 1, 0)", [](double a, double b) { return a < b ? 1 : 0; }},
      {"ge_binary_tile(0, 1, 0)", [](double a, double b) { return a >= b ? 1 : 0; }},
      {"binary_max_tile(0, 1, 0)", [](double a, double b) { return std::max(a, b); }},
      {"binary_min_tile(0, 1, 0)", [](double a, double b) { return std::min(a, b); }},
      {"atan2_binary_tile(0, 1, 0)", [](double a, double b) { return std::atan2(a, b); }},
      {"xlogy_binary_tile(0, 1, 0)", [](double a, double b) { return a * std::log(b); }},
      {"lgamma_stirling_float_tile(0, 1, 0)", [](double a, double) { return std::lgamma(a < 0.5 ? 1 - a : a); }},
      {"add_int32_tile(0, 1, 0)", [](double a, double b) { return a + b; }, true, -1e6, 1e6},
      {"sub_int32_tile(0, 1, 0)", [](double a, double b) { return a - b; }, true, -1e6, 1e6},
      {"mul_int32_tile(0, 1, 0)", [](double a, double b) { return a * b; }, true, -3e4, 3e4},
      {"div_int32_floor_tile(0, 1, 0)", [](double a, double b) { return std::floor(a / b); }, true, -1e4, 1e4},
      {"div_int32_trunc_tile(0, 1, 0)", [](double a, double b) { return std::trunc(a / b); }, true, -1e4, 1e4},
      {"remainder_int32_tile(0, 1, 0)", [](double a, double b) { double r = std::fmod(a, b); return r != 0 && ((r < 0) != (b < 0)) ? r + b : r; }, true, -1e4, 1e4},
      {"fmod_int32_tile(0, 1, 0)", [](double a, double b) { return std::fmod(a, b); }, true, -1e4, 1e4},
      {"binary_max_int32_tile(0, 1, 0)", [](double a, double b) { return std::max(a, b); }, true, -1e6, 1e6},
      {"bitwise_and_binary_tile(0, 1, 0)", [](double a, double b) { return double(int32_t(a) & int32_t(b)); }, true, -1e6, 1e6},
      {"bitwise_or_binary_tile(0, 1, 0)", [](double a, double b) { return double(int32_t(a) | int32_t(b)); }, true, -1e6, 1e6},
      {"bitwise_xor_binary_tile(0, 1, 0)", [](double a, double b) { return double(int32_t(a) ^ int32_t(b)); }, true, -1e6, 1e6},
      {"gt_int32_tile(0, 1, 0)", [](double a, double b) { return a > b ? 1 : 0; }, true, -10, 10},
      {"eq_int32_tile(0, 1, 0)", [](double a, double b) { return a == b ? 1 : 0; }, true, -3, 3},
      {"gcd_tile(0, 1, 0)", [](double a, double b) { return double(std::gcd(int64_t(a), int64_t(b))); }, true, -500, 500},
      {"lcm_tile(0, 1, 0)", [](double a, double b) { return double(std::lcm(int64_t(a), int64_t(b))); }, true, -3e4, 3e4},
  };
  std::string cases;
  for (size_t i = 0; i < ops.size(); i++) cases += "case " + std::to_string(i) + ": { " + ops[i].call + "; break; } ";
  for (size_t i = 0; i < ops.size(); i++) {
    const BOp& o = ops[i];
    auto a = randf(1024, o.lo, o.hi, 300 + uint32_t(i)), b = randf(1024, o.lo, o.hi, 400 + uint32_t(i));
    Run r;
    r.compute = copy_op_kernel();
    r.defines = {{"OP", op_switch(cases)}, {"NIN", "2"}};
    r.args = {uint32_t(i), 0, 0, 0};
    std::vector<double> g(1024), w(1024);
    if (o.is_int) {
      std::vector<int32_t> ia(1024), ib(1024);
      for (int k = 0; k < 1024; k++) {
        ia[k] = int32_t(std::lround(a[k]));
        ib[k] = int32_t(std::lround(b[k]));
        if (ib[k] == 0) ib[k] = 1;
      }
      std::vector<uint8_t> ba(4096), bb(4096);
      std::memcpy(ba.data(), ia.data(), 4096);
      std::memcpy(bb.data(), ib.data(), 4096);
      r.formats = {"Int32", "Int32"};
      r.inputs = {ba, bb};
      r.out_format = "Int32";
      auto ob = run(layer, r);
      std::vector<int32_t> ov(1024);
      std::memcpy(ov.data(), ob.data(), 4096);
      for (int k = 0; k < 1024; k++) g[k] = ov[k], w[k] = o.f(ia[k], ib[k]);
      check_close(g, w, 0, 0, o.call + " Int32");
    } else {
      if (o.call.rfind("power", 0) == 0)
        for (auto& x : a) x = std::fabs(x);
      if (o.call.rfind("xlogy", 0) == 0)
        for (auto& x : b) x = std::fabs(x) + 0.01f;
      r.formats = {"Float32", "Float32"};
      r.inputs = {f32_bytes(a), f32_bytes(b)};
      auto got = bytes_f32(run(layer, r));
      for (int k = 0; k < 1024; k++) g[k] = got[k], w[k] = o.f(a[k], b[k]);
      check_close(g, w, 1e-5, 1e-5, o.call + " f32");
    }
  }
}
ZYX_TEST(sfpu_binary, test_sfpu_binary);

// ---- formats ----

// Runs copy_op on the tile `in` (raw bytes in in_format): copy to DST, then
// `op` (a define), then pack in out_format.
std::vector<uint8_t> run_copy(DeviceLayer& layer, const std::string& in_format, std::vector<uint8_t> in,
                              const std::string& out_format, const std::string& op = "(void)0") {
  Run r;
  r.formats = {in_format};
  r.inputs = {std::move(in)};
  r.out_format = out_format;
  r.compute = copy_op_kernel();
  r.defines = {{"OP", op}};
  r.args = {0, 0, 0, 0};
  return run(layer, r);
}

std::string golden_path() { return std::string(ZYX_EMU_TESTDATA_DIR) + "/blockfloat_golden.bin"; }

// The golden file: magic "ZYXBFP1\n", then one f32 tile (face order) of
// values chosen to hit rounding ties, exponent spread, zeros, subnormals and
// large values, then that tile packed as Bfp8_b (1088 bytes) and as Bfp4_b
// (576 bytes). The Go test reads the same file.
std::vector<float> golden_values() {
  std::vector<float> v = randf(1024, -8, 8, 42);
  for (int g = 0; g < 64; g++) {
    float* x = &v[g * 16];
    switch (g % 8) {
      case 0: for (int i = 0; i < 16; i++) x[i] = std::ldexp(1.0f + i / 64.0f, (i % 5) - 2); break;
      case 1: for (int i = 0; i < 16; i++) x[i] = (i & 1 ? -1 : 1) * (1.0f + (2 * i + 1) / 256.0f); break;  // ties
      case 2: x[0] = 1e30f, x[1] = -3e-30f, x[2] = 0.0f, x[3] = -0.0f, x[4] = 1e-40f; break;
      case 3: for (int i = 0; i < 16; i++) x[i] = std::ldexp(1.0f, -i); break;
      case 4: for (int i = 0; i < 16; i++) x[i] = 127.9999f - i; break;
      default: break;
    }
  }
  return v;
}

void test_formats(DeviceLayer& layer) {
  // Bfp8_b layout: 64 exponent bytes then 1024 mantissa bytes.
  {
    std::vector<float> v(1024, 0.0f);
    v[0] = 1.0f, v[1] = -0.5f, v[16] = 3.0f;
    std::vector<uint8_t> t(1088);
    emu::bfp_pack_tile(v.data(), emu::Format::Bfp8_b, t.data());
    CHECK_EQ(int(t[0]), 127);    // group 0: max exponent of 1.0
    CHECK_EQ(int(t[1]), 128);    // group 1: 3.0
    CHECK_EQ(int(t[64]), 0x40);  // 1.0: hidden bit in bit 6
    CHECK_EQ(int(t[65]), 0xa0);  // -0.5: sign, 0.5 shifted by one
    CHECK_EQ(int(t[64 + 16]), 0x60);
  }
  // Golden vector shared with tt/blockfloat_test.go.
  {
    std::ifstream in(golden_path(), std::ios::binary);
    if (!in) throw Failure("cannot read " + golden_path());
    std::vector<char> data((std::istreambuf_iterator<char>(in)), {});
    CHECK_EQ(data.size(), size_t(8 + 4096 + 1088 + 576));
    CHECK(std::memcmp(data.data(), "ZYXBFP1\n", 8) == 0);
    std::vector<float> v(1024);
    std::memcpy(v.data(), data.data() + 8, 4096);
    auto want = golden_values();
    CHECK(std::memcmp(v.data(), want.data(), 4096) == 0);
    std::vector<uint8_t> b8(1088), b4(576);
    emu::bfp_pack_tile(v.data(), emu::Format::Bfp8_b, b8.data());
    emu::bfp_pack_tile(v.data(), emu::Format::Bfp4_b, b4.data());
    CHECK(std::memcmp(b8.data(), data.data() + 8 + 4096, 1088) == 0);
    CHECK(std::memcmp(b4.data(), data.data() + 8 + 4096 + 1088, 576) == 0);
  }
  // Unpack Bfp8_b/Bfp4_b tiles on the device, pack Float32: the decoded values.
  auto v = golden_values();
  for (std::string f : {"Bfp8_b", "Bfp4_b"}) {
    auto fmt = f == "Bfp8_b" ? emu::Format::Bfp8_b : emu::Format::Bfp4_b;
    std::vector<uint8_t> t(tile_bytes(f));
    emu::bfp_pack_tile(v.data(), fmt, t.data());
    std::vector<float> dec(1024);
    emu::bfp_unpack_tile(t.data(), fmt, dec.data());
    // the decoded values are within one mantissa step of the input
    double step = f == "Bfp8_b" ? 1.0 / 64 : 1.0 / 4;
    for (int g = 0; g < 64; g++) {
      int e = 0;
      for (int i = 0; i < 16; i++) e = std::max(e, int((std::bit_cast<uint32_t>(v[g * 16 + i]) >> 23) & 0xff));
      double ulp = std::ldexp(step, e - 127);
      for (int i = 0; i < 16; i++) {
        double x = v[g * 16 + i], y = dec[g * 16 + i];
        if (!(std::fabs(x) < 1e30) ) continue;
        if (std::fabs(x - y) > ulp * 0.5 + 1e-45 && std::fabs(x - y) > 0) {
          // saturation at the largest magnitude is allowed
          if (!(std::fabs(y) >= std::ldexp(2.0 - 2 * step, e - 127) * 0.999))
            throw Failure(f + ": element " + std::to_string(g * 16 + i) + " decodes to " + std::to_string(y) +
                          " for " + std::to_string(x));
        }
      }
    }
    auto got = bytes_f32(run_copy(layer, f, t, "Float32"));
    CHECK(std::memcmp(got.data(), dec.data(), 4096) == 0);
    // Pack Float32 -> Bfp on the device: the same bytes as the host packer.
    auto packed = run_copy(layer, "Float32", f32_bytes(v), f);
    CHECK(packed == t);
  }
  // Int8: two's complement bytes, saturating pack.
  {
    std::vector<int32_t> iv(1024);
    for (int k = 0; k < 1024; k++) iv[k] = (k * 37) % 601 - 300;
    std::vector<uint8_t> b(4096);
    std::memcpy(b.data(), iv.data(), 4096);
    auto got = run_copy(layer, "Int32", b, "Int8");
    for (int k = 0; k < 1024; k++) CHECK_EQ(int(int8_t(got[k])), std::min(127, std::max(-128, iv[k])));
    auto w = run_copy(layer, "Int8", got, "Int32", "add_unary_tile(0, 0)");
    std::vector<int32_t> ov(1024);
    std::memcpy(ov.data(), w.data(), 4096);
    for (int k = 0; k < 1024; k++) CHECK_EQ(ov[k], std::min(127, std::max(-128, iv[k])));
  }
  // Typecast Float32 -> Int8 and Bfp8_b -> Float32 in DST.
  {
    auto f = randf(1024, -200, 200, 9);
    auto got =
        run_copy(layer, "Float32", f32_bytes(f), "Int8", "typecast_tile<(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Int8>(0)");
    for (int k = 0; k < 1024; k++)
      CHECK_EQ(int(int8_t(got[k])), int(std::min(127.0, std::max(-128.0, std::nearbyint(double(f[k]))))));
  }
}
ZYX_TEST(formats, test_formats);

// ---- tilize / untilize on the device ----

const char* kTilize = R"(
#include "api/compute/tilize.h"
#include "api/compute/untilize.h"
#include "api/compute/pack_untilize.h"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
  constexpr uint32_t block = 2;
  compute_kernel_hw_startup(0, 16);
  cb_wait_front(0, block);
  cb_reserve_back(16, block);
#if defined(TILIZE)
  tilize_init(0, block, 16);
  tilize_block(0, block, 16);
  tilize_uninit(0, 16);
#elif defined(UNTILIZE)
  untilize_init(0);
  untilize_block<1>(0, block, 16);
  untilize_uninit(0);
#else
  pack_untilize_init<block>(0, 16);
  pack_untilize_block<block>(0, 1, 16);
  pack_untilize_uninit(16);
#endif
  cb_push_back(16, block);
  cb_pop_front(0, block);
}
)";

void test_tilize(DeviceLayer& layer) {
  // A 32 x 64 row-major matrix; its two tiles.
  auto m = randf(32 * 64, -4, 4, 11);
  std::vector<float> tiled(2048);
  for (int t = 0; t < 2; t++)
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++) tiled[t * 1024 + fi(r, c)] = m[r * 64 + t * 32 + c];
  for (std::string mode : {"TILIZE", "UNTILIZE", "PACK_UNTILIZE"}) {
    for (std::string fmt : {"Float32", "Float16_b"}) {
      bool bf = fmt == "Float16_b";
      auto src = mode == "TILIZE" ? m : tiled;
      auto want = mode == "TILIZE" ? tiled : m;
      if (bf) src = round_bf16(src), want = round_bf16(want);
      Run r;
      r.formats = {fmt};
      r.inputs = {bf ? bf16_bytes(src) : f32_bytes(src)};
      r.out_format = fmt;
      r.out_tiles = 2;
      r.fp32 = !bf;
      r.compute = kTilize;
      r.defines = {{mode, "1"}};
      auto ob = run(layer, r);
      auto got = bf ? bytes_bf16(ob) : bytes_f32(ob);
      std::vector<double> g(got.begin(), got.end()), w(want.begin(), want.end());
      check_close(g, w, 0, 0, mode + " " + fmt);
    }
  }
}
ZYX_TEST(tilize, test_tilize);

// ---- mask, welford, reduce_block_max_row ----

void test_misc(DeviceLayer& layer) {
  auto x = randf(2048, -4, 4, 13);
  for (int i = 1024; i < 2048; i++) x[i] = (i % 3 == 0) ? 0.0f : 1.0f;  // the mask
  for (int posinf = 0; posinf < 2; posinf++) {
    std::string body = std::string("copy_tile(0, 0, 0); copy_tile(0, 1, 1); mask_tile_init(); ") +
                       (posinf ? "mask_posinf_tile(0, 1)" : "mask_tile(0, 1)");
    auto got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(x), body));
    for (int i = 0; i < 1024; i++) {
      float want = x[1024 + i] == 0 ? (posinf ? INFINITY : 0.0f) : x[i];
      if (!(got[i] == want)) throw Failure("mask element " + std::to_string(i));
    }
  }
  // welford over two tiles: per column mean and population variance of 64 rows.
  {
    auto v = randf(2048, -3, 3, 14);
    auto got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(v),
                                       "welford_init(); copy_tile(0, 0, 0); welford_update<0>(0, 0, {}); copy_tile(0, 1, 0);"
                                       " welford_update<0>(0, 32, {}); welford_finalize_to_row<0>(2, 63, {})",
                                       2, 3));
    for (int c = 0; c < 32; c++) {
      double s = 0, s2 = 0;
      for (int t = 0; t < 2; t++)
        for (int rr = 0; rr < 32; rr++) s += v[t * 1024 + fi(rr, c)];
      double mean = s / 64;
      for (int t = 0; t < 2; t++)
        for (int rr = 0; rr < 32; rr++) s2 += (v[t * 1024 + fi(rr, c)] - mean) * (v[t * 1024 + fi(rr, c)] - mean);
      if (std::fabs(got[fi(0, c)] - mean) > 1e-5 || std::fabs(got[1024 + fi(0, c)] - s2 / 64) > 1e-4)
        throw Failure("welford column " + std::to_string(c) + ": mean " + std::to_string(got[fi(0, c)]) + " want " +
                      std::to_string(mean) + ", var " + std::to_string(got[1024 + fi(0, c)]) + " want " +
                      std::to_string(s2 / 64));
    }
  }
}
ZYX_TEST(misc, test_misc);

// ---- examples/matmul_bfp8: the Bfp8_b-weights matmul kernels ----

void test_matmul_bfp8(DeviceLayer& layer) {
  const std::string dir = std::string(ZYX_EMU_EXAMPLES_DIR) + "/matmul_bfp8/tt/";
  const uint32_t mt = 4, nt = 4, kt = 8, M = mt * 32, N = nt * 32, K = kt * 32;
  auto A = round_bf16(randf(M * K, -1, 1, 21)), B = randf(K * N, -1, 1, 22);
  // Host side: a as bf16 tiles, b packed to Bfp8_b tiles with the packer.
  std::vector<float> at(M * K), bt(K * N);
  for (uint32_t tr = 0; tr < mt; tr++)
    for (uint32_t tk = 0; tk < kt; tk++)
      for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++) at[(tr * kt + tk) * 1024 + fi(r, c)] = A[(tr * 32 + r) * K + tk * 32 + c];
  for (uint32_t tk = 0; tk < kt; tk++)
    for (uint32_t tc = 0; tc < nt; tc++)
      for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++) bt[(tk * nt + tc) * 1024 + fi(r, c)] = B[(tk * 32 + r) * N + tc * 32 + c];
  std::vector<uint8_t> bbytes(kt * nt * 1088);
  std::vector<float> bq(K * N);  // the weights as Bfp8_b holds them, tiled
  for (uint32_t t = 0; t < kt * nt; t++) {
    emu::bfp_pack_tile(&bt[t * 1024], emu::Format::Bfp8_b, &bbytes[t * 1088]);
    emu::bfp_unpack_tile(&bbytes[t * 1088], emu::Format::Bfp8_b, &bq[t * 1024]);
  }
  auto abytes = bf16_bytes(at);
  zyx_test::GroupProgram p;
  p.name = "matmul_bfp8";
  p.params = {P("a", "global", "bf16"), P("b", "global", "f32"), P("c", "global_mut")};
  p.reader.source = read_text(dir + "reader.cpp");
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), C(mt), C(nt), C(kt), L("core_index"),
                           L("num_cores")};
  p.compute.source = bundle_source(dir, "zyx:tt/matmul/compute.cpp");
  p.compute.runtime_args = {C(M), C(N), C(K), L("core_index"), L("num_cores")};
  p.include_files = library_includes();
  p.writer.source = read_text(dir + "writer.cpp");
  p.writer.runtime_args = {L("buffer_addr", 2), C(mt * nt), L("core_index"), L("num_cores")};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(1, "Bfp8_b", 1088, 2), CB(16, "Float32", 4096, 2)};
  p.fp32_dest_acc = true;
  uint64_t a = layer.alloc(abytes.size(), zyx_test::dram_spec(2048), nullptr), b = layer.alloc(bbytes.size(), zyx_test::dram_spec(1088), nullptr);
  uint64_t c = layer.alloc(uint64_t(M) * N * 4, zyx_test::dram_spec(4096), nullptr);
  layer.write(a, 0, abytes.data(), abytes.size());
  layer.write(b, 0, bbytes.data(), bbytes.size());
  uint64_t prog = layer.compile(zyx_test::one_group_program(p, 2, 2));
  layer.run(prog, {Buf(a), Buf(b), Buf(c)}, false);
  layer.release(prog);
  std::vector<uint8_t> cb(uint64_t(M) * N * 4);
  layer.read(c, 0, cb.data(), cb.size());
  layer.free(a), layer.free(b), layer.free(c);
  auto ct = bytes_f32(cb);
  std::vector<double> got(M * N), want(M * N), exact(M * N);
  for (uint32_t i = 0; i < M; i++)
    for (uint32_t j = 0; j < N; j++) {
      double s = 0, e = 0;
      for (uint32_t k = 0; k < K; k++) {
        double bv = bq[((k / 32) * nt + j / 32) * 1024 + fi(k % 32, j % 32)];
        s += double(A[i * K + k]) * bv;
        e += double(A[i * K + k]) * B[k * N + j];
      }
      want[i * N + j] = s, exact[i * N + j] = e;
      got[i * N + j] = ct[((i / 32) * nt + j / 32) * 1024 + fi(i % 32, j % 32)];
    }
  // Exact to f32 accumulation against the Bfp8_b weights ...
  check_close(got, want, 1e-4, 1e-4, "matmul_bfp8 vs the Bfp8_b-quantised reference");
  // ... and within the block-float quantisation of the full-precision product.
  check_close(got, exact, 0.15, 0.05, "matmul_bfp8 vs the f32 reference");
}
ZYX_TEST(matmul_bfp8, test_matmul_bfp8);

// ---- ttnn's moreh_common.hpp helpers ----

const char* kMoreh = R"(
#include "ttnn/kernel/compute/moreh_common.hpp"
void kernel_main() {
  compute_kernel_hw_startup(0, 1, 16);
  mul_tiles_to_cb(0, 1, 24, 0, 0, 0, 1);          // t = a * b (a stays)
  exp_tile_to_cb(24, 25);                         // e = exp(t)
  add_tiles_to_cb(25, 0, 26, 0, 0, 1, 0);         // s = e + a (a stays)
  mul_tiles_bcast_cols_to_cb(26, 2, 27);          // m = s * c[:, 0]
  mask_tile_to_cb(27, 3, 16);                     // z = mask(m, mask)
  cb_pop_front(0, 1);
}
)";

void test_moreh(DeviceLayer& layer) {
  auto a = randf(1024, -1, 1, 31), b = randf(1024, -1, 1, 32), c = randf(1024, -2, 2, 33);
  std::vector<float> m(1024);
  for (int i = 0; i < 1024; i++) m[i] = i % 5 ? 1.0f : 0.0f;
  zyx_test::GroupProgram p;
  p.name = "moreh";
  p.params = {P("a", "global"), P("b", "global"), P("c", "global"), P("m", "global"), P("out", "global_mut")};
  p.reader.source = kReader;
  p.reader.compile_args = {C(4)};
  std::vector<uint64_t> ids;
  std::vector<RunArg> args;
  for (uint32_t i = 0; i < 4; i++) {
    const auto& v = i == 0 ? a : i == 1 ? b : i == 2 ? c : m;
    ids.push_back(zyx_test::upload(layer, v, 4096));
    args.push_back(Buf(ids.back()));
    p.reader.runtime_args.push_back(L("buffer_addr", i));
    p.reader.runtime_args.push_back(C(1));
    p.reader.runtime_args.push_back(C(4096));
    p.cbs.push_back(CB(i, "Float32", 4096, 1));
  }
  uint64_t out = layer.alloc(4096, zyx_test::dram_spec(4096), nullptr);
  args.push_back(Buf(out));
  for (uint32_t cb : {24u, 25u, 26u, 27u}) p.cbs.push_back(CB(cb, "Float32", 4096, 1));
  p.cbs.push_back(CB(16, "Float32", 4096, 1));
  p.compute.source = kMoreh;
  p.writer.source = kWriter;
  p.writer.runtime_args = {L("buffer_addr", 4), C(1), C(4096)};
  p.fp32_dest_acc = true;
  uint64_t prog = layer.compile(zyx_test::one_group_program(p, 1, 1));
  layer.run(prog, args, false);
  layer.release(prog);
  auto got = zyx_test::download<float>(layer, out, 1024);
  for (auto id : ids) layer.free(id);
  layer.free(out);
  std::vector<double> g(got.begin(), got.end()), w(1024);
  for (int r = 0; r < 32; r++)
    for (int cc = 0; cc < 32; cc++) {
      int i = fi(r, cc);
      double s = std::exp(double(a[i]) * b[i]) + a[i];
      w[i] = m[i] == 0 ? 0 : s * c[fi(r, 0)];
    }
  check_close(g, w, 1e-5, 1e-5, "moreh_common helpers");
}
ZYX_TEST(misc, test_moreh);

// ---- the compute example bundles, with their tt.json arg layouts ----

void test_example_bundles(DeviceLayer& layer) {
  // Each example's kernels as its tt.json names them (sfpu_chain's reader
  // and writer come from the kernel library).
  auto src = [](const char* ex, const char* source) {
    return bundle_source(std::string(ZYX_EMU_EXAMPLES_DIR) + "/" + ex, source);
  };
  const uint32_t m = 128, n = 256;
  auto x = randf(m * n, -1, 1, 41), b = randf(n, -2, 2, 42);
  auto up = [&](const std::vector<float>& v) { return zyx_test::upload(layer, v, 2048); };
  auto mk = [&](const char* ex, std::vector<zyx::ParamDesc> params, const char* reader = "tt/reader.cpp",
                const char* writer = "tt/writer.cpp") {
    zyx_test::GroupProgram p;
    p.name = ex;
    p.params = std::move(params);
    p.reader.source = src(ex, reader);
    p.compute.source = src(ex, "tt/compute.cpp");
    p.writer.source = src(ex, writer);
    // The kernel library's include directory, which the row-major bundles'
    // tt.json name ("includes": "zyx:tt/include") and a library kernel brings.
    p.include_files = zyx_test::library_includes();
    p.fp32_dest_acc = true;
    return p;
  };
  // The examples of one m x n input (params x, out, m, n): their reader and
  // compute args, and the writer's accessor; each writer's runtime args
  // differ.
  auto mk_matrix = [&](const char* ex, const char* out) {
    auto p = mk(ex, {P("x", "global"), P(out, "global_mut"), P("m", "variable", "u32"), P("n", "variable", "u32")});
    p.reader.compile_args = {L("accessor", 0)};
    p.reader.runtime_args = {L("buffer_addr", 0), L("page_size", 0), L("param", 2), L("param", 3), L("core_index"),
                             L("num_cores")};
    p.compute.runtime_args = {L("param", 2), L("param", 3), L("core_index"), L("num_cores")};
    p.writer.compile_args = {L("accessor", 1)};
    return p;
  };
  {  // bcast_rows: z = x + b (row vector)
    auto p = mk("bcast_rows", {P("x", "global"), P("b", "global"), P("z", "global_mut"), P("m", "variable", "u32"),
                               P("n", "variable", "u32")});
    p.reader.compile_args = {L("accessor", 0), L("accessor", 1)};
    p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), L("page_size", 0), L("page_size", 1),
                             L("param", 3), L("param", 4), L("core_index"), L("num_cores")};
    p.compute.runtime_args = {L("param", 3), L("param", 4), L("core_index"), L("num_cores")};
    p.writer.compile_args = {L("accessor", 2)};
    p.writer.runtime_args = {L("buffer_addr", 2), L("page_size", 2), L("param", 3), L("param", 4), L("core_index"),
                             L("num_cores")};
    p.cbs = {CB(0, "Float32", 4096, 2), CB(1, "Float32", 4096, 2), CB(16, "Float32", 4096, 2)};
    uint64_t bx = up(x), bb = up(b), bz = layer.alloc(m * n * 4, zyx_test::dram_spec(2048), nullptr);
    uint64_t prog = layer.compile(zyx_test::one_group_program(p, 4, 4));
    layer.run(prog, {Buf(bx), Buf(bb), Buf(bz), zyx_test::Val(m), zyx_test::Val(n)}, false);
    auto z = zyx_test::download<float>(layer, bz, m * n);
    std::vector<double> g(z.begin(), z.end()), w(m * n);
    for (uint32_t i = 0; i < m; i++)
      for (uint32_t j = 0; j < n; j++) w[i * n + j] = double(x[i * n + j]) + b[j];
    check_close(g, w, 1e-6, 1e-6, "examples/bcast_rows");
    layer.release(prog), layer.free(bx), layer.free(bb), layer.free(bz);
  }
  {  // reduce_rows: s = row sums
    auto p = mk_matrix("reduce_rows", "s");
    p.writer.runtime_args = {L("buffer_addr", 1), L("page_size", 1), L("param", 2), L("core_index"), L("num_cores")};
    p.cbs = {CB(0, "Float32", 4096, 2), CB(2, "Float32", 4096, 1), CB(16, "Float32", 4096, 2)};
    uint64_t bx = up(x), bs = layer.alloc(m * 4, zyx_test::dram_spec(2048), nullptr);
    uint64_t prog = layer.compile(zyx_test::one_group_program(p, 2, 4));
    layer.run(prog, {Buf(bx), Buf(bs), zyx_test::Val(m), zyx_test::Val(n)}, false);
    auto sv = zyx_test::download<float>(layer, bs, m);
    std::vector<double> g(sv.begin(), sv.end()), w(m, 0.0);
    for (uint32_t i = 0; i < m; i++)
      for (uint32_t j = 0; j < n; j++) w[i] += x[i * n + j];
    check_close(g, w, 1e-4, 1e-5, "examples/reduce_rows");
    layer.release(prog), layer.free(bx), layer.free(bs);
  }
  {  // tilize_square: y = x * x through tilize / SFPU / untilize
    auto p = mk_matrix("tilize_square", "y");
    p.writer.runtime_args = {L("buffer_addr", 1), L("page_size", 1), L("param", 2), L("param", 3), L("core_index"),
                             L("num_cores")};
    p.cbs = {CB(0, "Float32", 4096, 16), CB(24, "Float32", 4096, 16), CB(25, "Float32", 4096, 16),
             CB(16, "Float32", 4096, 16)};
    uint64_t bx = up(x), by = layer.alloc(m * n * 4, zyx_test::dram_spec(2048), nullptr);
    uint64_t prog = layer.compile(zyx_test::one_group_program(p, 2, 4));
    layer.run(prog, {Buf(bx), Buf(by), zyx_test::Val(m), zyx_test::Val(n)}, false);
    auto y = zyx_test::download<float>(layer, by, m * n);
    std::vector<double> g(y.begin(), y.end()), w(m * n);
    for (uint32_t i = 0; i < m * n; i++) w[i] = double(x[i]) * x[i];
    check_close(g, w, 1e-6, 1e-6, "examples/tilize_square");
    layer.release(prog), layer.free(bx), layer.free(by);
  }
  {  // sfpu_chain: y = sigmoid(exp(x) * 0.5) over a partial last tile
    const uint32_t len = 5000;
    auto v = randf(len, -3, 3, 43);
    auto p = mk("sfpu_chain", {P("x", "global"), P("y", "global_mut"), P("n", "variable", "u32")},
                "zyx:tt/dataflow/read_chunks_unary.cpp", "zyx:tt/dataflow/write_chunks.cpp");
    p.reader.runtime_args = {L("buffer_addr", 0), L("page_size", 0), L("param", 2), L("core_index"), L("num_cores")};
    p.compute.runtime_args = {L("param", 2), L("core_index"), L("num_cores")};
    p.writer.runtime_args = {L("buffer_addr", 1), L("page_size", 1), L("param", 2), L("core_index"), L("num_cores")};
    p.cbs = {CB(0, "Float32", 4096, 2), CB(16, "Float32", 4096, 2)};
    uint64_t bx = up(v), by = layer.alloc(len * 4, zyx_test::dram_spec(2048), nullptr);
    uint64_t prog = layer.compile(zyx_test::one_group_program(p, 4, 8));
    layer.run(prog, {Buf(bx), Buf(by), zyx_test::Val(len)}, false);
    auto y = zyx_test::download<float>(layer, by, len);
    std::vector<double> g(y.begin(), y.end()), w(len);
    for (uint32_t i = 0; i < len; i++) w[i] = 1 / (1 + std::exp(-std::exp(double(v[i])) * 0.5));
    check_close(g, w, 1e-6, 1e-6, "examples/sfpu_chain");
    layer.release(prog), layer.free(bx), layer.free(by);
  }
}
ZYX_TEST(examples, test_example_bundles);

// ---- reduce with scalers (AVG as SUM times 1/N), reduce_block_max_row ----

// copy_op's OP for reduce over the two tiles of cb 0 with the scaler tile of
// cb 1, into DST 0: AVG along DIM, or reduce_block_max_row.
std::string reduce2_op(const std::string& dim) {
  const std::string wait = "cb_wait_front(0, 2); ";  // copy_op waits for one tile of each input
  if (dim == "BLOCK_MAX")
    return wait + "reduce_block_max_row_init<2, false>(); reduce_block_max_row<2>(0, 1, 0, 0); reduce_block_max_row_uninit(0)";
  const std::string t = "<PoolType::AVG, ReduceDim::" + dim + ">";
  return wait + "reduce_init" + t + "(0, 1, 16); reduce_tile" + t + "(0, 1, 0, 0, 0); reduce_tile" + t +
         "(0, 1, 1, 0, 0); reduce_uninit()";
}

void test_reduce_scalers(DeviceLayer& layer) {
  auto x = randf(2048, -3, 3, 51);
  for (std::string dim : {"REDUCE_ROW", "REDUCE_COL", "REDUCE_SCALAR", "BLOCK_MAX"}) {
    // AVG over two tiles: the scaler is 1/N of the reduced count (1/sqrt(N)
    // twice for SCALAR as tt-metal documents; here one 1/N scaler suffices).
    double n = dim == "REDUCE_SCALAR" ? 2048 : 64;
    float sc = dim == "BLOCK_MAX" ? 1.0f : static_cast<float>(1.0 / n);
    std::vector<float> scaler(1024, sc);
    Run r;
    r.formats = {"Float32", "Float32"};
    r.inputs = {f32_bytes(x), f32_bytes(scaler)};
    r.compute = copy_op_kernel();
    r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", reduce2_op(dim)}};
    r.args = {0, 0, 0, 0};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), w(1024, 0.0);
    for (int rr = 0; rr < 32; rr++)
      for (int cc = 0; cc < 32; cc++)
        for (int t = 0; t < 2; t++) {
          double v = x[t * 1024 + fi(rr, cc)];
          if (dim == "REDUCE_ROW") w[fi(rr, 0)] += v * sc;
          if (dim == "REDUCE_COL") w[fi(0, cc)] += v * sc;
          if (dim == "REDUCE_SCALAR") w[0] += v * sc;
        }
    if (dim == "BLOCK_MAX")
      for (int rr = 0; rr < 32; rr++) {
        double mx = -1e30;
        for (int t = 0; t < 2; t++)
          for (int cc = 0; cc < 32; cc++) mx = std::max(mx, double(x[t * 1024 + fi(rr, cc)]));
        w[fi(rr, 0)] = mx;
      }
    check_close(g, w, 1e-5, 1e-5, "reduce " + dim);
  }
}
ZYX_TEST(misc, test_reduce_scalers);

// ---- typecast pairs through DST, packed to the target format ----

void test_typecasts(DeviceLayer& layer) {
  auto v = randf(1024, -100, 100, 61);
  struct Case {
    std::string in, out;
  };
  for (Case c : {Case{"Float32", "Int32"}, Case{"Float16_b", "Int32"}, Case{"Int32", "Float32"},
                 Case{"Int32", "Float16_b"}, Case{"UInt16", "Float32"}, Case{"Float32", "UInt16"},
                 Case{"Bfp8_b", "Float32"}, Case{"Float32", "Bfp8_b"}, Case{"Float32", "Bfp4_b"},
                 Case{"Int8", "Float32"}, Case{"Float32", "Int8"}, Case{"UInt8", "Int32"}}) {
    // input bytes and the exact values they hold
    std::vector<double> held(1024);
    std::vector<uint8_t> in(tile_bytes(c.in));
    bool in_int = c.in == "Int32" || c.in == "UInt16" || c.in == "Int8" || c.in == "UInt8";
    for (int i = 0; i < 1024; i++) {
      double x = in_int ? std::nearbyint(v[i]) : v[i];
      if (c.in == "UInt16" || c.in == "UInt8") x = std::fabs(x);
      if (c.in == "Int8") x = std::max(-128.0, std::min(127.0, x));
      float f = static_cast<float>(x);
      if (c.in == "Float32") std::memcpy(&in[4 * i], &f, 4);
      if (c.in == "Float16_b") { uint16_t h = to_bf16(f); std::memcpy(&in[2 * i], &h, 2); f = from_bf16(h); }
      if (c.in == "Int32") { int32_t k = int32_t(x); std::memcpy(&in[4 * i], &k, 4); }
      if (c.in == "UInt16") { uint16_t k = uint16_t(x); std::memcpy(&in[2 * i], &k, 2); }
      if (c.in == "Int8") in[i] = uint8_t(int8_t(x));
      if (c.in == "UInt8") in[i] = uint8_t(x);
      held[i] = f;
    }
    if (c.in == "Bfp8_b") {
      std::vector<float> dec(1024);
      emu::bfp_pack_tile(v.data(), emu::Format::Bfp8_b, in.data());
      emu::bfp_unpack_tile(in.data(), emu::Format::Bfp8_b, dec.data());
      held.assign(dec.begin(), dec.end());
    }
    auto ob =
        run_copy(layer, c.in, in, c.out, "typecast_tile<(uint32_t)DataFormat::" + c.in + ", (uint32_t)DataFormat::" + c.out + ">(0)");
    std::vector<double> g(1024), w(1024);
    for (int i = 0; i < 1024; i++) {
      double h = held[i];
      if (c.out == "Float32") { float f; std::memcpy(&f, &ob[4 * i], 4); g[i] = f; w[i] = float(h); }
      if (c.out == "Int32") { int32_t k; std::memcpy(&k, &ob[4 * i], 4); g[i] = k; w[i] = std::nearbyint(h); }
      if (c.out == "UInt16") { uint16_t k; std::memcpy(&k, &ob[2 * i], 2); g[i] = k; w[i] = std::max(0.0, std::nearbyint(h)); }
      if (c.out == "Int8") { g[i] = int8_t(ob[i]); w[i] = std::max(-128.0, std::min(127.0, std::nearbyint(h))); }
      if (c.out == "Float16_b") { uint16_t k; std::memcpy(&k, &ob[2 * i], 2); g[i] = from_bf16(k); w[i] = from_bf16(to_bf16(float(h))); }
    }
    if (c.out == "Bfp8_b" || c.out == "Bfp4_b") {
      // DST holds the typecast result in bf16; the packer rounds it to the block format
      std::vector<float> bf(1024);
      for (int i = 0; i < 1024; i++) bf[i] = from_bf16(to_bf16(float(held[i])));
      std::vector<uint8_t> want(tile_bytes(c.out));
      emu::bfp_pack_tile(bf.data(), c.out == "Bfp8_b" ? emu::Format::Bfp8_b : emu::Format::Bfp4_b, want.data());
      if (ob != want) throw Failure("typecast " + c.in + " -> " + c.out + ": packed bytes differ from the host packer");
      continue;
    }
    check_close(g, w, 0, 0, "typecast " + c.in + " -> " + c.out);
  }
}
ZYX_TEST(formats, test_typecasts);

// dropout: about the asked fraction is dropped, the rest scaled.
void test_dropout(DeviceLayer& layer) {
  auto x = randf(1024, 0.5, 2, 71);
  Run r;
  r.formats = {"Float32"};
  r.inputs = {f32_bytes(x)};
  r.compute = copy_op_kernel();
  r.defines = {{"INIT", "dropout_tile_init(7)"}, {"OP", "dropout_tile(0, p0, p1)"}};
  r.args = {0, uint32_t(0.3 * 2147483647.0), float_bits(1.0f / 0.7f), 0};
  auto got = bytes_f32(run(layer, r));
  int dropped = 0;
  for (int i = 0; i < 1024; i++) {
    if (got[i] == 0) {
      dropped++;
    } else if (std::fabs(got[i] - x[i] / 0.7f) > 1e-5f * std::fabs(got[i])) {
      throw Failure("dropout element " + std::to_string(i) + " is neither dropped nor scaled");
    }
  }
  if (dropped < 240 || dropped > 375) throw Failure("dropout dropped " + std::to_string(dropped) + " of 1024 (p 0.3)");
}
ZYX_TEST(misc, test_dropout);

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "gen-golden") {  // writes the golden block-float file (argv[2])
    auto v = golden_values();
    std::vector<uint8_t> b8(1088), b4(576);
    emu::bfp_pack_tile(v.data(), emu::Format::Bfp8_b, b8.data());
    emu::bfp_pack_tile(v.data(), emu::Format::Bfp4_b, b4.data());
    std::ofstream out(argv[2], std::ios::binary);
    out.write("ZYXBFP1\n", 8);
    out.write(reinterpret_cast<const char*>(v.data()), 4096);
    out.write(reinterpret_cast<const char*>(b8.data()), b8.size());
    out.write(reinterpret_cast<const char*>(b4.data()), b4.size());
    return out ? 0 : 1;
  }
  return group_main(argc, argv, "compute_");
}
