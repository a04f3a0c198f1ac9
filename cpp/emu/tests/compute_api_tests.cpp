// Compute API tests for the calls added with the header re-read: the
// tilize-A-B source registers with the math-only reduce and matmul, welford's
// raw-layout finalize and saved groups, transpose.h and the within-face DST
// transpose, the CB tile address and value queries, copy_dest_values, the
// logical coordinates, the SFPU column reduce and top-row add, and the SFPU
// ops added to the lists. Each result is checked against a float64 host
// reference or hand-computed values.
#include <cmath>
#include <cstdio>
#include <functional>

#include "compute_harness.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// ---- unpack_tilizeA_B_block with reduce_tile_math / matmul_tiles_math ----

// cb 0: A (APAGES pages of row-major data), cb 1: the B tile; BODY fills
// DST tiles 0 .. OUT-1, which are packed to cb 16.
const char* kSrcRegs = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tilize.h"
#include "api/compute/reduce.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
void kernel_main() {
  compute_kernel_hw_startup(0, 1, 16);
  INIT;
  cb_wait_front(0, APAGES);
  cb_wait_front(1, 1);
  tile_regs_acquire();
  BODY;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, OUT);
  for (uint32_t t = 0; t < OUT; t++) pack_tile(t, 16);
  cb_push_back(16, OUT);
  tile_regs_release();
  unpack_tilizeA_B_uninit(0);
}
)";

struct StripCase {
  std::string name, body;
  uint32_t block, num_faces, face_r_dim;
  bool neginf;
  int op;   // 0 sum, 2 max
  int dim;  // 0 row, 1 col, 2 scalar
  float scale;
  bool bf16;
  double lo, hi;
};

void test_reduce_math(DeviceLayer& layer) {
  std::vector<StripCase> cases = {
      // max pool of a 3x3 window (9 rows) over 64 channels: two faces side by side per tile
      {"max col, 2 faces of 9 rows, -inf fill", "", 2, 2, 9, true, 2, 1, 1.0f, true, -5, -1},
      {"max col, 2 faces of 9 rows, zero fill", "", 2, 2, 9, false, 2, 1, 1.0f, true, -5, 5},
      {"sum row, 4 faces of 9 rows, zero fill", "", 1, 4, 9, false, 0, 0, 0.5f, false, -2, 2},
      {"max scalar, 4 faces of 16 rows", "", 1, 4, 16, true, 2, 2, 1.0f, false, -9, -3},
      {"sum col, 1 face of 5 rows", "", 3, 1, 5, false, 0, 1, 0.25f, false, -2, 2},
  };
  const char* ops[] = {"PoolType::SUM", "PoolType::AVG", "PoolType::MAX"};
  const char* dims[] = {"ReduceDim::REDUCE_ROW", "ReduceDim::REDUCE_COL", "ReduceDim::REDUCE_SCALAR"};
  for (const StripCase& c : cases) {
    uint32_t tw = c.num_faces == 1 ? 16 : 32, rows = (c.num_faces > 2 ? 2 : 1) * c.face_r_dim;
    uint32_t width = c.block * tw;
    auto strip = randf(1024, c.lo, c.hi, 7 + c.block + c.face_r_dim);  // one page; the strip is at its start
    if (c.bf16) strip = round_bf16(strip);
    std::vector<float> scaler(1024, c.scale);
    Run r;
    r.formats = {c.bf16 ? "Float16_b" : "Float32", "Float16_b"};
    r.inputs = {c.bf16 ? bf16_bytes(strip) : f32_bytes(strip), bf16_bytes(scaler)};
    r.out_format = "Float32";
    r.out_tiles = c.block;
    r.fp32 = !c.bf16;
    r.compute = kSrcRegs;
    std::string nf = std::to_string(c.num_faces), fr = std::to_string(c.face_r_dim), bl = std::to_string(c.block);
    std::string body = std::string("unpack_tilizeA_B_block<") + (c.neginf ? "true" : "false") + ">(0, 1, " + bl +
                       ", 0, " + nf + ", " + fr + ")";
    for (uint32_t t = 0; t < c.block; t++)
      body += std::string("; reduce_tile_math<") + ops[c.op] + ", " + dims[c.dim] + ">(" + std::to_string(t) + ", " +
              nf + ")";
    r.defines = {{"INIT", std::string("tilizeA_B_reduce_init<") + (c.neginf ? "true" : "false") + ">(0, 1, " + bl +
                              ", 16, " + nf + ", " + fr + ")"},
                 {"BODY", body},
                 {"APAGES", "1"},
                 {"OUT", bl}};
    auto got = bytes_f32(run(layer, r));
    // Host reference: tile t's element (row, col) is strip row
    // (row / 16) * face_r_dim + row % 16 and column t * tw + col where the
    // face is one of the first num_faces and row % 16 < face_r_dim; the
    // fill value elsewhere.
    std::vector<double> want(size_t(c.block) * 1024, 0.0), g(got.begin(), got.end());
    double fill = c.neginf ? -INFINITY : 0.0;
    for (uint32_t t = 0; t < c.block; t++) {
      auto a = [&](int row, int col) -> double {
        int face = (row >> 4) * 2 + (col >> 4);
        if (uint32_t(face) >= c.num_faces || uint32_t(row & 15) >= c.face_r_dim) return fill;
        uint32_t sr = uint32_t(row >> 4) * c.face_r_dim + uint32_t(row & 15);
        return strip[sr * width + t * tw + uint32_t(col)];
      };
      auto in = [&](int row, int col) { return uint32_t((row >> 4) * 2 + (col >> 4)) < c.num_faces; };
      auto fold = [&](double acc, double x) { return c.op == 2 ? std::max(acc, x) : acc + x; };
      double init = c.op == 2 ? -INFINITY : 0.0;
      double* w = &want[t * 1024];
      if (c.dim == 1) {
        for (int col = 0; col < 32; col++) {
          if (!in(0, col)) continue;
          double acc = init;
          for (int row = 0; row < 32; row++)
            if (in(row, col)) acc = fold(acc, a(row, col));
          w[fi(0, col)] = acc * c.scale;
        }
      } else if (c.dim == 0) {
        for (int row = 0; row < 32; row++) {
          if (!in(row, 0)) continue;
          double acc = init;
          for (int col = 0; col < 32; col++)
            if (in(row, col)) acc = fold(acc, a(row, col));
          w[fi(row, 0)] = acc * c.scale;
        }
      } else {
        double acc = init;
        for (int row = 0; row < 32; row++)
          for (int col = 0; col < 32; col++)
            if (in(row, col)) acc = fold(acc, a(row, col));
        w[0] = acc * c.scale;
      }
    }
    (void)rows;
    // bf16 DST: max of bf16 values is exact; f32 DST: sums to f32 rounding.
    check_close(g, want, c.bf16 ? 0 : 1e-5, c.bf16 ? 0 : 1e-6, "reduce_tile_math " + c.name);
  }
  // The math-only call with nothing unpacked is an error naming the cause.
  Run r;
  r.formats = {"Float32", "Float32"};
  r.inputs = {f32_bytes(std::vector<float>(1024, 1.0f)), f32_bytes(std::vector<float>(1024, 1.0f))};
  r.compute = kSrcRegs;
  r.defines = {{"INIT", "(void)0"}, {"BODY", "reduce_tile_math<PoolType::SUM, ReduceDim::REDUCE_ROW>(0)"},
               {"APAGES", "1"}, {"OUT", "1"}};
  std::string msg = expect_error("run_error", [&] { run(layer, r); });
  CHECK(msg.find("unpack_tilizeA_B_block first") != std::string::npos);
}
ZYX_TEST(srcregs, test_reduce_math);

