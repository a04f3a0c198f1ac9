// Program runs: checks a run's args against the program, places circular
// buffers that sit on L1 buffers, resolves every core's runtime and common
// args, prepares the cores' reserved L1 and hands the cores to the
// scheduler (scheduler.cpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "kernel_state.hpp"
#include "program_args.hpp"
#include "debug_mode.hpp"

namespace zyx::emu {

void prepare_core_l1(uint8_t* l1, const Board& b) {
  std::memset(l1 + ZYX_EMU_L1_ZEROS_OFFSET, 0, ZYX_EMU_L1_ZEROS_SIZE);
  std::memset(l1 + ZYX_EMU_L1_SIGNALS_OFFSET, 0, 32 * 4);
  std::memset(l1 + ZYX_EMU_L1_DEBUG_OFFSET, 0, ZYX_EMU_L1_DEBUG_SIZE);
  const int16_t ring_start = -1;  // the ring buffer's index before its first push
  std::memcpy(l1 + ZYX_EMU_L1_RING_BUFFER_OFFSET, &ring_start, sizeof ring_start);
  for (uint32_t s = 0; s < kSemaphoresPerCore; s++) std::memset(l1 + semaphore_offset(b, s), 0, 4);
}

namespace {

// Fibers of a core run in this slot order: riscv_0, compute, riscv_1 (the
// reader, compute, writer order of a one-group program).
constexpr int kSlotOrder[3] = {0, 2, 1};

std::chrono::milliseconds timeout_from_env() {
  if (const char* s = std::getenv("ZYX_EMU_TIMEOUT_MS")) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && v > 0) return std::chrono::milliseconds(v);
  }
  return std::chrono::milliseconds(250);
}

// The run's buffers by param (null for variables): every arg of the kind
// its param wants, each buffer alive and of the layout the program declared
// (the validator's rules, cpp/src/validate.cpp).
std::vector<std::shared_ptr<const Buffer>> run_buffers(const ProgramDesc& d, const Program& prog,
                                                       const std::vector<RunArg>& args, DeviceMemory& memory) {
  check_run_arg_count(args.size(), d.params.size());
  std::vector<std::shared_ptr<const Buffer>> bufs(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    check_run_arg_kind(i, d.params[i], args[i].is_buffer);
    if (args[i].is_buffer) bufs[i] = memory.get(args[i].buffer);  // unknown_buffer if it is gone
  }
  for (auto& [p, g] : prog.decls) check_buffer_decl(p, d.params[p].name, args[p].buffer, bufs[p]->geo.spec, g.spec);
  return bufs;
}

// Circular buffers on L1 buffers (the buffer holds enough of itself on each
// of the CB's cores), and CBs that would overlap a live L1 buffer.
void check_run_cbs(const Program& prog, const std::vector<std::shared_ptr<const Buffer>>& bufs,
                   const std::vector<std::shared_ptr<const Buffer>>& live, const Board& b) {
  const ProgramDesc& d = prog.desc;
  for (const CorePlan& cp : prog.cores) {
    for (auto [ci, index] : cp.buffer_cbs) {
      const CBConfig& cfg = d.cbs[ci];
      uint32_t p = *cfg.buffer_param;
      const Buffer& buf = *bufs[p];
      std::string at = "cbs[" + std::to_string(ci) + "] on param " + std::to_string(p) + " (" + d.params[p].name + ")";
      if (!buf.l1()) throw invalid(at + ": buffer " + std::to_string(buf.id) + " is in DRAM, not L1");
      if (!buf.on_core(cp.index))
        throw invalid(at + ": core " + core_text(cp.core) + " holds no part of L1 buffer " + std::to_string(buf.id));
      check_cb_share("cbs[" + std::to_string(ci) + "].total_bytes", cfg.total_bytes, buf.span, d.params[p].name);
    }
    if (cp.cb_top > b.l1_unreserved_base)
      for (const auto& lb : live)
        if (lb->on_core(cp.index) && lb->address < cp.cb_top) {
          std::ostringstream m;
          m << "core " << core_text(cp.core) << ": its circular buffers take L1 [0x" << std::hex
            << b.l1_unreserved_base << ", 0x" << cp.cb_top << "), which overlaps L1 buffer " << std::dec << lb->id
            << " at [0x" << std::hex << lb->address << ", 0x" << lb->address + lb->span << ")";
          throw Error("out_of_memory", m.str());
        }
  }
}

