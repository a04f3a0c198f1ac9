// What the kernel-API files share (kernel_api.hpp): naming the calling
// kernel in messages, blocking waits, and resolving L1 addresses.
#include <cstdio>
#include <sstream>

#include "kernel_api.hpp"
#include "watcher.hpp"

namespace zyx::emu {

std::string where(const Fiber* f) {
  std::ostringstream s;
  s << "core (" << f->core->row << "," << f->core->col << ") " << f->desc->name << " ("
    << (f->trisc == Trisc::Single ? processor_name(f->processor) : trisc_name(f->trisc)) << ")";
  return s.str();
}

[[noreturn]] void kernel_fail(const std::string& msg) {
  if (Fiber* f = t_fiber) {
    capture_site(f->api);
    f->api.failing = true;
  }
  throw Error("run_error", msg);
}

void api_note_throw() {
  Fiber* f = t_fiber;
  if (f && !f->api.failing) capture_site(f->api);
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

bool satisfied(const CoreState& c, const Wait& w) {
  switch (w.kind) {
    case Wait::None: return true;
    case Wait::CBFront: return c.cbs[w.cb].available() >= w.pages;
    case Wait::CBBack: return c.cbs[w.cb].num_pages - c.cbs[w.cb].available() >= w.pages;
    case Wait::SrcOps: return c.trisc.src_count > 0;
    case Wait::SrcSpace: return c.trisc.src_count < TriscHandover::kSrcDepth;
    case Wait::PackOps: return c.trisc.pack_count > 0;
    case Wait::PackSpace: return c.trisc.pack_count < TriscHandover::kSrcDepth;
    case Wait::DstFree: return c.trisc.sec_count < (c.dst_full_sync ? 1u : 2u);
    case Wait::DstDone: return c.trisc.sec_count > 0;
    case Wait::Word: {
      uint32_t v = __atomic_load_n(w.word, __ATOMIC_ACQUIRE);
      if (w.cmp == 0) return v == w.value;
      if (w.cmp == 1) return v >= w.value;
      return v != w.value;
    }
  }
  return true;
}

void block_until(const Wait& w) {
  Fiber* f = t_fiber;
  while (!satisfied(*f->core, w)) {
    f->wait = w;
    f->blocked = true;
    fiber_switch(f->ctx, f->worker->sched);
    f->blocked = false;
    if (f->core->run->cancel.load(std::memory_order_relaxed)) throw Cancelled{};
  }
  f->wait = Wait{};
}

// One line of the deadlock table: the kernel, what it waits on (the CB and
// its fill level, or the semaphore or signal word and its value), the line
// of the blocked call, the last waypoint and the last DPRINT line.
std::string describe_wait(const Fiber* f) {
  const Wait& w = f->wait;
  std::ostringstream s;
  s << where(f);
  if (w.kind == Wait::CBFront || w.kind == Wait::CBBack) {
    const auto& cb = f->core->cbs[w.cb];
    s << " waiting on cb " << w.cb << " ("
      << (w.kind == Wait::CBFront ? "cb_wait_front for " : "cb_reserve_back for ") << w.pages << " page(s); "
      << cb.available() << " of " << cb.num_pages << " filled)";
  } else if (w.kind == Wait::Word) {
    const RunState* rs = f->core->run;
    uintptr_t a = reinterpret_cast<uintptr_t>(w.word);
    uintptr_t arena = reinterpret_cast<uintptr_t>(rs->l1->core_base(0));
    uint64_t off = a & (L1Arena::kWindow - 1);
    uint32_t core = static_cast<uint32_t>((a - arena) / L1Arena::kWindow);
    const Board& b = *rs->board;
    s << " waiting on the L1 word at 0x" << std::hex << off << std::dec;
    if (core < b.cores() && core != f->core->index) s << " of core (" << core / b.cols << "," << core % b.cols << ")";
    if (off >= semaphore_offset(b, 0) && off < b.l1_unreserved_base && (off - semaphore_offset(b, 0)) % 16 == 0)
      s << " (semaphore " << (off - semaphore_offset(b, 0)) / kSemaphoreStride;
    else if (off >= ZYX_EMU_L1_SIGNALS_OFFSET && off < ZYX_EMU_L1_SIGNALS_OFFSET + 128)
      s << " (DPRINT signal " << (off - ZYX_EMU_L1_SIGNALS_OFFSET) / 4;
    else
      s << " (";
    s << (s.str().back() == '(' ? "" : ": ") << "wait for " << (w.cmp == 0 ? "== " : w.cmp == 1 ? ">= " : "!= ")
      << w.value << ", value " << __atomic_load_n(w.word, __ATOMIC_ACQUIRE) << ")";
  } else if (w.kind != Wait::None) {
    s << " waiting " << trisc_wait_text(*f->core, w.kind);
  } else {
    s << " blocked";
  }
  if (std::string at = site_of_pc(f, w.site); !at.empty()) s << at;
  if (f->api.waypoint[0]) s << " (last waypoint " << f->api.waypoint << ")";
  if (!f->api.last_dprint.empty()) s << " (last DPRINT: \"" << f->api.last_dprint << "\")";
  return s.str();
}

uint32_t l1_va(const CoreState* core, uint64_t offset) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(core->l1) + offset);
}
uint32_t l1_va(uint64_t offset) { return l1_va(t_fiber->core, offset); }

// Resolves an L1 address (a host pointer below 4 GiB or a plain offset) of
// core `core` to a host pointer, checking [addr, addr+size) fits in L1.
uint8_t* l1_target(const CoreState* core, uint32_t addr, uint64_t size, const char* op) {
  uint64_t off = addr & (L1Arena::kWindow - 1);
  uint64_t l1_size = core->run->board->l1_size;
  if (off > l1_size || size > l1_size - off) {
    std::ostringstream s;
    s << op << ": L1 range [0x" << std::hex << off << ", +0x" << size << ") is outside the core's " << std::dec
      << l1_size << " bytes of L1";
    kernel_fail(s.str());
  }
  return core->l1 + off;
}

}  // namespace zyx::emu
