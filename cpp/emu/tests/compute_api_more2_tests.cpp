// Compute API tests of tt-metal's specialised compute calls: the runtime
// forms of reduce_block_max_row (reduce_custom.h), copy_tile_custom and
// pack_block_contiguous, sdpa's sub_tiles_bcast_cols_custom,
// mul_reduce_scalar_tile, enable/disable_fp32_dest_acc,
// matmul_block_math_dynamic_throttle, reshuffle_rows_tile and the ema_tile
// moving average. Each result is checked against a float64 or exact host
// reference computed here from the inputs.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute_harness.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// BODY runs between tile_regs_acquire and tile_regs_commit on the NIN input
// CBs (all their tiles at the front); DST tiles 0 .. NOUT-1 are then packed to
// cb 16 by PACK (a statement; pack_tile of each by default).
const char* kBodyKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/bcast.h"
#include "api/compute/matmul.h"
#include "api/compute/reduce_custom.h"
#include "api/compute/reshuffle.h"
#include "api/compute/ema.h"
#include "api/compute/experimental/tile_move_copy_custom.h"
#include "api/compute/experimental/pack_block.h"
#include "api/compute/experimental/sdpa_sub_custom.h"
#include "api/compute/experimental/mul_reduce_scalar.h"
#ifndef PACK_ALL
#define PACK_ALL for (uint32_t i = 0; i < NOUT; i++) pack_tile(i, 16)
#endif
void kernel_main() {
  init_sfpu(0, 16);
  for (uint32_t i = 0; i < NIN; i++) cb_wait_front(i, get_arg_val<uint32_t>(i));
  tile_regs_acquire();
  BODY;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, NOUT);
  PACK_ALL;
  cb_push_back(16, NOUT);
  tile_regs_release();
}
)";

// A Run of kBodyKernel on bf16 inputs (tiles per input from the bytes), the
// output Float32 with `nout` tiles.
Run body_run(const std::vector<std::vector<float>>& inputs, const std::string& body, uint32_t nout,
             const std::string& pack = "") {
  Run r;
  for (const auto& in : inputs) {
    r.formats.push_back("Float16_b");
    r.inputs.push_back(bf16_bytes(in));
    r.args.push_back(static_cast<uint32_t>(in.size() / 1024));
  }
  r.out_tiles = nout;
  r.compute = kBodyKernel;
  r.defines = {{"NIN", std::to_string(inputs.size())}, {"NOUT", std::to_string(nout)}, {"BODY", body}};
  if (!pack.empty()) r.defines["PACK_ALL"] = pack;
  return r;
}

// The same Run built as the card builds it, once per TRISC (a kernel that
// names a TRISC_* macro gets the three builds; see docs "Compute model").
Run three_builds(Run r) {
  r.compute = "// built for TRISC_UNPACK, TRISC_MATH and TRISC_PACK\n" + r.compute;
  return r;
}

std::vector<double> as_double(const std::vector<uint8_t>& bytes) {
  auto f = bytes_f32(bytes);
  return std::vector<double>(f.begin(), f.end());
}