// Reserved L1 of core c (zeros, signals and semaphores zero), then the
// initial values of the program's semaphores on it.
void prepare_core(uint8_t* l1, CoreCoord c, const ProgramDesc& d, const Board& b) {
  prepare_core_l1(l1, b);
  for (const SemaphoreDesc& s : d.semaphores)
    if (s.cores.contains(c)) std::memcpy(l1 + semaphore_offset(b, s.id), &s.initial, 4);
}

// The reserved L1 of the cores where no kernel runs (a kernel may still
// reach their semaphores and L1 over the NOC); the workers prepare the
// running cores' own as they set them up.
void prepare_idle_l1(const Program& prog, L1Arena& l1, const Board& b) {
  std::vector<char> runs(b.cores(), 0);
  for (const CorePlan& cp : prog.cores) runs[cp.index] = cp.runs();
  for (uint32_t c = 0; c < b.cores(); c++)
    if (!runs[c]) prepare_core(l1.core_base(c), {c / b.cols, c % b.cols}, prog.desc, b);
}

// Puts a pooled fiber back to its state before a run, field by field: its
// kernel-API state (KernelState, kilobytes of arrays) is left as it is, since
// run_kernel_guarded resets it when the kernel starts and nothing reads it
// before. Assigning a fresh Fiber instead zeroed and copied those kilobytes
// for the three fibers of every core before its kernels start (then
// serially, a tenth of a run of the 512^3 matmul on 16 threads). A field
// added to Fiber must be reset here too; the stack stays with the fiber for
// its next run (scheduler.cpp).
void reset_fiber(Fiber& f) {
  f.core = nullptr;
  f.processor = Processor::Riscv0;
  f.desc = nullptr;
  f.kernel.reset();
  f.args.clear();
  f.common.clear();
  f.ctx = FiberContext{};
  f.eh = EhState{};
  f.started = f.done = f.blocked = false;
  f.wait = Wait{};
  f.worker = nullptr;
  f.trisc = Trisc::Single;
}

// Fiber f of core runs kernel k (object obj, build trisc) with its runtime
// and common args resolved for the core (src.core).
void set_up_fiber(Fiber& f, CoreState& core, const CorePlan& cp, int slot, const ProgramDesc& d, uint32_t k,
                  std::shared_ptr<KernelObject> obj, Trisc trisc, const ArgSource& src) {
  const KernelDesc& kd = d.kernels[k];
  f.core = &core;
  f.processor = kd.processor;
  f.desc = &kd;
  f.kernel = std::move(obj);
  f.trisc = trisc;
  for (size_t i = 0; i < kd.common_args.size(); i++)
    resolve(kd.common_args[i], src, f.common, [&] { return entry_at(d, k, "common_args", i); });
  if (cp.runtime[slot] >= 0) {
    const CoreArgs& ca = kd.runtime_args[cp.runtime[slot]];
    for (size_t i = 0; i < ca.args.size(); i++)
      resolve(ca.args[i], src, f.args, [&] {
        return entry_at(d, k, "runtime_args", cp.runtime[slot]) + ".args[" + std::to_string(i) + "] on core " +
               core_text(cp.core);
      });
  }
}

