// The compute kernel's three TRISC builds (TRISC_UNPACK, TRISC_MATH,
// TRISC_PACK) run as cooperating fibers, and the DST protocol checks in
// both the single and the three builds (docs/emulator.md, "Compute model"
// and "Debugging kernels").
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "compute_harness.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// Sets ZYX_EMU_TRISC for the scope (the builder reads it at each build).
struct TriscEnv {
  explicit TriscEnv(const char* v) { setenv("ZYX_EMU_TRISC", v, 1); }
  ~TriscEnv() { unsetenv("ZYX_EMU_TRISC"); }
};

// Two f32 tiles: tile 0 holds 1 + i/1024, tile 1 holds -(2 + i/1024).
std::vector<uint8_t> two_tiles() {
  std::vector<float> v(2048);
  for (int i = 0; i < 1024; i++) v[i] = 1.0f + i / 1024.0f, v[1024 + i] = -(2.0f + i / 1024.0f);
  return f32_bytes(v);
}

Run one_output(const std::string& kernel) {
  Run r;
  r.formats = {"Float32"};
  r.inputs = {two_tiles()};
  r.compute = kernel;
  return r;
}

// A helper defined differently per build: unpack reads tile 1 of cb 0, the
// math and pack builds name tile 0, which on the card they never read (math
// computes what unpack put in SrcA). The single build reads tile 0.
const char* kPerBuildHelper = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#ifdef TRISC_UNPACK
constexpr uint32_t source_tile() { return 1; }
#else
constexpr uint32_t source_tile() { return 0; }
#endif
void kernel_main() {
  cb_wait_front(0, 2);
  tile_regs_acquire();
  copy_tile(0, source_tile(), 0);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
  cb_pop_front(0, 2);
}
)";

void test_per_build_helper(DeviceLayer& layer) {
  std::vector<float> in = from_bytes<float>(two_tiles());
  {
    TriscEnv env("3");
    std::vector<float> got = from_bytes<float>(run(layer, one_output(kPerBuildHelper)));
    for (int i = 0; i < 1024; i++) CHECK_EQ(got[i], in[1024 + i]);
  }
  {
    TriscEnv env("1");
    std::vector<float> got = from_bytes<float>(run(layer, one_output(kPerBuildHelper)));
    for (int i = 0; i < 1024; i++) CHECK_EQ(got[i], in[i]);
  }
}
ZYX_TEST(trisc, test_per_build_helper);

// Code under MATH(...) calls a function that only the math build defines;
// the source names MATH(, so it gets the three builds without the switch.
// Tiles 0 and 1 are added, then the math-only helper squares the sum.
const char* kMathOnly = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#ifdef TRISC_MATH
inline void square_in_math(uint32_t i) { square_tile(i); }
#endif
void kernel_main() {
  binary_op_init_common(0, 0, 16);
  add_tiles_init(0, 0);
  cb_wait_front(0, 2);
  tile_regs_acquire();
  add_tiles(0, 0, 0, 1, 0);
  MATH(square_in_math(0));
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
  cb_pop_front(0, 2);
}
)";

void test_math_only_function(DeviceLayer& layer) {
  std::vector<float> in = from_bytes<float>(two_tiles());
  std::vector<float> got = from_bytes<float>(run(layer, one_output(kMathOnly)));
  for (int i = 0; i < 1024; i++) {
    float s = in[i] + in[1024 + i];
    CHECK(std::fabs(got[i] - s * s) <= 1e-5f * std::fabs(s * s) + 1e-6f);
  }
  // Forced single build: MATH(x) is x and the helper does not exist.
  TriscEnv env("1");
  std::string msg = expect_error("compile_error", [&] { run(layer, one_output(kMathOnly)); });
  CHECK(msg.find("square_in_math") != std::string::npos);
}
ZYX_TEST(trisc, test_math_only_function);

