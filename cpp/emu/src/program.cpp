// Program compile: checks a program against the board, places its kernels,
// circular buffers and semaphores on their cores (CorePlan), and builds the
// kernels whose compile args are known without a run. Runs are in
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

// A core range set inside the grid whose ranges do not overlap. Linear in
// its size: every range marks at least one of the grid's cells.
void check_core_set(const CoreRangeSet& s, const Board& b, const std::string& at) {
  if (s.ranges.empty()) throw invalid(at + ": no core ranges");
  std::vector<uint8_t> seen(b.cores(), 0);
  for (size_t i = 0; i < s.ranges.size(); i++) {
    const CoreRange& r = s.ranges[i];
    std::string where = at + "[" + std::to_string(i) + "] " + range_text(r);
    if (r.start.row > r.end.row || r.start.col > r.end.col) throw invalid(where + ": start after end");
    if (r.end.row >= b.rows || r.end.col >= b.cols)
      throw invalid(where + ": outside the " + std::to_string(b.rows) + "x" + std::to_string(b.cols) + " grid of " +
                    b.name);
    for (uint32_t y = r.start.row; y <= r.end.row; y++)
      for (uint32_t x = r.start.col; x <= r.end.col; x++)
        if (seen[y * b.cols + x]++) throw invalid(where + ": overlaps an earlier range of the set");
  }
}