void test_matmul_math(DeviceLayer& layer) {
  // A: 32 x 64 row-major bf16 (two tiles wide, two pages); B: one tiled bf16
  // tile. Each of the two unpacked A tiles is multiplied with B into DST 0;
  // a second unpack of one tile (so rows of 32: the first page as a 32 x 32
  // matrix) goes to DST 1.
  auto A = round_bf16(randf(2048, -1, 1, 31)), B = round_bf16(randf(1024, -1, 1, 32));
  Run r;
  r.formats = {"Float16_b", "Float16_b"};
  r.inputs = {bf16_bytes(A), bf16_bytes(B)};
  r.out_tiles = 2;
  r.compute = kSrcRegs;
  r.defines = {{"INIT", "mm_init(0, 1, 16)"},
               {"BODY",
                "unpack_tilizeA_B_block<false>(0, 1, 2, 0); matmul_tiles_math(0); matmul_tiles_math<4>(0);"
                " unpack_tilizeA_B_block<false>(0, 1, 1, 0); matmul_tiles_math(1)"},
               {"APAGES", "2"},
               {"OUT", "2"}};
  auto got = bytes_f32(run(layer, r));
  std::vector<double> g(got.begin(), got.end()), want(2048);
  for (int i = 0; i < 32; i++)
    for (int j = 0; j < 32; j++) {
      double s0 = 0, s1 = 0;
      for (int k = 0; k < 32; k++) {
        double b = B[fi(k, j)];
        s0 += (double(A[i * 64 + k]) + A[i * 64 + 32 + k]) * b;
        s1 += double(A[i * 32 + k]) * b;  // a block of one reads 32-wide rows
      }
      want[fi(i, j)] = s0;
      want[1024 + fi(i, j)] = s1;
    }
  check_close(g, want, 1e-5, 1e-5, "matmul_tiles_math");
}
ZYX_TEST(srcregs, test_matmul_math);

// ---- the LLK layer (zyx_emu/llk_api.h) ----

