// L1 pointers: a kernel that dereferences an L1 address (from
// get_write_ptr, get_semaphore, get_arg_addr) reads and writes its own
// core's L1, as on a card; a wild pointer (an L1 offset used as a pointer,
// past the end of L1, outside any L1, a stack overflow, a division by zero)
// is a run_error naming the core and section, and the layer keeps working.
#include <signal.h>

#include <cstdlib>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

GroupProgram base_program() {
  GroupProgram p;
  p.name = "l1";
  p.params = {P("src", "global", "u32"), P("out", "global_mut", "u32")};
  p.compute.source = "void kernel_main() {}";
  p.writer.source = "void kernel_main() {}";
  p.cbs = {CB(0, "UInt32", 64, 2), CB(1, "UInt32", 64, 1)};
  return p;
}

// tt-metal's add_2_integers_in_riscv pattern: read two integers from DRAM
// into L1, add them through plain pointers, write the sum back. The L1
// addresses are CB pages, a semaphore word and the kernel's own args.
const char* kAddThroughPointers = R"(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t src = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1);
  uint32_t core = get_arg_val<uint32_t>(2);
  uint32_t a_l1 = get_write_ptr(0), b_l1 = a_l1 + 4, sum_l1 = get_write_ptr(1);
  // Each core's pair at its own 64 bytes: a DRAM read keeps the NOC's
  // alignment rule (the DRAM and L1 addresses agree modulo 32, 64 on
  // Blackhole).
  noc_async_read(get_noc_addr_from_bank_id<true>(0, src + 64 * core), a_l1, 4);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, src + 64 * core + 4), b_l1, 4);
  noc_async_read_barrier();
  uint32_t* a = (uint32_t*)a_l1;
  uint32_t* b = (uint32_t*)b_l1;
  uint32_t* sum = (uint32_t*)sum_l1;
  *sum = *a + *b;
  // A semaphore word through its pointer, and the runtime args through
  // get_arg_addr: both are this core's L1.
  volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(3));
  *sem = *sum * 2;
  volatile uint32_t* args = reinterpret_cast<volatile uint32_t*>(get_arg_addr(0));
  sum[1] = *sem;
  sum[2] = args[2];
  // The args are L1: the NOC can send them, and the kernel can write them.
  args[3] = 0xabc0 + core;
  noc_async_write(static_cast<uint32_t>(get_arg_addr(3)), get_noc_addr(sum_l1 + 12), 4);
  noc_async_write_barrier();
  noc_async_write(sum_l1, get_noc_addr_from_bank_id<true>(0, out + 16 * core), 16);
  noc_async_write_barrier();
}
)";

void test_pointers(DeviceLayer& layer) {
  GroupProgram p = base_program();
  p.reader.source = kAddThroughPointers;
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), L("core_index"), C(0)};
  const uint32_t cores = 6;
  std::vector<uint32_t> in(16 * cores);
  for (uint32_t i = 0; i < in.size(); i++) in[i] = 1000 * (i + 1) + 7 * i;
  // One page per buffer: everything lies in bank 0.
  uint64_t src = upload(layer, in, in.size() * 4);
  uint64_t out = layer.alloc(16 * cores, dram_spec(16 * cores), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 2, 3));
  layer.run(prog, {Buf(src), Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 4 * cores);
  for (uint32_t c = 0; c < cores; c++) {
    uint32_t want = in[16 * c] + in[16 * c + 1];
    CHECK_EQ(got[4 * c], want);
    CHECK_EQ(got[4 * c + 1], 2 * want);
    CHECK_EQ(got[4 * c + 2], c);
    CHECK_EQ(got[4 * c + 3], 0xabc0 + c);
  }
  layer.release(prog);
  layer.free(src);
  layer.free(out);
}
ZYX_TEST(l1, test_pointers);
// Blackhole's L1 is larger; the same pointer rules hold.
ZYX_TEST_ON(l1, test_pointers, "p150a");

// Core (0,0) writes a pattern into its L1 through a pointer; core (0,1)
// reads it over the NOC from core (0,0): a pointer reaches that core's L1.
const char* kPointerThenNoc = R"(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0), col = get_arg_val<uint32_t>(1);
  uint32_t l1 = get_write_ptr(0);
  volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
  if (col == 0) {
    uint32_t* w = reinterpret_cast<uint32_t*>(l1);
    for (int i = 0; i < 8; i++) w[i] = 0x1000 * (i + 1) + my_x[0];
    noc_semaphore_inc(get_noc_addr(my_x[0] + 1, my_y[0], get_semaphore(0)), 1);
  } else {
    noc_semaphore_wait(sem, 1);
    noc_async_read(get_noc_addr(my_x[0] - 1, my_y[0], l1), get_write_ptr(1), 32);
    noc_async_read_barrier();
    noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, out), 32);
  }
}
)";

