// Fiber contexts: a stack of its own and a switch between two contexts of one
// thread (scheduler.cpp runs each kernel of a core as a fiber).
//
// On x86-64 (SysV) and aarch64 (AAPCS64) the switch is a few instructions of
// assembly (fiber.cpp): it saves the callee-saved registers and the
// floating-point control state (x86-64: MXCSR and the x87 control word;
// aarch64: d8-d15 and FPCR) on the running stack, stores the stack pointer
// and loads the other one. It makes no system call; the signal mask is the
// thread's and is neither saved nor restored. Elsewhere, under
// AddressSanitizer, ThreadSanitizer or with x86 shadow stacks
// (-fcf-protection=return/full), the switch is ucontext's swapcontext.
#pragma once

#include <cstddef>

#if !defined(ZYX_EMU_FIBER_UCONTEXT)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ZYX_EMU_FIBER_UCONTEXT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ZYX_EMU_FIBER_UCONTEXT 1
#endif
#endif
#endif
#if !defined(ZYX_EMU_FIBER_UCONTEXT)
#if defined(__x86_64__) && defined(__linux__) && !(defined(__CET__) && (__CET__ & 2))
#define ZYX_EMU_FIBER_UCONTEXT 0
#elif defined(__aarch64__) && defined(__linux__)
#define ZYX_EMU_FIBER_UCONTEXT 0
#else
#define ZYX_EMU_FIBER_UCONTEXT 1
#endif
#endif

#if ZYX_EMU_FIBER_UCONTEXT
#include <ucontext.h>
#endif

namespace zyx::emu {

#if ZYX_EMU_FIBER_UCONTEXT
struct FiberContext {
  ucontext_t uc{};
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
};
#else
struct FiberContext {
  void* sp = nullptr;  // the saved stack pointer while the context is not running
};
extern "C" void zyx_emu_fiber_swap(void** save_sp, void* to_sp);
#endif

// The switch in use, for messages and tests: "asm-x86_64", "asm-aarch64" or "ucontext".
const char* fiber_switch_kind();

// Prepares `ctx` to call entry(arg) on the stack [stack, stack + size) when
// it is first switched to. The new context starts with the calling thread's
// floating-point control state. `entry` must never return: it ends by
// switching to another context for good.
void fiber_make(FiberContext& ctx, void* stack, size_t size, void (*entry)(void*), void* arg);

// Saves the running context in `from` and resumes `to` (on the same thread).
// Returns when something switches back to `from`.
inline void fiber_switch(FiberContext& from, FiberContext& to) {
#if ZYX_EMU_FIBER_UCONTEXT
  swapcontext(&from.uc, &to.uc);
#else
  zyx_emu_fiber_swap(&from.sp, to.sp);
#endif
}

}  // namespace zyx::emu