// A core's kernels as fibers, in kSlotOrder; a compute kernel built three
// times runs as three fibers (unpack, math, pack, in that order).
void add_fibers(CoreState& core, const CorePlan& cp, const ProgramDesc& d,
                const std::vector<std::shared_ptr<KernelObject>>& objs, const ArgSource& src) {
  for (int slot : kSlotOrder) {
    if (cp.kernel[slot] < 0) continue;
    uint32_t k = static_cast<uint32_t>(cp.kernel[slot]);
    const KernelDesc& kd = d.kernels[k];
    if (objs[k]->triscs[0]) {
      core.three_triscs = true;
      for (int r = 0; r < 3; r++)
        set_up_fiber(core.fibers[core.nfibers++], core, cp, slot, d, k, objs[k]->triscs[r], Trisc(r + 1), src);
    } else {
      set_up_fiber(core.fibers[core.nfibers++], core, cp, slot, d, k, objs[k], Trisc::Single, src);
    }
    if (slot == 2) {
      static const uint8_t fidelity[4] = {0, 2, 3, 4};  // LoFi, HiFi2, HiFi3, HiFi4
      core.fp32_dest_acc = kd.compute.fp32_dest_acc;
      core.math_fidelity = fidelity[static_cast<int>(kd.compute.math_fidelity) & 3];
      core.bfp8_pack_precise = kd.compute.bfp8_pack_precise;
      core.dst_full_sync = kd.compute.dst_full_sync;
      for (uint32_t cb : kd.compute.unpack_to_dest_fp32) core.unpack_to_dest_fp32.set(cb);
    }
  }
}

// Sets up core (the state of plan cp) for a run: DST keeps its contents, and
// its written tiles are cleared at the next tile_regs_acquire. Runs on a
// worker thread; a failure (an arg out of range) fails the run before any
// kernel starts.
void set_up_core(RunState& rs, CoreState& core, const CorePlan& cp, const Program& prog,
                 const std::vector<std::shared_ptr<KernelObject>>& objs, ArgSource& src, bool hw) {
  const ProgramDesc& d = prog.desc;
  core.cbs = cp.cbs;
  for (auto [ci, index] : cp.buffer_cbs) {
    core.cbs[index].offset = (*src.bufs)[*d.cbs[ci].buffer_param]->address;
    core.cbs[index].on_buffer = true;
  }
  core.ncb_ids = 0;
  core.cb_lo = UINT64_MAX, core.cb_hi = 0;
  for (uint32_t id = 0; id < kCircularBuffersPerCore; id++) {
    const CircularBuffer& cb = core.cbs[id];
    if (!cb.configured || !cb.page_size || !cb.num_pages) continue;
    core.cb_ids[core.ncb_ids++] = static_cast<uint8_t>(id);
    core.cb_lo = std::min(core.cb_lo, cb.offset);
    core.cb_hi = std::max(core.cb_hi, cb.offset + uint64_t(cb.page_size) * cb.num_pages);
  }
  for (ComputeState& cs : core.cstates) cs.reset();
  core.trisc.reset();
  core.three_triscs = false;
  for (Fiber& f : core.fibers) reset_fiber(f);
  core.nfibers = 0;
  core.dst_acquired = false;
  core.fp32_dest_acc = false;
  core.hw_numerics = hw;
  core.math_fidelity = 4;
  core.bfp8_pack_precise = false;
  core.dst_full_sync = false;
  core.unpack_to_dest_fp32.reset();
  core.row = cp.core.row, core.col = cp.core.col, core.index = cp.index;
  core.l1 = src.l1->core_base(cp.index);
  core.run = &rs;
  prepare_core(core.l1, cp.core, d, *rs.board);
  if (!rs.noc_watch.l1.empty()) noc_watch_core_l1(rs, prog, &cp, cp.index);  // the watcher's NOC check is on
  src.core = cp.index;
  add_fibers(core, cp, d, objs, src);
}

}  // namespace

std::shared_ptr<Program> Runner::find_program(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = programs_.find(id);
  if (it == programs_.end()) throw Error("unknown_program", "program " + std::to_string(id) + " does not exist");
  return it->second;
}