// matmul through the split unpack and math calls ttnn's kernel_lib uses:
// DST 0 accumulates A0 * B + A1 * B, the block form (rt_dim 2) puts A0 * B
// in DST 1 and A1 * B in DST 2; with the init's transpose, B^T.
void test_llk_matmul(DeviceLayer& layer) {
  auto A = round_bf16(randf(2048, -1, 1, 51)), B = round_bf16(randf(1024, -1, 1, 52));
  for (bool tr : {false, true}) {
    Run r;
    r.formats = {"Float16_b", "Float16_b"};
    r.inputs = {bf16_bytes(A), bf16_bytes(B)};
    r.out_tiles = 3;
    r.compute = kSrcRegs;
    std::string t = tr ? "1" : "0";
    // MATH_FIDELITY is the compute config's, a constant as tt-metal gives it.
    r.fidelity = tr ? "LoFi" : "HiFi2";
    std::string fid = tr ? "LoFi" : "HiFi2";
    r.defines = {{"INIT", "static_assert(MATH_FIDELITY == MathFidelity::" + fid +
                              "); llk_math_matmul_init<MATH_FIDELITY, MM_THROTTLE>(0, 1, " + t +
                              "); llk_unpack_AB_matmul_init(0, 1, " + t + ")"},
                 {"BODY",
                  "llk_unpack_AB_matmul(0, 1, 0, 0); llk_math_matmul<MathFidelity::HiFi4, MM_THROTTLE>(0);"
                  " llk_unpack_AB_matmul(0, 1, 1, 0); llk_math_matmul<MathFidelity::HiFi4>(0);"
                  " llk_unpack_AB_matmul(0, 1, 0, 0, 1, 2, 1); llk_math_matmul<MathFidelity::LoFi>(1, 1, 2)"},
                 {"APAGES", "2"},
                 {"OUT", "3"}};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), want(3072);
    for (int i = 0; i < 32; i++)
      for (int j = 0; j < 32; j++) {
        double p0 = 0, p1 = 0;
        for (int k = 0; k < 32; k++) {
          double b = tr ? B[fi(j, k)] : B[fi(k, j)];
          p0 += A[fi(i, k)] * b;
          p1 += A[1024 + fi(i, k)] * b;
        }
        want[fi(i, j)] = p0 + p1;
        want[1024 + fi(i, j)] = p0;
        want[2048 + fi(i, j)] = p1;
      }
    check_close(g, want, 1e-5, 1e-5, tr ? "llk matmul, B transposed" : "llk matmul");
  }
  // The math call with nothing unpacked names what is missing.
  Run r;
  r.formats = {"Float16_b", "Float16_b"};
  r.inputs = {bf16_bytes(A), bf16_bytes(B)};
  r.compute = kSrcRegs;
  r.defines = {{"INIT", "(void)0"}, {"BODY", "llk_math_matmul<MathFidelity::HiFi4>(0)"}, {"APAGES", "2"}, {"OUT", "1"}};
  std::string msg = expect_error("run_error", [&] { run(layer, r); });
  CHECK(msg.find("llk_unpack_AB_matmul") != std::string::npos);
}
ZYX_TEST(llk, test_llk_matmul);

// copy_tile's halves: llk_unpack_A names a tile, the datacopy puts it in
// DST (transposed as llk_unpack_A_init said); a datacopy with nothing
// unpacked is an error.
void test_llk_datacopy(DeviceLayer& layer) {
  auto A = randf(2048, -4, 4, 53);
  for (bool tr : {false, true}) {
    Run r;
    r.formats = {"Float32", "Float32"};
    r.inputs = {f32_bytes(A), f32_bytes(std::vector<float>(1024, 0.0f))};
    r.compute = kSrcRegs;
    std::string t = tr ? "1, 1" : "0, 0";
    r.defines = {{"INIT", "llk_unpack_A_init<BroadcastType::NONE, false, EltwiseBinaryReuseDestType::NONE,"
                          " UnpackToDestEn>(" + t + ", 0); llk_math_eltwise_unary_datacopy_init<A2D, DST_ACCUM_MODE,"
                          " BroadcastType::NONE, false, false>(0)"},
                 // L1_ALIGNMENT reaches compute kernels too, a uint32_t as in tt-metal.
                 {"BODY", "static_assert(std::is_same_v<decltype(L1_ALIGNMENT), uint32_t> && L1_ALIGNMENT == 16);"
                          " llk_unpack_A(0, 1); llk_math_eltwise_unary_datacopy<A2D, DST_ACCUM_MODE>(0, 0)"},
                 {"APAGES", "2"},
                 {"OUT", "1"}};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), want(1024);
    for (int i = 0; i < 32; i++)
      for (int j = 0; j < 32; j++) want[fi(i, j)] = A[1024 + (tr ? fi(j, i) : fi(i, j))];
    check_close(g, want, 0, 0, tr ? "llk datacopy, transposed" : "llk datacopy");
  }
  Run r;
  r.formats = {"Float32", "Float32"};
  r.inputs = {f32_bytes(A), f32_bytes(std::vector<float>(1024, 0.0f))};
  r.compute = kSrcRegs;
  r.defines = {{"INIT", "(void)0"}, {"BODY", "llk_math_eltwise_unary_datacopy<A2D, DST_ACCUM_MODE>(0)"},
               {"APAGES", "2"}, {"OUT", "1"}};
  std::string msg = expect_error("run_error", [&] { run(layer, r); });
  CHECK(msg.find("call llk_unpack_A first") != std::string::npos);
}
ZYX_TEST(llk, test_llk_datacopy);

// ---- welford: finalize to the raw layout, saved groups ----

