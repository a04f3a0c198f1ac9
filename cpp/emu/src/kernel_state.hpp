// Per-section state of the kernel API (kernel_api.hpp): what a RISC
// keeps for itself on a card (its NOC command-buffer state, its copy of the
// circular-buffer interface, its debug state), the guard that turns a fault
// in kernel code into a run error, and the reserved L1 layout the emulator
// uses below l1.unreserved_base.
#pragma once

#include <signal.h>

#include <bitset>
#include <csetjmp>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol_enums_gen.hpp"
#include "zyx_emu/abi.h"

namespace zyx::emu {

struct Fiber;
struct CoreState;
struct Board;


// Reserved L1 (below l1.unreserved_base, which is 102400 on every board):
//   [ZYX_EMU_L1_ZEROS_OFFSET, +ZYX_EMU_L1_ZEROS_SIZE)  zeros (MEM_ZEROS_BASE)
//   [ZYX_EMU_L1_ARGS_OFFSET, +6 * ZYX_EMU_L1_ARGS_SLOT) runtime and common args
//                                                       of the three sections
//   [unreserved_base - 256, unreserved_base)           the 16 semaphores
// The offsets live in abi.h, shared with the kernel headers.
static_assert(ZYX_EMU_L1_ARGS_OFFSET + 6 * ZYX_EMU_L1_ARGS_SLOT <= 102400 - 256, "reserved L1 overflows");

// Return addresses kept of a failing kernel's stack (watcher.hpp).
#define ZYX_EMU_SITE_PCS 32u

// The watcher's strict NOC mode (noc_strict.cpp) for one section: the NOC
// reads it issued whose data has not landed yet (it lands at the read
// barrier) and the writes whose source it has not flushed, each with a
// copy of the bytes, the local L1 range and the kernel's return address of
// the call that issued it. Entries are reused (`reads`/`writes` count the
// live ones), so a kernel in a loop does not allocate per transfer.
struct NocPending {
  struct Transfer {
    uint8_t* local = nullptr;  // host pointer of the L1 side
    uint64_t off = 0;          // L1 offset of the L1 side
    uint32_t size = 0;
    uintptr_t site = 0;
    const char* op = "";
    std::vector<uint8_t> data;  // a read's data, a write's source as sent
  };
  bool strict = false;  // this kernel runs in strict NOC mode
  // and guards its outstanding reads' destinations (strict-noc-loads): the
  // host pages holding them are inaccessible until the data lands
  bool guard = false;
  std::vector<Transfer> read_list, write_list;
  size_t reads = 0, writes = 0;
};

// One section's API state. Reset when its kernel starts.
struct KernelState {
  // Which arg lists (bit 0: runtime, bit 1: common) have been copied into L1.
  uint32_t args_in_l1 = 0;
  // DPRINT: the line being assembled, and the TRISC tag (0: the section's
  // own processor name, 1-3: trisc0-2) of its text.
  std::string dprint_line;
  uint32_t dprint_tag = 0, dprint_line_tag = 0;
  // The last WAYPOINT the kernel passed ("" if none).
  char waypoint[8] = {};
  // Per-section scratch the kernel headers keep their NOC state in
  // (set_state registers, transaction ids); zeroed when the kernel starts.
  uint64_t scratch[ZYX_EMU_SCRATCH_WORDS] = {};
  // The section's view of its circular buffers (get_local_cb_interface),
  // and what the runtime last wrote there (to see the kernel's changes).
  zyx_emu_cb_interface cb_iface[kCircularBuffersPerCore] = {};
  zyx_emu_cb_interface cb_written[kCircularBuffersPerCore] = {};
  std::bitset<kCircularBuffersPerCore> cb_iface_valid;  // by CB index
  // Fault recovery: where a fault in this section's kernel code lands.
  sigjmp_buf fault_jmp;
  volatile int fault_armed = 0;
  volatile int fault_sig = 0, fault_code = 0;
  volatile uintptr_t fault_addr = 0, fault_pc = 0;
  // What the kernel called that would have ended the process (abort(),
  // exit(3), a failed assert, std::terminate), or "" for a fault.
  std::string exit_call;
  // Where the kernel failed: its stack's return addresses when the failure
  // was seen (watcher.hpp, capture_site), and whether the failure is the
  // emulator's report (kernel_fail) rather than the kernel's own exception.
  uintptr_t site_pcs[ZYX_EMU_SITE_PCS] = {};
  volatile uint32_t site_n = 0;
  bool failing = false;
  // The last finished DPRINT line (for the deadlock report).
  std::string last_dprint;
  // Strict NOC mode's outstanding transfers.
  NocPending noc;
  // The watcher's stack check: the stack pointer as the kernel was entered,
  // the most the card's processor gives its stack (0: not checked), and
  // the kernel's globals that share that memory.
  uintptr_t stack_base = 0;
  uint32_t stack_limit = 0;
  uint32_t stack_globals = 0;
  void reset();
};

// Runs the fiber's kernel; a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) in it
// becomes a run_error naming the faulting address, and a call that would
// end the process (abort, exit, _exit, _Exit, quick_exit, a failed assert,
// std::terminate, a SIGABRT the C or C++ library raises) one naming the
// call (throws zyx::Error).
void run_kernel_guarded(Fiber* f);

// Per worker thread: an alternate signal stack (so that a fault on a kernel
// stack, including a stack overflow, can be handled), restored on exit.
class FaultStack {
 public:
  FaultStack();
  ~FaultStack();
  FaultStack(const FaultStack&) = delete;
  FaultStack& operator=(const FaultStack&) = delete;

 private:
  void* mem_ = nullptr;
  bool installed_ = false;
  stack_t old_{};
};

// Prepares a core's reserved L1 for a run: zeros, semaphores (zero).
void prepare_core_l1(uint8_t* l1, const Board& board);

}  // namespace zyx::emu
