// Included by the emulator's generated wrapper before a kernel's source, as
// tt-metal's firmware includes the kernel API before a kernel: the whole
// API of the section is available even to kernels that include nothing.
#pragma once

#include "zyx_emu/common.h"
#if defined(ZYX_EMU_SECTION_COMPUTE)
#include "zyx_emu/compute.h"
#else
#include "zyx_emu/dataflow.h"
#endif

// The calls that would end the process. The builder links every kernel
// object with -Wl,--wrap=NAME for each (compiler.cpp), so the kernel's own
// calls to NAME land on __wrap_NAME here: the emulator stops the kernel and
// fails the run naming the core, the kernel and the call, and the runtime
// lives on. No atexit or at_quick_exit handler runs. Before the table is
// bound (a static initializer of the kernel) or outside a run,
// kernel_exit returns and the real function (__real_NAME) is called.
// Calls made inside the C and C++ libraries are not wrapped: the emulator's
// std::terminate handler and SIGABRT handler see those (fault_guard.cpp).
// Internal linkage is not possible (the linker looks the names up), so they
// are hidden (-fvisibility=hidden), and `used` keeps the ones a kernel does
// not call.
extern "C" {
[[noreturn]] void __real_abort(void) noexcept;
[[noreturn]] void __real_exit(int) noexcept;
[[noreturn]] void __real__exit(int) noexcept;
[[noreturn]] void __real__Exit(int) noexcept;
[[noreturn]] void __real_quick_exit(int) noexcept;
[[noreturn]] void __real___assert_fail(const char*, const char*, unsigned int, const char*) noexcept;
[[noreturn]] void __real___cxa_throw(void*, void*, void (*)(void*));

[[noreturn]] __attribute__((used)) void __wrap_abort(void) noexcept {
  if (zyx_emu_api_ptr) zyx_emu_api_ptr->kernel_exit(ZYX_EXIT_ABORT, 0, nullptr, nullptr, 0, nullptr);
  __real_abort();
}
[[noreturn]] __attribute__((used)) void __wrap_exit(int status) noexcept {
  if (zyx_emu_api_ptr) zyx_emu_api_ptr->kernel_exit(ZYX_EXIT_EXIT, status, nullptr, nullptr, 0, nullptr);
  __real_exit(status);
}
[[noreturn]] __attribute__((used)) void __wrap__exit(int status) noexcept {
  if (zyx_emu_api_ptr) zyx_emu_api_ptr->kernel_exit(ZYX_EXIT_POSIX_EXIT, status, nullptr, nullptr, 0, nullptr);
  __real__exit(status);
}
[[noreturn]] __attribute__((used)) void __wrap__Exit(int status) noexcept {
  if (zyx_emu_api_ptr) zyx_emu_api_ptr->kernel_exit(ZYX_EXIT_C_EXIT, status, nullptr, nullptr, 0, nullptr);
  __real__Exit(status);
}
[[noreturn]] __attribute__((used)) void __wrap_quick_exit(int status) noexcept {
  if (zyx_emu_api_ptr) zyx_emu_api_ptr->kernel_exit(ZYX_EXIT_QUICK, status, nullptr, nullptr, 0, nullptr);
  __real_quick_exit(status);
}
[[noreturn]] __attribute__((used)) void __wrap___assert_fail(const char* expr, const char* file, unsigned int line,
                                                              const char* function) noexcept {
  if (zyx_emu_api_ptr) zyx_emu_api_ptr->kernel_exit(ZYX_EXIT_ASSERT, 0, expr, file, line, function);
  __real___assert_fail(expr, file, line, function);
}
// Not an exit: the kernel's throw expressions pass here so that the
// emulator can name the throw site if the exception leaves the kernel.
[[noreturn]] __attribute__((used)) void __wrap___cxa_throw(void* obj, void* type, void (*dtor)(void*)) {
  if (zyx_emu_api_ptr) zyx_emu_api_ptr->note_throw();
  __real___cxa_throw(obj, type, dtor);
}
}

