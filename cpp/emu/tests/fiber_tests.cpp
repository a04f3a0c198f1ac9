// Tests of the fiber switch itself (src/fiber.hpp): callee-saved registers
// and the floating-point control state survive switches, a new fiber starts
// on an aligned stack with its argument, exceptions work on a fiber stack,
// and a scheduler-like round robin of fibers runs to the end. Prints the cost
// of a switch (not checked: the host is shared).
#include <sys/mman.h>

#include <cfenv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fiber.hpp"

using zyx::emu::fiber_make;
using zyx::emu::fiber_switch;
using zyx::emu::FiberContext;

namespace {

int g_failures = 0;

#define EXPECT(cond)                                                         \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      g_failures++;                                                          \
    }                                                                        \
  } while (0)

struct Stack {
  static constexpr size_t kSize = 256 * 1024;
  void* mem = nullptr;
  Stack() {
    mem = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
      std::perror("mmap");
      std::exit(1);
    }
  }
  ~Stack() { munmap(mem, kSize); }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
};

FiberContext g_main, g_a, g_b;

// ---- callee-saved registers ------------------------------------------------

constexpr int kRounds = 2000;
volatile uint64_t g_seed_a = 0x0123456789abcdefull, g_seed_b = 0xfedcba9876543210ull, g_seed_main = 0x5555aaaa3333ccccull;
bool g_a_done = false, g_b_done = false;
int g_a_bad = 0, g_b_bad = 0;

inline uint64_t val(uint64_t s, uint64_t i) { return (s ^ (i * 0x9e3779b97f4a7c15ull)) * (2 * i + 1); }
inline double dval(uint64_t s, uint64_t i) { return static_cast<double>(s >> (20 + i)) * 0.5 + static_cast<double>(i); }

