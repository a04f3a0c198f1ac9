// The watcher's strict NOC mode (watcher.hpp, docs/emulator.md "Debugging
// kernels"). On a card a NOC read's data lands in L1 some time before its
// barrier returns, and a write reads its source some time before its flush:
// a kernel that uses the data early, or changes or hands on the source
// early, works or not by timing. In strict mode the emulator takes the
// latest moment: a read's data (copied from its source when issued) lands
// at the read barrier, so a kernel that loads it before reads what L1 held
// before, as on a card that is slow; and each place where the emulator can
// see the data handed on before its barrier is an error:
// - cb_push_back of pages an outstanding read is still filling;
// - a NOC write or multicast whose source an outstanding read is filling;
// - cb_pop_front of pages that are the source of a write not yet flushed;
// - a write barrier or flush that finds a write's source changed since the
//   write was issued;
// - with strict-noc-loads (or the kernel define ZYX_EMU_STRICT_NOC_LOADS),
//   the kernel's own loads and stores of a read's destination before its
//   barrier: the host pages holding it are inaccessible until the data
//   lands (two mprotect calls per read: far slower than strict mode alone), and the fault handler reports an access to the destination
//   (noc_strict_guard_fault, describe_fault). An access to another part of
//   such a page (other data, or another core's NOC transfer) opens the page
//   and goes on: that read is no longer guarded there.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>

#include "kernel_api.hpp"
#include "watcher.hpp"

namespace zyx::emu {

namespace {

const char* kStrictRule =
    " (watcher strict NOC mode: data lands at the barrier; ZYX_EMU_WATCHER=strict-noc or the kernel define "
    "ZYX_EMU_STRICT_NOC turns it on)";

NocPending::Transfer& next_slot(std::vector<NocPending::Transfer>& list, size_t& n) {
  if (n == list.size()) list.emplace_back();
  return list[n++];
}

bool overlaps(const NocPending::Transfer& t, uint64_t off, uint64_t size) {
  return t.off < off + size && off < t.off + t.size;
}

// The host page size, read before any page is guarded (the fault handler
// uses it).
const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));

// Makes the host pages holding [p, p + n) inaccessible (guard) or
// accessible again. Returns whether mprotect succeeded.
bool guard_pages(const uint8_t* p, uint64_t n, bool guard) {
  uintptr_t b = reinterpret_cast<uintptr_t>(p) & ~(kPage - 1);
  uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n + kPage - 1) & ~(kPage - 1);
  return mprotect(reinterpret_cast<void*>(b), e - b, guard ? PROT_NONE : PROT_READ | PROT_WRITE) == 0;
}

// The transfer of `list` (of any kernel of core c) that overlaps
// [off, off + size), with its kernel, or null. Allocates nothing (the fault
// handler calls it).
const NocPending::Transfer* find_pending_of(const CoreState* c, bool reads, uint64_t off, uint64_t size,
                                            const Fiber** owner) {
  for (uint32_t i = 0; i < c->nfibers; i++) {
    if (!c->fibers[i].started) continue;  // its state is an earlier run's
    const NocPending& p = c->fibers[i].api.noc;
    size_t n = reads ? p.reads : p.writes;
    const auto& list = reads ? p.read_list : p.write_list;
    for (size_t j = 0; j < n; j++)
      if (overlaps(list[j], off, size)) {
        *owner = &c->fibers[i];
        return &list[j];
      }
  }
  return nullptr;
}

const NocPending::Transfer* find_pending(bool reads, uint64_t off, uint64_t size, const Fiber** owner) {
  return find_pending_of(t_fiber->core, reads, off, size, owner);
}

// "noc_async_read [0x19000, +0x1000) issued at k.cpp:6" (by another kernel
// of the core: named).
std::string transfer_text(const NocPending::Transfer& t, const Fiber* owner) {
  std::ostringstream s;
  s << t.op << " [" << hex(t.off) << ", +" << hex(t.size) << ")";
  std::string at = site_of_pc(owner, t.site);
  if (!at.empty()) s << " issued" << at;
  if (owner != t_fiber) s << " by " << where(owner);
  return s.str();
}

// The outstanding reads' data lands in L1.
void land_reads(NocPending& p) {
  for (size_t i = 0; i < p.reads; i++) {
    const NocPending::Transfer& t = p.read_list[i];
    if (p.guard) guard_pages(t.local, t.size, false);
    std::memcpy(t.local, t.data.data(), t.size);
  }
  p.reads = 0;
}

}  // namespace

uint8_t* noc_strict_read(uint8_t* local, uint64_t off, uint32_t size, uintptr_t site, const char* op) {
  NocPending& p = t_fiber->api.noc;
  NocPending::Transfer& t = next_slot(p.read_list, p.reads);
  t.local = local, t.off = off, t.size = size, t.site = site, t.op = op;
  t.data.resize(size);
  if (p.guard) guard_pages(local, size, true);
  return t.data.data();
}

namespace {

// The process's L1 arenas (base, bytes, L1 size per window), for the fault
// handler on any thread: the scheduler, say, reads a waited-on word that
// shares a guarded page outside any kernel.
struct ArenaSlot {
  std::atomic<uintptr_t> base{0};
  std::atomic<uint64_t> bytes{0}, l1_size{0};
};
ArenaSlot g_arenas[32];

}  // namespace

