// Tests of what tt-metal's programming examples (of several revisions) need
// beyond the documented API: the semaphore states VALID and INVALID, the
// host-side constants headers kernels include, get_tile_size as a constant
// expression, the 2024 form of binary_op_specific_init, and reads past the
// runtime args the host set (0 and one warning, not a failure). The kernels
// here are our own.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compute_harness.hpp"
#include "emu.hpp"
#include "harness.hpp"
#include "test_util.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) n++;
  return n;
}

const char* kConstants = R"(
#include "dataflow_api.h"
#include "hostdevcommon/common_values.hpp"
#include "hostdevcommon/kernel_structs.h"
#include "tt-metalium/constants.hpp"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(tt::CBIndex::c_0));
  static_assert(tt::constants::TILE_HW == tt::constants::TILE_HEIGHT * tt::constants::TILE_WIDTH);
  w[0] = VALID;
  w[1] = INVALID;
  w[2] = tt::constants::TILE_HW;
  w[3] = tt::constants::FACE_HW;
  w[4] = tt::constants::BFLOAT8_B_TILE_HW;
  w[5] = tt::constants::BFLOAT4_B_TILE_HW;
  w[6] = tt::constants::FACE_HEIGHT * 100 + tt::constants::FACE_WIDTH;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 28);
  noc_async_write_barrier();
}
)";

// VALID/INVALID come with dataflow_api.h alone (tt-metal's includes them).
const char* kValidOnly = R"(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  w[0] = VALID + 10;
  w[1] = INVALID + 20;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 8);
  noc_async_write_barrier();
}
)";

void test_constants(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  auto v = run_reader_words(*layer, kConstants, 7);
  CHECK_EQ(v[0], 1u);     // VALID
  CHECK_EQ(v[1], 0u);     // INVALID
  CHECK_EQ(v[2], 1024u);  // 32 x 32
  CHECK_EQ(v[3], 256u);   // 16 x 16
  CHECK_EQ(v[4], 1088u);  // 1024 one-byte values + 64 exponents
  CHECK_EQ(v[5], 576u);   // 1024 half-byte values + 64 exponents
  CHECK_EQ(v[6], 1616u);
  v = run_reader_words(*layer, kValidOnly, 2);
  CHECK_EQ(v[0], 11u);
  CHECK_EQ(v[1], 20u);
}
ZYX_TEST(compat, test_constants);

// api/numeric/int32.h (argmax's readers): the extremes with tt-metal's types
// and the signed order; ckernel_defs.h (manual_seed's kernels) gives the LLK
// enums of llk_defs.h.
const char* kInt32Numeric = R"(
#include "api/dataflow/dataflow_api.h"
#include "api/numeric/int32.h"
#include "ckernel_defs.h"
static_assert(ckernel::ReduceDim::REDUCE_SCALAR == 2 && uint8_t(ckernel::DstSync::SyncFull) == 1);
#include <type_traits>
static_assert(std::is_same_v<decltype(NEG_INF_INT32), const int32_t>);
static_assert(std::is_same_v<decltype(INT32_SIGN_MASK), const uint32_t>);
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = get_write_ptr<uint32_t>(0);
  w[0] = uint32_t(NEG_INF_INT32);
  w[1] = uint32_t(POS_INF_INT32);
  w[2] = INT32_SIGN_MASK;
  w[3] = int32_greater(5, -7) * 1000 + int32_greater(-7, 5) * 100 + int32_greater(-3, -9) * 10 +
         int32_greater(NEG_INF_INT32, POS_INF_INT32);
  w[4] = int32_greater(4, 4);
  static_assert(std::is_same_v<decltype(DRAM_ALIGNMENT), uint32_t>);
  w[5] = DRAM_ALIGNMENT;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 24);
  noc_async_write_barrier();
}
)";

void test_int32_numeric(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  auto v = run_reader_words(*layer, kInt32Numeric, 6);
  CHECK_EQ(v[0], 0x80000000u);
  CHECK_EQ(v[1], 0x7FFFFFFFu);
  CHECK_EQ(v[2], 0x80000000u);
  CHECK_EQ(v[3], 1010u);  // 5 > -7, not -7 > 5, -3 > -9, not min > max
  CHECK_EQ(v[4], 0u);     // not strictly greater than itself
  CHECK_EQ(v[5], 32u);    // DRAM_ALIGNMENT on Wormhole: max(32 read, 16 write)
}
ZYX_TEST(compat, test_int32_numeric);

// Sender/receiver handshake in the multicast examples' style: core (0,0)
// resets its own semaphore to INVALID, then sets core (0,1)'s to VALID;
// core (0,1) waits for VALID and then writes its result. Semaphore 0 starts
// at 7 on both, so a receiver that did not wait for VALID would see 7.
const char* kHandshake = R"(
#include "dataflow_api.h"
#include "hostdevcommon/common_values.hpp"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0), col = get_arg_val<uint32_t>(1);
  uint32_t peer_x = get_arg_val<uint32_t>(2), peer_y = get_arg_val<uint32_t>(3);
  uint32_t sem = get_semaphore(0);
  volatile tt_l1_ptr uint32_t* sem_ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem);
  if (col == 0) {
    noc_semaphore_set(sem_ptr, INVALID);
    // Our own (INVALID) word is the source of nothing; VALID goes out from a
    // scratch word set to VALID.
    volatile tt_l1_ptr uint32_t* src = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
    src[0] = VALID;
    noc_semaphore_set_remote(get_write_ptr(0), get_noc_addr(peer_x, peer_y, sem));
  } else {
    noc_semaphore_wait(sem_ptr, VALID);
    volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
    w[0] = *sem_ptr + 100;
    noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 4);
    noc_async_write_barrier();
  }
}
)";