// A stream of tiles through the hand-over: unpack runs ahead of math by
// the source-register queue, math one DST section ahead of pack.
void test_pipeline(DeviceLayer& layer) {
  const char* kernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_binary.h"
void kernel_main() {
  binary_op_init_common(0, 1, 16);
  add_tiles_init(0, 1);
  for (uint32_t t = 0; t < 8; t++) {
    cb_wait_front(0, 1);
    cb_wait_front(1, 1);
    tile_regs_acquire();
    add_tiles(0, 1, 0, 0, 0);
    tile_regs_commit();
    cb_pop_front(0, 1);
    cb_pop_front(1, 1);
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
  }
}
)";
  std::vector<float> a = randf(8 * 1024, -4, 4, 1), b = randf(8 * 1024, -4, 4, 2);
  Run r;
  r.formats = {"Float32", "Float32"};
  r.inputs = {f32_bytes(a), f32_bytes(b)};
  r.out_tiles = 8;
  r.compute = kernel;
  TriscEnv env("3");
  std::vector<float> got = from_bytes<float>(run(layer, r));
  for (size_t i = 0; i < got.size(); i++) CHECK(std::fabs(got[i] - (a[i] + b[i])) <= 1e-6f);
  // A release_dst after tile_regs_release (as tt-metal's vecadd_multi_core
  // example has) hands over an empty section on a card: the run goes on, in
  // both modes, with the same results.
  std::string extra = kernel;
  extra.replace(extra.find("tile_regs_release();"), 20, "tile_regs_release(); release_dst();");
  r.compute = extra;
  for (const char* mode : {"1", "3"}) {
    TriscEnv m(mode);
    got = from_bytes<float>(run(layer, r));
    for (size_t i = 0; i < got.size(); i++) CHECK(std::fabs(got[i] - (a[i] + b[i])) <= 1e-6f);
  }
}
ZYX_TEST(trisc, test_pipeline);

// ---- the DST protocol, in both modes ----

// kTwoTile-style kernel around BODY with the sync calls given.
std::string protocol_kernel(const std::string& body) {
  return R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
  cb_wait_front(0, 2);
  cb_reserve_back(16, 1);
)" + body + R"(
  cb_push_back(16, 1);
  cb_pop_front(0, 2);
}
)";
}

struct ProtocolBug {
  const char* name;
  std::string body;
  const char* rule;  // in the error message
};

void test_dst_protocol(DeviceLayer& layer) {
  const std::vector<ProtocolBug> bugs = {
      {"acquire twice", "tile_regs_acquire(); tile_regs_acquire();", "math already holds DST"},
      {"commit without acquire", "tile_regs_commit();", "math holds no DST section"},
      {"release without wait",
       "tile_regs_acquire(); copy_tile(0, 0, 0); tile_regs_commit(); tile_regs_release();",
       "pack holds no DST section"},
      {"pack before wait", "tile_regs_acquire(); copy_tile(0, 0, 0); tile_regs_commit(); pack_tile(0, 16);",
       "tile_regs_wait missing"},
      {"math without acquire", "copy_tile(0, 0, 0);", "without holding a section"},
      {"math after commit", "tile_regs_acquire(); tile_regs_commit(); copy_tile(0, 0, 0);",
       "without holding a section"},
      {"DST index past the limit", "tile_regs_acquire(); copy_tile(0, 0, 9);", "DST index 9 is out of range"},
  };
  for (const char* mode : {"1", "3"})
    for (const auto& b : bugs) {
      TriscEnv env(mode);
      std::string msg = expect_error("run_error", [&] { run(layer, one_output(protocol_kernel(b.body))); });
      if (msg.find(b.rule) == std::string::npos || msg.find("core (0,0) compute (") == std::string::npos) {
        std::fprintf(stderr, "ZYX_EMU_TRISC=%s %s: %s\n", mode, b.name, msg.c_str());
        CHECK(false);
      }
      // The three builds name the processor that broke the rule.
      if (std::string(mode) == "3") CHECK(msg.find("(math)") != std::string::npos || msg.find("(pack)") != std::string::npos);
    }
  // The single build: tile_regs_wait before any commit is out of order.
  TriscEnv env("1");
  std::string msg = expect_error("run_error", [&] {
    run(layer, one_output(protocol_kernel("tile_regs_acquire(); tile_regs_wait();")));
  });
  CHECK(msg.find("no DST section is committed") != std::string::npos);
}
ZYX_TEST(trisc, test_dst_protocol);

// The builds issue different FPU ops: a run error saying they diverged.
void test_diverged(DeviceLayer& layer) {
  const char* kernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
void kernel_main() {
  cb_wait_front(0, 2);
  tile_regs_acquire();
#ifdef TRISC_MATH
  add_tiles(0, 0, 0, 1, 0);
#else
  copy_tile(0, 0, 0);
#endif
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
}
)";
  std::string msg = expect_error("run_error", [&] { run(layer, one_output(kernel)); });
  CHECK(msg.find("(math)") != std::string::npos);
  CHECK(msg.find("the TRISC builds diverged") != std::string::npos);
}
ZYX_TEST(trisc, test_diverged);