// Column c of the SFPU's 32 lanes stored to group g: face-order index
// (4 g + 2 (c / 16) + c % 2) * 16 + (c % 16 rounded down to even).
int raw_index(int g, int c) { return (4 * g + 2 * (c / 16) + c % 2) * 16 + ((c % 16) & ~1); }

void test_welford(DeviceLayer& layer) {
  auto v = randf(2048, -3, 3, 41);
  auto stats = [&](int tile, int c, double* mean, double* var) {
    double s = 0, s2 = 0;
    for (int r = 0; r < 32; r++) s += v[tile * 1024 + fi(r, c)];
    *mean = s / 32;
    for (int r = 0; r < 32; r++) s2 += (v[tile * 1024 + fi(r, c)] - *mean) * (v[tile * 1024 + fi(r, c)] - *mean);
    *var = s2 / 32;
  };
  struct Case {
    std::string name, call;
    int group;
  };
  for (const Case& c : {Case{"3-arg (group 0)", "welford_finalize_to_face<0>(2, 31, {})", 0},
                        Case{"group 3", "welford_finalize_to_face<0>(2, 3, 31, {})", 3},
                        Case{"group 5", "welford_finalize_to_face<0>(2, 5, 31, {})", 5}}) {
    auto got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(v),
                                       "welford_init(); copy_tile(0, 0, 0); welford_update<0>(0, 0, {}); " + c.call, 2, 3));
    std::vector<double> g(got.begin(), got.end()), want(2048, 0.0);
    for (int col = 0; col < 32; col++) {
      double m, var;
      stats(0, col, &m, &var);
      want[raw_index(c.group, col)] = m;
      want[1024 + raw_index(c.group, col)] = var;
    }
    check_close(g, want, 1e-5, 1e-5, "welford_finalize_to_face " + c.name);
  }
  // Save tile 0's state to group 6, take tile 1 alone, then restore group 6:
  // the finalized row holds tile 0's statistics again. Six fp32 DST tiles:
  // more than half-sync mode gives math.
  auto got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(v),
                                     "welford_init(); copy_tile(0, 0, 0); welford_update<0>(0, 0, {}); welford_save_state(2, 6);"
                                     " welford_clear(); copy_tile(0, 1, 0); welford_update<0>(0, 0, {}); welford_save_state(2, 7);"
                                     " welford_restore_state(2, 6); welford_finalize_to_row<0>(4, 31, {})",
                                     4, 5, true));
  std::vector<double> g(got.begin(), got.end()), want(2048, 0.0);
  for (int col = 0; col < 32; col++) {
    double m, var;
    stats(0, col, &m, &var);
    want[fi(0, col)] = m;
    want[1024 + fi(0, col)] = var;
  }
  check_close(g, want, 1e-5, 1e-5, "welford save/restore of group 6");
  // The saved group 7 (tile 1) sits in its raw rows of DST 2 and 3.
  got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(v),
                                "welford_init(); copy_tile(0, 1, 0); welford_update<0>(0, 0, {}); welford_save_state(2, 7)",
                                2, 3));
  g.assign(got.begin(), got.end());
  std::fill(want.begin(), want.end(), 0.0);
  for (int col = 0; col < 32; col++) {
    double m, var;
    stats(1, col, &m, &var);
    want[raw_index(7, col)] = m;
    want[1024 + raw_index(7, col)] = var * 32;  // M2, not yet divided
  }
  check_close(g, want, 1e-5, 1e-5, "welford_save_state group 7");
}
ZYX_TEST(welford, test_welford);

// ---- transpose.h, transpose_wh_dest within faces, copy_dest_values, CB tile queries ----

void test_transpose_dst(DeviceLayer& layer) {
  auto v = randf(2048, -3, 3, 51);
  struct Case {
    std::string name, body;
    std::function<double(int tile, int r, int c)> want;
  };
  std::vector<Case> cases = {
      {"transpose_block", "transpose_init(0); transpose_block(0, 0, 0, 2)",
       [&](int t, int r, int c) { return double(v[t * 1024 + fi(c, r)]); }},
      {"transpose_tile", "transpose_init(0); transpose_tile(0, 1, 0); transpose_tile(0, 0, 1)",
       [&](int t, int r, int c) { return double(v[(1 - t) * 1024 + fi(c, r)]); }},
      {"transpose_wh_dest within faces",
       "copy_tile(0, 0, 0); copy_tile(0, 1, 1); transpose_wh_dest_init_short<false, false>(0);"
       " transpose_wh_dest<false, false>(0); transpose_wh_dest<true, true>(1)",
       [&](int t, int r, int c) {
         if (t == 1) return double(v[1024 + fi(c, r)]);  // the whole tile
         return double(v[fi((r & 16) | (c & 15), (c & 16) | (r & 15))]);
       }},
      {"copy_dest_values", "copy_tile(0, 1, 0); copy_dest_values<DataFormat::Float32>(0, 1)",
       [&](int, int r, int c) { return double(v[1024 + fi(r, c)]); }},
  };
  for (const Case& c : cases) {
    auto got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(v), c.body));
    std::vector<double> g(got.begin(), got.end()), want(2048);
    for (int t = 0; t < 2; t++)
      for (int rr = 0; rr < 32; rr++)
        for (int cc = 0; cc < 32; cc++) want[t * 1024 + fi(rr, cc)] = c.want(t, rr, cc);
    check_close(g, want, 0, 0, c.name);
  }
  // get_tile_address / read_tile_value on an Int32 CB of two tiles: DST 0
  // is filled with word 37 of tile 1, DST 1 with the byte distance from
  // tile 0's address to tile 1's.
  std::vector<int32_t> iv(2048);
  for (int i = 0; i < 2048; i++) iv[i] = 1000 + 7 * i;
  auto got = from_bytes<int32_t>(run_two_tiles(layer, "Int32", to_bytes(iv),
                                     "copy_tile(0, 0, 0); copy_tile(0, 0, 1); fill_tile_int(0, read_tile_value(0, 1, 37));"
                                     " fill_tile_int<DataFormat::Int32>(1, get_tile_address(0, 1) - get_tile_address(0, 0))"));
  for (int i = 0; i < 1024; i++) {
    CHECK_EQ(got[i], iv[1024 + 37]);
    CHECK_EQ(got[1024 + i], 4096);
  }
}
ZYX_TEST(dst, test_transpose_dst);