void test_cross_core(DeviceLayer& layer) {
  GroupProgram p = base_program();
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kPointerThenNoc;
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_col")};
  uint64_t out = layer.alloc(32, dram_spec(32), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, 2));
  layer.run(prog, {Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 8);
  for (uint32_t i = 0; i < 8; i++) CHECK_EQ(got[i], 0x1000 * (i + 1) + 1);
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(l1, test_cross_core);

// A run that must fail with a run_error mentioning every `want`; the same
// layer then runs a good program.
void expect_fault(DeviceLayer& layer, const std::string& reader, std::initializer_list<const char*> want,
                  uint32_t rows = 1, uint32_t cols = 1) {
  GroupProgram p = base_program();
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = reader;
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index")};
  uint64_t out = layer.alloc(64, dram_spec(64), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, rows, cols));
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  std::string msg = expect_error("run_error", [&] { layer.run(prog, {Buf(out)}, false); });
  // The recovery leaves this thread's signal mask as it was (a fault signal
  // left blocked would make the next kernel fault kill the process).
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  for (int sig = 1; sig < NSIG; sig++)
    if (sigismember(&before, sig) != sigismember(&after, sig))
      throw Failure("signal " + std::to_string(sig) + " is " + (sigismember(&after, sig) ? "blocked" : "unblocked") +
                    " after a kernel fault");
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    if (sigismember(&after, sig)) throw Failure("fault signal " + std::to_string(sig) + " blocked after a fault");
  if (std::getenv("ZYX_TEST_VERBOSE")) std::fprintf(stderr, "fault: %s\n", msg.c_str());
  for (const char* w : want)
    if (msg.find(w) == std::string::npos) throw Failure("fault message lacks \"" + std::string(w) + "\": " + msg);
  layer.release(prog);
  // The layer is usable: a good run on the same layer.
  GroupProgram ok = base_program();
  ok.params = {P("src", "global", "u32"), P("out", "global_mut", "u32")};
  ok.reader.source = kAddThroughPointers;
  ok.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), L("core_index"), C(0)};
  std::vector<uint32_t> in = {40, 2};
  uint64_t src = upload(layer, in, 8);
  uint64_t good = layer.compile(one_group_program(ok, 1, 1));
  layer.run(good, {Buf(src), Buf(out)}, false);
  CHECK_EQ(download<uint32_t>(layer, out, 1)[0], 42u);
  layer.release(good);
  layer.free(src);
  layer.free(out);
}

void test_wild_pointers(DeviceLayer& layer) {
  // An L1 offset (what a host computes) used as a pointer.
  expect_fault(layer, R"(
void kernel_main() { *reinterpret_cast<volatile uint32_t*>(uintptr_t(0x19000)) = 1; }
)",
               {"core (0,0) reader (riscv_0)", "invalid memory access at address 0x19000", "L1 offset 0x19000"});
  // Past the end of this core's L1 (inside its 2 MiB window).
  expect_fault(layer, R"(
void kernel_main() {
  volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  p[(1536 * 1024) / 4] = 1;
}
)",
               {"reader (riscv_0)", "past the end of this core's 1499136 bytes of L1"});
  // Far outside any L1, on one of several cores while the others run.
  expect_fault(layer, R"(
void kernel_main() {
  if (get_arg_val<uint32_t>(1) == 4) *reinterpret_cast<volatile uint64_t*>(uintptr_t(0x7f0000001000ull)) = 5;
}
)",
               {"core (1,1) reader (riscv_0)", "outside this core's L1"}, 2, 3);
  // A stack overflow (the guard page below the kernel's stack).
  expect_fault(layer, R"(
__attribute__((noinline)) uint32_t deep(volatile uint32_t n) {
  volatile char pad[4096];
  pad[0] = static_cast<char>(n);
  return n ? deep(n - 1) + pad[0] : 0;
}
void kernel_main() { (void)deep(1u << 20); }
)",
               {"reader (riscv_0)", "overflowed its"});
  // An integer division by zero.
  expect_fault(layer, R"(
void kernel_main() {
  volatile uint32_t zero = get_arg_val<uint32_t>(1);
  volatile uint32_t x = 7u / zero;
  (void)x;
}
)",
               {"reader (riscv_0)", "arithmetic fault"});
}
ZYX_TEST(l1, test_wild_pointers);

}  // namespace