// Math issues an op unpack never unpacks: the deadlock table names the
// math processor and what it waits for.
void test_deadlock_names_processor(DeviceLayer& layer) {
  const char* kernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
  cb_wait_front(0, 2);
  tile_regs_acquire();
  MATH(copy_tile(0, 0, 0));
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
}
)";
  setenv("ZYX_EMU_TIMEOUT_MS", "100", 1);
  std::string msg = expect_error("deadlock", [&] { run(layer, one_output(kernel)); });
  unsetenv("ZYX_EMU_TIMEOUT_MS");
  CHECK(msg.find("compute (math) waiting for unpack's next FPU operands") != std::string::npos);
  CHECK(msg.find("compute (pack) waiting in tile_regs_wait") != std::string::npos);
}
ZYX_TEST(trisc, test_deadlock_names_processor);

}  // namespace


// ---- tt-llk's per-thread API: each TRISC build calls its own LLK layer ----

// Copy, add and matmul through the LLK calls, one TRISC's code per #ifdef as
// tt-metal's per-thread test kernels write it: out 0 = A0 (llk_unpack_A,
// datacopy), out 1 = A1 + B1 (llk_unpack_AB, eltwise_binary), out 2 = A0 B0
// + A1 B1 (llk_unpack_AB_matmul, matmul accumulating in DST).
const char* kLlkThreads = R"(
#include <cstdint>
#ifdef TRISC_UNPACK
#include "llk_unpack_common_api.h"
#include "llk_unpack_A_api.h"
#include "llk_unpack_AB_api.h"
#include "llk_unpack_AB_matmul_api.h"
void kernel_main() {
  llk_unpack_hw_configure<DST_ACCUM_MODE>(0, 1);
  llk_wait_tiles(0, 2);
  llk_wait_tiles(1, 2);
  llk_unpack_A_init<BroadcastType::NONE, false, EltwiseBinaryReuseDestType::NONE>();
  llk_unpack_A(0, 0);
  llk_unpack_AB_init<BroadcastType::NONE>(0, 1);
  llk_unpack_AB(0, 1, 1, 1);
  llk_unpack_AB_matmul_init(0, 1);
  for (uint32_t k = 0; k < 2; k++) llk_unpack_AB_matmul(0, 1, k, k);
  llk_pop_tiles(0, 2);
  llk_pop_tiles(1, 2);
}
#endif
#ifdef TRISC_MATH
#include "llk_math_common.h"
#include "llk_math_unary_datacopy_api.h"
#include "llk_math_binary_api.h"
#include "llk_math_matmul_api.h"
void kernel_main() {
  llk_math_pack_sync_init<DST_ACCUM_MODE>();
  llk_math_hw_configure<DST_ACCUM_MODE>(0, 1);
  llk_math_eltwise_unary_datacopy_init<A2D, DST_ACCUM_MODE, BroadcastType::NONE>(0);
  llk_math_wait_for_dest_available();
  llk_math_eltwise_unary_datacopy<A2D, DST_ACCUM_MODE, BroadcastType::NONE>(0);
  llk_math_eltwise_binary_init<ELWADD, NONE, MathFidelity::HiFi4>();
  llk_math_eltwise_binary<ELWADD, NONE, DST_ACCUM_MODE, MathFidelity::HiFi4, EltwiseBinaryReuseDestType::NONE>(1);
  llk_math_matmul_init<MathFidelity::HiFi4>(0, 1);
  for (uint32_t k = 0; k < 2; k++) llk_math_matmul<MathFidelity::HiFi4>(2);
  llk_math_dest_section_done<DST_ACCUM_MODE>();
}
#endif
#ifdef TRISC_PACK
#include "llk_pack_common.h"
#include "llk_pack.h"
void kernel_main() {
  llk_pack_init();
  llk_pack_hw_configure<DST_ACCUM_MODE>(16);
  llk_pack_dest_init<DST_ACCUM_MODE, false>();
  llk_packer_wait_for_math_done();
  llk_wait_for_free_tiles<false, false, false>(16, 3);
  for (uint32_t t = 0; t < 3; t++) llk_pack<DST_ACCUM_MODE, false, false>(t, 16);
  llk_push_tiles<false, false>(16, 3);
  llk_pack_dest_section_done<DST_ACCUM_MODE>();
}
#endif
)";