// Lists the pooled state of every core that runs in rs.cores (reused
// across runs), and has the workers set each one up (set_up_core) before
// any kernel starts: that work grows with the cores, so it runs on every
// worker thread instead of serially before them (docs/emulator.md,
// "Running: the scheduler").
void Runner::assign_cores(RunState& rs, const Program& prog, const std::vector<std::shared_ptr<KernelObject>>& objs,
                          const ArgSource& src) {
  // ZYX_EMU_NUMERICS: "hardware" (the default) or "exact" (f32 arithmetic).
  bool hw = true;
  if (const char* e = std::getenv("ZYX_EMU_NUMERICS"); e && *e) {
    std::string v(e);
    if (v == "exact") hw = false;
    else if (v != "hardware")
      throw Error("invalid_argument", "ZYX_EMU_NUMERICS is \"" + v + "\": use \"hardware\" or \"exact\"");
  }
  size_t running = 0;
  for (const CorePlan& cp : prog.cores) running += cp.runs();
  rs.cores.reserve(running);
  std::vector<const CorePlan*> plans;
  plans.reserve(running);
  if (core_pool_.size() < running) core_pool_.resize(running);
  for (const CorePlan& cp : prog.cores) {
    if (!cp.runs()) continue;
    auto& core = core_pool_[rs.cores.size()];
    if (!core) core = std::make_unique<CoreState>();
    rs.cores.push_back(core.get());
    plans.push_back(&cp);
  }
  rs.set_up_core = [&rs, &prog, &objs, src, hw, plans = std::move(plans)](uint32_t k) {
    ArgSource core_src = src;
    set_up_core(rs, *rs.cores[k], *plans[k], prog, objs, core_src, hw);
  };
}

uint64_t Runner::run(uint64_t id, const std::vector<RunArg>& args, bool timed) {
  std::shared_ptr<Program> prog = find_program(id);
  const ProgramDesc& d = prog->desc;
  const Board& b = board_;
  std::vector<std::shared_ptr<const Buffer>> bufs = run_buffers(d, *prog, args, memory_);
  check_run_cbs(*prog, bufs, memory_.live_l1(), b);
  std::lock_guard<std::mutex> run_lock(run_mu_);
  L1Arena& l1 = memory_.l1();
  WatchConfig watch = WatchConfig::from_env();
  bool cb_access = watch.cb && watch.cb_access;  // the kernels built for the check of their own loads and stores
  std::vector<std::shared_ptr<KernelObject>> objs(prog->kernels.size());
  for (size_t k = 0; k < prog->kernels.size(); k++)
    objs[k] = kernel_for(*prog, *prog->kernels[k], args, cb_access, bufs);
  // Debug mode: every kernel object of the run is loaded, so a debugger
  // attached now can set its breakpoints in them.
  wait_for_debugger();

  RunState rs;
  rs.board = &b;
  rs.dram = &memory_.dram();
  rs.l1 = &l1;
  rs.timeout = timeout_from_env();
  rs.watch = watch;
  if (!rs.watch.unknown.empty())
    rs.warn("ZYX_EMU_WATCHER: unknown setting(s) " + rs.watch.unknown +
            " ignored (it takes on, off, or a comma-separated list of no-args, no-noc, no-cb, no-cb-access, "
            "no-race, no-stack, strict-noc, strict-noc-loads)");
  for (const auto& buf : bufs) {
    if (!buf) continue;
    auto& m = buf->l1() ? rs.l1_page_sizes : rs.dram_page_sizes;
    m[static_cast<uint32_t>(buf->address)] = static_cast<uint32_t>(buf->geo.spec.page_size);
  }
  if (rs.watch.noc || rs.watch.race) build_noc_watch(rs, *prog, bufs);  // the race check keeps its record there
  prepare_idle_l1(*prog, l1, b);
  ArgSource src;
  src.board = &b, src.prog = prog.get(), src.args = &args, src.bufs = &bufs, src.l1 = &l1;
  assign_cores(rs, *prog, objs, src);
  auto t0 = std::chrono::steady_clock::now();
  execute(rs);
  auto t1 = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(warnings_mu_);
    warnings_ = rs.warnings;
  }
  if (!rs.err_code.empty()) throw Error(rs.err_code, rs.err_msg);
  // The execute phase: the kernels running, from when the last core was set up.
  if (rs.kernels_start > t0) t0 = rs.kernels_start;
  return timed ? static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()) : 0;
}

std::vector<std::string> Runner::take_warnings() {
  std::lock_guard<std::mutex> lock(warnings_mu_);
  return std::exchange(warnings_, {});
}

}  // namespace zyx::emu
