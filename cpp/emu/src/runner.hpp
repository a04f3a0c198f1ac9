// The program runner: per-core state, circular buffers, the destination
// register file, compiled programs (program.cpp, program_run.cpp) and the
// scheduler that runs every core's kernels (scheduler.cpp).
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <bitset>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "compute_state.hpp"
#include "emu.hpp"
#include "fiber.hpp"
#include "kernel_state.hpp"
#include "watcher.hpp"

namespace zyx::emu {

struct CoreState;
struct RunState;
struct ArgSource;

// A worker thread of the scheduler, as its fibers see it.
struct Worker {
  FiberContext sched;  // the worker's own context, the fibers switch back to
};

// A kernel fiber's stack: reserved, committed as it is used, with a guard
// page at its low end (an overflow faults instead of corrupting).
constexpr size_t kFiberStackSize = 1u << 20;
constexpr size_t kFiberStackGuard = 4096;

// One circular buffer (one CB index) of one core: a bounded queue of pages in L1.
struct CircularBuffer {
  bool configured = false;
  Format format = Format::Invalid;
  uint32_t page_size = 0, num_pages = 0;
  uint32_t tile_rows = 32, tile_cols = 32;  // the tile shape of its pages
  // Placed on an L1 buffer (a globally allocated address): its pages hold the
  // buffer's data, so a kernel may read and pop them with no producer having
  // pushed them, as on a card.
  bool on_buffer = false;
  uint64_t offset = 0;  // L1 offset of the first page
  uint32_t pushed = 0, popped = 0;  // pages ever pushed and popped
  uint32_t wr_page = 0, rd_page = 0;
  uint32_t reserved = 0;   // pages reserved by the producer and not yet pushed
  uint32_t waited = 0;     // pages the consumer waited for and has not yet popped
  uint32_t pack_next = 0;  // next sequential pack_tile position
  uint32_t available() const { return pushed - popped; }
};

// What a blocked kernel waits for.
struct Wait {
  // SrcOps/SrcSpace, PackOps/PackSpace, DstFree/DstDone: the TRISC
  // hand-over (TriscHandover) of the core's three compute builds.
  enum Kind { None, CBFront, CBBack, Word, SrcOps, SrcSpace, PackOps, PackSpace, DstFree, DstDone } kind = None;
  uint32_t cb = 0, pages = 0;
  volatile uint32_t* word = nullptr;
  uint32_t value = 0, cmp = 0;
  uintptr_t site = 0;  // the kernel's return address of the blocking call
};

// The C++ runtime's per-thread exception-handling state (the Itanium C++
// ABI's __cxa_eh_globals): the exceptions being handled, innermost first,
// and the count of those thrown and not yet caught. Each fiber has its own,
// swapped in while it runs (scheduler.cpp), so that a kernel
// that blocks inside a catch block does not lend its exception to the other
// kernels of its worker, and a kernel stopped inside one (std::terminate
// runs as a handler of the exception that reached it) leaves nothing behind:
// its state goes with its fiber (the exception objects are not freed).
struct EhState {
  void* caught = nullptr;
  unsigned int uncaught = 0;
#if defined(__ARM_EABI_UNWINDER__)
  void* propagating = nullptr;
#endif
};

// One kernel of one core, run as a fiber on a worker thread.
struct Fiber {
  CoreState* core = nullptr;
  Processor processor = Processor::Riscv0;
  const KernelDesc* desc = nullptr;  // its kernel (name for messages)
  std::shared_ptr<KernelObject> kernel;
  std::vector<uint32_t> args;    // runtime args of this core
  std::vector<uint32_t> common;  // common args (L1 buffer addresses are this core's pointers)
  FiberContext ctx;  // fiber.hpp
  EhState eh;        // while the fiber is switched out
  void* stack = nullptr;  // from the Runner's StackPool, kept between runs
  bool started = false, done = false, blocked = false;
  Wait wait;
  Worker* worker = nullptr;
  KernelState api;  // the kernel API's state of this section (kernel_state.hpp)
  Trisc trisc = Trisc::Single;  // which build of a compute kernel (compute_state.hpp)
};

enum class DstKind : uint8_t { F32, BF16, F16, Int };

// fp32_dest_acc of the compute kernel of the calling core (tile_math reads it
// through RunState::fp32_dest_acc).
struct CurrentCoreFp32 {
  operator bool() const;
};

struct CoreState {
  uint32_t row = 0, col = 0, index = 0;
  uint8_t* l1 = nullptr;  // host base of this core's L1 window
  RunState* run = nullptr;
  std::array<CircularBuffer, kCircularBuffersPerCore> cbs{};
  // The configured CB indices in use by the watcher's check of the kernels'
  // own loads and stores (cb_check_kernel_access), and the L1 span
  // [cb_lo, cb_hi) they cover, so that any other address passes at once.
  std::array<uint8_t, kCircularBuffersPerCore> cb_ids{};
  uint32_t ncb_ids = 0;
  uint64_t cb_lo = 0, cb_hi = 0;
  // riscv_0, the compute kernel (one fiber, or unpack, math and pack), riscv_1:
  // the first nfibers are used.
  std::array<Fiber, 5> fibers{};
  uint32_t nfibers = 0;
  bool fp32_dest_acc = false;  // of this core's compute kernel
  // The numerics of the FPU calls (tile_numerics.cpp): the card's datapath
  // (numerics.hpp) unless the run is exact (ZYX_EMU_NUMERICS=exact); the
  // compute kernel's math fidelity (tt-metal's value: 0 LoFi, 2-4 HiFi2-4)
  // and bfp8_pack_precise.
  bool hw_numerics = true;
  uint8_t math_fidelity = 4;
  bool bfp8_pack_precise = false;
  // DST in full-sync mode (all of it for math; else half), and the CBs
  // whose 32-bit tiles unpack straight into a 32-bit DST.
  bool dst_full_sync = false;
  std::bitset<kCircularBuffersPerCore> unpack_to_dest_fp32;
  // Destination register file: 16 tiles of 1024 words (f32 or i32 bits).
  alignas(64) std::array<std::array<uint32_t, 1024>, 16> dst{};
  std::array<DstKind, 16> dst_kind{};
  uint32_t dst_written = 0;  // bit per tile written since acquire
  bool dst_acquired = false;
  // Compute configuration (compute_state.hpp), by Trisc: each TRISC build
  // keeps its own, as each processor keeps its own hardware state.
  std::array<ComputeState, 4> cstates;
  TriscHandover trisc;  // the three builds' hand-over, and the DST call order
  bool three_triscs = false;  // the compute kernel runs as three builds
  // The special-value flags (ZYX_SPECIAL_*), tracked from the core's first
  // flag call on (api_compute_sfpu.cpp): while an SFPU op runs sfpu_scope is
  // set, and the tiles SFPI code stored to wait in sfpi_pending for a scan.
  bool special_tracking = false;
  uint32_t special_flags = 0, sfpu_scope = 0, sfpi_pending = 0;
  // Scheduling: the core is on a worker's list (set by that worker only).
  bool taken = false;
};

// Shared by every core of one run.
struct RunState {
  const Board* board = nullptr;
  Dram* dram = nullptr;
  L1Arena* l1 = nullptr;
  CurrentCoreFp32 fp32_dest_acc;
  // Page sizes of the run's buffers by address, as TensorAccessor looks them
  // up: DRAM addresses, and L1 offsets (window-relative).
  std::unordered_map<uint32_t, uint32_t> dram_page_sizes, l1_page_sizes;
  std::chrono::milliseconds timeout{250};
  std::atomic<bool> cancel{false};
  std::mutex err_mu;
  std::string err_code, err_msg;
  std::vector<CoreState*> cores;  // the cores that run, owned by the Runner
  // Sets up cores[k] for the run (program_run.cpp). The workers set up every
  // core before any kernel starts (scheduler.cpp); a failure (err_code, that
  // of the lowest k when several fail, under err_mu) stops the run there.
  std::function<void(uint32_t)> set_up_core;
  std::atomic<uint32_t> next_set_up{0}, set_up_count{0};
  uint32_t set_up_failed_at = UINT32_MAX;
  std::chrono::steady_clock::time_point kernels_start;  // when the last core was set up
  std::atomic<uint32_t> next_core{0};
  // Stall detection across workers (scheduler.cpp).
  std::atomic<int> stall_phase{0};        // 0 running, 1 collecting the report
  std::atomic<uint32_t> stall_answers{0};  // workers that have added their part
  std::mutex stall_mu;
  std::vector<std::pair<uint64_t, std::string>> stall_report;  // (sort key, text)
  // The watcher's checks for this run (ZYX_EMU_WATCHER), and what the NOC
  // check checks against (built when it is on).
  WatchConfig watch;
  NocWatch noc_watch;
  // Kernels (and arg kind: 0 runtime, 1 common, 2 compile-time) already
  // warned about reading past their args; kind 3: about a release_dst with no
  // DST section held.
  std::mutex warn_mu;
  std::set<std::pair<const KernelDesc*, uint32_t>> arg_warned;
  // What the emulator noticed and did not stop for, in order (each also a
  // "zyx-emu: warning: " line on stderr).
  std::vector<std::string> warnings;
  void fail(const std::string& code, const std::string& msg);
  void warn(const std::string& msg);
};

// A compiled kernel.
struct KernelPlan {
  uint32_t index = 0;  // in ProgramDesc::kernels
  int slot = 0;        // 0 riscv_0, 1 riscv_1, 2 compute
  bool compile_static = false;  // every compile arg resolved at compile
  std::shared_ptr<KernelObject> prebuilt;
  bool prebuilt_cb_access = false;  // prebuilt with the address-check instrumentation
  // Built at a run, by resolved compile-arg values (positional, then named,
  // then 1 for a build with the address-check instrumentation, else 0).
  std::mutex mu;
  std::map<std::vector<uint32_t>, std::shared_ptr<KernelObject>> by_values;
};

// What a program puts on one core.
struct CorePlan {
  CoreCoord core;
  uint32_t index = 0;                 // row * cols + col
  int kernel[3] = {-1, -1, -1};       // by slot: index in ProgramDesc::kernels
  int runtime[3] = {-1, -1, -1};      // by slot: index in that kernel's runtime_args
  std::array<CircularBuffer, kCircularBuffersPerCore> cbs{};  // as a run starts them (CBs on buffers placed at run)
  std::vector<std::pair<uint32_t, uint32_t>> buffer_cbs;  // (CB config, index) placed on an L1 buffer
  uint64_t cb_top = 0;                // end of the CBs laid out from the unreserved base
  bool runs() const { return kernel[0] >= 0 || kernel[1] >= 0 || kernel[2] >= 0; }
};

// A compiled program.
struct Program {
  ProgramDesc desc;
  std::vector<std::unique_ptr<KernelPlan>> kernels;
  std::vector<CorePlan> cores;   // every core with a kernel or a CB, in grid order
  std::map<uint32_t, Geometry> decls;  // declared layouts by param
};

// Fiber stacks (kFiberStackSize, guard page included): a pooled core's
// fibers keep theirs between runs and give them back when the Runner ends.
// Thread-safe.
class StackPool {
 public:
  StackPool() = default;
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  // A stack, or Error("internal") when none can be mapped.
  void* take();
  void give(void* s);