// The same three results through the kernel API, for a bit-for-bit match.
const char* kApiThreads = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/matmul.h"
void kernel_main() {
  cb_wait_front(0, 2);
  cb_wait_front(1, 2);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  add_tiles_init(0, 1);
  add_tiles(0, 1, 1, 1, 1);
  mm_init_short(0, 1);
  for (uint32_t k = 0; k < 2; k++) matmul_tiles(0, 1, k, k, 2);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 3);
  for (uint32_t t = 0; t < 3; t++) pack_tile(t, 16);
  cb_push_back(16, 3);
  tile_regs_release();
  cb_pop_front(0, 2);
  cb_pop_front(1, 2);
}
)";

void test_llk_threads(DeviceLayer& layer) {
  std::vector<float> a = round_bf16(randf(2048, -2, 2, 7)), b = round_bf16(randf(2048, -2, 2, 8));
  Run r;
  r.formats = {"Float16_b", "Float16_b"};
  r.inputs = {bf16_bytes(a), bf16_bytes(b)};
  r.out_tiles = 3;
  r.compute = kLlkThreads;
  std::vector<float> got = from_bytes<float>(run(layer, r));
  for (int i = 0; i < 1024; i++) {
    CHECK_EQ(got[i], a[i]);
    CHECK(std::fabs(got[1024 + i] - (a[1024 + i] + b[1024 + i])) <= 1e-6f);
  }
  // Tiles are face order: element (r, c) of tile t is at t * 1024 + fi(r, c).
  for (int row = 0; row < 32; row++)
    for (int col = 0; col < 32; col++) {
      double want = 0;
      for (int t = 0; t < 2; t++)
        for (int k = 0; k < 32; k++) want += double(a[t * 1024 + fi(row, k)]) * b[t * 1024 + fi(k, col)];
      CHECK(std::fabs(got[2048 + fi(row, col)] - want) <= 1e-3 * (1 + std::fabs(want)));
    }
  // The kernel API's copy_tile, add_tiles and matmul_tiles give the same words.
  r.compute = kApiThreads;
  TriscEnv env("3");
  std::vector<float> api = from_bytes<float>(run(layer, r));
  CHECK(std::memcmp(api.data(), got.data(), got.size() * 4) == 0);
}
ZYX_TEST(llk, test_llk_threads);

// The unpacker's untilize (llk_unpack_untilize, or its two passes) with
// math's copies and pack's tile packs lays a block of NT tiles out
// row-major: the writer's pages hold its rows in order.
const char* kLlkUntilize = R"(
#include <cstdint>
#ifdef TRISC_UNPACK
#include "llk_unpack_common_api.h"
#include "llk_unpack_untilize_api.h"
void kernel_main() {
  llk_unpack_hw_configure<DST_ACCUM_MODE>(0);
  llk_unpack_untilize_init(0);
  llk_wait_tiles(0, NT);
#if PASSES
  llk_unpack_untilize_pass<true>(0, NT);
  llk_unpack_untilize_pass<false>(0, NT);
#else
  llk_unpack_untilize(0, NT);
#endif
  llk_unpack_untilize_uninit();
  llk_pop_tiles(0, NT);
}
#endif
#ifdef TRISC_MATH
#include "llk_math_common.h"
#include "llk_math_unary_datacopy_api.h"
void kernel_main() {
  llk_math_pack_sync_init<DST_ACCUM_MODE>();
  llk_math_eltwise_unary_datacopy_init<A2D, DST_ACCUM_MODE, BroadcastType::NONE>(0);
  for (uint32_t t = 0; t < NT; t++) {
    llk_math_wait_for_dest_available();
    llk_math_eltwise_unary_datacopy<A2D, DST_ACCUM_MODE, BroadcastType::NONE>(0);
    llk_math_dest_section_done<DST_ACCUM_MODE>();
  }
}
#endif
#ifdef TRISC_PACK
#include "llk_pack_common.h"
#include "llk_pack.h"
void kernel_main() {
  llk_pack_init();
  llk_wait_for_free_tiles<false, false, false>(16, NT);
  for (uint32_t t = 0; t < NT; t++) {
    llk_packer_wait_for_math_done();
    llk_pack<DST_ACCUM_MODE, false, false>(0, 16);
    llk_pack_dest_section_done<DST_ACCUM_MODE>();
  }
  llk_push_tiles<false, false>(16, NT);
}
#endif
)";