void test_handshake(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  GroupProgram p;
  p.name = "handshake";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kHandshake;
  p.cbs = {CB(0, "UInt32", 64, 1)};
  p.semaphores = {{0, 7}};
  ProgramDesc d = one_group_program(p, 1, 2);
  // Per-core args: the peer's NOC coordinates.
  d.kernels[0].runtime_args.clear();
  for (uint32_t c = 0; c < 2; c++) {
    CoreArgs ca;
    ca.cores = one_core(0, c);
    ca.args = entries({L("buffer_addr", 0), C(c), CoreNoc(true, 0, 1 - c), CoreNoc(false, 0, 1 - c)});
    d.kernels[0].runtime_args.push_back(ca);
  }
  uint64_t buf = layer->alloc(64, dram_spec(64), nullptr);
  uint64_t prog = layer->compile(d);
  layer->run(prog, {Buf(buf)}, false);
  layer->release(prog);
  CHECK_EQ(download<uint32_t>(*layer, buf, 1)[0], 101u);  // VALID (1) + 100
  layer->free(buf);
}
ZYX_TEST(compat, test_handshake);

// get_tile_size in constant expressions: a constexpr variable, an array
// bound, a template argument and a static_assert.
const char* kTileSizeConstexpr = R"(
#include "dataflow_api.h"
template <uint32_t N> struct Words { static constexpr uint32_t value = N / 4; };
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  constexpr uint32_t t0 = get_tile_size(0);
  constexpr uint32_t t1 = get_tile_size(tt::CBIndex::c_1);
  static_assert(t0 > 0 && t1 > 0, "known at compile time");
  uint8_t scratch[t1];
  scratch[t1 - 1] = 5;
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  w[0] = t0;
  w[1] = t1;
  w[2] = sizeof(scratch) + scratch[t1 - 1];
  w[3] = Words<get_tile_size(1)>::value;
  w[4] = get_tile_size(1);  // the run-time form agrees
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 20);
  noc_async_write_barrier();
}
)";

// A CB whose page size differs between the kernel's cores has no
// compile-time tile size: the run-time form gives each core its own.
const char* kTileSizeRuntime = R"(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0), col = get_arg_val<uint32_t>(1);
  const uint32_t t = get_tile_size(1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  w[0] = t;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out + 32 * col), 4);
  noc_async_write_barrier();
}
)";

void test_tile_size(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  auto v = run_reader_words(*layer, kTileSizeConstexpr, 5, {CB(0, "UInt32", 64, 1), CB(1, "Float16_b", 2048, 2)});
  CHECK_EQ(v[0], 64u);
  CHECK_EQ(v[1], 2048u);
  CHECK_EQ(v[2], 2053u);
  CHECK_EQ(v[3], 512u);
  CHECK_EQ(v[4], 2048u);
  // Another page size, another object.
  v = run_reader_words(*layer, kTileSizeConstexpr, 5, {CB(0, "UInt32", 64, 1), CB(1, "Float32", 4096, 1)});
  CHECK_EQ(v[1], 4096u);
  CHECK_EQ(v[3], 1024u);

  // Two cores with CB 1 of 2048 and 1088 bytes.
  GroupProgram p;
  p.name = "tile_size";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kTileSizeRuntime;
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_col")};
  p.cbs = {CB(0, "UInt32", 64, 1)};
  ProgramDesc d = one_group_program(p, 1, 2);
  d.cbs.push_back(cb_config(one_core(0, 0), 4096, {cb_index(1, DataFormat::Float16_b, 2048)}));
  d.cbs.push_back(cb_config(one_core(0, 1), 2176, {cb_index(1, DataFormat::Bfp8_b, 1088)}));
  uint64_t buf = layer->alloc(64, dram_spec(64), nullptr);
  uint64_t prog = layer->compile(d);
  layer->run(prog, {Buf(buf)}, false);
  layer->release(prog);
  auto w = download<uint32_t>(*layer, buf, 16);
  CHECK_EQ(w[0], 2048u);
  CHECK_EQ(w[8], 1088u);
  // ... and in a constant expression it is a compile error.
  d.kernels[0].source =
      "void kernel_main() { constexpr uint32_t t = get_tile_size(1); volatile uint32_t x = t; (void)x; }";
  expect_error("compile_error", [&] { layer->compile(d); });
  // So is a CB the kernel's cores do not configure.
  d.kernels[0].source =
      "void kernel_main() { constexpr uint32_t t = get_tile_size(5); volatile uint32_t x = t; (void)x; }";
  expect_error("compile_error", [&] { layer->compile(d); });
  layer->free(buf);
}
ZYX_TEST(compat, test_tile_size);

