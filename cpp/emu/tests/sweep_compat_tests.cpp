// Tests of what the kernel sweep over tt-metal's own kernels needed
// (docs/emulator.md, "The kernel sweep"): the names and header paths its
// kernels use, each run on the emulator and checked for the value it has on
// a card, and the syntax check that compiles a compute kernel as its three
// TRISC builds where the runtime would. The kernels here are our own.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "compute_harness.hpp"
#include "emu.hpp"
#include "harness.hpp"
#include "test_util.hpp"
#include "trisc_builds.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// noc_parameters.h by its bare name and by the per-architecture path,
// ckernel::wait, DPRINT's CB macros (byte addresses, as
// get_read_ptr/get_write_ptr give them) with cb_addr_shift, and the
// const-divisor forms in a data-movement kernel without an include, and
// ckernel_defs.h's tile shape there.
const char* kDataflowNames = R"(
#include "noc_parameters.h"
#include "internal/tt-1xx/blackhole/noc/noc_parameters.h"
#include "api/dataflow/dataflow_api.h"
#include "api/debug/dprint_tile.h"
#include "ckernel.h"
#include "ckernel_defs.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = get_write_ptr<uint32_t>(0);
  ckernel::wait(1000);
  w[0] = NOC_MAX_TRANSACTION_ID;
  w[1] = CB_WR_PTR(0) == get_write_ptr(0);
  w[2] = CB_RD_PTR(0) == get_read_ptr(0);
  w[3] = cb_addr_shift;
  w[4] = CB_PAGE_SIZE(0);
  w[5] = CB_PAGE_COUNT(0);
  w[6] = CB_RD_SZ(0);
  w[7] = umodsi3_const_divisor<NUM_L1_BANKS>(130);
  w[8] = udivsi3_const_divisor<7>(50) * 100 + mulsi3(6, 7);
  w[9] = ckernel::TILE_HEIGHT * 10000 + ckernel::TILE_WIDTH * 100 + ckernel::FACE_HEIGHT;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 40);
  noc_async_write_barrier();
}
)";

void test_dataflow_names(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  auto v = run_reader_words(*layer, kDataflowNames, 10, {CB(0, "UInt32", 64, 2)});
  CHECK_EQ(v[0], 0xFu);  // the card's 16 transaction ids
  CHECK_EQ(v[1], 1u);
  CHECK_EQ(v[2], 1u);
  CHECK_EQ(v[3], 0u);
  CHECK_EQ(v[4], 64u);   // page bytes
  CHECK_EQ(v[5], 2u);    // pages
  CHECK_EQ(v[6], 128u);  // the CB's bytes
  CHECK_EQ(v[7], 130u % 64u);  // n150: 8 x 8 L1 banks
  CHECK_EQ(v[8], 742u);        // 50 / 7 = 7 (the card's multiply-shift), 6 * 7 = 42
  CHECK_EQ(v[9], 323216u);     // ckernel_defs.h's tile and face shape in a data-movement kernel
}
ZYX_TEST(headers, test_dataflow_names);

// api/compute/blank.h and the sentinel header by its path: a kernel that
// includes them copies a tile as any compute kernel does; its CBs named by
// the oldest names, tt::HlkOperand's (in0 is CB 0, out0 CB 16).
const char* kComputeHeaders = R"(
#include "api/compute/blank.h"
#include "api/compute/sentinel/compute_kernel_sentinel.h"
#include "api/compute/common.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
static_assert(tt::HlkOperand::param0 == 8 && tt::HlkOperand::intermed7 == 31, "HlkOperand's CB indices");
void kernel_main() {
  init_sfpu(tt::HlkOperand::in0, tt::HlkOperand::out0);
  cb_wait_front(tt::HlkOperand::in0, 1);
  tile_regs_acquire();
  copy_tile(tt::HlkOperand::in0, 0, 0);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(tt::HlkOperand::out0, 1);
  pack_tile(0, tt::HlkOperand::out0);
  cb_push_back(tt::HlkOperand::out0, 1);
  tile_regs_release();
  cb_pop_front(tt::HlkOperand::in0, 1);
}
)";