void l1_arena_register(const uint8_t* base, uint64_t bytes, uint64_t l1_size, bool add) {
  uintptr_t b = reinterpret_cast<uintptr_t>(base);
  for (ArenaSlot& s : g_arenas) {
    uintptr_t want = add ? 0 : b;
    if (!s.base.compare_exchange_strong(want, add ? b : 0)) continue;
    if (add) s.bytes = bytes, s.l1_size = l1_size;
    return;
  }
}

bool noc_strict_guard_fault(const Fiber* f, uintptr_t a) {
  bool in_l1 = false;
  for (const ArenaSlot& s : g_arenas) {
    uintptr_t b = s.base.load();
    if (b && a >= b && a < b + s.bytes.load()) in_l1 = (a - b) % L1Arena::kWindow < s.l1_size.load();
  }
  if (!in_l1) return false;  // not L1 (past the end of a window: a fault of its own)
  if (f && f->api.fault_armed) {
    const RunState* rs = f->core->run;
    uintptr_t own = reinterpret_cast<uintptr_t>(rs->l1->core_base(f->core->index));
    const Fiber* owner = nullptr;
    if (a >= own && a < own + rs->l1->l1_size() && find_pending_of(f->core, true, a - own, 1, &owner))
      return false;  // the kernel's own early access: reported
  }
  return guard_pages(reinterpret_cast<const uint8_t*>(a), 1, false);
}

std::string noc_strict_fault_text(const Fiber* f, uintptr_t a) {
  const RunState* rs = f->core->run;
  uintptr_t own = reinterpret_cast<uintptr_t>(rs->l1->core_base(f->core->index));
  if (a < own || a >= own + rs->l1->l1_size()) return "";
  const Fiber* owner = nullptr;
  const NocPending::Transfer* r = find_pending_of(f->core, true, a - own, 1, &owner);
  if (!r) return "";
  return "a load or store of L1 offset " + hex(a - own) + ", in the destination of " + transfer_text(*r, owner) +
         ", before its noc_async_read_barrier: the data lands at the barrier (on a card a load may see what L1 "
         "held before, and a store is overwritten when the data lands) (watcher strict NOC mode with its read "
         "guard; ZYX_EMU_WATCHER=strict-noc-loads or the kernel define ZYX_EMU_STRICT_NOC_LOADS turns it on)";
}

void noc_strict_unguard(Fiber* f) {
  const NocPending& p = f->api.noc;
  if (!p.guard) return;
  for (size_t i = 0; i < p.reads; i++) guard_pages(p.read_list[i].local, p.read_list[i].size, false);
}

void noc_strict_write(const uint8_t* local, uint64_t off, uint32_t size, uintptr_t site, const char* op) {
  const Fiber* owner = nullptr;
  if (const NocPending::Transfer* r = find_pending(true, off, size, &owner)) {
    std::ostringstream s;
    s << op << ": the source [" << hex(off) << ", +" << hex(size) << ") is the destination of "
      << transfer_text(*r, owner)
      << ", which no noc_async_read_barrier has completed: the write sends what L1 held before the read landed"
      << kStrictRule;
    kernel_fail(s.str());
  }
  NocPending& p = t_fiber->api.noc;
  NocPending::Transfer& t = next_slot(p.write_list, p.writes);
  t.local = const_cast<uint8_t*>(local), t.off = off, t.size = size, t.site = site, t.op = op;
  t.data.assign(local, local + size);
}

void noc_check_no_pending_read(uint64_t off, uint64_t size, const std::string& what) {
  const Fiber* owner = nullptr;
  const NocPending::Transfer* r = find_pending(true, off, size, &owner);
  if (!r) return;
  kernel_fail(what + " [" + hex(off) + ", +" + hex(size) + ") hold the destination of " + transfer_text(*r, owner) +
              ", which no noc_async_read_barrier has completed: whoever takes the pages may see them before the data "
              "lands" +
              kStrictRule);
}

void noc_check_no_pending_write(uint64_t off, uint64_t size, const std::string& what) {
  const Fiber* owner = nullptr;
  const NocPending::Transfer* w = find_pending(false, off, size, &owner);
  if (!w) return;
  kernel_fail(what + " [" + hex(off) + ", +" + hex(size) + ") are the source of " + transfer_text(*w, owner) +
              ", which no noc_async_write_barrier or noc_async_writes_flushed has flushed: the producer may "
              "overwrite them before the NOC has read them" +
              kStrictRule);
}

void noc_strict_barrier(uint32_t what) {
  NocPending& p = t_fiber->api.noc;
  if (what & ZYX_EMU_NOC_WRITES) {
    for (size_t i = 0; i < p.writes; i++) {
      const NocPending::Transfer& t = p.write_list[i];
      if (std::memcmp(t.local, t.data.data(), t.size) == 0) continue;
      auto at = std::mismatch(t.data.begin(), t.data.end(), t.local).first - t.data.begin();
      std::ostringstream s;
      s << "write barrier: the source of " << transfer_text(t, t_fiber) << " changed at "
        << hex(t.off + at) << " before the write was flushed: on a card the NOC may send the new bytes"
        << kStrictRule;
      p.writes = 0;
      kernel_fail(s.str());
    }
    p.writes = 0;
  }
  if (what & ZYX_EMU_NOC_READS) land_reads(p);
}

void noc_kernel_end(Fiber* f) {
  // The card's NOC delivers what a kernel left outstanding after it ends.
  NocPending& p = f->api.noc;
  land_reads(p);
  p.writes = 0;
}

void api_noc_barrier(uint32_t what) {
  if (t_fiber->api.noc.strict) noc_strict_barrier(what);
}

}  // namespace zyx::emu