// binary_op_specific_init<full_init>(op_code), the 2024 signature: it selects
// add (0), sub (1) or mul (2) without acc_to_dest. The kernel first turns
// acc_to_dest on, then selects the op by code and applies it twice to DST 0:
// with acc_to_dest still on an add would give 2 (a + b).
const char* kSpecificInit = R"(
#include "compute_kernel_api/eltwise_binary.h"
#include "compute_kernel_api/tile_move_copy.h"
namespace NAMESPACE {
void MAIN {
  uint32_t code = get_arg_val<uint32_t>(0);
  binary_op_init_common(0, 1, 16);
  add_tiles_init(0, 1, true);
#ifdef FULL
  binary_op_specific_init<true>(code);
#else
  binary_op_specific_init<false>(code);
#endif
  cb_wait_front(0, 1);
  cb_wait_front(1, 1);
  cb_reserve_back(16, 1);
  tile_regs_acquire();
  if (code == 0) { add_tiles(0, 1, 0, 0, 0); add_tiles(0, 1, 0, 0, 0); }
  if (code == 1) { sub_tiles(0, 1, 0, 0, 0); sub_tiles(0, 1, 0, 0, 0); }
  if (code == 2) { mul_tiles(0, 1, 0, 0, 0); mul_tiles(0, 1, 0, 0, 0); }
  tile_regs_commit();
  tile_regs_wait();
  pack_tile(0, 16);
  tile_regs_release();
  cb_push_back(16, 1);
}
}
)";

void test_specific_init(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  auto a = zyx_ctest::randf(1024, -4, 4, 11), b = zyx_ctest::randf(1024, -4, 4, 12);
  for (bool full : {false, true})
    for (uint32_t code = 0; code < 3; code++) {
      zyx_ctest::Run r;
      r.formats = {"Float32", "Float32"};
      r.inputs = {zyx_ctest::f32_bytes(a), zyx_ctest::f32_bytes(b)};
      r.compute = kSpecificInit;
      r.args = {code};
      if (full) r.defines = {{"FULL", "1"}};
      auto out = zyx_ctest::bytes_f32(zyx_ctest::run(*layer, r));
      for (size_t i = 0; i < 1024; i++) {
        double want = code == 0 ? double(a[i]) + b[i] : code == 1 ? double(a[i]) - b[i] : double(a[i]) * b[i];
        if (std::fabs(out[i] - want) > 1e-5 * (1 + std::fabs(want)))
          throw Failure("binary_op_specific_init<" + std::to_string(full) + ">(" + std::to_string(code) +
                        "): element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", want " +
                        std::to_string(want));
      }
    }
}
ZYX_TEST(compat, test_specific_init);

// Reads past the args the host set. The kernel reads runtime arg 2 and 5 and
// common arg 1 where the host set 2 runtime args and 1 common arg; each core
// stores what it read.
const char* kPastArgs = R"(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0), col = get_arg_val<uint32_t>(1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  w[0] = get_arg_val<uint32_t>(2) + 1000;
  w[1] = get_arg_val<uint32_t>(5) + 2000;
  w[2] = get_common_arg_val<uint32_t>(0);
  w[3] = get_common_arg_val<uint32_t>(1) + 3000;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out + 16 * col), 16);
  noc_async_write_barrier();
}
)";

// A first program that leaves values in the cores' arg slots in L1.
const char* kManyArgs = R"(
#include "dataflow_api.h"
void kernel_main() {
  volatile uint32_t x = get_arg_val<uint32_t>(2) + get_arg_val<uint32_t>(5) + get_common_arg_val<uint32_t>(1);
  (void)x;
}
)";

void test_args_past_end(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  // Leave 77s in the arg slots of the cores.
  GroupProgram first;
  first.name = "many_args";
  first.reader.source = kManyArgs;
  first.reader.defines = {{"ZYX_EMU_ALLOW_ARGS_PAST_END", "1"}};
  first.reader.runtime_args = {C(77), C(77), C(77), C(77), C(77), C(77)};
  first.reader.common_args = {C(77), C(77)};
  uint64_t prog = layer->compile(one_group_program(first, 2, 2));
  std::string err = capture_stderr([&] { layer->run(prog, {}, false); });
  CHECK_EQ(count_of(err, "warning"), size_t(0));
  layer->release(prog);

  GroupProgram p;
  p.name = "past_args";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kPastArgs;
  p.reader.defines = {{"ZYX_EMU_ALLOW_ARGS_PAST_END", "1"}};
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index")};
  p.reader.common_args = {C(9)};
  p.cbs = {CB(0, "UInt32", 64, 1)};
  uint64_t buf = layer->alloc(256, dram_spec(256), nullptr);
  prog = layer->compile(one_group_program(p, 2, 2));
  err = capture_stderr([&] { layer->run(prog, {Buf(buf)}, false); });
  auto v = download<uint32_t>(*layer, buf, 64);
  for (uint32_t c = 0; c < 4; c++) {
    CHECK_EQ(v[4 * c + 0], 1000u);  // 0, not the 77 left in L1
    CHECK_EQ(v[4 * c + 1], 2000u);
    CHECK_EQ(v[4 * c + 2], 9u);
    CHECK_EQ(v[4 * c + 3], 3000u);
  }
  // One line per kernel and kind of arg, though four cores read two
  // runtime indices past the end: it names a core, the kernel and the index.
  CHECK_EQ(count_of(err, "zyx-emu: warning:"), size_t(2));
  CHECK_EQ(count_of(err, "\n"), size_t(2));
  CHECK(err.find("reader (riscv_0): get_arg_val(2): index 2 is past the 2 runtime args") != std::string::npos);
  CHECK(err.find("get_common_arg_val(1): index 1 is past the 1 common args") != std::string::npos);
  CHECK(err.find("core (") != std::string::npos);
  // Every run warns again.
  err = capture_stderr([&] { layer->run(prog, {Buf(buf)}, false); });
  CHECK_EQ(count_of(err, "zyx-emu: warning:"), size_t(2));
  layer->release(prog);

  // Without the opt-out (the default) a read past the args is a run error
  // naming the core, the kernel, its line, the index and the count.
  p.reader.defines.clear();
  prog = layer->compile(one_group_program(p, 2, 2));
  std::string msg = expect_error("run_error", [&] { layer->run(prog, {Buf(buf)}, false); });
  CHECK(msg.find("reader (riscv_0) at reader.cpp:6: get_arg_val(2): index 2 is past the 2 runtime args") !=
        std::string::npos);
  CHECK(msg.find("watcher check args") != std::string::npos);
  layer->release(prog);
  // A run-time index past the compile-time args too.
  p.reader.source = R"(void kernel_main() {
  volatile uint32_t i = 3;
  volatile uint32_t x = get_compile_time_arg_val(i);
  (void)x;
})";
  p.reader.compile_args = {C(1), C(2)};
  prog = layer->compile(one_group_program(p, 1, 1));
  msg = expect_error("run_error", [&] { layer->run(prog, {Buf(buf)}, false); });
  CHECK(msg.find("at reader.cpp:3: get_compile_time_arg_val(3): index 3 is past the 2 compile-time args") !=
        std::string::npos);
  layer->release(prog);
  p.reader.compile_args.clear();

  // A negative index is still a run error.
  p.reader.source =
      "void kernel_main() { volatile uint32_t x = get_arg_val<uint32_t>(-1); (void)x; }";
  prog = layer->compile(one_group_program(p, 1, 1));
  msg = expect_error("run_error", [&] { layer->run(prog, {Buf(buf)}, false); });
  CHECK(msg.find("get_arg_val(-1)") != std::string::npos);
  layer->release(prog);
  layer->free(buf);
}
ZYX_TEST(compat, test_args_past_end);