void test_compute_headers(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  // bf16 values: a copy is exact in every numerics mode (the card's srcA holds 19 bits).
  std::vector<float> in = round_bf16(randf(1024, -4, 4, 7));
  Run r;
  r.formats = {"Float32"};
  r.inputs = {f32_bytes(in)};
  r.compute = kComputeHeaders;
  std::vector<float> out = bytes_f32(run(*layer, r));
  CHECK_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); i++) CHECK_EQ(float_bits(out[i]), float_bits(in[i]));
}
ZYX_TEST(headers, test_compute_headers);

// DEVICE_PRINT's block-float elements (bf4_t, bf8_t: a shared exponent and
// one element, decoded as tt-metal's host decodes them), compile-time
// strings (CTSTR) and the card's DPRINT buffer size.
const char* kPrintTypes = R"(
#include "api/dataflow/dataflow_api.h"
#include "api/debug/device_print.h"
#include "api/debug/dprint.h"
static_assert(DPRINT_BUFFER_SIZE == 204);
void kernel_main() {
  DEVICE_PRINT("bf4 {} {} {} {}\n", bf4_t(128, 1), bf4_t(127, 0xB), bf4_t(130, 0), bf4_t(uint16_t(0x0780)));
  DEVICE_PRINT("bf8 {} {} {}\n", bf8_t(130, 3), bf8_t(127, 0x80), bf8_t(uint16_t(0x7f85)));
  DEVICE_PRINT("ct {}|{:>6}\n", CTSTR("Hello world!"), CTSTR("ab"));
}
)";

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
  for (const std::string& l : lines)
    if (l == line) return true;
  for (const std::string& l : lines) std::fprintf(stderr, "  printed: %s\n", l.c_str());
  return false;
}

void test_print_types(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "print_types";
  p.reader.source = kPrintTypes;
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  setenv("ZYX_EMU_DPRINT", "1", 1);
  auto lines = dprint_lines(capture_stderr([&] { layer.run(prog, {}, false); }));
  unsetenv("ZYX_EMU_DPRINT");
  layer.release(prog);
  std::string at = "dprint: core (0,0) riscv_0: ";
  // bf4: mantissa 001 -> 1.00 * 2^(128 - 127 - 2) = 0.5; 1011 (sign, 011)
  // -> -1.5 * 2^(127 - 127 - 1) = -0.75; a zero mantissa is 0; 0x07 with
  // exponent 0x80 -> 1.75 * 2^1 = 3.5.
  CHECK(has_line(lines, at + "bf4 0.5 -0.75 0 3.5"));
  // bf8: 0000011 -> 1.5 * 2^(130 - 127 - 5) = 0.375; 10000000 (sign)
  // -> -0; 0x7f with exponent 0x85 -> (2 - 2^-6) * 2^6 = 127.
  CHECK(has_line(lines, at + "bf8 0.375 -0 127"));
  CHECK(has_line(lines, at + "ct Hello world!|    ab"));
}
ZYX_TEST_ON(headers, test_print_types, "n150");

// moreh_common.hpp's read_line (the first row of each page: row 0 of faces
// 0 and 1) and generate_mask_tiles (row, column and both masks).
const char* kMorehLine = R"(
#include "api/dataflow/dataflow_api.h"
#include "ttnn/kernel/dataflow/moreh_common.hpp"
void kernel_main() {
  uint32_t in = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1);
  InterleavedAddrGen<true> s{.bank_base_address = in, .page_size = 2048};
  read_line(0, 2, s, 2);
  generate_mask_tiles(1, 5, 20);
  cb_wait_front(0, 2);
  cb_wait_front(1, 3);
  noc_async_write(get_read_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 128);
  noc_async_write(get_read_ptr(1), get_noc_addr_from_bank_id<true>(0, out + 128), 3 * 2048);
  noc_async_write_barrier();
}
)";

