// The fault guard: a kernel's fault or a call that would end the process
// becomes a run error naming the core and kernel, and the layer keeps
// working.
//
// A kernel that dereferences a bad pointer faults on its fiber. The signal
// handler (on the worker's alternate stack) checks that the faulting thread
// is running a kernel fiber that armed the guard, records the fault and
// siglongjmps back to run_kernel_guarded on the fiber's own stack, which
// reports a run_error; the kernel's frames are abandoned (no destructors
// run). A fault anywhere else goes to the handler that was installed before
// ours, or kills the process as it would have without us.
//
// A kernel that would end the process leaves the same way (stop_kernel):
// its own calls to abort, exit, _exit, _Exit, quick_exit and a failed C
// assert's __assert_fail reach api_kernel_exit (kernel_prelude.h), while
// std::terminate (terminate_handler) and a SIGABRT the C or C++ library
// raises on the kernel's behalf (fault_handler) are caught process-wide and
// stop the kernel only when the calling thread is running one.
#include <cxxabi.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <ucontext.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <sstream>
#include <typeinfo>

#include "kernel_api.hpp"
#include "kernel_state.hpp"
#include "watcher.hpp"

namespace zyx::emu {

namespace {
struct sigaction g_prev_action[65];
std::once_flag g_fault_once;
std::terminate_handler g_prev_terminate = nullptr;
// SIGABRT: an abort raised inside the C or C++ library (their own calls to
// abort are not wrapped).
const int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Leaves the running kernel for run_kernel_guarded, which reports why.
[[noreturn]] void stop_kernel(KernelState& k) {
  k.fault_armed = 0;
  siglongjmp(k.fault_jmp, 1);
}

// Whether a SIGABRT was raised by the receiving thread itself (abort and
// raise send it with tgkill to the calling thread), not sent by another
// process (kill -ABRT may land on any thread, a worker running a kernel
// included: that keeps its default action).
bool raised_here(const siginfo_t* si) { return si && si->si_code == SI_TKILL && si->si_pid == getpid(); }

// SIGABRT on a thread running a kernel. The C library's abort raises it
// with none of its own locks held: glibc up to 2.40 releases abort's lock
// (and resets its stage) before raise, and 2.41 raises first and locks
// only if a handler returns. So leaving the handler by siglongjmp leaves
// abort's state as it was, and the next abort works. What called abort may
// hold locks, though: the stack protector, fortified string functions and
// libstdc++'s assertions hold none, but malloc may find heap corruption
// while it holds its arena's lock; the heap is damaged then anyway, and
// the error says where to look (docs/emulator.md, "Faults").
void fault_handler(int sig, siginfo_t* si, void* uctx) {
  Fiber* f = t_fiber;
  // A page strict NOC mode guards: an access beside an outstanding read's
  // destination (on any thread) opens it and retries.
  if (sig == SIGSEGV && si && si->si_code == SEGV_ACCERR &&
      noc_strict_guard_fault(f, reinterpret_cast<uintptr_t>(si->si_addr)))
    return;
  if (f && f->api.fault_armed && (sig != SIGABRT || raised_here(si))) {
    KernelState& k = f->api;
    k.fault_armed = 0;
    k.fault_sig = sig;
    k.fault_code = si ? si->si_code : 0;
    k.fault_addr = si ? reinterpret_cast<uintptr_t>(si->si_addr) : 0;
#if defined(__x86_64__)
    k.fault_pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    k.fault_pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(uctx)->uc_mcontext.pc);
#endif
    capture_site_in_handler(k);
    stop_kernel(k);
  }
  const struct sigaction& prev = g_prev_action[sig];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, si, uctx);
    return;
  }
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  if (sig == SIGABRT && !(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN) return;
  // As without us: the default action, when the instruction faults again
  // (a fault) or at once (SIGABRT, which nothing raises again; SA_NODEFER
  // delivers it inside this handler).
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (sig == SIGABRT) raise(sig);
}

std::string demangled(const char* name);

// An exception of the kernel's that left its entry point (called in the
// catch block that stopped it).
std::string describe_escaped_exception() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  std::string s = "an exception";
  if (type) s += " of type " + demangled(type->name());
  try {
    throw;
  } catch (const std::exception& e) {
    s += std::string(" (what(): ") + e.what() + ")";
  } catch (...) {
  }
  return s + " left the kernel (uncaught; on a card a kernel cannot throw)";
}

std::string demangled(const char* name) {
  int st = 0;
  char* dem = abi::__cxa_demangle(name, nullptr, nullptr, &st);
  std::string out = st == 0 && dem ? dem : name;
  std::free(dem);
  return out;
}