void test_llk_untilize(DeviceLayer& layer) {
  for (int nt : {2, 3})
    for (int passes : {0, 1}) {
      std::vector<float> a = round_bf16(randf(nt * 1024, -8, 8, 10 + nt));
      Run r;
      r.formats = {"Float16_b"};
      r.inputs = {bf16_bytes(a)};
      r.out_format = "Float16_b";
      r.out_tiles = nt;
      r.fp32 = false;
      r.compute = kLlkUntilize;
      r.defines = {{"NT", std::to_string(nt)}, {"PASSES", std::to_string(passes)}};
      std::vector<float> got = bytes_bf16(run(layer, r));
      // Row-major: element (row, col) of the 32 x 32 nt block at row * 32 nt + col.
      for (int row = 0; row < 32; row++)
        for (int col = 0; col < 32 * nt; col++)
          CHECK_EQ(got[row * 32 * nt + col], a[(col / 32) * 1024 + fi(row, col % 32)]);
    }
  // The single build has no unpack thread to gather the rows: a run error.
  Run r;
  r.formats = {"Float16_b"};
  r.inputs = {bf16_bytes(std::vector<float>(1024, 1.0f))};
  r.out_format = "Float16_b";
  r.fp32 = false;
  r.compute = R"(
#include "llk_unpack_untilize_api.h"
void kernel_main() { cb_wait_front(0, 1); llk_unpack_untilize(0, 1); }
)";
  std::string msg = expect_error("run_error", [&] { run(layer, r); });
  CHECK(msg.find("three TRISC builds") != std::string::npos);
}
ZYX_TEST(llk, test_llk_untilize);

// unpack_tilizeA_B_block's tilized A with B, added by the math thread's
// llk_math_eltwise_binary (the form tt-metal's unpack_tilizeA_B test kernel
// uses): out tile t = tilize(A) tile t + B tile 0.
void test_llk_tilize_ab_binary(DeviceLayer& layer) {
  const char* kernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tilize.h"
#include "api/compute/eltwise_binary.h"
void kernel_main() {
  compute_kernel_hw_startup(0, 16);
  UNPACK((llk_unpack_tilizeA_B_init<true, true>(0, 1, 2, 4, 16, 16)));
  MATH((llk_math_eltwise_binary_init<ELWADD, NONE, MathFidelity::LoFi>(0)));
  cb_wait_front(0, 2);
  cb_wait_front(1, 2);
  cb_reserve_back(16, 2);
  unpack_tilizeA_B_block(0, 1, 2, 0);
  for (uint32_t t = 0; t < 2; t++) {
    acquire_dst();
    MATH((llk_math_eltwise_binary<ELWADD, NONE, DST_ACCUM_MODE, MathFidelity::LoFi,
                                  EltwiseBinaryReuseDestType::NONE>(0, 1, 0, true)));
    pack_tile(0, 16);
    release_dst();
  }
  cb_push_back(16, 2);
  cb_pop_front(0, 2);
  cb_pop_front(1, 2);
}
)";
  std::vector<float> a = round_bf16(randf(2048, -4, 4, 21)), b = round_bf16(randf(2048, -4, 4, 22));
  Run r;
  r.formats = {"Float16_b", "Float16_b"};
  r.inputs = {bf16_bytes(a), bf16_bytes(b)};
  r.out_tiles = 2;
  r.compute = kernel;
  std::vector<float> got = from_bytes<float>(run(layer, r));
  // A is row-major, 32 rows of 64: tile t's (row, col) is A[row * 64 + 32 t + col].
  for (int t = 0; t < 2; t++)
    for (int row = 0; row < 32; row++)
      for (int col = 0; col < 32; col++) {
        float want = a[row * 64 + 32 * t + col] + b[fi(row, col)];
        CHECK(std::fabs(got[t * 1024 + fi(row, col)] - want) <= 1e-6f);
      }
}
ZYX_TEST(llk, test_llk_tilize_ab_binary);

int main(int argc, char** argv) { return group_main(argc, argv, "compute_"); }