void test_moreh_read_line(DeviceLayer& layer) {
  std::vector<uint16_t> in(2 * 1024);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<uint16_t>(i);  // raw words, face order
  uint64_t in_id = upload(layer, in, 2048);
  const uint32_t out_bytes = 128 + 3 * 2048;
  uint64_t out_id = layer.alloc(out_bytes, dram_spec(out_bytes), nullptr);
  GroupProgram p;
  p.name = "moreh_read_line";
  p.params = {P("in", "global", "bf16"), P("out", "global_mut", "bf16")};
  p.reader.source = kMorehLine;
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1)};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(1, "Float16_b", 2048, 3), CB(2, "Float16_b", 2048, 1)};
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(in_id), Buf(out_id)}, false);
  layer.release(prog);
  auto out = download<uint16_t>(layer, out_id, out_bytes / 2);
  for (uint32_t t = 0; t < 2; t++)
    for (uint32_t k = 0; k < 32; k++) {
      uint32_t face = k / 16, col = k % 16;  // row 0 of face 0, then of face 1
      CHECK_EQ(out[t * 32 + k], static_cast<uint16_t>(t * 1024 + face * 256 + col));
    }
  const uint16_t one = 0x3f80;
  for (uint32_t h = 0; h < 32; h++)
    for (uint32_t w = 0; w < 32; w++) {
      uint32_t i = 64 + face_index(h, w);
      CHECK_EQ(out[i], h < 5 ? one : 0);
      CHECK_EQ(out[i + 1024], w < 20 ? one : 0);
      CHECK_EQ(out[i + 2048], h < 5 && w < 20 ? one : 0);
    }
  layer.free(in_id);
  layer.free(out_id);
}
ZYX_TEST_ON(headers, test_moreh_read_line, "n150");

// ---- the syntax check's TRISC builds ---------------------------------------

// A compute kernel that calls a header's function whose MATH(...) calls a
// function the header defines only for the math build (as sdpa's kernels
// and their compute_common.hpp do): the kernel's own source names no TRISC
// code, its include does; the single build cannot compile it, each TRISC
// build can.
const char* kTriscHeader = R"(
#pragma once
#ifdef TRISC_MATH
inline void math_only_step(uint32_t idst) { (void)idst; }
#endif
inline void step(uint32_t idst) { MATH(math_only_step(idst)); }
)";
const char* kTriscKernel = R"(
#include "api/compute/common.h"
#include "../common/math_only.hpp"
void kernel_main() { step(0); }
)";
const char* kPlainKernel = R"(
#include "api/compute/common.h"
void kernel_main() { (void)0; }
)";

void write_file(const std::string& path, const std::string& text) {
  for (size_t p = path.find('/', 1); p != std::string::npos; p = path.find('/', p + 1))
    mkdir(path.substr(0, p).c_str(), 0700);
  std::ofstream(path) << text;
}

// refers_to_triscs over a tree read through a lookup: the kernel's quoted
// include, resolved from its directory, reaches the TRISC code.
void test_trisc_tree_lookup(const std::string&) {
  std::map<std::string, std::string> tree = {{"ops/common/math_only.hpp", kTriscHeader},
                                             {"ops/kernels/plain.hpp", "#pragma once\n"}};
  auto lookup = [&](const std::string& p) -> const std::string* {
    auto it = tree.find(p);
    return it == tree.end() ? nullptr : &it->second;
  };
  CHECK(emu::refers_to_triscs(kTriscKernel, "ops/kernels/k.cpp", lookup));
  CHECK(!emu::refers_to_triscs(kPlainKernel, "ops/kernels/k.cpp", lookup));
  // The same include from another directory does not reach the header.
  CHECK(!emu::refers_to_triscs(kTriscKernel, "k.cpp", lookup));
}
ZYX_TEST(triscs, test_trisc_tree_lookup);

// check_syntax compiles what it is given: the single build of the kernel
// fails at the math-only name, each of its three TRISC builds compiles.
void test_check_syntax_trisc_builds(const std::string& cache) {
  emu::KernelBuilder builder(cache, emu::board_preset("n150"));
  std::string source = std::string(kPlainKernel) +
                       "#ifdef TRISC_MATH\ninline void math_only_step(uint32_t) {}\n#endif\n"
                       "void f() { MATH(math_only_step(0)); }\n";
  std::map<std::string, std::string> defines;
  emu::BuildSpec s;
  s.name = "trisc_check";
  s.processor = 2;
  s.source = &source;
  s.defines = &defines;
  bool ok = true;
  std::string diag = builder.check_syntax(s, {}, &ok);
  CHECK(!ok);
  CHECK(diag.find("math_only_step") != std::string::npos);
  for (int r = 1; r <= 3; r++) {
    s.trisc = r;
    diag = builder.check_syntax(s, {}, &ok);
    CHECK(ok);
  }
}
ZYX_TEST(triscs, test_check_syntax_trisc_builds);