// The headers and names tt-metal's kernels (and ttnn's kernel_lib) take from
// its kernel side, which the kernel sweep (make kernel-sweep) found missing:
// each value as tt-metal defines it, with its type where kernels depend on
// it (std::min(int, MEM_ZEROS_SIZE) needs an int).
const char* kKernelSideHeaders = R"(
#include "api/dataflow/dataflow_api.h"
#include "llk_defs.h"
#include "tt-metalium/circular_buffer_constants.h"
#include "tt-metalium/buffer_types.hpp"
#include "internal/risc_attribs.h"
#include "ckernel.h"
#include "internal/mod_div_lib.h"
#include "api/kernel_thread_globals.h"
#include "api/numeric/bfloat16.h"
#include "api/numeric/float32.h"
#include "tensix_types.h"
#include "internal/dataflow/dataflow_api_common.h"
#include <algorithm>
#include <type_traits>
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  static_assert(std::is_same_v<decltype(MEM_ZEROS_SIZE), int>);
  static_assert(std::is_same_v<decltype(NUM_CIRCULAR_BUFFERS), const uint32_t>);
  static_assert(std::is_same_v<decltype(ckernel::PoolType::MAX), ckernel::PoolType>);
  static_assert(std::is_same_v<decltype(ckernel::ReduceDim::REDUCE_COL), ckernel::ReduceDim>);
  static_assert(std::is_same_v<decltype(noc_mode), const uint8_t>);
  static_assert(std::is_same_v<decltype(ckernel::MathFidelity::HiFi4), ckernel::MathFidelity>);
  static_assert(uint8_t(ckernel::MathFidelity::LoFi) == 0 && uint8_t(ckernel::MathFidelity::HiFi2) == 2 &&
                uint8_t(ckernel::MathFidelity::HiFi4) == 4 && UnpackToDestEn && !UnpackToDestDis);
  // The CB tables every kernel gets: cb 0 is UInt32 (24), 32 x 32.
  static_assert(unpack_src_format[0] == 24 && pack_dst_format[0] == 24 && unpack_tile_r_dim[0] == 32 &&
                unpack_tile_c_dim[0] == 32);
  constexpr DataFormat format = get_dataformat(0);
  constexpr uint32_t tile_hw = get_tile_hw(0);
  using namespace tt::tt_metal;
  volatile uint32_t* w = get_write_ptr<uint32_t>(0);
  int limit = 700;
  uint32_t i = 0;
  w[i++] = std::min(limit, MEM_ZEROS_SIZE);
  w[i++] = NUM_CIRCULAR_BUFFERS;
  w[i++] = UINT32_WORDS_PER_LOCAL_CIRCULAR_BUFFER_CONFIG * 100 + UINT32_WORDS_PER_REMOTE_CIRCULAR_BUFFER_CONFIG * 10 +
           CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT;
  w[i++] = CIRCULAR_BUFFER_COMPUTE_WORD_SIZE;
  w[i++] = uint32_t(TensorMemoryLayout::INTERLEAVED) * 10000 + uint32_t(TensorMemoryLayout::HEIGHT_SHARDED) * 1000 +
           uint32_t(TensorMemoryLayout::WIDTH_SHARDED) * 100 + uint32_t(TensorMemoryLayout::BLOCK_SHARDED) * 10 +
           uint32_t(TensorMemoryLayout::ND_SHARDED);
  w[i++] = uint32_t(BufferType::DRAM) * 10000 + uint32_t(BufferType::L1) * 1000 + uint32_t(BufferType::SYSTEM_MEMORY) * 100 +
           uint32_t(BufferType::L1_SMALL) * 10 + uint32_t(BufferType::TRACE);
  w[i++] = uint32_t(ShardOrientation::COL_MAJOR) * 10 + uint32_t(ShardDistributionStrategy::GRID_2D);
  w[i++] = ckernel::PoolType::SUM * 1000 + ckernel::PoolType::AVG * 100 + ckernel::PoolType::MAX * 10 + ckernel::PoolType::MIN;
  w[i++] = ckernel::ReduceDim::REDUCE_ROW * 100 + ckernel::ReduceDim::REDUCE_COL * 10 + ckernel::ReduceDim::REDUCE_SCALAR;
  w[i++] = RISCV_DEBUG_REG_WALL_CLOCK_L;
  w[i++] = RISCV_DEBUG_REG_WALL_CLOCK_H;
  w[i++] = noc_mode * 100 + DM_DYNAMIC_NOC * 10 + DM_INVALID_NOC;
  w[i++] = NOC_X(5) * 100 + NOC_Y(7);
  w[i++] = get_num_threads() * 10 + get_my_thread_id();
  w[i++] = udivsi3_const_divisor<7>(4293567291u);
  w[i++] = udivsi3_const_divisor<7>(100) * 10 + umodsi3_const_divisor<7>(100);
  w[i++] = udivsi3_const_divisor<1000>(123456) * 1000 + umodsi3_const_divisor<1000>(123456);
  w[i++] = udivsi3_const_divisor<12>(1200000) + udivsi3_const_divisor<140>(1400);
  w[i++] = mulsi3(6, 7);
  w[i++] = bfloat16_greater(0x3f80, 0x3f00) * 1000 + bfloat16_greater(0xbf80, 0xbf00) * 100 +
           bfloat16_greater(0x0000, 0x8000) * 10 + bfloat16_greater(0xbf80, 0x3f80);
  w[i++] = (uint32_t(NEG_INF_BFLOAT16) << 16) | POS_INF_BFLOAT16;
  w[i++] = (uint32_t(NAN_BFLOAT16) << 16) | BFLOAT16_SIGN_MASK;
  w[i++] = float32_greater(0x3f800000, 0x3f000000) * 10000 + float32_greater(0xbf800000, 0xbf000000) * 1000 +
           float32_greater(0x00000000, 0x80000000) * 100 + float32_greater(0x7fc00000, 0x3f800000) * 10 +
           float32_greater(0x3f800000, 0xff800000);
  w[i++] = (NEG_INF_FLOAT32 ^ POS_INF_FLOAT32) | (NAN_FLOAT32 & FLOAT32_MANTISSA_MASK);
  w[i++] = (((uint64_t(dram_bank_to_noc_xy[noc_index][3]) << NOC_ADDR_COORD_SHIFT) | uint32_t(100 + bank_to_dram_offset[3])) ==
            get_noc_addr_from_bank_id<true>(3, 100)) * 10 +
           (((uint64_t(l1_bank_to_noc_xy[1][9]) << NOC_ADDR_COORD_SHIFT) | uint32_t(64 + bank_to_l1_offset[9])) ==
            get_noc_addr_from_bank_id<false>(9, 64));
  w[i++] = VIRTUAL_TENSIX_START_X * 10 + VIRTUAL_TENSIX_START_Y;
  w[i++] = ncrisc_noc_reads_flushed(noc_index) + ncrisc_noc_read_with_transaction_id_flushed(noc_index, 3) * 10 +
           ncrisc_noc_nonposted_writes_flushed(noc_index) * 100 + ncrisc_noc_nonposted_atomics_flushed(noc_index) * 1000;
  tt_uint64_t u;
  u.v = 0x1122334455667788ull;
  w[i++] = uint32_t(tt_l1_load(&u) >> 32);
  w[i++] = uint32_t(format);
  w[i++] = tile_hw;
  w[i++] = get_read_ptr<uint32_t>(0) == reinterpret_cast<volatile uint32_t*>(get_read_ptr(0));
  riscv_wait(1000);
  w[i++] = 77;  // after the wait
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 4 * i);
  noc_async_write_barrier();
}
)";

