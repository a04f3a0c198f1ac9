// The watcher's NOC sanitizer (watcher.hpp): every NOC transfer's L1 and
// DRAM ranges against what the run's program allocated, and the NOC's
// alignment rule.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "kernel_api.hpp"
#include "watcher.hpp"

namespace zyx::emu {

// Who wrote which bytes of each DRAM bank in the run (the race check).
//
// The pages of the run's DRAM buffers have a word each (`Pages`): the core,
// kernel and epoch (below) of the last write that covered the whole page.
// A write of whole pages, the common case, checks and replaces those words
// with compare-and-swap, with no lock that cores share and no allocation.
// Every other write (part of a page, or outside the run's buffers) takes
// the bank's lock and its map of disjoint spans by start address: the pages
// it touches move there first (their word becomes kMixed), so each byte has
// one record, the page word or the map. A core's writes of one epoch that
// touch merge into one span, so a core that writes in order keeps a few.
//
// Happens-before through semaphores: each core has a vector clock (its row
// of `clocks`; a core's own entry is its epoch, starting at 1). A NOC write,
// atomic increment or inline write into a word of a core's L1 that a kernel
// may wait on (a release) first joins the writer's clock into that word's
// clock and then starts the writer's next epoch; a wait on the word that
// returns (an acquire) joins the word's clock into the waiter's. A write
// of core B over bytes that core A wrote in epoch e is ordered after it
// when B's clock holds at least e for A.
struct DramWrites {
  struct Span {
    uint64_t end;
    uint32_t core;
    uint32_t epoch;
    const Fiber* fiber;
  };
  // [begin, end) of a bank in whole pages of `page` bytes, a word each: 0
  // (not written in the run), kMixed, or page_word(core, slot, epoch).
  struct Pages {
    uint64_t begin, end, page;
    std::atomic<uint64_t>* words;
  };
  static constexpr uint64_t kMixed = uint64_t(1) << 63;  // the page's bytes are in the bank's map
  static constexpr uint32_t kSlots = 5;                   // fibers per core (CoreState::fibers)
  static uint64_t page_word(uint32_t core, uint32_t slot, uint32_t epoch) {
    return uint64_t(slot) << 56 | uint64_t(core) << 32 | epoch;
  }
  static uint32_t word_core(uint64_t w) { return uint32_t(w >> 32) & 0xffffff; }
  static uint32_t word_slot(uint64_t w) { return uint32_t(w >> 56) & 0x7f; }
  static uint32_t word_epoch(uint64_t w) { return uint32_t(w); }

