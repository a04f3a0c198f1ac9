// The watcher's NOC sanitizer (watcher.hpp): every NOC transfer's L1 and
// DRAM ranges against what the run's program allocated, and the NOC's
// alignment rule.
#include <algorithm>
#include <sstream>

#include "kernel_api.hpp"
#include "watcher.hpp"

namespace zyx::emu {

void build_noc_watch(RunState& rs, const Program& prog, const std::vector<std::shared_ptr<const Buffer>>& bufs) {
  const Board& b = *rs.board;
  NocWatch& w = rs.noc_watch;
  w.l1.assign(b.cores(), {});
  w.dram.assign(b.dram_banks, {});
  w.bufs = bufs;
  w.param_names.clear();
  for (const auto& p : prog.desc.params) w.param_names.push_back(p.name);
  uint64_t ub = b.l1_unreserved_base;
  for (uint32_t c = 0; c < b.cores(); c++) {
    auto& r = w.l1[c];
    r.push_back({MemRegion::Reserved, ZYX_EMU_L1_SIGNALS_OFFSET, ZYX_EMU_L1_SIGNALS_OFFSET + 32 * 4, 0, 0});
    r.push_back({MemRegion::Zeros, ZYX_EMU_L1_ZEROS_OFFSET, ZYX_EMU_L1_ZEROS_OFFSET + ZYX_EMU_L1_ZEROS_SIZE, 0, 0});
    r.push_back({MemRegion::Args, ZYX_EMU_L1_ARGS_OFFSET, ZYX_EMU_L1_ARGS_OFFSET + 6 * ZYX_EMU_L1_ARGS_SLOT, 0, 0});
    r.push_back({MemRegion::Semaphores, semaphore_offset(b, 0), ub, 0, 0});
  }
  for (const CorePlan& cp : prog.cores) {
    auto& r = w.l1[cp.index];
    for (uint32_t i = 0; i < 32; i++) {
      const CircularBuffer& cb = cp.cbs[i];
      if (!cb.configured) continue;
      uint64_t off = cb.offset;
      for (auto [ci, index] : cp.buffer_cbs)
        if (index == i) off = bufs[*prog.desc.cbs[ci].buffer_param]->address;
      r.push_back({MemRegion::CB, off, off + uint64_t(cb.page_size) * cb.num_pages, i, 0});
    }
  }
  for (size_t p = 0; p < bufs.size(); p++) {
    const auto& buf = bufs[p];
    if (!buf) continue;
    uint32_t param = static_cast<uint32_t>(p);
    if (buf->l1()) {
      for (uint32_t c = 0; c < b.cores(); c++)
        if (buf->on_core(c)) w.l1[c].push_back({MemRegion::Buffer, buf->address, buf->address + buf->span, param, 0});
      continue;
    }
    const Geometry& g = buf->geo;
    if (g.sharded()) {
      for (uint32_t k = 0; k < g.shards && k < g.shard_cores.size(); k++) {
        uint32_t bank = g.shard_unit(k, b);
        if (bank < w.dram.size())
          w.dram[bank].push_back({MemRegion::Buffer, buf->address, buf->address + buf->span, param, g.shard_pages()});
      }
      continue;
    }
    for (uint32_t bank = 0; bank < b.dram_banks; bank++) {
      uint64_t pages = buf->pages / b.dram_banks + (bank < buf->pages % b.dram_banks ? 1 : 0);
      w.dram[bank].push_back({MemRegion::Buffer, buf->address, buf->address + pages * g.aligned_page, param, pages});
    }
  }
  for (auto& r : w.l1) std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.begin < y.begin; });
  for (auto& r : w.dram) std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.begin < y.begin; });
}

namespace {

std::string region_text(const NocWatch& w, const MemRegion& r) {
  std::ostringstream s;
  switch (r.kind) {
    case MemRegion::Reserved: s << "the DPRINT signal words"; break;
    case MemRegion::Zeros: s << "MEM_ZEROS"; break;
    case MemRegion::Args: s << "the arg slots"; break;
    case MemRegion::Semaphores: s << "the semaphores"; break;
    case MemRegion::CB: s << "cb " << r.id; break;
    case MemRegion::Buffer:
      s << "buffer " << (r.id < w.param_names.size() ? "'" + w.param_names[r.id] + "'" : "?") << " (param " << r.id
        << ")";
      break;
  }
  s << " [" << hex(r.begin) << ", " << hex(r.end) << ")";
  return s.str();
}

const char* kRule = " (watcher check noc; ZYX_EMU_WATCHER=no-noc turns it off)";

// The region holding [a, a + n), or the nearest one below a (for the
// message), or null.
const MemRegion* find(const std::vector<MemRegion>& regions, uint64_t a, uint64_t n, const MemRegion** below) {
  *below = nullptr;
  for (const MemRegion& r : regions) {
    if (r.begin <= a && a + n <= r.end) return &r;
    if (r.begin <= a) *below = &r;
  }
  return nullptr;
}

}  // namespace