void test_kernel_side_headers(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  auto v = run_reader_words(*layer, kKernelSideHeaders, 32, {CB(0, "UInt32", 128, 1)});
  const std::vector<uint32_t> want = {
      512,          // std::min(700, MEM_ZEROS_SIZE)
      32,           // NUM_CIRCULAR_BUFFERS on Wormhole (n150)
      424,          // 4 words a local CB config, 2 a remote one, address shift 4
      16,           // compute word size
      2345,         // TensorMemoryLayout 0, 2, 3, 4, 5
      1234,         // BufferType 0..4
      11,           // COL_MAJOR, GRID_2D
      123,          // PoolType SUM AVG MAX MIN
      12,           // ReduceDim ROW COL SCALAR
      0xFFB121F0,   // wall clock, low word
      0xFFB121F8,   // and high word
      12,           // noc_mode dedicated (0), DM_DYNAMIC_NOC 1, DM_INVALID_NOC 2
      507,          // NOC_X, NOC_Y: virtual coordinates unchanged
      10,           // one thread, id 0
      613366756,    // the card's multiply-shift quotient (4293567291 / 7 is 613366755)
      142,          // 100 / 7, 100 % 7
      123456,       // 123456 / 1000 and % 1000 (a divisor without a fast form)
      100010,       // 1200000 / 12 + 1400 / 140
      42,           // mulsi3
      1010,         // bfloat16_greater: 1 > 0.5, not -1 > -0.5, +0 > -0, not -1 > 1
      0xFF807F80,   // -inf, +inf
      0x7FFF8000,   // NaN, sign mask
      10001,        // float32_greater: 1 > 0.5, not -1 > -0.5, not +0 > -0, not NaN > 1, 1 > -inf
      0x807FFFFF,   // -inf ^ +inf is the sign bit; NaN's mantissa bits
      11,           // the bank tables give get_noc_addr_from_bank_id's DRAM and L1 addresses
      11,           // logical core (0, 0) is node (1, 1)
      1111,         // the NOC status polls: every transfer is already complete
      0x11223344,   // tt_l1_load: the high word of the 64-bit value
      24,           // get_dataformat(0) as a constant: the CB's UInt32
      1024,         // get_tile_hw(0) as a constant: 32 x 32
      1,            // get_read_ptr<uint32_t> is the read pointer
      77,           // riscv_wait returned
  };
  CHECK_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) {
    if (v[i] != want[i]) std::fprintf(stderr, "word %zu: got %u (0x%x), want %u (0x%x)\n", i, v[i], v[i], want[i], want[i]);
    CHECK_EQ(v[i], want[i]);
  }
}
ZYX_TEST(compat, test_kernel_side_headers);