  struct Bank {
    std::mutex mu;  // guards `spans` and turning page words into kMixed
    std::map<uint64_t, Span> spans;
    std::vector<Pages> pages;  // sorted by begin, disjoint
  };
  std::unique_ptr<Bank[]> banks;
  uint32_t cores;
  // The words of every bank's Pages: zeroed by calloc, so that the pages of
  // a large buffer a run does not write cost no memory.
  std::unique_ptr<std::atomic<uint64_t>, void (*)(void*)> words{nullptr, std::free};
  // The kernel behind a page word's core and slot, for the message; each
  // core sets its own entries before its first whole-page write.
  std::unique_ptr<std::atomic<const Fiber*>[]> fibers;
  // clocks[c * cores + d]: what core c knows of core d's epoch. A core's
  // row is used only by its own kernels, which run on one worker at a time.
  std::vector<uint32_t> clocks;
  std::mutex sync_mu;  // guards `sync`
  // The clock of each L1 word released to, by (core << 32 | offset).
  std::unordered_map<uint64_t, std::vector<uint32_t>> sync;
  DramWrites(uint32_t n_banks, uint32_t n_cores)
      : banks(new Bank[n_banks]),
        cores(n_cores),
        fibers(new std::atomic<const Fiber*>[size_t(n_cores) * kSlots]()),
        clocks(size_t(n_cores) * n_cores, 0) {
    for (uint32_t c = 0; c < n_cores; c++) clocks[size_t(c) * n_cores + c] = 1;
  }
  uint32_t* clock(uint32_t core) { return &clocks[size_t(core) * cores]; }
};

namespace {

// The page words of a run, at most (16 MiB): a buffer past them keeps its
// writes in the banks' maps, so that a run over huge buffers does not
// allocate (and, from the heap, clear) words for pages it may not write.
constexpr uint64_t kMaxPageWords = uint64_t(1) << 21;

// The page words of each bank, one per page of the run's DRAM buffers
// there (`dram`: NocWatch::dram, sorted by begin).
void add_page_words(DramWrites& dw, const std::vector<std::vector<MemRegion>>& dram,
                    const std::vector<std::shared_ptr<const Buffer>>& bufs) {
  uint64_t total = 0;
  for (size_t bank = 0; bank < dram.size(); bank++) {
    std::vector<DramWrites::Pages>& pages = dw.banks[bank].pages;
    for (const MemRegion& r : dram[bank]) {
      const Buffer* buf = r.id < bufs.size() ? bufs[r.id].get() : nullptr;
      uint64_t page = buf ? buf->geo.aligned_page : 0;
      uint64_t n = page ? (r.end - r.begin) / page : 0;
      // Two regions over the same bytes (shards of one buffer in one bank):
      // the first keeps words, the rest go to the map.
      if (!n || total + n > kMaxPageWords || (!pages.empty() && r.begin < pages.back().end)) continue;
      pages.push_back({r.begin, r.begin + n * page, page, nullptr});
      total += n;
    }
  }
  if (!total) return;
  dw.words.reset(static_cast<std::atomic<uint64_t>*>(std::calloc(total, sizeof(std::atomic<uint64_t>))));
  if (!dw.words) throw std::bad_alloc();
  std::atomic<uint64_t>* next = dw.words.get();
  for (size_t bank = 0; bank < dram.size(); bank++)
    for (DramWrites::Pages& p : dw.banks[bank].pages) {
      p.words = next;
      next += (p.end - p.begin) / p.page;
    }
}

}  // namespace

void noc_watch_core_l1(RunState& rs, const Program& prog, const CorePlan* cp, uint32_t core) {
  const Board& b = *rs.board;
  NocWatch& w = rs.noc_watch;
  auto& r = w.l1[core];
  r.reserve(8);  // the regions below, the CBs and a buffer or two: one allocation per core and run
  r.push_back({MemRegion::Reserved, ZYX_EMU_L1_SIGNALS_OFFSET, ZYX_EMU_L1_SIGNALS_OFFSET + 32 * 4, 0, 0});
  r.push_back({MemRegion::Zeros, ZYX_EMU_L1_ZEROS_OFFSET, ZYX_EMU_L1_ZEROS_OFFSET + ZYX_EMU_L1_ZEROS_SIZE, 0, 0});
  r.push_back({MemRegion::Args, ZYX_EMU_L1_ARGS_OFFSET, ZYX_EMU_L1_ARGS_OFFSET + 6 * ZYX_EMU_L1_ARGS_SLOT, 0, 0});
  r.push_back({MemRegion::Semaphores, semaphore_offset(b, 0), b.l1_unreserved_base, 0, 0});
  if (cp)
    for (uint32_t i = 0; i < 32; i++) {
      const CircularBuffer& cb = cp->cbs[i];
      if (!cb.configured) continue;
      uint64_t off = cb.offset;
      for (auto [ci, index] : cp->buffer_cbs)
        if (index == i) off = w.bufs[*prog.desc.cbs[ci].buffer_param]->address;
      r.push_back({MemRegion::CB, off, off + uint64_t(cb.page_size) * cb.num_pages, i, 0});
    }
  for (size_t p = 0; p < w.bufs.size(); p++) {
    const auto& buf = w.bufs[p];
    if (buf && buf->l1() && buf->on_core(core))
      r.push_back({MemRegion::Buffer, buf->address, buf->address + buf->span, static_cast<uint32_t>(p), 0});
  }
  std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.begin < y.begin; });
}