// Why std::terminate was called, as far as the C++ runtime tells.
std::string describe_terminate() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (!type) return "std::terminate was called";
  std::string s = "std::terminate was called while an exception of type " + demangled(type->name()) + " was active";
  try {
    std::rethrow_exception(std::current_exception());
  } catch (const std::exception& e) {
    s += std::string(" (what(): ") + e.what() + ")";
  } catch (...) {
  }
  return s + "; an exception that leaves a noexcept function, or is thrown while another unwinds, ends there";
}

// std::terminate on a thread running a kernel stops the kernel. The C++
// runtime calls the handler in ordinary code with no lock of its own held
// (GCC's personality routine calls it in the unwinder's second phase, after
// the frame lookup has let its locks go; clang's __clang_call_terminate
// from a landing pad), so leaving by siglongjmp is as safe as leaving a
// fault. The exception being handled stays on the fiber's list of caught
// exceptions (its handler never ends), which goes with the fiber (EhState):
// it costs the exception object. Anywhere else: the handler in place before
// ours.
void terminate_handler() {
  Fiber* f = t_fiber;
  if (f && f->api.fault_armed) {
    KernelState& k = f->api;
    try {
      k.exit_call = describe_terminate();
    } catch (...) {
      k.exit_call = "std::terminate was called";
    }
    capture_site(k);
    stop_kernel(k);
  }
  if (g_prev_terminate) g_prev_terminate();
  std::abort();
}

void install_fault_handler() {
  std::call_once(g_fault_once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = fault_handler;
    sigemptyset(&sa.sa_mask);
    // NODEFER: the handler leaves by siglongjmp without restoring the mask.
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    for (int s : kFaultSignals) sigaction(s, &sa, &g_prev_action[s]);
    g_prev_terminate = std::set_terminate(terminate_handler);
  });
}

constexpr size_t kAltStack = 64 * 1024;

void unblock_fault_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kFaultSignals) sigaddset(&set, s);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

// What a kernel called that would end the process (zyx_emu_exit_call).
std::string describe_exit_call(uint32_t call, int32_t status, const char* expr, const char* file, uint32_t line,
                               const char* function) {
  auto with_status = [status](const char* name) {
    return "the kernel called " + std::string(name) + "(" + std::to_string(status) + ")";
  };
  switch (call) {
    case ZYX_EXIT_ABORT: return "the kernel called abort()";
    case ZYX_EXIT_EXIT: return with_status("exit");
    case ZYX_EXIT_POSIX_EXIT: return with_status("_exit");
    case ZYX_EXIT_C_EXIT: return with_status("_Exit");
    case ZYX_EXIT_QUICK: return with_status("quick_exit");
    case ZYX_EXIT_ASSERT: {
      std::string s = std::string("assertion \"") + (expr ? expr : "?") + "\" failed at " + (file ? file : "?") +
                      ":" + std::to_string(line);
      return function && *function ? s + " in " + function : s;
    }
    default:
      return "the kernel called a function that ends the process (kernel_exit call " + std::to_string(call) + ")";
  }
}

// Says what a faulting address was, as the kernel author can act on it.
std::string describe_fault(const Fiber* f) {
  const KernelState& k = f->api;
  const CoreState* self = f->core;
  const RunState* rs = self->run;
  uintptr_t a = k.fault_addr;
  uint64_t l1_size = rs->board->l1_size;
  std::ostringstream s;
  if (k.fault_sig == SIGABRT)  // the pc is in the C library's raise: no help
    return "abort: SIGABRT raised inside the C or C++ library, by a failed library check (stack smashing, a "
           "fortified buffer overflow, heap corruption) or raise(SIGABRT); the library's message, if any, is on the "
           "runtime's stderr";
  const char* what = k.fault_sig == SIGSEGV ? "invalid memory access"
                     : k.fault_sig == SIGBUS ? "bus error"
                     : k.fault_sig == SIGFPE ? "arithmetic fault (integer division by zero?)"
                                             : "illegal instruction";
  s << what;
  if (k.fault_sig == SIGSEGV)
    if (std::string early = noc_strict_fault_text(f, a); !early.empty()) return early;
  if (k.fault_sig == SIGSEGV || k.fault_sig == SIGBUS) {
    s << " at address " << hex(a) << ": ";
    uintptr_t stack = reinterpret_cast<uintptr_t>(f->stack);
    uintptr_t arena = reinterpret_cast<uintptr_t>(rs->l1->core_base(0));
    uintptr_t arena_end = arena + uint64_t(rs->l1->cores()) * L1Arena::kWindow;
    if (stack && a >= stack && a < stack + kFiberStackGuard + 4096) {
      s << "the kernel overflowed its " << (kFiberStackSize - kFiberStackGuard) / 1024 << " KiB stack (large local arrays?)";
    } else if (a < L1Arena::kWindow) {
      s << "this is L1 offset " << hex(a) << " used as a pointer; in the emulator an L1 address can be "
        << "dereferenced only as the API hands it out (get_write_ptr, get_read_ptr, get_semaphore, get_arg_addr, "
        << "an L1 buffer's address arg), while plain offsets work in NOC calls";
    } else if (a >= arena && a < arena_end) {
      uint32_t k_core = static_cast<uint32_t>((a - arena) / L1Arena::kWindow);
      uint64_t off = (a - arena) % L1Arena::kWindow;
      if (k_core == self->index)
        s << "offset " << hex(off) << " is past the end of this core's " << l1_size << " bytes of L1";
      else
        s << "this is core " << k_core << "'s L1 (offset " << hex(off) << "), not this core's";
    } else {
      s << "outside this core's L1 (and any core's)";
    }
  }
  // The kernel's file:line comes from the watcher (watcher.hpp); the pc is
  // for a debugger.
  if (k.fault_pc) s << " [pc " << hex(k.fault_pc) << "]";
  return s.str();
}

}  // namespace