// DEVICE_PRINT's format rules, as tt-metal's device_print/failures tests
// expect them: each bad format fails the build at its rule's function (the
// name the sweep's classifier looks for); formats that keep the rules build.
void test_device_print_rules(const std::string& cache) {
  emu::KernelBuilder builder(cache, emu::board_preset("n150"));
  auto check = [&](const std::string& call, bool* ok) {
    std::string source = "#include \"api/debug/device_print.h\"\nvoid kernel_main() { " + call + " }\n";
    std::map<std::string, std::string> defines;
    emu::BuildSpec s;
    s.name = "print_rules";
    s.processor = 0;
    s.source = &source;
    s.defines = &defines;
    return builder.check_syntax(s, {}, ok);
  };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"(DEVICE_PRINT("a {} b {0}\n", 1);)", "format_error_mixed_fields"},
      {R"(DEVICE_PRINT("{n = {0}}}\n", 42);)", "format_error_placeholder_syntax"},
      {R"(DEVICE_PRINT("{x}\n", 42);)", "format_error_placeholder_syntax"},
      {R"(DEVICE_PRINT("n = {1}\n", 42);)", "format_error_index"},
      {R"(DEVICE_PRINT("n = {0}, m = {0}\n", 42, 5);)", "format_error_unreferenced"},
      {R"(DEVICE_PRINT("{} {}\n", 42);)", "format_error_field_count"},
      {R"(DEVICE_PRINT("{} {}\n", 42, 5, 10);)", "format_error_field_count"},
      {R"(DEVICE_PRINT("{\n", 42);)", "format_error_placeholder_syntax"},
      {R"(DEVICE_PRINT("{:x\n", 42);)", "format_error_unbalanced_braces"},
  };
  for (const auto& [call, rule] : bad) {
    bool ok = true;
    std::string diag = check(call, &ok);
    CHECK(!ok);
    if (diag.find(rule) == std::string::npos) std::fprintf(stderr, "%s: want %s\n", call.c_str(), rule.c_str());
    CHECK(diag.find(rule) != std::string::npos);
  }
  for (const char* call : {R"(DEVICE_PRINT("{1} {0} {1:x} {{}}\n", 1, 2);)", R"(DEVICE_PRINT("{} {:>4} {:08b}\n", 1, 2, 3);)",
                           R"(DEVICE_PRINT("no fields }} {{\n");)"}) {
    bool ok = false;
    std::string diag = check(call, &ok);
    if (!ok) std::fprintf(stderr, "%s: %s\n", call, diag.c_str());
    CHECK(ok);
  }
}
ZYX_TEST(headers, test_device_print_rules);

// Runs the sweep's tool on path; its exit status.
int run_tool(const std::string& args) {
  std::string cmd = std::string(ZYX_EMU_KERNEL_CHECK) + " " + args + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// zyx-emu-kernel-check --tree: the kernel's include in the tree refers to
// the TRISC builds, so it checks the three builds (and passes); with
// ZYX_EMU_TRISC=1 it checks the single build, which fails.
void test_kernel_check_tool(const std::string& cache) {
  std::string dir = cache + "/sweep-tree";
  write_file(dir + "/ops/common/math_only.hpp", kTriscHeader);
  write_file(dir + "/ops/kernels/k.cpp", kTriscKernel);
  std::string inc = "--flag -iquote --flag " + dir + "/ops/kernels ";
  CHECK_EQ(run_tool("--compute " + inc + "--tree " + dir + " " + dir + "/ops/kernels/k.cpp"), 0);
  setenv("ZYX_EMU_TRISC", "1", 1);
  CHECK_EQ(run_tool("--compute " + inc + "--tree " + dir + " " + dir + "/ops/kernels/k.cpp"), 1);
  unsetenv("ZYX_EMU_TRISC");
  // Without the tree the include is not followed: the single build fails.
  CHECK_EQ(run_tool("--compute " + inc + dir + "/ops/kernels/k.cpp"), 1);
  // A FILE outside --tree is a usage error.
  CHECK_EQ(run_tool("--compute --tree " + dir + "/ops/common " + dir + "/ops/kernels/k.cpp"), 2);
  remove_tree(dir);
}
ZYX_TEST(triscs, test_kernel_check_tool);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "sweep_compat_"); }