void build_noc_watch(RunState& rs, const Program& prog, const std::vector<std::shared_ptr<const Buffer>>& bufs) {
  const Board& b = *rs.board;
  NocWatch& w = rs.noc_watch;
  w.l1.assign(b.cores(), {});
  w.dram.assign(b.dram_banks, {});
  w.bufs = bufs;
  w.param_names.clear();
  for (const auto& p : prog.desc.params) w.param_names.push_back(p.name);
  std::vector<const CorePlan*> plans(b.cores(), nullptr);
  for (const CorePlan& cp : prog.cores) plans[cp.index] = &cp;
  for (uint32_t c = 0; c < b.cores(); c++)
    if (!plans[c] || !plans[c]->runs()) noc_watch_core_l1(rs, prog, plans[c], c);
  for (size_t p = 0; p < bufs.size(); p++) {
    const auto& buf = bufs[p];
    if (!buf) continue;
    uint32_t param = static_cast<uint32_t>(p);
    if (buf->l1()) continue;  // in the cores' lists (noc_watch_core_l1)
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
  for (auto& r : w.dram) std::sort(r.begin(), r.end(), [](auto& x, auto& y) { return x.begin < y.begin; });
  w.writes = std::make_shared<DramWrites>(b.dram_banks, b.cores());
  if (rs.watch.race) add_page_words(*w.writes, w.dram, bufs);
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

const char* kCbRule =
    " (watcher check cb: a kernel owns only the pages it reserved or waited for; ZYX_EMU_WATCHER=no-cb turns it off)";
const char* kCbAccessRule =
    " (watcher check cb: a kernel's own loads and stores through a CB pointer reach only the pages its core's kernels "
    "reserved or waited for; ZYX_EMU_WATCHER=no-cb-access turns it off)";

// Where an access starting at L1 offset `off` of cb stands in its windows.
struct CbWindows {
  bool in_use = false;  // a page reserved, waited for, pushed or popped in the run
  bool inside = false;  // off is in the reserved or the waited window
  bool waited = false;  // ... in the waited one
  uint64_t reach = 0;   // inside: the end of that window and of the windows touching it
};

CbWindows cb_windows_at(const CircularBuffer& cb, uint64_t off) {
  CbWindows v;
  v.in_use = cb.reserved || cb.waited || cb.pushed || cb.popped;
  struct Win {
    uint64_t begin, end;
    bool waited;
  };
  // Each window as up to two intervals: a reservation or wait that wraps
  // past the CB's last page goes on at its first.
  Win w[4];
  int n = 0;
  uint64_t end = cb.offset + uint64_t(cb.page_size) * cb.num_pages;
  auto add = [&](uint32_t page, uint32_t pages, bool waited) {
    if (!pages) return;
    uint64_t b = cb.offset + uint64_t(page) * cb.page_size;
    uint64_t e = b + uint64_t(pages) * cb.page_size;
    if (e <= end) {
      w[n++] = {b, e, waited};
      return;
    }
    w[n++] = {b, end, waited};
    w[n++] = {cb.offset, cb.offset + (e - end), waited};
  };
  add(cb.rd_page, cb.waited, true);
  add(cb.wr_page, cb.reserved, false);
  const Win* start = nullptr;
  for (int i = 0; i < n; i++)
    if (w[i].begin <= off && off < w[i].end) start = &w[i];
  if (!start) return v;
  v.inside = true;
  v.waited = start->waited;
  v.reach = start->end;
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < n; i++)
      if (w[i].begin == v.reach) v.reach = w[i].end, grew = true;
  }
  return v;
}

// Fails the kernel for [off, off + size) of CB `id`, which its windows v do
// not allow; `subject` names the range ("noc_async_read: the destination
// [0x19000, +0x1000)").
[[noreturn]] void cb_fail_outside(const CircularBuffer& cb, uint32_t id, const CbWindows& v, uint64_t off,
                                  uint64_t size, const std::string& subject, const char* rule) {
  std::ostringstream s;
  s << subject;
  if (v.inside) {
    s << " runs " << (off + size - v.reach) << " byte(s) past the " << (v.waited ? cb.waited : cb.reserved)
      << " page(s) of cb " << id
      << (v.waited ? " waited for with cb_wait_front and not yet popped"
                   : " reserved with cb_reserve_back and not yet pushed");
  } else {
    s << " is page " << (off - cb.offset) / cb.page_size << " of cb " << id << ", outside the pages its kernels hold: ";
    if (cb.reserved) s << cb.reserved << " page(s) from page " << cb.wr_page << " reserved with cb_reserve_back";
    if (cb.reserved && cb.waited) s << ", ";
    if (cb.waited) s << cb.waited << " page(s) from page " << cb.rd_page << " waited for with cb_wait_front";
    if (!cb.reserved && !cb.waited) s << "none reserved with cb_reserve_back or waited for with cb_wait_front";
  }
  s << rule;
  kernel_fail(s.str());
}