// The legacy forms kernels in the wild still use, and tt-metal's DPRINT
// forms: a statement with ';' pasted into DPRINT_DATA0, a volatile pointer
// (printed as its L1 address), the debug dumps, checkpoints (no effect), and
// make_tensor_accessor_from_args giving what TensorAccessor gives.
const char* kLegacyForms = R"(
#include "api/dataflow/dataflow_api.h"
#include "api/debug/dprint.h"
#include "api/debug/dump.h"
#include "api/debug/checkpoint.h"
#include "dataflow_api_common.h"
#include "internal/circular_buffer_interface.h"
#include "noc/noc_parameters.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = get_write_ptr<uint32_t>(0);
  w[0] = 0xabc;
  w[1] = 0xdef;
  DEBUG_CHECKPOINT("start");
  DPRINT_DATA0(DPRINT << "first" << ENDL(); DPRINT << "second" << ENDL(););
  DPRINT_DATA1(DPRINT << "wrong processor" << ENDL(););
  DPRINT << "ptr " << w << " at " << get_write_ptr(0) << ENDL();
  debug_dump_l1(get_write_ptr(0), 2);
  constexpr auto args = make_tensor_accessor_args<0>();
  static_assert(has_page_size_v<InterleavedAddrGen<true>> && !has_get_aligned_page_size_v<InterleavedAddrGen<true>>);
  static_assert(has_get_aligned_page_size_v<std::remove_cv_t<decltype(args)>> && !has_page_size_v<int>);
  auto a = make_tensor_accessor_from_args(args, out, 64);
  auto b = TensorAccessor(args, out, 64);
  w[2] = a.get_noc_addr(1) == b.get_noc_addr(1);
  w[3] = a.get_noc_addr(1) != a.get_noc_addr(0);
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 16);
  noc_async_write_barrier();
}
)";

void test_legacy_forms(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  std::vector<uint32_t> v;
  setenv("ZYX_EMU_DPRINT", "1", 1);
  std::string err = capture_stderr(
      [&] { v = run_reader_words(*layer, kLegacyForms, 4, {CB(0, "UInt32", 64, 1)}, {L("accessor", 0)}); });
  unsetenv("ZYX_EMU_DPRINT");
  CHECK_EQ(v[0], 0xabcu);
  CHECK_EQ(v[2], 1u);  // the same address as TensorAccessor's
  CHECK_EQ(v[3], 1u);  // pages 0 and 1 at different addresses
  auto has = [&](const std::string& what) {
    if (err.find(what) == std::string::npos) throw Failure("no \"" + what + "\" in the DPRINT output:\n" + err);
  };
  has("first");
  has("second");
  CHECK(err.find("second") > err.find("first"));
  CHECK(err.find("wrong processor") == std::string::npos);
  // The pointer prints as its address, the same number as get_write_ptr.
  size_t at = err.find("ptr ");
  CHECK(at != std::string::npos);
  std::string line = err.substr(at, err.find('\n', at) - at);
  std::string ptr = line.substr(4, line.find(" at ") - 4), addr = line.substr(line.find(" at ") + 4);
  CHECK_EQ(ptr, addr);
  has("words=2");
  has("[0] abc def");
}
ZYX_TEST(compat, test_legacy_forms);

