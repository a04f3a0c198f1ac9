// The watcher (docs/emulator.md, "Debugging kernels"): which checks are on
// for a run, and where in a kernel's source a failure happened.
//
// A kernel object is built with line tables (-g1). When a kernel fails (an
// API misuse reported through kernel_fail, a fault, a call that would end
// the process, an exception that leaves it), the return addresses on its
// stack are kept (capture_site); the report then names the first frame in
// the kernel's own source (the kernel file or one of the program's include
// files), found with addr2line over the kernel object (symbolize).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zyx::emu {

struct Fiber;
struct KernelState;
struct KernelObject;
struct RunState;
struct Program;
struct CorePlan;
struct Buffer;

// The checks of one run (ZYX_EMU_WATCHER; all on by default).
struct WatchConfig {
  bool args = true;  // arg indices past those the host set
  bool noc = true;   // NOC transfers against the program's allocations
  bool cb = true;    // the circular-buffer protocol
  // The kernels' own loads and stores through CB pointers held to the CB
  // protocol (with cb; no-cb-access turns this part off). Kernels are built
  // for it (instrumented) when the watcher allows it at their build.
  bool cb_access = true;
  bool race = true;  // two cores writing the same DRAM bytes in one run
  bool stack = true;  // a kernel's stack deeper than its processor's on a card
  // Strict NOC mode (off by default; also per kernel, with the define
  // ZYX_EMU_STRICT_NOC): a NOC read's data lands at its barrier, and data
  // used or a write's source changed before the barrier is an error.
  bool strict_noc = false;
  // strict-noc-loads (also the kernel define ZYX_EMU_STRICT_NOC_LOADS):
  // strict NOC mode, and a kernel's own loads and stores of an outstanding
  // read's destination are errors (its host pages are guarded).
  bool strict_noc_loads = false;
  std::string unknown;  // words of ZYX_EMU_WATCHER it does not know (warned about)
  // From ZYX_EMU_WATCHER: unset, "1" or "on": every check; "0" or "off":
  // none; else a comma-separated list of words: "no-<check>" turns a check
  // off (no-args, no-noc, no-cb, no-cb-access, no-race, no-stack), "strict-noc" turns
  // strict NOC mode on, "strict-noc-loads" that and the read guard.
  static WatchConfig from_env();
};

// What a run's kernels may reach over the NOC (the watcher's noc check):
// per core, the L1 regions the program allocated there and the reserved
// regions a kernel may use; per DRAM bank, the run's buffers there.
struct MemRegion {
  enum Kind : uint8_t { Reserved, Zeros, Args, Semaphores, CB, Buffer } kind = Reserved;
  uint64_t begin = 0, end = 0;
  uint32_t id = 0;     // CB index; buffer param
  uint64_t pages = 0;  // Buffer in a DRAM bank: its pages there
};
struct DramWrites;  // who wrote which DRAM bytes in the run (noc_watch.cpp)
struct NocWatch {
  std::vector<std::vector<MemRegion>> l1;    // by core index (row * cols + col)
  std::vector<std::vector<MemRegion>> dram;  // by bank
  std::vector<std::string> param_names;
  std::vector<std::shared_ptr<const Buffer>> bufs;  // the run's buffers by param
  std::shared_ptr<DramWrites> writes;               // the race check's record
};
// Builds rs.noc_watch for a run of prog with its buffers, all but the L1
// regions of the cores where a kernel runs: noc_watch_core_l1 adds those as
// the workers set each core up (program_run.cpp), in parallel.
void build_noc_watch(RunState& rs, const Program& prog, const std::vector<std::shared_ptr<const Buffer>>& bufs);
// The L1 regions of core `core` (its plan cp, or null for a core the
// program does not use) for the NOC check, after build_noc_watch.
void noc_watch_core_l1(RunState& rs, const Program& prog, const CorePlan* cp, uint32_t core);
// The checks, from a kernel's NOC call (they fail the kernel with the
// watcher's message): [off, off + size) of core `core`'s L1 (`role`: what
// the range is to the call, e.g. "destination"; write: the call writes it),
// or of DRAM bank `bank`.
void noc_check_l1(uint32_t core, uint64_t off, uint64_t size, bool write, const char* op, const char* role);
void noc_check_dram(uint32_t bank, uint64_t addr, uint64_t size, const char* op);
// The race check, from a kernel's NOC write of [addr, addr + size) of DRAM
// bank `bank`: records the calling core as its writer, and fails the
// kernel when another core wrote any of those bytes earlier in the run and
// no semaphore handshake ordered that write before this one.
void noc_note_dram_write(uint32_t bank, uint64_t addr, uint64_t size, const char* op);
// Happens-before for the race check: a NOC write, atomic or inline write by
// the calling core into the L1 word at `off` of core `core` that a kernel may
// wait on (a release; call it before the word changes), and a wait on that
// word that returned (an acquire).
void noc_note_release(uint32_t core, uint64_t off);
void noc_note_acquire(uint32_t core, uint64_t off);
// The NOC's alignment rule: a transfer's local and remote addresses agree
// modulo the alignment of the remote memory and direction.
void noc_check_alignment(uint64_t local, uint64_t remote, bool remote_dram, bool read, const char* op);

