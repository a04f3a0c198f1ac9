// Program compile: places a program's kernels, runtime args and circular
// buffers on their cores (CorePlan), and builds the kernels whose compile
// args are known without a run. The program's rules are not checked here:
// the server checks every program once, with check_program
// (cpp/src/validate.cpp), before a device layer sees it. Runs are in
// program_run.cpp, argument entries in program_args.cpp.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "program_args.hpp"

namespace zyx::emu {

namespace {

int slot_of(Processor p) {
  switch (p) {
    case Processor::Riscv0: return 0;
    case Processor::Riscv1: return 1;
    case Processor::Compute: return 2;
  }
  return -1;
}

// The buffer declarations: the layout each declared buffer param has.
void record_buffer_decls(Program& prog, const Board& b) {
  const ProgramDesc& d = prog.desc;
  for (size_t i = 0; i < d.buffers.size(); i++)
    prog.decls.emplace(d.buffers[i].param, make_geometry(d.buffers[i].spec, b, "buffers[" + std::to_string(i) + "]"));
}

// Kernel k on its cores and its runtime args on theirs.
void place_kernel(const ProgramDesc& d, uint32_t k, int slot, const Board& b, std::vector<CorePlan>& all) {
  const KernelDesc& kd = d.kernels[k];
  for (CoreCoord c : kd.cores.cores()) all[c.row * b.cols + c.col].kernel[slot] = static_cast<int>(k);
  for (size_t j = 0; j < kd.runtime_args.size(); j++)
    for (CoreCoord c : kd.runtime_args[j].cores.cores()) all[c.row * b.cols + c.col].runtime[slot] = static_cast<int>(j);
}

// Every kernel on its cores, and its KernelPlan; a kernel is compile_static
// when its compile args need nothing from a run.
void place_kernels(Program& prog, const Board& b, std::vector<CorePlan>& all) {
  const ProgramDesc& d = prog.desc;
  for (uint32_t k = 0; k < d.kernels.size(); k++) {
    int slot = slot_of(d.kernels[k].processor);
    if (slot < 0) throw Error("internal", "kernels[" + std::to_string(k) + "]: unknown processor");
    place_kernel(d, k, slot, b, all);
    auto kp = std::make_unique<KernelPlan>();
    kp->index = k;
    kp->slot = slot;
    prog.kernels.push_back(std::move(kp));
  }
  for (auto& kp : prog.kernels) {
    const KernelDesc& kd = d.kernels[kp->index];
    kp->compile_static =
        std::all_of(kd.compile_args.begin(), kd.compile_args.end(), [&](const ArgEntry& e) { return static_entry(e, prog); }) &&
        std::all_of(kd.named_compile_args.begin(), kd.named_compile_args.end(),
                    [&](const auto& n) { return static_entry(n.second, prog); });
  }
}

// The L1 address of a CB config that is not on a buffer: above the CBs
// already on any of its cores, at the L1 alignment: the layout check_program
// checks against each core's L1, so a layout past L1 is a bug here.
uint64_t cb_config_address(const CBConfig& cfg, const std::vector<CoreCoord>& cores, const Board& b,
                           const std::vector<CorePlan>& all, const std::string& at) {
  uint64_t top = b.l1_unreserved_base;
  for (CoreCoord c : cores) top = std::max(top, all[c.row * b.cols + c.col].cb_top);
  uint64_t addr = b.l1_unreserved_base + align_up(top - b.l1_unreserved_base, b.l1_alignment);
  if (addr + cfg.total_bytes > b.l1_size)
    throw Error("internal", at + ": the circular buffers were laid out past L1 (" + std::to_string(addr + cfg.total_bytes) +
                                " > " + std::to_string(b.l1_size) + " bytes)");
  return addr;
}

// Circular buffers: each config at one address on all its cores, above
// the CBs already on any of them (as tt-metal places them), from the
// unreserved base up. Configs on an L1 buffer are placed at run.
void lay_out_cbs(const Program& prog, const Board& b, std::vector<CorePlan>& all) {
  const ProgramDesc& d = prog.desc;
  for (auto& cp : all) cp.cb_top = b.l1_unreserved_base;
  for (uint32_t i = 0; i < d.cbs.size(); i++) {
    const CBConfig& cfg = d.cbs[i];
    std::vector<CoreCoord> cores = cfg.cores.cores();
    uint64_t addr = cfg.buffer_param ? 0 : cb_config_address(cfg, cores, b, all, "cbs[" + std::to_string(i) + "]");
    for (CoreCoord c : cores) {
      CorePlan& cp = all[c.row * b.cols + c.col];
      for (const CBIndexDesc& x : cfg.indices) {
        CircularBuffer& cb = cp.cbs[x.index];
        cb.configured = true;
        cb.format = x.format;
        cb.page_size = x.page_bytes;
        cb.num_pages = cfg.total_bytes / x.page_bytes;
        cb.tile_rows = x.tile_rows, cb.tile_cols = x.tile_cols;
        cb.offset = addr;
        if (cfg.buffer_param) cp.buffer_cbs.emplace_back(i, x.index);
      }
      if (!cfg.buffer_param) cp.cb_top = addr + cfg.total_bytes;
    }
  }
}

}  // namespace

uint64_t Runner::compile(const ProgramDesc& desc) {
  auto prog = std::make_shared<Program>();
  prog->desc = desc;
  const Board& b = board_;
  record_buffer_decls(*prog, b);
  std::vector<CorePlan> all(b.cores());
  for (uint32_t i = 0; i < b.cores(); i++) all[i].core = CoreCoord{i / b.cols, i % b.cols}, all[i].index = i;
  place_kernels(*prog, b, all);
  lay_out_cbs(*prog, b, all);
  for (auto& cp : all)
    if (cp.runs() || cp.cb_top > b.l1_unreserved_base || !cp.buffer_cbs.empty()) prog->cores.push_back(std::move(cp));
  build_static_kernels(*prog);
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t id = next_id_++;
  programs_[id] = std::move(prog);
  return id;
}

// Builds the kernels whose compile args are known now, in parallel; the
// first failure is rethrown.
void Runner::build_static_kernels(Program& prog) {
  const ProgramDesc& d = prog.desc;
  std::vector<KernelPlan*> now;
  for (auto& kp : prog.kernels)
    if (kp->compile_static) now.push_back(kp.get());
  // The instrumentation for the watcher's check of the kernels' own loads
  // and stores, as the watcher is set now; a run set otherwise gets the
  // other build (kernel_for).
  WatchConfig watch = WatchConfig::from_env();
  bool cb_access = watch.cb && watch.cb_access;
  std::atomic<size_t> next{0};
  std::mutex err_mu;
  std::exception_ptr first;
  auto build = [&] {
    for (size_t i; (i = next.fetch_add(1)) < now.size();) {
      try {
        ArgSource src;
        src.board = &board_, src.prog = &prog;
        std::vector<uint32_t> pos;
        std::vector<std::pair<std::string, uint32_t>> named;
        compile_values(prog, now[i]->index, src, pos, named);
        now[i]->prebuilt = builder_.get(d.kernels[now[i]->index], pos, named, d, cb_access);
        now[i]->prebuilt_cb_access = cb_access;
      } catch (...) {
        std::lock_guard<std::mutex> lock(err_mu);
        if (!first) first = std::current_exception();
      }
    }
  };
  size_t nthreads = std::min<size_t>(now.size(), std::max(2u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  try {
    while (threads.size() + 1 < nthreads) threads.emplace_back(build);
  } catch (const std::system_error&) {
  }
  build();
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

void Runner::release(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!programs_.erase(id)) throw Error("unknown_program", "program " + std::to_string(id) + " does not exist");
}

std::shared_ptr<KernelObject> Runner::kernel_for(Program& prog, KernelPlan& kp, const std::vector<RunArg>& args,
                                                 bool cb_access, const std::vector<std::shared_ptr<const Buffer>>& bufs) {
  if (kp.prebuilt && kp.prebuilt_cb_access == cb_access) return kp.prebuilt;
  ArgSource src;
  src.board = &board_, src.prog = &prog, src.args = &args, src.bufs = &bufs;
  std::vector<uint32_t> pos;
  std::vector<std::pair<std::string, uint32_t>> named;
  compile_values(prog, kp.index, src, pos, named);
  std::vector<uint32_t> key = pos;
  for (auto& n : named) key.push_back(n.second);
  key.push_back(cb_access ? 1 : 0);
  std::lock_guard<std::mutex> lock(kp.mu);
  auto& slot = kp.by_values[key];
  if (!slot) slot = builder_.get(prog.desc.kernels[kp.index], pos, named, prog.desc, cb_access);
  return slot;
}

}  // namespace zyx::emu