// get_absolute/relative_logical_x/y in a compute kernel on a 2 x 2 grid at
// (row 3, col 4): each core packs x + 16 y + 256 rx + 4096 ry into its tile.
const char* kCoordsReader = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  cb_push_back(0, 1);
}
)";
const char* kCoordsWriter = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  const uint32_t addr = get_arg_val<uint32_t>(0), core = get_arg_val<uint32_t>(1);
  const InterleavedAddrGen<true> dst = {.bank_base_address = addr, .page_size = 4096};
  cb_wait_front(16, 1);
  noc_async_write(get_read_ptr(16), get_noc_addr(core, dst), 4096);
  noc_async_write_barrier();
  cb_pop_front(16, 1);
}
)";

void test_coords(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "coords";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kCoordsReader;
  p.compute.source = copy_op_kernel();
  p.compute.defines = {{"OP", "fill_tile_int(0, get_absolute_logical_x() + 16u * get_absolute_logical_y() + "
                                       "256u * get_relative_logical_x() + 4096u * get_relative_logical_y())"}};
  p.compute.runtime_args = {C(0), C(0), C(0), C(0)};
  p.writer.source = kCoordsWriter;
  p.writer.runtime_args = {L("buffer_addr", 0), L("core_index")};
  p.cbs = {CB(0, "Int32", 4096, 1), CB(16, "Int32", 4096, 1)};
  uint64_t out = layer.alloc(4 * 4096, dram_spec(4096), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 2, 2, 3, 4));
  layer.run(prog, {Buf(out)}, false);
  std::vector<uint8_t> b(4 * 4096);
  layer.read(out, 0, b.data(), b.size());
  auto got = from_bytes<int32_t>(b);
  for (int c = 0; c < 4; c++) {
    int row = 3 + c / 2, col = 4 + c % 2;
    int want = col + 16 * row + 256 * col + 4096 * row;
    for (int i = 0; i < 1024; i++) CHECK_EQ(got[c * 1024 + i], want);
  }
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(dst, test_coords);

// ---- sfpu_reduce, sfpu_add_top_row ----

