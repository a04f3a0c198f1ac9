// The fiber switch (fiber.hpp).
//
// zyx_emu_fiber_swap(save_sp, to_sp) pushes the callee-saved state on the
// running stack, stores the stack pointer in *save_sp, loads to_sp and pops
// the same frame from there, then returns into the other context. A new
// context's stack holds such a frame made by fiber_make, whose return
// address is zyx_emu_fiber_start: that calls entry(arg) with the stack
// 16-byte aligned, as a call from C++ would.
//
// x86-64 frame, from the saved stack pointer up: MXCSR (4 bytes), the x87
// control word (2 bytes, then 2 unused), r15, r14, r13, r12, rbx, rbp, the
// return address. A new context keeps entry in r12 and arg in r13.
//
// aarch64 frame (176 bytes): x19..x28, x29 (frame pointer), x30 (return
// address), d8..d15, FPCR, 8 unused. A new context keeps entry in x19 and arg
// in x20.
#include "fiber.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if !ZYX_EMU_FIBER_UCONTEXT

#if defined(__x86_64__)

#if defined(__CET__) && (__CET__ & 1)
#define ZYX_EMU_ENDBR "endbr64\n"
#else
#define ZYX_EMU_ENDBR ""
#endif

asm(R"(
  .text
  .p2align 4
  .globl zyx_emu_fiber_swap
  .hidden zyx_emu_fiber_swap
  .type zyx_emu_fiber_swap, @function
zyx_emu_fiber_swap:
  .cfi_startproc
  )" ZYX_EMU_ENDBR R"(
  pushq %rbp
  .cfi_adjust_cfa_offset 8
  .cfi_rel_offset %rbp, 0
  pushq %rbx
  .cfi_adjust_cfa_offset 8
  .cfi_rel_offset %rbx, 0
  pushq %r12
  .cfi_adjust_cfa_offset 8
  .cfi_rel_offset %r12, 0
  pushq %r13
  .cfi_adjust_cfa_offset 8
  .cfi_rel_offset %r13, 0
  pushq %r14
  .cfi_adjust_cfa_offset 8
  .cfi_rel_offset %r14, 0
  pushq %r15
  .cfi_adjust_cfa_offset 8
  .cfi_rel_offset %r15, 0
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  popq %r15
  .cfi_adjust_cfa_offset -8
  .cfi_restore %r15
  popq %r14
  .cfi_adjust_cfa_offset -8
  .cfi_restore %r14
  popq %r13
  .cfi_adjust_cfa_offset -8
  .cfi_restore %r13
  popq %r12
  .cfi_adjust_cfa_offset -8
  .cfi_restore %r12
  popq %rbx
  .cfi_adjust_cfa_offset -8
  .cfi_restore %rbx
  popq %rbp
  .cfi_adjust_cfa_offset -8
  .cfi_restore %rbp
  ret
  .cfi_endproc
  .size zyx_emu_fiber_swap, .-zyx_emu_fiber_swap

  .p2align 4
  .globl zyx_emu_fiber_start
  .hidden zyx_emu_fiber_start
  .type zyx_emu_fiber_start, @function
zyx_emu_fiber_start:
  .cfi_startproc
  .cfi_undefined %rip
  movq %r13, %rdi
  callq *%r12
  ud2
  .cfi_endproc
  .size zyx_emu_fiber_start, .-zyx_emu_fiber_start
)");

#elif defined(__aarch64__)