void noc_check_l1(uint32_t core, uint64_t off, uint64_t size, bool write, const char* op, const char* role) {
  RunState* rs = t_fiber->core->run;
  if (!rs->watch.noc || core >= rs->noc_watch.l1.size()) return;
  const NocWatch& w = rs->noc_watch;
  const MemRegion* below = nullptr;
  const MemRegion* r = find(w.l1[core], off, size ? size : 1, &below);
  if (r && !(write && r->kind == MemRegion::Zeros)) return;
  // Only a failure builds its message: a stream's construction copies the
  // global locale, whose shared reference count every worker thread would
  // otherwise bump on every NOC transfer.
  const Board& b = *rs->board;
  std::ostringstream s;
  if (r) {
    s << op << ": the " << role << " [" << hex(off) << ", +" << hex(size) << ") on core (" << core / b.cols << ","
      << core % b.cols << ") is MEM_ZEROS, which kernels only read" << kRule;
    kernel_fail(s.str());
  }
  s << op << ": the " << role << " [" << hex(off) << ", +" << hex(size) << ") in the L1 of core (" << core / b.cols
    << "," << core % b.cols << ") ";
  if (below && off < below->end)
    s << "runs " << (off + size - below->end) << " byte(s) past the end of " << region_text(w, *below);
  else
    s << "is outside everything the program allocated there (its CBs, L1 buffers and semaphores, the arg slots, "
         "MEM_ZEROS)"
      << (below ? "; the nearest below is " + region_text(w, *below) : std::string());
  s << kRule;
  kernel_fail(s.str());
}

void noc_check_dram(uint32_t bank, uint64_t addr, uint64_t size, const char* op) {
  RunState* rs = t_fiber->core->run;
  if (!rs->watch.noc || bank >= rs->noc_watch.dram.size()) return;
  const NocWatch& w = rs->noc_watch;
  const MemRegion* below = nullptr;
  if (find(w.dram[bank], addr, size ? size : 1, &below)) return;
  std::ostringstream s;
  s << op << ": DRAM bank " << bank << " [" << hex(addr) << ", +" << hex(size) << ") ";
  if (below && addr < below->end) {
    s << "runs " << (addr + size - below->end) << " byte(s) past the end of " << region_text(w, *below);
  } else {
    s << "is outside every DRAM buffer of the run";
    // Which page it would be of each interleaved buffer below it (the
    // kernel computed the address from one of their bases).
    const char* sep = ": ";
    for (const MemRegion& r : w.dram[bank]) {
      const Buffer* buf = r.id < w.bufs.size() ? w.bufs[r.id].get() : nullptr;
      if (r.begin > addr || !buf || buf->geo.sharded() || !buf->geo.aligned_page) continue;
      uint64_t page_in_bank = (addr - r.begin) / buf->geo.aligned_page;
      s << sep << "as a page of " << region_text(w, r) << " it is page " << page_in_bank * w.dram.size() + bank
        << " of its " << buf->pages;
      sep = "; ";
    }
  }
  s << kRule;
  kernel_fail(s.str());
}

void noc_check_alignment(uint64_t local, uint64_t remote, bool remote_dram, bool read, const char* op) {
  RunState* rs = t_fiber->core->run;
  if (!rs->watch.noc) return;
  // tt-metal's NOC parameters: L1 reads and writes 16 bytes, DRAM writes
  // 16, DRAM reads 32 (Wormhole) or 64 (Blackhole), the board's DRAM
  // alignment.
  uint64_t align = remote_dram && read ? rs->board->dram_alignment : 16;
  if ((local & (align - 1)) == (remote & (align - 1))) return;
  std::ostringstream s;
  s << op << ": the local L1 address " << hex(local) << " and the " << (remote_dram ? "DRAM" : "L1") << " address "
    << hex(remote) << " differ modulo " << align << " (a NOC " << (read ? "read" : "write") << (remote_dram ? " of DRAM" : " of L1")
    << " needs both at the same offset within " << align << " bytes; on a card the data lands shifted)" << kRule;
  kernel_fail(s.str());
}

}  // namespace zyx::emu