// The compute-side legacy forms: reduce_init<at_start>(icb, scaler, ocb),
// reduce_revert_delta, and DPRINT_UNPACK/MATH/PACK with a pasted statement,
// each printed once, from the TRISC it names.
const char* kLegacyCompute = R"(
#include "api/compute/reduce.h"
#include "api/debug/dprint.h"
namespace NAMESPACE {
void MAIN {
  // The CB tables tt-metal's build writes into a compute kernel (cb 0:
  // Float16_b, 32 x 32), and the accumulation define ttnn's kernel_lib reads.
  static_assert(unpack_src_format[0] == 5 && pack_dst_format[0] == 5 && unpack_dst_format[0] == 5);
  static_assert(unpack_tile_r_dim[0] == 32 && unpack_tile_c_dim[0] == 32 && pack_tile_r_dim[0] == 32 &&
                pack_tile_c_dim[0] == 32);
  static_assert(unpack_src_format[1] == 0xff && unpack_tile_r_dim[1] == 0);  // cb 1: not configured
  static_assert(ENABLE_FP32_DEST_ACC == 0 && !DST_ACCUM_MODE);
  // The sentinel's configuration calls (no effect without the sentinel).
  static_assert(uint8_t(Operand::SRCA) == 1 && uint8_t(Operand::SRCB) == 2 && uint8_t(Operand::PACK) == 4);
  state_configure(0, __LINE__);
  state_configure<Operand::SRCA, Operand::PACK>(0, 16, __LINE__);
  state_configure(0, 1, 16, __LINE__);
  reduce_init<true>(0, 1, 16);
  reduce_revert_delta();
  reduce_revert_delta<ReduceDim::REDUCE_COL>(16);
  DPRINT_UNPACK(DPRINT << "unpack one" << ENDL(); DPRINT << "unpack two" << ENDL(););
  DPRINT_MATH(DPRINT << "math" << ENDL());
  DPRINT_PACK("pack text\n");
}
}
)";

// A one-core program of a compute kernel alone (one bf16 CB).
uint64_t compile_compute_only(DeviceLayer& layer, const std::string& name, const std::string& source) {
  GroupProgram p;
  p.name = name;
  p.compute.source = source;
  p.cbs = {CB(0, "Float16_b", 2048, 1)};
  return layer.compile(one_group_program(p, 1, 1));
}

void test_legacy_compute(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  uint64_t prog = compile_compute_only(*layer, "legacy_compute", kLegacyCompute);
  setenv("ZYX_EMU_DPRINT", "1", 1);
  std::string err = capture_stderr([&] { layer->run(prog, {}, false); });
  unsetenv("ZYX_EMU_DPRINT");
  layer->release(prog);
  for (const char* line : {"trisc0: unpack one\n", "trisc0: unpack two\n", "trisc1: math\n", "trisc2: pack text\n"}) {
    size_t at = err.find(line);
    if (at == std::string::npos) throw Failure(std::string("no \"") + line + "\" in:\n" + err);
    CHECK(err.find(line, at + 1) == std::string::npos);  // once
  }
}
ZYX_TEST(compat, test_legacy_compute);

// ttnn's moreh helpers the emulator's copy lacked: the two-argument
// get_tilized_idx, get_noc_offset, and read_tile / read_value, which read
// back what the kernel first wrote to DRAM (page 1 of out).
const char* kMorehHelpers = R"(
#include "api/dataflow/dataflow_api.h"
#include "ttnn/kernel/dataflow/moreh_common.hpp"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  // out is one 128-byte page: results in its first 64 bytes, the data read
  // back in the second.
  const InterleavedAddrGen<true> gen{.bank_base_address = out, .page_size = 128};
  volatile uint32_t* w = get_write_ptr<uint32_t>(0);
  for (uint32_t i = 0; i < 16; i++) w[i] = 100 + i;
  noc_async_write(get_write_ptr(0), get_noc_addr(0, gen, 64), 64);
  noc_async_write_barrier();
  read_tile(1, gen, 0, 64, 64);  // bytes 64..127 of page 0 into cb 1, pushed
  cb_wait_front(1, 1);
  volatile uint32_t* r = get_read_ptr<uint32_t>(1);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < 16; i++) sum += r[i];
  cb_pop_front(1, 1);
  read_value(2, gen, 0, 21);  // element 21 of page 0 (4-byte elements: cb 2's tile is 4096 bytes)
  cb_wait_front(2, 1);        // read_value pushes the page: the consumer waits before it reads
  volatile uint32_t* v = get_read_ptr<uint32_t>(2);
  uint32_t noc_offset = 0;
  get_noc_offset(17, 18, 2, noc_offset);
  w[0] = get_tilized_idx(0, 0);
  w[1] = get_tilized_idx(3, 20);
  w[2] = get_tilized_idx(17, 2);
  w[3] = get_tilized_idx(33 + 16, 31);  // modulo 32: (17, 31)
  w[4] = noc_offset;
  w[5] = sum;
  w[6] = v[21];
  w[7] = get_gamma_beta_tile_idx(100, 2, 64, 32);  // channel 50 % 64: tile 1
  w[8] = get_tilized_gamma_beta_idx_in_tile(100, 2, 64, 32, 32);
  noc_async_write(get_write_ptr(0), get_noc_addr(0, gen), 36);
  noc_async_write_barrier();
}
)";

void test_moreh_helpers(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  auto v = run_reader_words(*layer, kMorehHelpers, 32,
                     {CB(0, "UInt32", 64, 1), CB(1, "UInt32", 64, 1), CB(2, "UInt32", 4096, 1)});
  CHECK_EQ(v[0], 0u);
  CHECK_EQ(v[1], 256u + 3 * 16 + 4);       // face 1, row 3, column 4
  CHECK_EQ(v[2], 512u + 1 * 16 + 2);       // face 2, row 1, column 2
  CHECK_EQ(v[3], 768u + 1 * 16 + 15);      // face 3, row 1, column 15
  CHECK_EQ(v[4], (768u + 16 + 2) * 2 / 32 * 32);  // bytes, down to 32
  CHECK_EQ(v[5], 1720u);                   // 100 + … + 115
  CHECK_EQ(v[6], 105u);                    // word 21 of the page: 100 + 5
  CHECK_EQ(v[7], 1u);                      // channel 50 is in gamma tile 1
  CHECK_EQ(v[8], 256u + 2);                // at its column 18: face 1, column 2
  CHECK_EQ(v[16], 100u);                   // the data itself, in the second half
}
ZYX_TEST(compat, test_moreh_helpers);

