// The compute kernel's three TRISC builds (TRISC_UNPACK, TRISC_MATH,
// TRISC_PACK) run as cooperating fibers, and the DST protocol checks in
// both the single and the three builds (docs/emulator.md, "Compute model"
// and "Debugging kernels").
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

int main(int argc, char** argv) { return group_main(argc, argv, "compute_"); }