// reduce_block_max_row_runtime over the block width each runtime (re)init
// sets: DST tile k's column 0 holds, per row, the max over the block's tiles
// (scaler 1.0). The template reinit_minimal and the runtime uninit are
// accepted on the way.
void test_reduce_max_row_runtime(DeviceLayer& layer) {
  auto data = round_bf16(randf(4 * 1024, -8, 8, 51));
  std::vector<float> scaler(1024, 0.0f);
  scaler[0] = 1.0f;
  const std::string body =
      "reduce_block_max_row_init_runtime(3);"
      " reduce_block_max_row_runtime(0, 1, 0, 0);"
      " reduce_block_max_row_reinit_short_runtime(2, false);"
      " reduce_block_max_row_runtime(0, 1, 2, 1);"
      " reduce_block_max_row_reinit_minimal_runtime(1);"
      " reduce_block_max_row_runtime(0, 1, 3, 2, false);"
      " reduce_block_max_row_reinit_minimal<1>();"
      " reduce_block_max_row_uninit_runtime(0)";
  // Each build keeps its own width: the unpack build captures the tiles
  // the math build reduces.
  for (bool three : {false, true}) {
    Run r = body_run({data, scaler}, body, 3);
    auto got = bytes_f32(run(layer, three ? three_builds(r) : r));
    const int first[3] = {0, 2, 3}, width[3] = {3, 2, 1};
    for (int k = 0; k < 3; k++)
      for (int row = 0; row < 32; row++) {
        float want = -INFINITY;
        for (int t = first[k]; t < first[k] + width[k]; t++)
          for (int c = 0; c < 32; c++) want = std::max(want, data[t * 1024 + fi(row, c)]);
        CHECK_EQ(got[k * 1024 + fi(row, 0)], want);
      }
  }
  // With no runtime init there is no width to reduce over: a run error.
  std::string why = expect_error(
      "run_error", [&] { run(layer, body_run({data, scaler}, "reduce_block_max_row_runtime(0, 1, 0, 0)", 1)); });
  CHECK(why.find("reduce_block_max_row_runtime: no reduce_block_max_row_init_runtime") != std::string::npos);
}
ZYX_TEST(reduce_max_row_runtime, test_reduce_max_row_runtime);

// copy_tile_custom into DST tiles in reverse order, then pack_block_contiguous
// of all three: cb 16 gets DST 0, 1, 2 in order, i.e. the inputs reversed.
void test_copy_custom_pack_block(DeviceLayer& layer) {
  auto data = round_bf16(randf(3 * 1024, -3, 3, 52));
  const std::string body = "for (uint32_t t = 0; t < 3; t++) copy_tile_custom(0, t, 2 - t)";
  auto got = bytes_f32(run(layer, body_run({data}, body, 3,
                                           "pack_block_contiguous_init(16); pack_block_contiguous(0, 16, 3)")));
  for (int t = 0; t < 3; t++)
    for (int i = 0; i < 1024; i++) CHECK_EQ(got[t * 1024 + i], data[(2 - t) * 1024 + i]);
  // Two blocks, of one tile and of two, continue at the CB's next page.
  got = bytes_f32(run(layer, body_run({data}, body, 3,
                                      "pack_block_contiguous_init(16); pack_block_contiguous(2, 16, 1);"
                                      " pack_block_contiguous(0, 16, 2)")));
  const int src[3] = {0, 2, 1};  // the input tile each output page holds
  for (int t = 0; t < 3; t++)
    for (int i = 0; i < 1024; i++) CHECK_EQ(got[t * 1024 + i], data[src[t] * 1024 + i]);
  // The packer's block holds 1 to 8 tiles.
  std::string why = expect_error("run_error", [&] {
    run(layer, body_run({data}, body, 3, "pack_block_contiguous_init(16); pack_block_contiguous(0, 16, 9)"));
  });
  CHECK(why.find("pack_block_contiguous: num_tiles must be 1 to 8") != std::string::npos);
}
ZYX_TEST(copy_custom_pack_block, test_copy_custom_pack_block);

// sub_tiles_bcast_cols_custom: ct_dim consecutive A tiles minus column 0 of
// one B tile, into consecutive DST tiles.
void test_sub_bcast_cols_custom(DeviceLayer& layer) {
  auto a = round_bf16(randf(4 * 1024, -4, 4, 53));
  auto b = round_bf16(randf(2 * 1024, -4, 4, 54));
  const std::string body =
      "sub_bcast_cols_init_short_custom(0, 1, 3); sub_tiles_bcast_cols_custom(0, 1, 1, 1, 0, 3)";
  auto got = as_double(run(layer, body_run({a, b}, body, 3)));
  std::vector<double> want(3 * 1024);
  for (int j = 0; j < 3; j++)
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        want[j * 1024 + fi(r, c)] = double(a[(1 + j) * 1024 + fi(r, c)]) - double(b[1024 + fi(r, 0)]);
  // the difference of two bf16 values, rounded once to f32
  check_close(got, want, 1e-6, 1e-6, "sub_tiles_bcast_cols_custom");
}
ZYX_TEST(sub_bcast_cols_custom, test_sub_bcast_cols_custom);