 private:
  std::mutex mu_;
  std::vector<void*> stacks_;
};

class Runner {
 public:
  Runner(const Board& board, DeviceMemory& memory, KernelBuilder& builder);
  ~Runner();
  uint64_t compile(const ProgramDesc& program);
  uint64_t run(uint64_t program, const std::vector<RunArg>& args, bool timed);
  void release(uint64_t program);
  // The watcher's warnings of the last run (RunState::warnings).
  std::vector<std::string> take_warnings();

 private:
  void build_static_kernels(Program& prog);
  std::shared_ptr<Program> find_program(uint64_t id);
  std::shared_ptr<KernelObject> kernel_for(Program& prog, KernelPlan& kp, const std::vector<RunArg>& args, bool cb_access,
                                           const std::vector<std::shared_ptr<const Buffer>>& bufs);
  void assign_cores(RunState& rs, const Program& prog, const std::vector<std::shared_ptr<KernelObject>>& objs,
                    const ArgSource& src);
  void execute(RunState& rs);

  const Board& board_;
  DeviceMemory& memory_;
  KernelBuilder& builder_;
  std::mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<Program>> programs_;
  uint64_t next_id_ = 1;
  StackPool stacks_;
  std::mutex run_mu_;
  std::vector<std::unique_ptr<CoreState>> core_pool_;  // by position in the run
  std::mutex warnings_mu_;
  std::vector<std::string> warnings_;  // of the last run
  // The helper threads of execute (worker 1 onwards), kept between runs: a
  // thread's start and end (its stack, its fault stack) cost more than a
  // short run on many threads. Last member: it stops and joins them first.
  struct WorkerPool;
  std::unique_ptr<WorkerPool> pool_;
};

// The API table handed to kernel objects.
const zyx_emu_api* kernel_api();
Fiber* current_fiber();

// Tile math (tile_math.cpp).
void tile_unpack(const uint8_t* src, Format f, uint32_t* out, DstKind kind);
void tile_pack(const uint32_t* src, DstKind kind, uint8_t* dst, Format f);
DstKind dst_kind_for(Format f, bool fp32_dest_acc);
void dst_round(uint32_t* v, DstKind kind);
// Scalar conversions, inline because the tile loops live on them.
inline uint32_t f2u(float f) { return std::bit_cast<uint32_t>(f); }
inline float u2f(uint32_t u) { return std::bit_cast<float>(u); }

inline float bf16_to_f32(uint16_t h) { return u2f(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) {
    if (man == 0) return u2f(sign);
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return u2f(sign | 0x7f800000 | (man << 13));
  return u2f(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t f32_to_f16(float f) {
  uint32_t u = f2u(f), sign = (u >> 16) & 0x8000;
  uint32_t a = u & 0x7fffffff;
  if (a > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00);
  if (a >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to inf
  if (a < 0x38800000) {  // subnormal half (or zero)
    float v = std::fabs(f) * 16777216.0f;  // 2^24: units of the smallest subnormal
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(v)));
  }
  uint32_t r = a + 0xfff + ((a >> 13) & 1);
  return static_cast<uint16_t>(sign | ((r - 0x38000000) >> 13));
}

}  // namespace zyx::emu