// The watcher's check of the kernel's own loads and stores through CB
// pointers (docs/emulator.md, "Debugging kernels"). With the watcher's cb
// check on, the builder compiles a kernel with GCC's outline address-check
// instrumentation (-fsanitize=kernel-address and the params of
// compiler.cpp), which makes each load and store of the kernel's code a
// call to one of these before it. Only addresses below 4 GiB, where the L1
// windows are, go on to the emulator, which checks them against the CB
// protocol; the stack, the heap and the object's globals are above it.
// The hooks themselves are not instrumented (no_sanitize_address), and the
// kernel API they call lives in the runtime, which is not.
#if defined(__SANITIZE_ADDRESS__)
#define ZYX_EMU_ACCESS_HOOK(name, size, write)                                           \
  __attribute__((used, no_sanitize_address)) void name(uintptr_t addr) {                \
    if (!(addr >> 32) && zyx_emu_api_ptr) zyx_emu_api_ptr->cb_access(addr, size, write); \
  }
extern "C" {
ZYX_EMU_ACCESS_HOOK(__asan_load1_noabort, 1, 0)
ZYX_EMU_ACCESS_HOOK(__asan_load2_noabort, 2, 0)
ZYX_EMU_ACCESS_HOOK(__asan_load4_noabort, 4, 0)
ZYX_EMU_ACCESS_HOOK(__asan_load8_noabort, 8, 0)
ZYX_EMU_ACCESS_HOOK(__asan_load16_noabort, 16, 0)
ZYX_EMU_ACCESS_HOOK(__asan_store1_noabort, 1, 1)
ZYX_EMU_ACCESS_HOOK(__asan_store2_noabort, 2, 1)
ZYX_EMU_ACCESS_HOOK(__asan_store4_noabort, 4, 1)
ZYX_EMU_ACCESS_HOOK(__asan_store8_noabort, 8, 1)
ZYX_EMU_ACCESS_HOOK(__asan_store16_noabort, 16, 1)
__attribute__((used, no_sanitize_address)) void __asan_loadN_noabort(uintptr_t addr, uintptr_t size) {
  if (!(addr >> 32) && zyx_emu_api_ptr) zyx_emu_api_ptr->cb_access(addr, size, 0);
}
__attribute__((used, no_sanitize_address)) void __asan_storeN_noabort(uintptr_t addr, uintptr_t size) {
  if (!(addr >> 32) && zyx_emu_api_ptr) zyx_emu_api_ptr->cb_access(addr, size, 1);
}
// The instrumentation checks a memcpy, memmove or memset of a constant
// size inline and leaves the others to the library; the builder links the
// kernel's own calls of those (-Wl,--wrap=) to these, which check both
// ranges first.
void* __real_memcpy(void*, const void*, size_t);
void* __real_memmove(void*, const void*, size_t);
void* __real_memset(void*, int, size_t);
__attribute__((used, no_sanitize_address)) void* __wrap_memcpy(void* dst, const void* src, size_t n) {
  if (n) {
    __asan_loadN_noabort(reinterpret_cast<uintptr_t>(src), n);
    __asan_storeN_noabort(reinterpret_cast<uintptr_t>(dst), n);
  }
  return __real_memcpy(dst, src, n);
}
__attribute__((used, no_sanitize_address)) void* __wrap_memmove(void* dst, const void* src, size_t n) {
  if (n) {
    __asan_loadN_noabort(reinterpret_cast<uintptr_t>(src), n);
    __asan_storeN_noabort(reinterpret_cast<uintptr_t>(dst), n);
  }
  return __real_memmove(dst, src, n);
}
__attribute__((used, no_sanitize_address)) void* __wrap_memset(void* dst, int c, size_t n) {
  if (n) __asan_storeN_noabort(reinterpret_cast<uintptr_t>(dst), n);
  return __real_memset(dst, c, n);
}
// Called before a call that does not return (the instrumentation's
// shadow-stack bookkeeping, which the emulator has none of).
__attribute__((used, no_sanitize_address)) void __asan_handle_no_return(void) {}
}
#undef ZYX_EMU_ACCESS_HOOK
#endif