// mul_reduce_scalar_tile: scaler times the sum of every product A[i] * B[i]
// over the tiles, in element 0 of DST 0, the rest of DST 0 zero; with a
// 32-bit DST within f32 rounding of float64, with a 16-bit one within bf16's.
void test_mul_reduce_scalar(DeviceLayer& layer) {
  auto a = round_bf16(randf(3 * 1024, -1, 1, 55));
  auto b = round_bf16(randf(3 * 1024, 0, 1, 56));
  double sum = 0, mag = 0;
  for (int i = 0; i < 3 * 1024; i++) sum += double(a[i]) * b[i], mag += std::fabs(double(a[i]) * b[i]);
  for (bool fp32 : {true, false}) {
    Run r = body_run({a, b},
                     "mul_reduce_scalar_init(0, 1); mul_reduce_scalar_tile<PoolType::SUM>(0, 1, 3, 0.5f);"
                     " mul_reduce_scalar_uninit()",
                     1);
    r.fp32 = fp32;
    auto got = bytes_f32(run(layer, r));
    std::string what = std::string("mul_reduce_scalar_tile, ") + (fp32 ? "32-bit" : "16-bit") + " DST";
    // 32-bit DST: exact bf16 products, the sum rounded once to f32. 16-bit:
    // each product rounded to bf16 (2^-8 of it at most), the sum once more.
    check_close({got[0]}, {0.5 * sum}, fp32 ? 1e-6 * mag : 0.5 * mag / 256, fp32 ? 0 : 1.0 / 256, what);
    for (int i = 1; i < 1024; i++) CHECK_EQ(got[i], 0.0f);
  }
}
ZYX_TEST(mul_reduce_scalar, test_mul_reduce_scalar);

// enable_fp32_dest_acc in a kernel whose config has a 16-bit DST: the sum
// 1 + m 2^-10 (m < 4) that DST 0 gets keeps its low bits; after
// disable_fp32_dest_acc the same sum in DST 1 rounds to bf16, 1.0. Each tile
// packs as math wrote it.
void test_fp32_dest_acc_switch(DeviceLayer& layer) {
  std::vector<float> ones(1024, 1.0f), small(1024);
  for (int i = 0; i < 1024; i++) small[i] = float(i % 4) * 0x1p-10f;
  Run r = body_run({ones, small},
                   "add_tiles_init(0, 1); enable_fp32_dest_acc(); add_tiles(0, 1, 0, 0, 0);"
                   " disable_fp32_dest_acc(); add_tiles(0, 1, 0, 0, 1)",
                   2);
  r.fp32 = false;
  auto got = bytes_f32(run(layer, r));
  for (int i = 0; i < 1024; i++) {
    CHECK_EQ(got[i], 1.0f + small[i]);
    CHECK_EQ(got[1024 + i], 1.0f);
  }
}
ZYX_TEST(fp32_dest_acc_switch, test_fp32_dest_acc_switch);

// matmul_block_math_dynamic_throttle after llk_unpack_AB_matmul of a 2 x 2
// block (kt 1): DST[2r + c] = A[r] * B[c].
void test_matmul_dynamic_throttle(DeviceLayer& layer) {
  auto a = round_bf16(randf(2 * 1024, -1, 1, 57));
  auto b = round_bf16(randf(2 * 1024, -1, 1, 58));
  const std::string body =
      "mm_block_init(0, 1, 16, 0, 2, 2, 1); llk_unpack_AB_matmul(0, 1, 0, 0, 2, 2, 1);"
      " matmul_block_math_dynamic_throttle(0, 1, 0, 0, 2, 2)";
  auto got = as_double(run(layer, body_run({a, b}, body, 4)));
  std::vector<double> want(4 * 1024);
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 2; c++)
      for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) {
          double s = 0;
          for (int k = 0; k < 32; k++) s += double(a[r * 1024 + fi(i, k)]) * b[c * 1024 + fi(k, j)];
          want[(2 * r + c) * 1024 + fi(i, j)] = s;
        }
  // 32 exact bf16 products summed in f32
  check_close(got, want, 1e-5, 1e-6, "matmul_block_math_dynamic_throttle");
}
ZYX_TEST(matmul_dynamic_throttle, test_matmul_dynamic_throttle);