// The CB protocol on a NOC transfer's side in one of the calling core's own
// CBs (watcher check cb): a range that starts in the pages the core's
// kernels reserved (cb_reserve_back, not yet pushed) or waited for
// (cb_wait_front, not yet popped) must end within them; two such windows
// that touch count as one. A range that starts outside both is an error
// once the CB is in use (a page reserved, waited for, pushed or popped in
// the run): it reads into or writes from pages the kernel does not own.
// Before that (a CB used as scratch space, without the protocol) it is not
// judged: only the NOC check's bounds of the whole CB apply to it.
void cb_check_window(const CoreState& core, const MemRegion& r, uint64_t off, uint64_t size, const char* op,
                     const char* role) {
  const CircularBuffer& cb = core.cbs[r.id];
  if (cb.on_buffer || !cb.page_size) return;
  CbWindows v = cb_windows_at(cb, off);
  if (!v.in_use || (v.inside && off + size <= v.reach)) return;
  std::ostringstream s;
  s << op << ": the " << role << " [" << hex(off) << ", +" << hex(size) << ")";
  cb_fail_outside(cb, r.id, v, off, size, s.str(), kCbRule);
}

}  // namespace

void cb_check_kernel_access(uint64_t off, uint64_t size, bool write) {
  const CoreState& core = *t_fiber->core;
  uint32_t flagged = kCircularBuffersPerCore;
  CbWindows flagged_v;
  // CB indices may share bytes (two indices of one config, a CB over an L1
  // buffer another CB also covers): the access passes when any CB there
  // allows it.
  for (uint32_t i = 0; i < core.ncb_ids; i++) {
    uint32_t id = core.cb_ids[i];
    const CircularBuffer& cb = core.cbs[id];
    if (off < cb.offset || off - cb.offset >= uint64_t(cb.page_size) * cb.num_pages) continue;
    if (cb.on_buffer) return;
    CbWindows v = cb_windows_at(cb, off);
    if (!v.in_use || (v.inside && off + size <= v.reach)) return;
    if (flagged == kCircularBuffersPerCore) flagged = id, flagged_v = v;
  }
  if (flagged == kCircularBuffersPerCore) return;
  std::ostringstream s;
  s << "the kernel's own " << (write ? "store to" : "load from") << " [" << hex(off) << ", +" << hex(size)
    << ") (a plain access through a pointer)";
  cb_fail_outside(core.cbs[flagged], flagged, flagged_v, off, size, s.str(), kCbAccessRule);
}