bool is_identifier(const std::string& s) {
  if (s.empty() || s.size() > 255) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Buffer declarations: a layout for a buffer param, at most one per param.
void check_buffer_decls(Program& prog, const Board& b) {
  const ProgramDesc& d = prog.desc;
  for (size_t i = 0; i < d.buffers.size(); i++) {
    const BufferDecl& bd = d.buffers[i];
    std::string at = "buffers[" + std::to_string(i) + "]";
    if (bd.param >= d.params.size() || !d.params[bd.param].is_buffer())
      throw invalid(at + ": param " + std::to_string(bd.param) + " is not a buffer param");
    if (prog.decls.count(bd.param)) throw invalid(at + ": param " + std::to_string(bd.param) + " is declared twice");
    prog.decls.emplace(bd.param, make_geometry(bd.spec, 0, b, at));
  }
}

// Include files: relative paths inside the build directory, each given once.
void check_include_files(const ProgramDesc& d) {
  std::set<std::string> paths;
  for (size_t i = 0; i < d.include_files.size(); i++) {
    const std::string& path = d.include_files[i].path;
    std::string at = "include_files[" + std::to_string(i) + "].path";
    if (std::string why = include_path_problem(path); !why.empty()) throw invalid(at + ": " + why);
    if (!paths.insert(path).second) throw invalid(at + ": \"" + path + "\" is given twice");
  }
}

// The compile, named compile and common args of a kernel (`at` names it).
void check_kernel_args(const KernelDesc& kd, const ProgramDesc& d, const Board& b, const std::string& at) {
  for (size_t i = 0; i < kd.compile_args.size(); i++)
    check_entry(kd.compile_args[i], d, b, true, at + ".compile_args[" + std::to_string(i) + "]");
  std::set<std::string> names;
  for (size_t i = 0; i < kd.named_compile_args.size(); i++) {
    const auto& [name, e] = kd.named_compile_args[i];
    std::string nat = at + ".named_compile_args[" + std::to_string(i) + "]";
    if (!is_identifier(name)) throw invalid(nat + ": \"" + name + "\" is not a C identifier");
    if (!names.insert(name).second) throw invalid(nat + ": \"" + name + "\" is given twice");
    check_entry(e, d, b, true, nat);
    if (e.kind == ArgKind::Accessor) throw invalid(nat + ": an accessor is several words, not one named arg");
  }
  for (size_t i = 0; i < kd.common_args.size(); i++)
    check_entry(kd.common_args[i], d, b, false, at + ".common_args[" + std::to_string(i) + "]");
}

// The runtime args of kernel k (on processor slot `slot`): each entry's
// cores are cores of the kernel, and no core has two entries.
void place_runtime_args(const KernelDesc& kd, uint32_t k, int slot, const ProgramDesc& d, const Board& b,
                        const std::string& at, std::vector<CorePlan>& all) {
  for (size_t j = 0; j < kd.runtime_args.size(); j++) {
    const CoreArgs& ca = kd.runtime_args[j];
    std::string rat = at + ".runtime_args[" + std::to_string(j) + "]";
    check_core_set(ca.cores, b, rat + ".cores");
    for (CoreCoord c : ca.cores.cores()) {
      CorePlan& cp = all[c.row * b.cols + c.col];
      if (cp.kernel[slot] != static_cast<int>(k))
        throw invalid(rat + ".cores: core " + core_text(c) + " is not one of the kernel's cores");
      if (cp.runtime[slot] >= 0)
        throw invalid(rat + ".cores: core " + core_text(c) + " already has runtime args (runtime_args[" +
                      std::to_string(cp.runtime[slot]) + "])");
      cp.runtime[slot] = static_cast<int>(j);
    }
    for (size_t i = 0; i < ca.args.size(); i++)
      check_entry(ca.args[i], d, b, false, rat + ".args[" + std::to_string(i) + "]");
  }
}

// Kernel k on its cores: one kernel per processor of a core.
int place_kernel(const ProgramDesc& d, uint32_t k, const Board& b, const std::string& at, std::vector<CorePlan>& all) {
  const KernelDesc& kd = d.kernels[k];
  int slot = slot_of(kd.processor);
  if (slot < 0) throw invalid(at + ".processor: unknown processor");
  if (slot != 2 && kd.noc > 1) throw invalid(at + ".noc: " + std::to_string(kd.noc) + " (want 0 or 1)");
  check_core_set(kd.cores, b, at + ".cores");
  for (CoreCoord c : kd.cores.cores()) {
    CorePlan& cp = all[c.row * b.cols + c.col];
    if (cp.kernel[slot] >= 0) {
      uint32_t j = static_cast<uint32_t>(cp.kernel[slot]);
      throw invalid(at + ".cores: core " + core_text(c) + " already runs kernels[" + std::to_string(j) + "] (" +
                    d.kernels[j].name + ") on " + processor_name(kd.processor) +
                    "; a core runs at most one kernel per processor");
    }
    cp.kernel[slot] = static_cast<int>(k);
  }
  return slot;
}

// Every kernel on its cores with its args checked, and its KernelPlan; a
// kernel is compile_static when its compile args need nothing from a run.
void place_kernels(Program& prog, const Board& b, std::vector<CorePlan>& all) {
  const ProgramDesc& d = prog.desc;
  if (d.kernels.empty()) throw invalid("kernels: a program needs at least one kernel");
  if (d.kernels.size() > 64) throw invalid("kernels: at most 64 kernels (" + std::to_string(d.kernels.size()) + ")");
  for (uint32_t k = 0; k < d.kernels.size(); k++) {
    const KernelDesc& kd = d.kernels[k];
    std::string at = "kernels[" + std::to_string(k) + "] (" + kd.name + ")";
    int slot = place_kernel(d, k, b, at, all);
    check_kernel_args(kd, d, b, at);
    place_runtime_args(kd, k, slot, d, b, at, all);
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

// One CB config's own fields: its cores, size, indices and buffer param.
void check_cb_config(const CBConfig& cfg, const Program& prog, const Board& b, const std::string& at) {
  const ProgramDesc& d = prog.desc;
  check_core_set(cfg.cores, b, at + ".cores");
  if (cfg.total_bytes == 0) throw invalid(at + ".total_bytes must be > 0");
  if (cfg.indices.empty()) throw invalid(at + ".indices: a config needs at least one CB index");
  for (size_t j = 0; j < cfg.indices.size(); j++) {
    const CBIndexDesc& x = cfg.indices[j];
    std::string xat = at + ".indices[" + std::to_string(j) + "]";
    if (x.index >= 32) throw invalid(xat + ".index " + std::to_string(x.index) + " is out of range (0-31)");
    if (x.page_bytes == 0 || cfg.total_bytes % x.page_bytes != 0)
      throw invalid(xat + ".page_bytes " + std::to_string(x.page_bytes) + " must be > 0 and divide total_bytes " +
                    std::to_string(cfg.total_bytes));
    if (!format_known(x.format)) throw invalid(xat + ".format: unknown data format");
    if (x.tile_rows == 0 || x.tile_rows > 32 || (x.tile_rows & (x.tile_rows - 1)) || (x.tile_cols != 32 && x.tile_cols != 16))
      throw invalid(xat + ".tile [" + std::to_string(x.tile_rows) + ", " + std::to_string(x.tile_cols) +
                    "]: tiles have 1, 2, 4, 8, 16 or 32 rows and 16 or 32 columns");
  }
  if (cfg.buffer_param) {
    uint32_t p = *cfg.buffer_param;
    if (p >= d.params.size() || !d.params[p].is_buffer())
      throw invalid(at + ".buffer: param " + std::to_string(p) + " is not a buffer param");
    auto dec = prog.decls.find(p);
    if (dec != prog.decls.end() && dec->second.spec.placement != Placement::L1)
      throw invalid(at + ".buffer: param " + std::to_string(p) + " (" + d.params[p].name +
                    ") is declared in DRAM; a circular buffer sits on an L1 buffer");
  }
}

// The L1 address of a CB config that is not on a buffer: above the CBs
// already on any of its cores, 32-byte aligned; it must end inside L1.
uint64_t cb_config_address(const CBConfig& cfg, const std::vector<CoreCoord>& cores, const Board& b,
                           const std::vector<CorePlan>& all, const std::string& at) {
  uint64_t top = b.l1_unreserved_base;
  for (CoreCoord c : cores) top = std::max(top, all[c.row * b.cols + c.col].cb_top);
  uint64_t addr = align_up(top, 32);
  uint64_t end = addr + cfg.total_bytes;
  if (end > b.l1_size) {
    CoreCoord worst = cores[0];
    for (CoreCoord c : cores)
      if (all[c.row * b.cols + c.col].cb_top == top) {
        worst = c;
        break;
      }
    throw invalid(at + ": the circular buffers of core " + core_text(worst) + " need " +
                  std::to_string(end - b.l1_unreserved_base) + " bytes of L1; " +
                  std::to_string(b.l1_size - b.l1_unreserved_base) + " are free per core");
  }
  return addr;
}

// Circular buffers: each config at one address on all its cores, above
// the CBs already on any of them (as tt-metal places them), from the
// unreserved base up. Configs on an L1 buffer are placed at run.
void lay_out_cbs(const Program& prog, const Board& b, std::vector<CorePlan>& all) {
  const ProgramDesc& d = prog.desc;
  std::vector<std::array<int, 32>> cb_owner(b.cores());
  for (auto& o : cb_owner) o.fill(-1);
  for (auto& cp : all) cp.cb_top = b.l1_unreserved_base;
  for (uint32_t i = 0; i < d.cbs.size(); i++) {
    const CBConfig& cfg = d.cbs[i];
    std::string at = "cbs[" + std::to_string(i) + "]";
    check_cb_config(cfg, prog, b, at);
    std::vector<CoreCoord> cores = cfg.cores.cores();
    uint64_t addr = cfg.buffer_param ? 0 : cb_config_address(cfg, cores, b, all, at);
    for (CoreCoord c : cores) {
      uint32_t ci = c.row * b.cols + c.col;
      CorePlan& cp = all[ci];
      for (const CBIndexDesc& x : cfg.indices) {
        if (cb_owner[ci][x.index] >= 0)
          throw invalid(at + ": core " + core_text(c) + " already has circular buffer " + std::to_string(x.index) +
                        " (cbs[" + std::to_string(cb_owner[ci][x.index]) + "])");
        cb_owner[ci][x.index] = static_cast<int>(i);
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

// Semaphores: an id in range, at most once per core.
void check_semaphores(const ProgramDesc& d, const Board& b) {
  std::vector<uint32_t> sem_ids(b.cores(), 0);
  for (size_t i = 0; i < d.semaphores.size(); i++) {
    const SemaphoreDesc& s = d.semaphores[i];
    std::string at = "semaphores[" + std::to_string(i) + "]";
    check_core_set(s.cores, b, at + ".cores");
    if (s.id >= kSemaphoresPerCore)
      throw invalid(at + ".id " + std::to_string(s.id) + " is out of range (" + std::to_string(kSemaphoresPerCore) +
                    " semaphores per core)");
    for (CoreCoord c : s.cores.cores()) {
      uint32_t& m = sem_ids[c.row * b.cols + c.col];
      if (m & (1u << s.id))
        throw invalid(at + ": core " + core_text(c) + " already has semaphore " + std::to_string(s.id));
      m |= 1u << s.id;
    }
  }
}

}  // namespace

uint64_t Runner::compile(const ProgramDesc& desc) {
  auto prog = std::make_shared<Program>();
  prog->desc = desc;
  const Board& b = board_;
  check_buffer_decls(*prog, b);
  check_include_files(prog->desc);
  std::vector<CorePlan> all(b.cores());
  for (uint32_t i = 0; i < b.cores(); i++) all[i].core = CoreCoord{i / b.cols, i % b.cols}, all[i].index = i;
  place_kernels(*prog, b, all);
  lay_out_cbs(*prog, b, all);
  check_semaphores(prog->desc, b);
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
        now[i]->prebuilt = builder_.get(d.kernels[now[i]->index], pos, named, d);
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
                                                 const std::vector<std::shared_ptr<const Buffer>>& bufs) {
  if (kp.prebuilt) return kp.prebuilt;
  ArgSource src;
  src.board = &board_, src.prog = &prog, src.args = &args, src.bufs = &bufs;
  std::vector<uint32_t> pos;
  std::vector<std::pair<std::string, uint32_t>> named;
  compile_values(prog, kp.index, src, pos, named);
  std::vector<uint32_t> key = pos;
  for (auto& n : named) key.push_back(n.second);
  std::lock_guard<std::mutex> lock(kp.mu);
  auto& slot = kp.by_values[key];
  if (!slot) slot = builder_.get(prog.desc.kernels[kp.index], pos, named, prog.desc);
  return slot;
}

}  // namespace zyx::emu