void test_sfpu_reduce(DeviceLayer& layer) {
  auto v = randf(2048, -3, 3, 61);
  const char* pools[] = {"SUM", "AVG", "MAX", "MIN"};
  for (int pool = 0; pool < 4; pool++) {
    std::string body = std::string("copy_tile(0, 0, 0); copy_tile(0, 1, 1); sfpu_reduce_init<PoolType::") +
                       pools[pool] + ", DataFormat::Float32>(); sfpu_reduce<PoolType::" + pools[pool] +
                       ", DataFormat::Float32>(0)";
    auto got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(v), body));
    std::vector<double> g(got.begin(), got.end()), want(v.begin(), v.end());
    for (int c = 0; c < 32; c++) {
      double acc = v[fi(0, c)];
      for (int rr = 1; rr < 32; rr++) {
        double x = v[fi(rr, c)];
        acc = pool <= 1 ? acc + x : pool == 2 ? std::max(acc, x) : std::min(acc, x);
      }
      want[fi(0, c)] = pool == 1 ? acc / 32 : acc;
    }
    check_close(g, want, 1e-5, 1e-6, std::string("sfpu_reduce ") + pools[pool] + " Float32");
  }
  // Integers: Int32 sums (with wrap-around) and extremes; UInt32 compares unsigned.
  std::vector<int32_t> iv(2048);
  std::mt19937 rng(62);
  for (auto& x : iv) x = int32_t(rng());
  for (int pool : {0, 2, 3})
    for (const char* fmt : {"Int32", "UInt32"}) {
      std::string body = std::string("copy_tile(0, 0, 0); copy_tile(0, 1, 1); sfpu_reduce<PoolType::") + pools[pool] +
                         ", DataFormat::" + fmt + ">(0)";
      auto got = from_bytes<int32_t>(run_two_tiles(layer, fmt, to_bytes(iv), body));
      bool uns = std::string(fmt) == "UInt32";
      for (int c = 0; c < 32; c++) {
        int64_t acc = uns ? int64_t(uint32_t(iv[fi(0, c)])) : int64_t(iv[fi(0, c)]);
        for (int rr = 1; rr < 32; rr++) {
          int64_t x = uns ? int64_t(uint32_t(iv[fi(rr, c)])) : int64_t(iv[fi(rr, c)]);
          acc = pool == 0 ? acc + x : pool == 2 ? std::max(acc, x) : std::min(acc, x);
        }
        CHECK_EQ(uint32_t(got[fi(0, c)]), uint32_t(uint64_t(acc)));
        for (int rr = 1; rr < 32; rr++) CHECK_EQ(got[fi(rr, c)], iv[fi(rr, c)]);
      }
    }
  // sfpu_add_top_row: row 0 of DST 2 (a copy of tile 0) becomes row 0 of
  // tile 0 plus row 0 of tile 1; its other rows stay.
  for (const char* fmt : {"Float32", "Int32"}) {
    bool isint = std::string(fmt) == "Int32";
    std::string body = std::string("copy_tile(0, 0, 0); copy_tile(0, 1, 1); copy_tile(0, 0, 2);"
                                   " sfpu_add_top_row_init(); sfpu_add_top_row<DataFormat::") +
                       fmt + ">(0, 1, 2)";
    auto ob = run_two_tiles(layer, fmt, isint ? to_bytes(iv) : f32_bytes(v), body, 2, 1);
    if (isint) {
      auto got = from_bytes<int32_t>(ob);
      for (int rr = 0; rr < 32; rr++)
        for (int c = 0; c < 32; c++) {
          uint32_t want = rr == 0 ? uint32_t(iv[fi(0, c)]) + uint32_t(iv[1024 + fi(0, c)]) : uint32_t(iv[fi(rr, c)]);
          CHECK_EQ(uint32_t(got[fi(rr, c)]), want);
        }
    } else {
      auto got = bytes_f32(ob);
      std::vector<double> g(got.begin(), got.begin() + 1024), want(v.begin(), v.begin() + 1024);
      for (int c = 0; c < 32; c++) want[fi(0, c)] = double(v[fi(0, c)]) + v[1024 + fi(0, c)];
      check_close(g, want, 1e-6, 1e-6, "sfpu_add_top_row Float32");
    }
  }
}
ZYX_TEST(sfpu_reduce, test_sfpu_reduce);

// cumsum_tile: running column sums; the second tile continues the first's
// columns (first = false) or starts again (first = true).
void test_cumsum(DeviceLayer& layer) {
  auto v = randf(2048, -2, 2, 61);
  for (bool carry : {true, false}) {
    std::string body = std::string("copy_tile(0, 0, 0); copy_tile(0, 1, 1); cumsum_tile_init(); cumsum_tile(0); ") +
                       (carry ? "cumsum_tile(1, false)" : "cumsum_tile(1, true)");
    auto got = bytes_f32(run_two_tiles(layer, "Float32", f32_bytes(v), body));
    std::vector<double> g(got.begin(), got.end()), want(2048);
    for (int c = 0; c < 32; c++) {
      double s = 0;
      for (int t = 0; t < 2; t++) {
        if (t == 1 && !carry) s = 0;
        for (int r = 0; r < 32; r++) want[t * 1024 + fi(r, c)] = s += v[t * 1024 + fi(r, c)];
      }
    }
    check_close(g, want, 1e-5, 1e-5, carry ? "cumsum over two tiles" : "cumsum, each tile alone");
  }
}
ZYX_TEST(sfpu_reduce, test_cumsum);

// ---- the SFPU ops added to the lists ----