void noc_check_l1(uint32_t core, uint64_t off, uint64_t size, bool write, const char* op, const char* role) {
  RunState* rs = t_fiber->core->run;
  if (!rs->watch.noc || core >= rs->noc_watch.l1.size()) return;
  const NocWatch& w = rs->noc_watch;
  const MemRegion* below = nullptr;
  const MemRegion* r = find(w.l1[core], off, size ? size : 1, &below);
  if (r) {
    if (r->kind == MemRegion::CB && rs->watch.cb && core == t_fiber->core->index)
      cb_check_window(*t_fiber->core, *r, off, size ? size : 1, op, role);
    if (!(write && r->kind == MemRegion::Zeros)) return;
  }
  // Only a failure builds a message: a stream costs more than the check
  // (its locale is shared by every worker thread).
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

namespace {

// Records [addr, end) of a bank as written by core `me` in `epoch`: the parts
// of older spans it covers are cut away (they are ordered before it), and it
// merges with the touching spans of the same core and epoch.
void record_dram_write(std::map<uint64_t, DramWrites::Span>& spans, uint64_t addr, uint64_t end,
                       DramWrites::Span mine) {
  auto it = spans.upper_bound(addr);
  if (it != spans.begin() && std::prev(it)->second.end > addr) --it;
  while (it != spans.end() && it->first < end) {
    uint64_t b = it->first;
    DramWrites::Span old = it->second;
    it = spans.erase(it);
    if (b < addr) spans[b] = {addr, old.core, old.epoch, old.fiber};
    if (old.end > end) spans[end] = old;
  }
  auto next = spans.find(end);
  if (next != spans.end() && next->second.core == mine.core && next->second.epoch == mine.epoch) {
    mine.end = next->second.end;
    spans.erase(next);
  }
  auto prev = spans.lower_bound(addr);
  if (prev != spans.begin()) {
    --prev;
    if (prev->second.end == addr && prev->second.core == mine.core && prev->second.epoch == mine.epoch) {
      prev->second.end = mine.end;
      return;
    }
  }
  spans[addr] = mine;
}

// Fails the calling kernel: its write of [addr, addr + size) of a bank
// overlaps [from, to), which `core` (its kernel `fiber`) wrote unordered.
[[noreturn]] void race_fail(const RunState& rs, uint32_t bank, uint64_t addr, uint64_t size, uint64_t from,
                            uint64_t to, uint32_t core, const Fiber* fiber, const char* op) {
  const Board& b = *rs.board;
  std::ostringstream s;
  s << op << ": DRAM bank " << bank << " [" << hex(addr) << ", +" << hex(size) << ") overlaps ["
    << hex(std::max(from, addr)) << ", " << hex(std::min(to, addr + size)) << "), which core (" << core / b.cols << ","
    << core % b.cols << ")";
  if (fiber && fiber->desc) s << " " << fiber->desc->name;
  s << " wrote earlier in this run, and no semaphore handshake (a noc_semaphore_inc or noc_semaphore_set_remote "
       "from that core after its write, waited for on this core with noc_semaphore_wait before this write) orders "
       "the two: two cores writing the same DRAM bytes in one run race (on a card the last write to land wins, by "
       "timing) (watcher check race; ZYX_EMU_WATCHER=no-race turns it off)";
  kernel_fail(s.str());
}

// The bank's page words over [addr, end) move into its map (under its lock).
void pages_to_spans(DramWrites& dw, DramWrites::Bank& bk, uint64_t addr, uint64_t end) {
  for (const DramWrites::Pages& pg : bk.pages) {
    if (pg.end <= addr || pg.begin >= end) continue;
    uint64_t first = (std::max(addr, pg.begin) - pg.begin) / pg.page;
    uint64_t last = (std::min(end, pg.end) - pg.begin + pg.page - 1) / pg.page;
    for (uint64_t i = first; i < last; i++) {
      uint64_t w = pg.words[i].exchange(DramWrites::kMixed, std::memory_order_acq_rel);
      if (!w || w == DramWrites::kMixed) continue;
      uint32_t core = DramWrites::word_core(w);
      const Fiber* f = dw.fibers[core * DramWrites::kSlots + DramWrites::word_slot(w)].load(std::memory_order_relaxed);
      uint64_t b = pg.begin + i * pg.page;
      record_dram_write(bk.spans, b, b + pg.page, {b + pg.page, core, DramWrites::word_epoch(w), f});
    }
  }
}

// The race check of [from, end) of a write of [addr, addr + size) through
// the bank's map (a write that is not of whole pages with words, or the
// rest of one from a page already in the map).
void note_in_spans(RunState& rs, DramWrites& dw, uint32_t bank, uint64_t from, uint64_t end, uint64_t addr,
                   uint64_t size, const char* op) {
  const uint32_t me = t_fiber->core->index;
  const uint32_t* known = dw.clock(me);  // this core's own row: no lock
  const uint32_t epoch = known[me];
  DramWrites::Span other{0, 0, 0, nullptr};  // a copy: the map may change once unlocked
  uint64_t other_begin = 0;
  {
    DramWrites::Bank& bk = dw.banks[bank];
    std::lock_guard<std::mutex> lock(bk.mu);
    pages_to_spans(dw, bk, from, end);
    auto& spans = bk.spans;
    auto it = spans.upper_bound(from);
    // A core writing on from where it wrote last (its pages of a buffer, in
    // order) in the same epoch: its span grows in place.
    if (it != spans.begin() && (it == spans.end() || it->first >= end)) {
      auto& prev = std::prev(it)->second;
      if (prev.core == me && prev.epoch == epoch && prev.end >= from) {
        prev.end = std::max(prev.end, end);
        return;
      }
    }
    // Another core's bytes overlapped: a race unless a semaphore handshake
    // ordered that core's write before this one.
    if (it != spans.begin() && std::prev(it)->second.end > from) --it;
    for (; it != spans.end() && it->first < end; ++it) {
      const DramWrites::Span& sp = it->second;
      if (sp.core != me && known[sp.core] < sp.epoch) {
        other = sp, other_begin = it->first;
        break;
      }
    }
    if (!other.end) {
      record_dram_write(spans, from, end, {end, me, epoch, t_fiber});
      return;
    }
  }
  race_fail(rs, bank, addr, size, other_begin, other.end, other.core, other.fiber, op);
}

// The words of the pages of `bk` that hold [addr, end) whole, or null.
const DramWrites::Pages* whole_pages(const DramWrites::Bank& bk, uint64_t addr, uint64_t end) {
  for (const DramWrites::Pages& pg : bk.pages)
    if (pg.begin <= addr && end <= pg.end)
      return (addr - pg.begin) % pg.page == 0 && (end - pg.begin) % pg.page == 0 ? &pg : nullptr;
  return nullptr;
}

}  // namespace

void noc_note_dram_write(uint32_t bank, uint64_t addr, uint64_t size, const char* op) {
  RunState* rs = t_fiber->core->run;
  DramWrites* dw = rs->noc_watch.writes.get();
  if (!rs->watch.race || !dw || !size || bank >= rs->board->dram_banks) return;
  const uint64_t end = addr + size;
  const DramWrites::Pages* pg = whole_pages(dw->banks[bank], addr, end);
  if (!pg) return note_in_spans(*rs, *dw, bank, addr, end, addr, size, op);
  const uint32_t me = t_fiber->core->index;
  const uint32_t* known = dw->clock(me);  // this core's own row: no lock
  const uint32_t slot = static_cast<uint32_t>(t_fiber - t_fiber->core->fibers.data());
  std::atomic<const Fiber*>& named = dw->fibers[me * DramWrites::kSlots + slot];
  if (named.load(std::memory_order_relaxed) != t_fiber) named.store(t_fiber, std::memory_order_relaxed);
  const uint64_t mine = DramWrites::page_word(me, slot, known[me]);
  for (uint64_t a = addr; a < end; a += pg->page) {
    std::atomic<uint64_t>& word = pg->words[(a - pg->begin) / pg->page];
    uint64_t old = word.load(std::memory_order_acquire);
    while (old != mine) {
      if (old == DramWrites::kMixed) return note_in_spans(*rs, *dw, bank, a, end, addr, size, op);
      uint32_t core = DramWrites::word_core(old);
      if (old && core != me && known[core] < DramWrites::word_epoch(old)) {
        // The overlap: the following pages of this write with the same writer.
        uint64_t to = a + pg->page;
        while (to < end && pg->words[(to - pg->begin) / pg->page].load(std::memory_order_acquire) == old)
          to += pg->page;
        const Fiber* f = dw->fibers[core * DramWrites::kSlots + DramWrites::word_slot(old)].load(
            std::memory_order_relaxed);
        race_fail(*rs, bank, addr, size, a, to, core, f, op);
      }
      if (word.compare_exchange_weak(old, mine, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    }
  }
}

void noc_note_release(uint32_t core, uint64_t off) {
  RunState* rs = t_fiber->core->run;
  DramWrites* dw = rs->noc_watch.writes.get();
  if (!rs->watch.race || !dw || core >= dw->cores) return;
  const uint32_t me = t_fiber->core->index;
  uint32_t* mine = dw->clock(me);
  {
    std::lock_guard<std::mutex> lock(dw->sync_mu);
    auto& word = dw->sync[uint64_t(core) << 32 | (off & ~uint64_t(3))];
    if (word.empty()) word.assign(dw->cores, 0);
    for (uint32_t c = 0; c < dw->cores; c++) word[c] = std::max(word[c], mine[c]);
  }
  mine[me]++;  // this core's writes from here on are not ordered by what it released
}

void noc_note_acquire(uint32_t core, uint64_t off) {
  RunState* rs = t_fiber->core->run;
  DramWrites* dw = rs->noc_watch.writes.get();
  if (!rs->watch.race || !dw || core >= dw->cores) return;
  uint32_t* mine = dw->clock(t_fiber->core->index);
  std::lock_guard<std::mutex> lock(dw->sync_mu);
  auto it = dw->sync.find(uint64_t(core) << 32 | (off & ~uint64_t(3)));
  if (it == dw->sync.end()) return;
  for (uint32_t c = 0; c < dw->cores; c++) mine[c] = std::max(mine[c], it->second[c]);
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
