// The NOC (api/dataflow/noc.h and the noc_* calls of dataflow_api.h):
// reads, writes, multicasts, inline writes and atomic increments between a
// core's L1, other cores' L1 and DRAM, and the core's NOC coordinates.
// Every transfer is complete when its call returns, except a read in the
// watcher's strict NOC mode, whose data lands at its barrier (noc_strict.cpp).
#include <cstring>
#include <sstream>
#include <utility>

#include "kernel_api.hpp"
#include "watcher.hpp"

namespace zyx::emu {

namespace {

struct NocTarget {
  bool dram = false;
  uint32_t bank = 0;
  uint32_t core = 0;  // an L1 target's core index
  uint64_t addr = 0;
  uint8_t* l1 = nullptr;
};

// The L1 of the worker core at NOC node (x, y): every worker core of the
// grid has its L1 window, whether or not a kernel runs on it in this program
// (emu.hpp: NOC coordinates). Checks [local, local + size) fits in L1.
uint8_t* worker_l1(uint32_t x, uint32_t y, uint64_t local, uint64_t size, const char* op, bool write) {
  RunState* rs = t_fiber->core->run;
  const Board& b = *rs->board;
  uint32_t row = y - 1, col = x - 1;
  if (x == 0 && y < b.dram_banks) {
    std::ostringstream s;
    s << op << ": NOC node (0," << y << ") is DRAM bank " << y << ", not a worker core: multicasts, inline writes "
      << "and atomics reach only the workers' L1 (workers at x 1-" << b.cols << ", y 1-" << b.rows << ")";
    kernel_fail(s.str());
  }
  if (x == 0 || y == 0 || row >= b.rows || col >= b.cols) {
    std::ostringstream s;
    s << op << ": NOC node (" << x << "," << y << ") is not " << (x == 0 ? "a DRAM bank" : "a worker core") << " of the "
      << b.rows << "x" << b.cols << " grid (workers at x 1-" << b.cols << ", y 1-" << b.rows << "; DRAM banks at (0, b))";
    kernel_fail(s.str());
  }
  uint64_t off = local & (L1Arena::kWindow - 1);
  if (off > b.l1_size || size > b.l1_size - off) {
    std::ostringstream s;
    s << op << ": L1 range [0x" << std::hex << off << ", +0x" << size << ") of core (" << std::dec << row << "," << col
      << ") is outside its " << b.l1_size << " bytes of L1";
    kernel_fail(s.str());
  }
  noc_check_l1(row * b.cols + col, off, size, write, op, write ? "destination" : "source");
  return rs->l1->core_base(row * b.cols + col) + off;
}

// Whether a NOC address names a DRAM bank.
bool dram_node(uint64_t a) {
  return ((a >> 36) & 63) == 0 && ((a >> 42) & 63) < t_fiber->core->run->board->dram_banks;
}

NocTarget decode_noc(uint64_t a, uint64_t size, const char* op, bool write) {
  NocTarget t;
  uint32_t y = (a >> 42) & 63, x = (a >> 36) & 63;
  uint64_t local = a & ((1ull << 36) - 1);
  const Board& b = *t_fiber->core->run->board;
  if (x == 0 && y < b.dram_banks) {
    t.dram = true, t.bank = y, t.addr = local;
    noc_check_dram(y, local, size, op);
    return t;
  }
  if (x == 0) {
    std::ostringstream s;
    s << op << ": NOC node (0," << y << ") is not a DRAM bank (there are " << b.dram_banks << ")";
    kernel_fail(s.str());
  }
  t.addr = local & (L1Arena::kWindow - 1);
  t.l1 = worker_l1(x, y, local, size, op, write);
  t.core = (y - 1) * b.cols + (x - 1);
  return t;
}

// Multicast destinations, as tt-metal's NOC_MULTICAST_ENCODING lays them
// out: the end corner (x, y) in bits 36-47, the start corner in bits 48-59,
// the L1 address in bits 0-35. Calls fn(host pointer, core index) for every
// worker core of the rectangle (the sender only with include_self).
template <typename Fn>
void for_each_mcast(uint64_t dst, uint64_t size, bool include_self, const char* op, Fn&& fn) {
  uint32_t x1 = (dst >> 36) & 63, y1 = (dst >> 42) & 63, x0 = (dst >> 48) & 63, y0 = (dst >> 54) & 63;
  uint64_t local = dst & 0xfffffffffull;
  if (x0 > x1) std::swap(x0, x1);  // NOC 1 names the rectangle from its other corner
  if (y0 > y1) std::swap(y0, y1);
  const CoreState* self = t_fiber->core;
  for (uint32_t y = y0; y <= y1; y++)
    for (uint32_t x = x0; x <= x1; x++) {
      if (!include_self && x == self->col + 1 && y == self->row + 1) continue;
      fn(worker_l1(x, y, local, size, op, true), (y - 1) * t_fiber->core->run->board->cols + (x - 1));
    }
}

void inline_store(uint8_t* p, uint32_t value, uint32_t be) {
  for (int i = 0; i < 4; i++)
    if (be & (1u << i)) __atomic_store_n(p + i, static_cast<uint8_t>(value >> (8 * i)), __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

// A write to a semaphore word of core `core` (noc_semaphore_set_remote and
// the multicast sets go through the NOC write) is a release for the race
// check; atomics and inline writes are, wherever they land.
void note_write_release(uint32_t core, uint64_t off) {
  const Board& b = *t_fiber->core->run->board;
  if (off >= semaphore_offset(b, 0) && off < b.l1_unreserved_base) noc_note_release(core, off);
}

}  // namespace

// The calling core's side of a transfer: [addr, addr + size) of its L1.
uint8_t* local_l1(uint32_t addr, uint64_t size, bool write, const char* op) {
  CoreState* c = t_fiber->core;
  uint8_t* p = l1_target(c, addr, size, op);
  noc_check_l1(c->index, addr & (L1Arena::kWindow - 1), size, write, op, write ? "destination" : "source");
  return p;
}

void api_noc_read(uint64_t src, uint32_t dst_l1, uint32_t size) {
  ZYX_EMU_CHECK_STACK("noc_async_read");
  uint8_t* dst = local_l1(dst_l1, size, true, "noc_async_read");
  NocTarget s = decode_noc(src, size, "noc_async_read", false);
  noc_check_alignment(dst_l1 & (L1Arena::kWindow - 1), s.addr, s.dram, true, "noc_async_read");
  if (t_fiber->api.noc.strict)
    dst = noc_strict_read(dst, dst_l1 & (L1Arena::kWindow - 1), size,
                          reinterpret_cast<uintptr_t>(__builtin_return_address(0)), "noc_async_read");
  if (s.dram)
    t_fiber->core->run->dram->read(s.bank, s.addr, dst, size);
  else
    std::memmove(dst, s.l1, size);
}

void api_noc_write(uint32_t src_l1, uint64_t dst, uint32_t size) {
  ZYX_EMU_CHECK_STACK("noc_async_write");
  const uint8_t* src = local_l1(src_l1, size, false, "noc_async_write");
  NocTarget d = decode_noc(dst, size, "noc_async_write", true);
  noc_check_alignment(src_l1 & (L1Arena::kWindow - 1), d.addr, d.dram, false, "noc_async_write");
  if (t_fiber->api.noc.strict)
    noc_strict_write(src, src_l1 & (L1Arena::kWindow - 1), size,
                     reinterpret_cast<uintptr_t>(__builtin_return_address(0)), "noc_async_write");
  if (d.dram) {
    noc_note_dram_write(d.bank, d.addr, size, "noc_async_write");
    t_fiber->core->run->dram->write(d.bank, d.addr, src, size);
  } else {
    note_write_release(d.core, d.addr);
    std::memmove(d.l1, src, size);
  }
}

void api_noc_mcast_write(uint32_t src_l1, uint64_t dst, uint32_t size, uint32_t include_self) {
  ZYX_EMU_CHECK_STACK("noc_async_write_multicast");
  const uint8_t* src = local_l1(src_l1, size, false, "noc_async_write_multicast");
  noc_check_alignment(src_l1 & (L1Arena::kWindow - 1), dst & (L1Arena::kWindow - 1), false, false,
                      "noc_async_write_multicast");
  if (t_fiber->api.noc.strict)
    noc_strict_write(src, src_l1 & (L1Arena::kWindow - 1), size,
                     reinterpret_cast<uintptr_t>(__builtin_return_address(0)), "noc_async_write_multicast");
  for_each_mcast(dst, size, include_self != 0, "noc_async_write_multicast", [&](uint8_t* p, uint32_t core) {
    note_write_release(core, dst & (L1Arena::kWindow - 1));
    if (p != src) std::memmove(p, src, size);
  });
}

void api_noc_atomic_inc(uint64_t dst, uint32_t incr) {
  if (dram_node(dst)) kernel_fail("noc_semaphore_inc: the target is DRAM, not a core's L1");
  NocTarget d = decode_noc(dst, 4, "noc_semaphore_inc", true);
  noc_note_release(d.core, d.addr);
  __atomic_fetch_add(reinterpret_cast<uint32_t*>(d.l1), incr, __ATOMIC_SEQ_CST);
}

void api_noc_atomic_inc_mcast(uint64_t dst, uint32_t incr, uint32_t include_self) {
  for_each_mcast(dst, 4, include_self != 0, "noc_semaphore_inc_multicast", [&](uint8_t* p, uint32_t core) {
    noc_note_release(core, dst & (L1Arena::kWindow - 1));
    __atomic_fetch_add(reinterpret_cast<uint32_t*>(p), incr, __ATOMIC_SEQ_CST);
  });
}

void api_noc_inline_write(uint64_t dst, uint32_t value, uint32_t be, uint32_t mcast) {
  if (be & ~0xfu) kernel_fail("noc_inline_dw_write: byte enable " + hex(be) + " is wider than the 4 bytes written");
  if (mcast) {
    for_each_mcast(dst, 4, mcast == 2, "noc_inline_dw_write (multicast)",
                   [&](uint8_t* p, uint32_t core) {
                     noc_note_release(core, dst & (L1Arena::kWindow - 1));
                     inline_store(p, value, be);
                   });
    return;
  }
  if (dram_node(dst)) kernel_fail("noc_inline_dw_write: the target is a DRAM bank; inline writes reach only L1 (tt-metal does not support DRAM targets)");
  NocTarget d = decode_noc(dst, 4, "noc_inline_dw_write", true);
  noc_note_release(d.core, d.addr);
  inline_store(d.l1, value, be);
}

uint64_t api_l1_noc_addr(uint32_t x, uint32_t y, uint32_t addr) { return noc_addr(x, y, addr); }

void api_core_xy(uint32_t* x, uint32_t* y) {
  *x = t_fiber->core->col + 1;
  *y = t_fiber->core->row + 1;
}

void api_core_info(zyx_emu_core_info* out) {
  const CoreState* c = t_fiber->core;
  out->logical_x = c->col, out->logical_y = c->row;
  out->relative_x = c->col, out->relative_y = c->row;
  out->noc_x = c->col + 1, out->noc_y = c->row + 1;
  out->grid_cols = c->run->board->cols, out->grid_rows = c->run->board->rows;
}

}  // namespace zyx::emu