// The calling thread's stack pointer.
inline uintptr_t stack_pointer() {
#if defined(__x86_64__)
  uintptr_t sp;
  asm volatile("mov %%rsp, %0" : "=r"(sp));
  return sp;
#elif defined(__aarch64__)
  uintptr_t sp;
  asm volatile("mov %0, sp" : "=r"(sp));
  return sp;
#else
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#endif
}

// The bytes of a kernel object's own mutable globals (its .data and .bss
// objects, less the emulator's prelude and the toolchain's), from the ELF
// symbol table of the open object `fd`; 0 when it cannot be read.
uint32_t kernel_globals_bytes(int fd);

// At a kernel's start (run_kernel_guarded, with its stack pointer as it
// calls the kernel): the kernel's strict NOC mode and its stack's base and
// limit (the stack check).
void watch_kernel_start(Fiber* f, uintptr_t sp);
// The stack check, from a kernel's API call (`frame`: the API function's
// frame address, just below the kernel's frames): fails the kernel when its
// own frames are deeper than its processor's local data memory on a card of
// the run's architecture, where the stack lives.
void check_stack_depth(uintptr_t frame, const char* op);
#define ZYX_EMU_CHECK_STACK(op) check_stack_depth(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)), op)

// Strict NOC mode (noc_strict.cpp), for a kernel whose api.noc.strict is
// set. A read it issues into [off, off + size) of its core's L1 (host
// pointer `local`): returns the buffer the caller copies the read's data
// into now; the data lands in L1 at the read barrier. A write (or
// multicast) from [off, off + size): its source must not be the
// destination of an outstanding read, and is kept to compare at the write
// barrier. `site`: the kernel's return address of the call.
uint8_t* noc_strict_read(uint8_t* local, uint64_t off, uint32_t size, uintptr_t site, const char* op);
void noc_strict_write(const uint8_t* local, uint64_t off, uint32_t size, uintptr_t site, const char* op);
// Whether [off, off + size) of the calling core's L1 is the destination of a
// read still outstanding (any kernel of the core); fails the kernel if so.
// `what` says what uses it, e.g. "cb_push_back(0, 1): the pages".
void noc_check_no_pending_read(uint64_t off, uint64_t size, const std::string& what);
// The same for the source of a write not yet flushed (cb_pop_front).
void noc_check_no_pending_write(uint64_t off, uint64_t size, const std::string& what);
// A NOC barrier (ZYX_EMU_NOC_READS / WRITES), and a kernel's normal end
// (outstanding reads land).
void noc_strict_barrier(uint32_t what);
void noc_kernel_end(Fiber* f);
// The host pages of an outstanding read's destination are inaccessible
// until it lands. From the fault handler (allocates nothing), for an access
// fault at `a` on any thread (f: the kernel it runs, or null): opens the
// page and returns true when `a` is in some core's L1 but not in the
// destination of a read outstanding on f's own core (the access goes on);
// false when it is a fault to report or not ours. l1_arena_register: an L1
// arena mapped (add) or about to be unmapped, for that lookup. noc_strict_fault_text: the report for a fault in such a
// destination ("" when `a` is in none). noc_strict_unguard: opens the
// pages of a kernel's outstanding reads (a kernel that failed).
bool noc_strict_guard_fault(const Fiber* f, uintptr_t a);
void l1_arena_register(const uint8_t* base, uint64_t bytes, uint64_t l1_size, bool add);
std::string noc_strict_fault_text(const Fiber* f, uintptr_t a);
void noc_strict_unguard(Fiber* f);

// The cb check on a kernel's own load or store of [off, off + size) of its
// core's L1 (write: a store), when it falls in a CB: fails the kernel when
// every CB index there is in use (a page reserved, waited for, pushed or
// popped in the run) and the bytes are not in the pages the core's kernels
// reserved and have not pushed, or waited for and have not popped. A CB on
// an L1 buffer, or one not yet in use (scratch space), allows any access.
void cb_check_kernel_access(uint64_t off, uint64_t size, bool write);

// Keeps the return addresses of the calling stack in k (call it from the
// emulator's side of an API call, before the error unwinds it).
void capture_site(KernelState& k);
// Keeps the return addresses of the interrupted stack of a signal handler
// (async-signal-tolerant: no allocation).
void capture_site_in_handler(KernelState& k);

// " at reader.cpp:12" (the kernel's own source line of the failure), or ""
// when none of the kept addresses is in the kernel's source.
std::string site_text(const Fiber* f);
// The same for one address of the kernel object (a blocked call's return
// address), "" when unknown.
std::string site_of_pc(const Fiber* f, uintptr_t pc);

}  // namespace zyx::emu