// reshuffle_rows_tile: the row map is the first 32 bytes of cb 1's front
// page, passed as tt-metal's embedding backward passes it (its address less
// the 16-byte header the LLK skips). DST 1 (cb 0's tile 1) row map[i] +=
// DST 0 row i; rows mapped to 255 take no part, two rows may share a target.
void test_reshuffle_rows(DeviceLayer& layer) {
  auto data = round_bf16(randf(2 * 1024, -2, 2, 59));
  uint8_t map[32];
  for (int i = 0; i < 32; i++) map[i] = uint8_t((i * 7 + 3) % 32);
  map[5] = 255, map[17] = 255, map[30] = 200;  // skipped rows
  map[9] = map[4], map[21] = map[4];            // three rows into one
  Run r = body_run({data}, "copy_tile(0, 0, 0); copy_tile(0, 1, 1); reshuffle_rows_tile_init();"
                           " reshuffle_rows_tile(0, get_tile_address(1, 0) - 16)",
                   2);
  std::vector<uint8_t> page(1024, 0);
  std::memcpy(page.data(), map, sizeof map);
  r.formats.push_back("UInt8");
  r.inputs.push_back(page);
  r.args.push_back(1);
  r.defines["NIN"] = "2";
  auto got = as_double(run(layer, r));
  std::vector<double> want(2048);
  for (int i = 0; i < 2048; i++) want[i] = data[i];
  for (int row = 0; row < 32; row++)
    if (map[row] < 32)
      for (int c = 0; c < 32; c++) want[1024 + fi(map[row], c)] += data[fi(row, c)];
  // at most four bf16 values summed in f32, one rounding each
  check_close(got, want, 1e-6, 1e-6, "reshuffle_rows_tile");
}
ZYX_TEST(reshuffle_rows, test_reshuffle_rows);

// Three tiles through ema_tile, each packed from DST 1 in its own DST
// section: cb 0's tile 0, its tile 1 (continuing the averages), and after
// ema_clear_previous_output its tile 0 again.
const char* kEmaKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/ema.h"
void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 2);
  cb_reserve_back(16, 3);
  auto step = [](uint32_t tile) {
    tile_regs_acquire();
    copy_tile(0, tile, 0);
    ema_tile(0);
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(1, 16);
    tile_regs_release();
  };
  ema_init(ALPHA, BETA);
  ema_clear_previous_output();
  step(0);
  step(1);
  ema_clear_previous_output();
  step(0);
  cb_push_back(16, 3);
}
)";

// ema_tile with alpha 0.75 and beta 0.25: each column, top row first,
// continues avg = alpha avg + beta x, the result in DST 1.
void test_ema(DeviceLayer& layer) {
  auto data = round_bf16(randf(2 * 1024, -4, 4, 60));
  const float alpha = 0.75f, beta = 0.25f;
  uint32_t alpha_bits, beta_bits;
  std::memcpy(&alpha_bits, &alpha, 4);
  std::memcpy(&beta_bits, &beta, 4);
  Run r = body_run({data}, "", 3);
  r.compute = kEmaKernel;
  r.defines = {{"ALPHA", std::to_string(alpha_bits) + "u"}, {"BETA", std::to_string(beta_bits) + "u"}};
  std::vector<double> want(3 * 1024);
  for (int c = 0; c < 32; c++) {
    double avg = 0;
    for (int t = 0; t < 2; t++)
      for (int row = 0; row < 32; row++) {
        avg = alpha * avg + beta * data[t * 1024 + fi(row, c)];
        want[t * 1024 + fi(row, c)] = avg;
        if (t == 0) want[2048 + fi(row, c)] = avg;
      }
  }
  // f32 steps of a contracting average: within a few f32 roundings. The
  // math build alone keeps the averages when the kernel runs as three.
  check_close(as_double(run(layer, r)), want, 4e-6, 1e-6, "ema_tile");
  check_close(as_double(run(layer, three_builds(r))), want, 4e-6, 1e-6, "ema_tile, three builds");
}
ZYX_TEST(ema, test_ema);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "compute_api_more2_"); }