// The probe: loads key + i into the i-th callee-saved register (x86-64:
// rbx, rbp, r12..r15; aarch64: x19..x29, then d8..d15 as integers), switches
// with zyx_emu_fiber_swap(save, to) and, once switched back, stores what the
// registers hold in out[]. It keeps the ABI itself (saves and restores them
// around all this), so the compiler's own register use plays no part.
extern "C" void zyx_test_swap_probe(void** save, void* to, uint64_t key, uint64_t* out);
#if !ZYX_EMU_FIBER_UCONTEXT && defined(__x86_64__)
constexpr int kProbeRegs = 6;
asm(R"(
  .text
  .p2align 4
  .globl zyx_test_swap_probe
  .type zyx_test_swap_probe, @function
zyx_test_swap_probe:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  pushq %rcx
  leaq 0(%rdx), %rbx
  leaq 1(%rdx), %rbp
  leaq 2(%rdx), %r12
  leaq 3(%rdx), %r13
  leaq 4(%rdx), %r14
  leaq 5(%rdx), %r15
  call zyx_emu_fiber_swap
  popq %rcx
  movq %rbx, 0(%rcx)
  movq %rbp, 8(%rcx)
  movq %r12, 16(%rcx)
  movq %r13, 24(%rcx)
  movq %r14, 32(%rcx)
  movq %r15, 40(%rcx)
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size zyx_test_swap_probe, .-zyx_test_swap_probe
)");
#elif !ZYX_EMU_FIBER_UCONTEXT && defined(__aarch64__)
constexpr int kProbeRegs = 19;
asm(R"(
  .text
  .p2align 4
  .globl zyx_test_swap_probe
  .type zyx_test_swap_probe, %function
zyx_test_swap_probe:
  sub sp, sp, #176
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  str x3, [sp, #160]
  add x19, x2, #0
  add x20, x2, #1
  add x21, x2, #2
  add x22, x2, #3
  add x23, x2, #4
  add x24, x2, #5
  add x25, x2, #6
  add x26, x2, #7
  add x27, x2, #8
  add x28, x2, #9
  add x29, x2, #10
  add x9, x2, #11
  fmov d8, x9
  add x9, x2, #12
  fmov d9, x9
  add x9, x2, #13
  fmov d10, x9
  add x9, x2, #14
  fmov d11, x9
  add x9, x2, #15
  fmov d12, x9
  add x9, x2, #16
  fmov d13, x9
  add x9, x2, #17
  fmov d14, x9
  add x9, x2, #18
  fmov d15, x9
  bl zyx_emu_fiber_swap
  ldr x3, [sp, #160]
  stp x19, x20, [x3, #0]
  stp x21, x22, [x3, #16]
  stp x23, x24, [x3, #32]
  stp x25, x26, [x3, #48]
  stp x27, x28, [x3, #64]
  str x29, [x3, #80]
  fmov x9, d8
  str x9, [x3, #88]
  fmov x9, d9
  str x9, [x3, #96]
  fmov x9, d10
  str x9, [x3, #104]
  fmov x9, d11
  str x9, [x3, #112]
  fmov x9, d12
  str x9, [x3, #120]
  fmov x9, d13
  str x9, [x3, #128]
  fmov x9, d14
  str x9, [x3, #136]
  fmov x9, d15
  str x9, [x3, #144]
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #176
  ret
  .size zyx_test_swap_probe, .-zyx_test_swap_probe
)");
#else
constexpr int kProbeRegs = 0;
#endif

// Twelve integers and ten doubles live across every switch: more than there
// are callee-saved registers, so the compiler keeps some there and the rest
// in the stack frame; the two fibers hold different values. The checks recompute them from a volatile seed.
#define LIVE_VALUES(seed)                                                                                   \
  uint64_t s0 = seed;                                                                                       \
  uint64_t v0 = val(s0, 0), v1 = val(s0, 1), v2 = val(s0, 2), v3 = val(s0, 3), v4 = val(s0, 4),             \
           v5 = val(s0, 5), v6 = val(s0, 6), v7 = val(s0, 7), v8 = val(s0, 8), v9 = val(s0, 9),             \
           v10 = val(s0, 10), v11 = val(s0, 11);                                                            \
  double d0 = dval(s0, 0), d1 = dval(s0, 1), d2 = dval(s0, 2), d3 = dval(s0, 3), d4 = dval(s0, 4),          \
         d5 = dval(s0, 5), d6 = dval(s0, 6), d7 = dval(s0, 7), d8 = dval(s0, 8), d9 = dval(s0, 9)

#define LIVE_OK(t)                                                                                            \
  (v0 == val(t, 0) && v1 == val(t, 1) && v2 == val(t, 2) && v3 == val(t, 3) && v4 == val(t, 4) &&            \
   v5 == val(t, 5) && v6 == val(t, 6) && v7 == val(t, 7) && v8 == val(t, 8) && v9 == val(t, 9) &&            \
   v10 == val(t, 10) && v11 == val(t, 11) && d0 == dval(t, 0) && d1 == dval(t, 1) && d2 == dval(t, 2) &&     \
   d3 == dval(t, 3) && d4 == dval(t, 4) && d5 == dval(t, 5) && d6 == dval(t, 6) && d7 == dval(t, 7) &&       \
   d8 == dval(t, 8) && d9 == dval(t, 9))

__attribute__((noinline)) void regs_a(void*) {
  LIVE_VALUES(g_seed_a);
  for (int r = 0; r < kRounds; r++) {
    fiber_switch(g_a, g_b);
    uint64_t t = g_seed_a;
    if (!LIVE_OK(t)) g_a_bad++;
  }
  g_a_done = true;
  fiber_switch(g_a, g_main);
  std::abort();
}

__attribute__((noinline)) void regs_b(void*) {
  LIVE_VALUES(g_seed_b);
  for (int r = 0; r < kRounds; r++) {
    uint64_t t = g_seed_b;
    if (!LIVE_OK(t)) g_b_bad++;
    fiber_switch(g_b, g_a);
  }
  g_b_done = true;
  fiber_switch(g_b, g_main);
  std::abort();
}

void test_registers() {
  Stack sa, sb;
  fiber_make(g_a, sa.mem, Stack::kSize, regs_a, nullptr);
  fiber_make(g_b, sb.mem, Stack::kSize, regs_b, nullptr);
  LIVE_VALUES(g_seed_main);
  fiber_switch(g_main, g_a);  // A and B ping-pong; A comes back when done
  EXPECT(g_a_done);
  EXPECT(!g_b_done);
  uint64_t t = g_seed_main;
  EXPECT(LIVE_OK(t));
  fiber_switch(g_main, g_b);  // B leaves its loop
  EXPECT(g_b_done);
  EXPECT(g_a_bad == 0);
  EXPECT(g_b_bad == 0);
  t = g_seed_main;
  EXPECT(LIVE_OK(t));
}

#if !ZYX_EMU_FIBER_UCONTEXT
int g_probe_bad = 0;
bool g_probe_a_done = false, g_probe_b_done = false;

void probe_check(uint64_t key, const uint64_t* out) {
  for (int i = 0; i < kProbeRegs; i++)
    if (out[i] != key + static_cast<uint64_t>(i)) {
      if (g_probe_bad++ < 5)
        std::fprintf(stderr, "register %d after a switch: 0x%llx, want 0x%llx\n", i,
                     static_cast<unsigned long long>(out[i]), static_cast<unsigned long long>(key + i));
    }
}

void probe_a(void*) {
  uint64_t out[32] = {};
  for (int r = 0; r < kRounds; r++) {
    uint64_t key = 0xa0000000ull + 64ull * r;
    zyx_test_swap_probe(&g_a.sp, g_b.sp, key, out);
    probe_check(key, out);
  }
  g_probe_a_done = true;
  fiber_switch(g_a, g_main);
  std::abort();
}

void probe_b(void*) {
  uint64_t out[32] = {};
  for (int r = 0; r < kRounds; r++) {
    uint64_t key = 0xb0000000ull + 64ull * r;
    zyx_test_swap_probe(&g_b.sp, g_a.sp, key, out);
    probe_check(key, out);
  }
  g_probe_b_done = true;
  fiber_switch(g_b, g_main);
  std::abort();
}

// Every callee-saved register, set to a different value in each of three
// contexts, is each context's own after switches.
void test_register_probe() {
  Stack sa, sb;
  fiber_make(g_a, sa.mem, Stack::kSize, probe_a, nullptr);
  fiber_make(g_b, sb.mem, Stack::kSize, probe_b, nullptr);
  uint64_t out[32] = {};
  zyx_test_swap_probe(&g_main.sp, g_a.sp, 0xc0000000ull, out);  // A and B ping-pong
  probe_check(0xc0000000ull, out);
  EXPECT(g_probe_a_done);
  zyx_test_swap_probe(&g_main.sp, g_b.sp, 0xd0000000ull, out);  // B leaves its loop
  probe_check(0xd0000000ull, out);
  EXPECT(g_probe_b_done);
  EXPECT(g_probe_bad == 0);
}
#endif

// ---- floating-point control state ------------------------------------------

volatile float g_f1 = 1.0f, g_ftiny = 0x1p-40f;
volatile double g_d1 = 1.0, g_dtiny = 0x1p-80;
#if defined(__x86_64__)
volatile long double g_l1 = 1.0L, g_ltiny = 0x1p-100L;
#endif

// Which way 1 + tiny rounds, in float and double (SSE on x86-64) and long
// double (the x87 unit on x86-64): +1 up, 0 to nearest (or down/zero), and
// -2 when the units disagree.
int rounding_seen() {
  float f = g_f1 + g_ftiny;
  double d = g_d1 + g_dtiny;
  int fu = f > 1.0f, du = d > 1.0;
  int lu = du;
#if defined(__x86_64__)
  long double l = g_l1 + g_ltiny;
  lu = l > 1.0L;
#endif
  if (fu != du || du != lu) return -2;
  return du;
}

int g_fp_a = -9, g_fp_b = -9, g_fp_b_mode = -9, g_fp_a_mode = -9, g_fp_a2 = -9, g_fp_b_end = -9;

void fp_a(void*) {
  std::fesetround(FE_UPWARD);
  g_fp_a = rounding_seen();  // 1: this fiber rounds up
  fiber_switch(g_a, g_b);
  g_fp_a_mode = std::fegetround();
  g_fp_a2 = rounding_seen();  // still up, whatever B did
  std::fesetround(FE_TONEAREST);
  fiber_switch(g_a, g_main);
  std::abort();
}

void fp_b(void*) {
  g_fp_b_mode = std::fegetround();
  g_fp_b = rounding_seen();  // 0: B was made while the thread rounded to nearest
  std::fesetround(FE_TOWARDZERO);
  fiber_switch(g_b, g_a);
  g_fp_b_end = std::fegetround();
  std::fesetround(FE_TONEAREST);
  fiber_switch(g_b, g_main);
  std::abort();
}

void test_fp_control() {
  Stack sa, sb;
  EXPECT(std::fegetround() == FE_TONEAREST);
  fiber_make(g_a, sa.mem, Stack::kSize, fp_a, nullptr);
  fiber_make(g_b, sb.mem, Stack::kSize, fp_b, nullptr);
  fiber_switch(g_main, g_a);
  EXPECT(g_fp_a == 1);
  EXPECT(g_fp_b_mode == FE_TONEAREST);
  EXPECT(g_fp_b == 0);
  EXPECT(g_fp_a_mode == FE_UPWARD);
  EXPECT(g_fp_a2 == 1);
  EXPECT(std::fegetround() == FE_TONEAREST);
  EXPECT(rounding_seen() == 0);
  fiber_switch(g_main, g_b);
  EXPECT(g_fp_b_end == FE_TOWARDZERO);
  EXPECT(std::fegetround() == FE_TONEAREST);
  EXPECT(rounding_seen() == 0);
}

// ---- start, stack alignment, exceptions ------------------------------------

struct StartProbe {
  int arg_seen = 0;
  bool aligned = false, printed = false, caught = false, caught_after_switch = false;
};

__attribute__((noinline)) bool frame_aligned() {
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) % 16 == 0;
}

__attribute__((noinline)) void thrower(int v) { throw std::runtime_error("fiber " + std::to_string(v)); }

void start_entry(void* arg) {
  auto* p = static_cast<StartProbe*>(arg);
  p->arg_seen = 42;
  p->aligned = frame_aligned();
  char buf[64];
  volatile double pi = 3.14159265;
  std::snprintf(buf, sizeof buf, "%.3f %d", static_cast<double>(pi), 7);  // varargs with SSE registers
  p->printed = std::strcmp(buf, "3.142 7") == 0;
  try {
    thrower(1);
  } catch (const std::runtime_error& e) {
    p->caught = std::string(e.what()) == "fiber 1";
  }
  fiber_switch(g_a, g_main);
  try {
    thrower(2);
  } catch (const std::runtime_error& e) {
    p->caught_after_switch = std::string(e.what()) == "fiber 2";
  }
  fiber_switch(g_a, g_main);
  std::abort();
}

void test_start() {
  Stack s;
  StartProbe p;
  fiber_make(g_a, s.mem, Stack::kSize, start_entry, &p);
  fiber_switch(g_main, g_a);
  EXPECT(p.arg_seen == 42);
  EXPECT(p.aligned);
  EXPECT(p.printed);
  EXPECT(p.caught);
  EXPECT(!p.caught_after_switch);
  fiber_switch(g_main, g_a);
  EXPECT(p.caught_after_switch);
}

// ---- round robin ------------------------------------------------------------

constexpr int kFibers = 3, kSteps = 100000;
FiberContext g_rr[kFibers];
int g_rr_count[kFibers];
int g_rr_last = -1, g_rr_order_bad = 0;

void rr_entry(void* arg) {
  int me = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  for (int i = 0; i < kSteps; i++) {
    if (g_rr_last != (me + kFibers - 1) % kFibers && !(me == 0 && g_rr_last == -1)) g_rr_order_bad++;
    g_rr_last = me;
    g_rr_count[me]++;
    fiber_switch(g_rr[me], g_main);
  }
  fiber_switch(g_rr[me], g_main);
  std::abort();
}

void test_round_robin() {
  Stack s[kFibers];
  for (int i = 0; i < kFibers; i++)
    fiber_make(g_rr[i], s[i].mem, Stack::kSize, rr_entry, reinterpret_cast<void*>(static_cast<intptr_t>(i)));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kSteps; i++)
    for (int f = 0; f < kFibers; f++) fiber_switch(g_main, g_rr[f]);
  auto t1 = std::chrono::steady_clock::now();
  for (int f = 0; f < kFibers; f++) {
    EXPECT(g_rr_count[f] == kSteps);
    fiber_switch(g_main, g_rr[f]);  // each leaves its loop
  }
  EXPECT(g_rr_order_bad == 0);
  double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * kSteps * kFibers);
  std::printf("fiber switch (%s): %.1f ns per switch\n", zyx::emu::fiber_switch_kind(), ns);
}

}  // namespace

int main() {
  const char* kind = zyx::emu::fiber_switch_kind();
#if ZYX_EMU_FIBER_UCONTEXT
  EXPECT(std::strcmp(kind, "ucontext") == 0);
#else
  EXPECT(std::strncmp(kind, "asm-", 4) == 0);
#endif
  test_registers();
#if !ZYX_EMU_FIBER_UCONTEXT
  test_register_probe();
#endif
  test_fp_control();
  test_start();
  test_round_robin();
  if (g_failures) {
    std::fprintf(stderr, "fiber tests: %d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("fiber tests: ok\n");
  return 0;
}