// Stops the kernel as a fault does (run_kernel_guarded reports it); outside
// a kernel it returns, and the kernel's wrapper makes the real call.
void api_kernel_exit(uint32_t call, int32_t status, const char* expr, const char* file, uint32_t line,
                     const char* function) {
  Fiber* f = t_fiber;
  if (!f || !f->api.fault_armed) return;
  f->api.exit_call = describe_exit_call(call, status, expr, file, line, function);
  capture_site(f->api);
  stop_kernel(f->api);
}

FaultStack::FaultStack() {
  install_fault_handler();
  mem_ = mmap(nullptr, kAltStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem_ == MAP_FAILED) {
    mem_ = nullptr;  // no recovery from a stack overflow on this thread; other faults still are
    return;
  }
  stack_t ss{};
  ss.ss_sp = mem_;
  ss.ss_size = kAltStack;
  ss.ss_flags = 0;
  installed_ = sigaltstack(&ss, &old_) == 0;
}

FaultStack::~FaultStack() {
  if (installed_) {
    if (old_.ss_flags & SS_DISABLE) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    } else {
      sigaltstack(&old_, nullptr);
    }
  }
  if (mem_) munmap(mem_, kAltStack);
}

void KernelState::reset() {
  args_in_l1 = 0;
  dprint_line.clear();
  dprint_tag = dprint_line_tag = 0;
  waypoint[0] = 0;
  std::memset(scratch, 0, sizeof scratch);
  cb_iface_valid.reset();
  fault_armed = 0;
  fault_sig = 0;
  fault_code = 0;
  fault_addr = 0;
  fault_pc = 0;
  exit_call.clear();
  site_n = 0;
  failing = false;
  last_dprint.clear();
  noc.reads = noc.writes = 0;
  noc.strict = noc.guard = false;
  stack_base = 0;
  stack_limit = 0;
  stack_globals = 0;
}

void run_kernel_guarded(Fiber* f) {
  KernelState& k = f->api;
  k.reset();
  if (sigsetjmp(k.fault_jmp, 0) == 0) {
    k.fault_armed = 1;
    try {
      watch_kernel_start(f, stack_pointer());
      f->kernel->run();
      noc_kernel_end(f);
    } catch (const Cancelled&) {
      k.fault_armed = 0;
      noc_strict_unguard(f);
      flush_dprint(f);
      throw;
    } catch (const Error&) {
      // The emulator's own error (kernel_fail kept its site; one thrown
      // elsewhere, a DRAM range check say, has none: forget any older one).
      k.fault_armed = 0;
      noc_strict_unguard(f);
      if (!k.failing) k.site_n = 0;
      flush_dprint(f);
      throw;
    } catch (...) {
      k.fault_armed = 0;
      noc_strict_unguard(f);
      flush_dprint(f);
      if (k.failing) throw;  // the emulator's report of a misuse (kernel_fail)
      // The kernel's own exception left its entry point (the site is its
      // throw's, kept by api_note_throw).
      std::string what = describe_escaped_exception();
      throw Error("run_error", what);
    }
    k.fault_armed = 0;
    flush_dprint(f);
    return;
  }
  // Back from a fault in the kernel: its frames are gone. The handler runs
  // with SA_NODEFER and an empty sa_mask and sigsetjmp saved no mask, so the
  // thread's mask is as it was; fiber switches neither save nor restore it
  // (fiber.hpp). Unblock the fault signals anyway, once, here: a blocked one
  // would turn the next kernel fault on this thread into the process's death.
  unblock_fault_signals();
  flush_dprint(f);
  std::string why = k.exit_call.empty() ? describe_fault(f) : k.exit_call;
  noc_strict_unguard(f);
  throw Error("run_error", why);
}

}  // namespace zyx::emu