// api/compute/quantization.h: a kernel that includes it builds and runs; a
// quantization call (emulated: compute_api_sfpu_more_tests.cpp) in a kernel
// configured with a 16-bit DST stops the run, as its int32 results need a
// 32-bit one.
void test_quantization_header(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  for (bool call : {false, true}) {
    uint64_t prog = compile_compute_only(
        *layer, "quantization",
        std::string("#include \"api/compute/quantization.h\"\nnamespace NAMESPACE {\nvoid MAIN {\n") +
            (call ? "  quant_tile_init(0);\n  quant_tile(0, 1, 0);\n" : "") + "}\n}\n");
    if (call) {
      std::string why = expect_error("run_error", [&] { layer->run(prog, {}, false); });
      CHECK(why.find("need a 32-bit DST") != std::string::npos);
    } else {
      layer->run(prog, {}, false);
    }
    layer->release(prog);
  }
}
ZYX_TEST(compat, test_quantization_header);

// api/compute/eltwise_unary/sfpu_int_sum.h: moreh_sum's int32 sums build with
// tt-metal's signatures, and the calls run under the DST protocol (their
// values: compute_api_sfpu_more_tests.cpp).
void test_sfpu_int_sum_header(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  for (bool call : {false, true}) {
    uint64_t prog = compile_compute_only(
        *layer, "sfpu_int_sum",
        std::string("#include \"api/compute/eltwise_unary/sfpu_int_sum.h\"\n"
                    "static_assert(std::is_same_v<decltype(&ckernel::sfpu_add_int), void (*)(uint32_t, uint32_t, int32_t)>);\n"
                    "namespace NAMESPACE {\nvoid MAIN {\n") +
            (call ? "  tile_regs_acquire();\n  sfpu_sum_int_init();\n  sfpu_sum_int_col(0);\n  sfpu_add_int(0);\n"
                    "  tile_regs_commit();\n  tile_regs_wait();\n  tile_regs_release();\n"
                  : "") +
            "}\n}\n");
    layer->run(prog, {}, false);
    layer->release(prog);
  }
}
ZYX_TEST(compat, test_sfpu_int_sum_header);

// The bcast init_short forms take tt-metal's third parameter (call_line), so
// ttnn's chain_llk can hold their addresses as void (*)(uint32_t, uint32_t,
// uint32_t); the two-argument calls still build and run.
void test_bcast_init_short_call_line(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  uint64_t prog = compile_compute_only(
      *layer, "bcast_init_short",
      "#include \"api/compute/bcast.h\"\n"
      "#include <type_traits>\n"
      "using fn_init = void (*)(uint32_t, uint32_t, uint32_t);\n"
      "constexpr fn_init kInits[] = {sub_bcast_cols_init_short, mul_bcast_rows_init_short,\n"
      "                              add_bcast_scalar_init_short, mul_tiles_bcast_scalar_init_short};\n"
      "static_assert(sizeof(kInits) / sizeof(kInits[0]) == 4);\n"
      "static_assert(sizeof(mulsi3(6, 7)) == 4);  // compute kernels see mod_div_lib without including it\n"
      "static_assert(TILE_HEIGHT == 32 && TILE_WIDTH == 32 && FACE_R_DIM == 16 && TILE_NUM_FACES == 4);\n"
      "static_assert(std::is_same_v<decltype(TILE_HEIGHT), const std::uint32_t>);\n"
      "namespace NAMESPACE {\nvoid MAIN {\n  sub_bcast_cols_init_short(0, 1);\n  kInits[1](0, 1, __builtin_LINE());\n}\n}\n");
  layer->run(prog, {}, false);
  layer->release(prog);
}
ZYX_TEST(compat, test_bcast_init_short_call_line);

// sdpa's experimental headers: matmul_custom.h's no-MOP forms (the matmul
// block itself) and sdpa_sub_custom.h's custom subtract build with
// tt-metal's signatures and their inits run (compute_api_more2_tests.cpp
// checks what the subtract computes).
void test_sdpa_custom_headers(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  uint64_t prog = compile_compute_only(
      *layer, "sdpa_custom",
      "#include \"api/compute/experimental/matmul_custom.h\"\n"
      "#include \"api/compute/experimental/sdpa_sub_custom.h\"\n"
      "#include <type_traits>\n"
      "static_assert(std::is_same_v<decltype(&matmul_block_no_mop), void (*)(uint32_t, uint32_t, uint32_t,"
      " uint32_t, uint32_t, bool, uint32_t, uint32_t, uint32_t)>);\n"
      "static_assert(std::is_same_v<decltype(&sub_tiles_bcast_cols_custom), void (*)(uint32_t, uint32_t,"
      " uint32_t, uint32_t, uint32_t, uint32_t)>);\n"
      "namespace NAMESPACE {\nvoid MAIN {\n  mm_no_mop_init_short(0, 1, true, 2, 1, 4);\n"
      "  sub_bcast_cols_init_short_custom(0, 1, 4);\n}\n}\n");
  layer->run(prog, {}, false);
  layer->release(prog);
}
ZYX_TEST(compat, test_sdpa_custom_headers);

}  // namespace