asm(R"(
  .text
  .p2align 4
  .globl zyx_emu_fiber_swap
  .hidden zyx_emu_fiber_swap
  .type zyx_emu_fiber_swap, %function
zyx_emu_fiber_swap:
  .cfi_startproc
  hint #34
  sub sp, sp, #176
  .cfi_def_cfa_offset 176
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  .cfi_offset x29, -96
  .cfi_offset x30, -88
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mrs x9, fpcr
  str x9, [sp, #160]
  mov x9, sp
  str x9, [x0]
  mov sp, x1
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
  ldr x9, [sp, #160]
  mrs x10, fpcr
  cmp x9, x10
  b.eq 1f
  msr fpcr, x9
1:
  add sp, sp, #176
  .cfi_def_cfa_offset 0
  ret
  .cfi_endproc
  .size zyx_emu_fiber_swap, .-zyx_emu_fiber_swap

  .p2align 4
  .globl zyx_emu_fiber_start
  .hidden zyx_emu_fiber_start
  .type zyx_emu_fiber_start, %function
zyx_emu_fiber_start:
  .cfi_startproc
  .cfi_undefined x30
  mov x0, x20
  blr x19
  brk #0
  .cfi_endproc
  .size zyx_emu_fiber_start, .-zyx_emu_fiber_start
)");

#else
#error "no assembly fiber switch for this architecture (fiber.hpp should have chosen ucontext)"
#endif

extern "C" void zyx_emu_fiber_start();

#endif  // !ZYX_EMU_FIBER_UCONTEXT

namespace zyx::emu {

#if ZYX_EMU_FIBER_UCONTEXT

namespace {
// makecontext passes int arguments only: the context's address in two halves.
void ucontext_start(unsigned lo, unsigned hi) {
  uintptr_t p = (static_cast<uintptr_t>(hi) << 16 << 16) | lo;
  FiberContext* c = reinterpret_cast<FiberContext*>(p);
  c->entry(c->arg);
  std::abort();  // entry must not return
}
}  // namespace

const char* fiber_switch_kind() { return "ucontext"; }

void fiber_make(FiberContext& ctx, void* stack, size_t size, void (*entry)(void*), void* arg) {
  getcontext(&ctx.uc);
  ctx.uc.uc_stack.ss_sp = stack;
  ctx.uc.uc_stack.ss_size = size;
  ctx.uc.uc_link = nullptr;
  ctx.entry = entry;
  ctx.arg = arg;
  uintptr_t p = reinterpret_cast<uintptr_t>(&ctx);
  makecontext(&ctx.uc, reinterpret_cast<void (*)()>(ucontext_start), 2, static_cast<unsigned>(p & 0xffffffffu),
              static_cast<unsigned>(p >> 16 >> 16));
}

#elif defined(__x86_64__)

const char* fiber_switch_kind() { return "asm-x86_64"; }

void fiber_make(FiberContext& ctx, void* stack, size_t size, void (*entry)(void*), void* arg) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  // The return address sits 8 below a 16-byte boundary, so that the start
  // routine runs with the stack aligned for its call; above it, two zero
  // words end frame-pointer walks.
  auto* ret = reinterpret_cast<uint64_t*>(top - 24);
  ret[1] = 0;
  ret[2] = 0;
  ret[0] = reinterpret_cast<uint64_t>(&zyx_emu_fiber_start);
  uint64_t* frame = ret - 7;
  uint32_t mxcsr;
  uint16_t fpcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpcw));
  std::memset(frame, 0, 7 * sizeof(uint64_t));
  std::memcpy(reinterpret_cast<char*>(frame), &mxcsr, 4);
  std::memcpy(reinterpret_cast<char*>(frame) + 4, &fpcw, 2);
  frame[4] = reinterpret_cast<uint64_t>(entry);  // r12
  frame[3] = reinterpret_cast<uint64_t>(arg);    // r13
  ctx.sp = frame;
}

#elif defined(__aarch64__)

const char* fiber_switch_kind() { return "asm-aarch64"; }

void fiber_make(FiberContext& ctx, void* stack, size_t size, void (*entry)(void*), void* arg) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  auto* frame = reinterpret_cast<uint64_t*>(top - 176);
  std::memset(frame, 0, 176);
  uint64_t fpcr;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  frame[0] = reinterpret_cast<uint64_t>(entry);  // x19
  frame[1] = reinterpret_cast<uint64_t>(arg);    // x20
  frame[10] = 0;                                 // x29
  frame[11] = reinterpret_cast<uint64_t>(&zyx_emu_fiber_start);  // x30
  frame[20] = fpcr;
  ctx.sp = frame;
}

#endif

}  // namespace zyx::emu