void test_sfpu_ops(DeviceLayer& layer) {
  // Integer unary ops on Int32 tiles, exact.
  struct IOp {
    std::string call;
    std::function<int64_t(int32_t)> f;
    uint32_t p0 = 0, p1 = 0;
  };
  std::vector<IOp> iops = {
      // relu_max's threshold is a float's bits (as tt-metal passes it), 300.0f here.
      {"relu_max_tile_int32(0, p0)", [](int32_t x) { return int64_t(x < 0 ? 0 : std::min(x, 300)); }, 0x43960000u},
      {"relu_min_tile_int32(0, p0)", [](int32_t x) { return int64_t(std::max(x, -300)); }, uint32_t(-300)},
      {"identity_tile_uint32(0)", [](int32_t x) { return int64_t(x); }},
      {"clamp_tile_int32(0, p0, p1)", [](int32_t x) { return int64_t(std::min(std::max(x, -200), 450)); },
       uint32_t(-200), 450},
      {"rsub_unary_int32_tile(0, p0)", [](int32_t x) { return int64_t(77) - x; }, 77},
      {"add_unary_tile_int32(0, p0)", [](int32_t x) { return int64_t(x) + 1234; }, 1234},
      {"sub_unary_tile_int32(0, p0)", [](int32_t x) { return int64_t(x) - 1234; }, 1234},
      {"unary_eq_tile_int32(0, p0)", [](int32_t x) { return int64_t(x == 5); }, 5},
      {"unary_ne_tile_int32(0, p0)", [](int32_t x) { return int64_t(x != 5); }, 5},
      {"unary_gt_tile_int32(0, p0)", [](int32_t x) { return int64_t(x > -5); }, uint32_t(-5)},
      {"unary_ge_tile_int32(0, p0)", [](int32_t x) { return int64_t(x >= 5); }, 5},
      {"unary_lt_tile_int32(0, p0)", [](int32_t x) { return int64_t(x < -5); }, uint32_t(-5)},
      {"unary_le_tile_int32(0, p0)", [](int32_t x) { return int64_t(x <= 5); }, 5},
      {"eqz_tile_int32(0)", [](int32_t x) { return int64_t(x == 0); }},
      {"nez_tile_int32(0)", [](int32_t x) { return int64_t(x != 0); }},
      {"ltz_tile_int32(0)", [](int32_t x) { return int64_t(x < 0); }},
      {"gtz_tile_int32(0)", [](int32_t x) { return int64_t(x > 0); }},
      {"lez_tile_int32(0)", [](int32_t x) { return int64_t(x <= 0); }},
      {"gez_tile_int32(0)", [](int32_t x) { return int64_t(x >= 0); }},
      {"eqz_tile_uint32(0)", [](int32_t x) { return int64_t(x == 0); }},
      {"nez_tile_uint16(0)", [](int32_t x) { return int64_t(x != 0); }},
      {"logical_not_tile<DataFormat::Int32>(0)", [](int32_t x) { return int64_t(x == 0); }},
  };
  std::vector<int32_t> iv(1024);
  for (int i = 0; i < 1024; i++) iv[i] = (i % 9 == 0) ? 0 : (i % 11 == 0 ? 5 : (i * 37 % 1001) - 500);
  for (const IOp& o : iops) {
    auto got = from_bytes<int32_t>(run(layer, one_tile_op("Int32", to_bytes(iv), o.call, o.p0, o.p1)));
    for (int i = 0; i < 1024; i++)
      if (got[i] != int32_t(uint32_t(uint64_t(o.f(iv[i])))))
        throw Failure(o.call + ": element " + std::to_string(i) + " (x = " + std::to_string(iv[i]) + ") = " +
                      std::to_string(got[i]) + ", want " + std::to_string(o.f(iv[i])));
  }
  // rsub_int_tile: b - a on two Int32 tiles.
  {
    std::vector<int32_t> jv(1024);
    for (int i = 0; i < 1024; i++) jv[i] = 3 * i - 1700;
    Run r;
    r.formats = {"Int32", "Int32"};
    r.inputs = {to_bytes(iv), to_bytes(jv)};
    r.out_format = "Int32";
    r.compute = copy_op_kernel();
    r.defines = {{"NIN", "2"}, {"OP", "rsub_int_tile_init(); rsub_int_tile<DataFormat::Int32>(0, 1, 0)"}};
    r.args = {0, 0, 0, 0};
    auto got = from_bytes<int32_t>(run(layer, r));
    for (int i = 0; i < 1024; i++) CHECK_EQ(got[i], jv[i] - iv[i]);
  }
  // Float ops (f32 DST) against float64 references.
  // sum_k 1 / (x + k)^(n + 1): 2000 terms, then the Euler-Maclaurin tail.
  auto trigamma = [](double x, int n) {
    double s = 0;
    const int K = 2000;
    for (int k = 0; k < K; k++) {
      double t = 1;
      for (int e = 0; e <= n; e++) t /= (x + k);
      s += t;
    }
    double y = x + K;
    return s + 1 / (n * std::pow(y, n)) + 0.5 / std::pow(y, n + 1) + (n + 1) / (12 * std::pow(y, n + 2));
  };
  struct FOp {
    std::string call;
    int nin;
    double lo, hi;
    std::function<double(double, double, double)> f;
    uint32_t p0 = 0, p1 = 0;
    double tol = 1e-5;
  };
  const double pi = 3.14159265358979323846;
  std::vector<FOp> fops = {
      {"logit_tile(0)", 1, 0.02, 0.98, [](double x, double, double) { return std::log(x / (1 - x)); }},
      {"polygamma_tile(0, p0, p1)", 1, 0.5, 6, [&](double x, double, double) { return trigamma(x, 1); }, float_bits(1.0f),
       float_bits(1.0f)},
      {"polygamma_tile(0, p0, p1)", 1, 0.5, 6, [&](double x, double, double) { return -2 * trigamma(x, 2); }, float_bits(2.0f),
       float_bits(-2.0f)},
      {"rdiv_tile(0, p0, 0)", 1, 0.3, 4, [](double x, double, double) { return 7 / x; }, float_bits(7.0f)},
      {"rdiv_tile<RoundingMode::Trunc>(0, p0, 0)", 1, -4, 4,
       [](double x, double, double) { return std::trunc(7 / x); }, float_bits(7.0f), 0, 0},
      {"rdiv_tile<RoundingMode::Floor>(0, p0, 0)", 1, -4, 4,
       [](double x, double, double) { return std::floor(7 / x); }, float_bits(7.0f), 0, 0},
      {"rpow_tile(0, p0, 0)", 1, -2, 2, [](double x, double, double) { return std::pow(2.5, x); }, float_bits(2.5f)},
      {"binary_max_tile(0, 1, 0, 0)", 2, -3, 3, [](double a, double b, double) { return std::max(a, b); }, 0, 0, 0},
      {"binary_min_tile(0, 1, 0, 0)", 2, -3, 3, [](double a, double b, double) { return std::min(a, b); }, 0, 0, 0},
      {"fmod_binary_tile_init(); fmod_binary_tile(0, 1, 0)", 2, -5, 5,
       [](double a, double b, double) { return std::fmod(a, b); }},
      {"remainder_binary_tile_init(); remainder_binary_tile(0, 1, 0)", 2, -5, 5,
       [](double a, double b, double) {
         double r = a - b * std::floor(a / b);
         return r;
       }},
      {"logsigmoid_tile_init(); logsigmoid_tile(0, 1, 0)", 2, -8, 8,
       [](double a, double, double) { return -std::log1p(std::exp(-a)); }},
      {"lgamma_adjusted_tile_init(); lgamma_adjusted_tile(0, 1, 2, 0)", 3, 0, 0,
       [](double, double, double x) { return std::lgamma(x); }},
  };
  uint32_t seed = 70;
  for (const FOp& o : fops) {
    std::vector<std::vector<float>> in;
    for (int k = 0; k < o.nin; k++) in.push_back(randf(1024, o.lo, o.hi, seed++));
    if (o.call.find("fmod") != std::string::npos || o.call.find("remainder") != std::string::npos)
      for (auto& b : in[1]) b = (b >= 0 ? 0.5f : -0.5f) + b;  // divisors away from zero
    if (o.call.find("lgamma_adjusted") != std::string::npos) {
      // x in (-2.5, 2.5) off the poles; inputs: lgamma(1 - x) or lgamma(x)
      // (the Stirling tile), log|sin(pi x)|, x.
      in[2] = randf(1024, -2.5, 2.5, seed++);
      for (auto& x : in[2])
        if (std::fabs(x - std::nearbyint(x)) < 0.05) x += 0.1f;
      for (int i = 0; i < 1024; i++) {
        double x = in[2][i];
        in[0][i] = float(x < 0.5 ? std::lgamma(1 - x) : std::lgamma(x));
        in[1][i] = float(std::log(std::fabs(std::sin(pi * x))));
      }
    }
    Run r;
    for (int k = 0; k < o.nin; k++) {
      r.formats.push_back("Float32");
      r.inputs.push_back(f32_bytes(in[k]));
    }
    r.compute = copy_op_kernel();
    r.defines = {{"NIN", std::to_string(o.nin)}, {"OP", o.call}};
    r.args = {0, o.p0, o.p1, 0};
    auto got = bytes_f32(run(layer, r));
    std::vector<double> g(got.begin(), got.end()), want(1024);
    for (int i = 0; i < 1024; i++)
      want[i] = o.f(in[0][i], o.nin > 1 ? in[1][i] : 0.0, o.nin > 2 ? in[2][i] : 0.0);
    if (o.call.find("RoundingMode") != std::string::npos)  // quotients on an integer boundary may go either way
      for (int i = 0; i < 1024; i++) {
        double q = 7 / double(in[0][i]);
        if (std::fabs(q - std::nearbyint(q)) < 1e-5) want[i] = g[i];
      }
    check_close(g, want, o.tol, o.tol, o.call);
  }
  // stochastic_round_tile: each value becomes one of its two bf16
  // neighbours, and over many equal inputs the mean stays near the input.
  {
    std::vector<float> x(1024);
    for (int i = 0; i < 1024; i++) x[i] = i < 512 ? 1.0f + 1.0f / 512 : -(3.0f + 3.0f / 1024);
    auto got = bytes_f32(run(layer, one_tile_op("Float32", f32_bytes(x), "rand_tile_init(9); stochastic_round_tile(0)")));
    double mean[2] = {0, 0};
    for (int i = 0; i < 1024; i++) {
      uint32_t gb = float_bits(got[i]);
      CHECK((gb & 0xffffu) == 0);                    // a bf16 value
      uint32_t base = float_bits(x[i]) & 0xffff0000u;
      CHECK(gb == base || gb == base + 0x10000u);  // a neighbour
      mean[i < 512 ? 0 : 1] += got[i] / 512.0;
    }
    // 1 + 2^-9 lies a quarter of the way from 1 to 1 + 2^-7, -(3 + 3 * 2^-10)
    // three sixteenths of the way from -3 to -(3 + 2^-6): the means must be
    // within a tenth of a step (about five standard deviations of 512
    // samples), which truncation or round-to-nearest (a quarter or three
    // sixteenths of a step off) are not.
    CHECK(std::fabs(mean[0] - (1.0 + 1.0 / 512)) < 0.1 / 128);
    CHECK(std::fabs(mean[1] + (3.0 + 3.0 / 1024)) < 0.1 / 64);
  }
}
ZYX_TEST(sfpu_ops, test_sfpu_ops);

}  // namespace

int main(int argc, char** argv) {
  return group_main(argc, argv, "compute_api_");
}
