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
