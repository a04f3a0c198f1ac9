// The kernel API the emulated kernels call (through zyx_emu_api), and the
// runner: checks and registers programs, lays out circular buffers in L1,
// resolves argument entries per core and runs the cores.
//
// Scheduling. The kernels of a core (one to three: riscv_0, riscv_1,
// compute) run as fibers (fiber.hpp) that share the core's state; a blocking
// call (a circular buffer that is full or empty, a semaphore wait) switches
// to the next runnable kernel of the core instead of blocking an OS thread.
// Cores run in parallel on a pool of worker threads, one per hardware thread.
// A worker runs one core at a time and takes on further cores only while all
// of its kernels are blocked, so cores that wait on each other (semaphores,
// L1 to L1 traffic) still all get to run. When no worker has made progress
// for the timeout (a worker inside a kernel counts as making progress), the
// workers together report a deadlock naming every blocked kernel of every
// core, the run is cancelled, and each blocked wait then throws out of its
// kernel, so no thread is left behind.
//
// The kernel API (this part of the file, down to "Runner"): the functions the
// kernel objects call through the zyx_emu_api table, and the fault guard
// that turns a bad pointer in kernel code, or a kernel's call that would end
// the process (abort, exit, a failed assert, std::terminate), into a run
// error.
#include <cxxabi.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <ucontext.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>
#include <typeinfo>

#include "enum_names.hpp"
#include "kernel_state.hpp"
#include "runner.hpp"

namespace zyx::emu {

namespace {

constexpr size_t kStackSize = 1u << 20;  // reserved, committed lazily
constexpr size_t kGuard = 4096;

struct Cancelled {};

thread_local Fiber* t_fiber = nullptr;

}  // namespace

struct Worker {
  FiberContext sched;  // the worker's own context, the fibers switch back to
};

Fiber* current_fiber() { return t_fiber; }

// ---- errors ----------------------------------------------------------------

void RunState::fail(const std::string& code, const std::string& msg) {
  std::lock_guard<std::mutex> lock(err_mu);
  if (err_code.empty()) {
    err_code = code;
    err_msg = msg;
  }
  cancel.store(true);
}

static std::string where(const Fiber* f) {
  std::ostringstream s;
  s << "core (" << f->core->row << "," << f->core->col << ") " << f->desc->name << " ("
    << processor_name(f->processor) << ")";
  return s.str();
}

// The processor a section runs on, as DPRINT names it.
static const char* processor_of(const Fiber* f, uint32_t tag) {
  static const char* trisc[] = {"trisc0", "trisc1", "trisc2"};
  if (tag >= 1 && tag <= 3) return trisc[tag - 1];
  return processor_name(f->processor);
}

[[noreturn]] void kernel_fail(const std::string& msg) { throw Error("run_error", msg); }

static std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// ---- blocking --------------------------------------------------------------

static bool satisfied(const CoreState& c, const Wait& w) {
  switch (w.kind) {
    case Wait::None: return true;
    case Wait::CBFront: return c.cbs[w.cb].available() >= w.pages;
    case Wait::CBBack: return c.cbs[w.cb].num_pages - c.cbs[w.cb].available() >= w.pages;
    case Wait::Word: {
      uint32_t v = __atomic_load_n(w.word, __ATOMIC_ACQUIRE);
      if (w.cmp == 0) return v == w.value;
      if (w.cmp == 1) return v >= w.value;
      return v != w.value;
    }
  }
  return true;
}

static void block_until(const Wait& w) {
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

static std::string describe_wait(const Fiber* f) {
  const Wait& w = f->wait;
  std::ostringstream s;
  s << where(f);
  if (w.kind == Wait::CBFront || w.kind == Wait::CBBack) {
    const auto& cb = f->core->cbs[w.cb];
    s << " waiting on cb " << w.cb << " ("
      << (w.kind == Wait::CBFront ? "cb_wait_front for " : "cb_reserve_back for ") << w.pages << " page(s); "
      << cb.available() << " of " << cb.num_pages << " filled)";
  } else if (w.kind == Wait::Word) {
    uintptr_t off = reinterpret_cast<uintptr_t>(w.word) & (L1Arena::kWindow - 1);
    s << " waiting on the L1 word at 0x" << std::hex << off << std::dec << " (semaphore wait for "
      << (w.cmp == 0 ? "== " : w.cmp == 1 ? ">= " : "!= ") << w.value << ", value "
      << __atomic_load_n(w.word, __ATOMIC_ACQUIRE) << ")";
  } else {
    s << " blocked";
  }
  if (f->api.waypoint[0]) s << " (last waypoint " << f->api.waypoint << ")";
  return s.str();
}

// ---- API: arguments ---------------------------------------------------------

// Runtime and common args live in the core's reserved L1, as on a card, so
// that get_arg_addr is an L1 address (a kernel may send its args over the NOC
// or write them). Lists longer than a slot stay in host memory.
static const uint32_t* api_args(uint32_t kind, uint32_t* count) {
  Fiber* f = t_fiber;
  const auto& v = kind == 0 ? f->args : f->common;
  if (count) *count = static_cast<uint32_t>(v.size());
  if (v.size() * 4 > ZYX_EMU_L1_ARGS_SLOT) return v.data();
  uint32_t bit = kind == 0 ? 1 : 2;
  auto* slot = reinterpret_cast<uint32_t*>(f->core->l1 + ZYX_EMU_L1_ARGS_OFFSET +
                                           (2 * static_cast<uint32_t>(f->processor) + (kind ? 1 : 0)) * ZYX_EMU_L1_ARGS_SLOT);
  if (!(f->api.args_in_l1 & bit)) {
    if (!v.empty()) std::memcpy(slot, v.data(), v.size() * 4);
    f->api.args_in_l1 |= bit;
  }
  return slot;
}

// A read past the args the host set: on a card it reads whatever that L1
// word holds; here 0, with one warning line per kernel and run (naming the
// first core, the kernel and the index).
static uint32_t api_arg_past_end(uint32_t kind, int32_t index, uint32_t count) {
  Fiber* f = t_fiber;
  RunState* rs = f->core->run;
  bool first;
  {
    std::lock_guard<std::mutex> lock(rs->warn_mu);
    first = rs->arg_warned.insert({f->desc, kind != 0}).second;
  }
  if (first) {
    std::string line = "zyx-emu: warning: " + where(f) + ": " + (kind ? "get_common_arg_val(" : "get_arg_val(") +
                       std::to_string(index) + ") reads past the " + std::to_string(count) +
                       (kind ? " common" : " runtime") +
                       " args the host set; it reads 0 (on a card, whatever that L1 word holds); further such "
                       "reads of this kernel are not reported\n";
    ssize_t w = write(2, line.data(), line.size());
    (void)w;
  }
  return 0;
}

// ---- API: L1 ------------------------------------------------------------------

static uint32_t l1_va(const CoreState* core, uint64_t offset) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(core->l1) + offset);
}
static uint32_t l1_va(uint64_t offset) { return l1_va(t_fiber->core, offset); }

// Resolves an L1 address (a host pointer below 4 GiB or a plain offset) of
// core `core` to a host pointer, checking [addr, addr+size) fits in L1.
static uint8_t* l1_target(const CoreState* core, uint32_t addr, uint64_t size, const char* op) {
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

static void* api_l1_ptr(uint32_t addr) { return l1_target(t_fiber->core, addr, 0, "l1 pointer"); }
static void* api_l1_range(uint32_t addr, uint32_t size, const char* op) {
  return l1_target(t_fiber->core, addr, size, op ? op : "L1 access");
}

// ---- API: circular buffers ---------------------------------------------------

static CircularBuffer& cb_raw(uint32_t id) {
  if (id >= 32) kernel_fail("circular buffer index " + std::to_string(id) + " is out of range (0-31)");
  auto& cb = t_fiber->core->cbs[id];
  if (!cb.configured) kernel_fail("circular buffer " + std::to_string(id) + " is not configured by the program");
  return cb;
}

// Brings this section's interface view of cb up to date.
static void cb_refresh(uint32_t id, const CircularBuffer& cb) {
  KernelState& k = t_fiber->api;
  zyx_emu_cb_interface v{};
  v.fifo_size = cb.page_size * cb.num_pages;
  v.fifo_limit = l1_va(cb.offset) + v.fifo_size;
  v.fifo_page_size = cb.page_size;
  v.fifo_num_pages = cb.num_pages;
  v.fifo_rd_ptr = l1_va(cb.offset + uint64_t(cb.rd_page) * cb.page_size);
  v.fifo_wr_ptr = l1_va(cb.offset + uint64_t(cb.wr_page) * cb.page_size);
  v.tiles_acked = static_cast<uint16_t>(cb.popped);
  v.tiles_received = static_cast<uint16_t>(cb.pushed);
  v.fifo_wr_tile_ptr = 0;
  k.cb_iface[id] = v;
  k.cb_written[id] = v;
  k.cb_iface_valid |= 1u << id;
}

// Takes in a read or write pointer the kernel moved through
// get_local_cb_interface, if it did.
static void cb_adopt(uint32_t id, CircularBuffer& cb) {
  KernelState& k = t_fiber->api;
  zyx_emu_cb_interface& v = k.cb_iface[id];
  const zyx_emu_cb_interface& w = k.cb_written[id];
  if (std::memcmp(&v, &w, sizeof v) == 0) return;
  uint32_t base = l1_va(cb.offset);
  auto page_of = [&](uint32_t ptr, const char* field) -> uint32_t {
    uint32_t limit = base + cb.page_size * cb.num_pages;
    if (ptr < base || ptr >= limit || (ptr - base) % cb.page_size != 0)
      kernel_fail("get_local_cb_interface(" + std::to_string(id) + ")." + field + " was set to " + hex(ptr) +
                  ", which is not the start of a page of circular buffer " + std::to_string(id) + " [" + hex(base) +
                  ", " + hex(limit) + "); the emulator follows pointers only within the buffer");
    return (ptr - base) / cb.page_size;
  };
  if (v.fifo_rd_ptr != w.fifo_rd_ptr) cb.rd_page = page_of(v.fifo_rd_ptr, "fifo_rd_ptr");
  if (v.fifo_wr_ptr != w.fifo_wr_ptr) cb.wr_page = page_of(v.fifo_wr_ptr, "fifo_wr_ptr");
  if (v.fifo_size != w.fifo_size || v.fifo_limit != w.fifo_limit || v.fifo_page_size != w.fifo_page_size ||
      v.fifo_num_pages != w.fifo_num_pages)
    kernel_fail("get_local_cb_interface(" + std::to_string(id) +
                "): the kernel changed the buffer's size, limit or page size, which the emulator does not model");
  cb_refresh(id, cb);
}

static CircularBuffer& cb_of(uint32_t id) {
  auto& cb = cb_raw(id);
  if (t_fiber->api.cb_iface_valid & (1u << id)) cb_adopt(id, cb);
  return cb;
}

static void cb_touch(uint32_t id, const CircularBuffer& cb) {
  if (t_fiber->api.cb_iface_valid & (1u << id)) cb_refresh(id, cb);
}

// Blocks until `pages` pages of cb id are free (CBBack) or filled (CBFront);
// more pages than the buffer holds is a kernel error naming the call.
static CircularBuffer& cb_wait_pages(const char* call, Wait::Kind kind, uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (pages > cb.num_pages)
    kernel_fail(std::string(call) + "(" + std::to_string(id) + ", " + std::to_string(pages) +
                "): the buffer has only " + std::to_string(cb.num_pages) + " pages");
  Wait w;
  w.kind = kind, w.cb = id, w.pages = pages;
  block_until(w);
  return cb;
}

static void api_cb_reserve_back(uint32_t id, uint32_t pages) {
  auto& cb = cb_wait_pages("cb_reserve_back", Wait::CBBack, id, pages);
  cb.reserved = pages;
  cb_touch(id, cb);
}

static void api_cb_push_back(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (cb.available() + pages > cb.num_pages)
    kernel_fail("cb_push_back(" + std::to_string(id) + ", " + std::to_string(pages) + ") overflows the buffer (" +
                std::to_string(cb.available()) + " of " + std::to_string(cb.num_pages) + " pages filled)");
  cb.pushed += pages;
  cb.wr_page = (cb.wr_page + pages) % cb.num_pages;
  cb.pack_next = 0;
  cb.reserved = 0;
  cb_touch(id, cb);
}

static void api_cb_wait_front(uint32_t id, uint32_t pages) {
  cb_touch(id, cb_wait_pages("cb_wait_front", Wait::CBFront, id, pages));
}

static void api_cb_pop_front(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (pages > cb.available() && cb.on_buffer && pages <= cb.num_pages)
    cb.pushed += pages - cb.available();  // the buffer's own pages, never pushed
  if (pages > cb.available())
    kernel_fail("cb_pop_front(" + std::to_string(id) + ", " + std::to_string(pages) + ") pops more than the " +
                std::to_string(cb.available()) + " filled page(s)");
  cb.popped += pages;
  cb.rd_page = (cb.rd_page + pages) % cb.num_pages;
  cb_touch(id, cb);
}

static int api_cb_pages_available_at_front(uint32_t id, uint32_t pages) { return cb_of(id).available() >= pages; }
static int api_cb_pages_reservable_at_back(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  return cb.num_pages - cb.available() >= pages;
}

static uint32_t api_cb_write_ptr(uint32_t id) {
  auto& cb = cb_of(id);
  return l1_va(cb.offset + uint64_t(cb.wr_page) * cb.page_size);
}
static uint32_t api_cb_read_ptr(uint32_t id) {
  auto& cb = cb_of(id);
  return l1_va(cb.offset + uint64_t(cb.rd_page) * cb.page_size);
}
static uint32_t api_cb_page_size(uint32_t id) { return cb_of(id).page_size; }
static uint32_t api_cb_format(uint32_t id) { return static_cast<uint32_t>(cb_of(id).format); }
static uint32_t api_cb_num_pages(uint32_t id) { return cb_of(id).num_pages; }

static zyx_emu_cb_interface* api_cb_interface(uint32_t id) {
  auto& cb = cb_of(id);
  cb_refresh(id, cb);
  return &t_fiber->api.cb_iface[id];
}

// ---- API: NOC ------------------------------------------------------------------

struct NocTarget {
  bool dram = false;
  uint32_t bank = 0;
  uint64_t addr = 0;
  uint8_t* l1 = nullptr;
};

// The L1 of the worker core at NOC node (x, y): every worker core of the
// grid has its L1 window, whether or not a kernel runs on it in this program
// (emu.hpp: NOC coordinates). Checks [local, local + size) fits in L1.
static uint8_t* worker_l1(uint32_t x, uint32_t y, uint64_t local, uint64_t size, const char* op) {
  RunState* rs = t_fiber->core->run;
  const Board& b = *rs->board;
  uint32_t row = y - 1, col = x - 1;
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
  return rs->l1->core_base(row * b.cols + col) + off;
}

static NocTarget decode_noc(uint64_t a, uint64_t size, const char* op) {
  NocTarget t;
  uint32_t y = (a >> 42) & 63, x = (a >> 36) & 63;
  uint64_t local = a & ((1ull << 36) - 1);
  const Board& b = *t_fiber->core->run->board;
  if (x == 0 && y < b.dram_banks) {
    t.dram = true, t.bank = y, t.addr = local;
    return t;
  }
  if (x == 0) {
    std::ostringstream s;
    s << op << ": NOC node (0," << y << ") is not a DRAM bank (there are " << b.dram_banks << ")";
    kernel_fail(s.str());
  }
  t.l1 = worker_l1(x, y, local, size, op);
  return t;
}

// Multicast destinations, as tt-metal's NOC_MULTICAST_ENCODING lays them
// out: the end corner (x, y) in bits 36-47, the start corner in bits 48-59,
// the L1 address in bits 0-35. Calls fn(host pointer) for every worker core
// of the rectangle (the sender only with include_self).
template <typename Fn>
static void for_each_mcast(uint64_t dst, uint64_t size, bool include_self, const char* op, Fn&& fn) {
  uint32_t x1 = (dst >> 36) & 63, y1 = (dst >> 42) & 63, x0 = (dst >> 48) & 63, y0 = (dst >> 54) & 63;
  uint64_t local = dst & 0xfffffffffull;
  if (x0 > x1) std::swap(x0, x1);  // NOC 1 names the rectangle from its other corner
  if (y0 > y1) std::swap(y0, y1);
  const CoreState* self = t_fiber->core;
  for (uint32_t y = y0; y <= y1; y++)
    for (uint32_t x = x0; x <= x1; x++) {
      if (!include_self && x == self->col + 1 && y == self->row + 1) continue;
      fn(worker_l1(x, y, local, size, op));
    }
}

static void api_noc_read(uint64_t src, uint32_t dst_l1, uint32_t size) {
  uint8_t* dst = l1_target(t_fiber->core, dst_l1, size, "noc_async_read");
  NocTarget s = decode_noc(src, size, "noc_async_read");
  if (s.dram)
    t_fiber->core->run->dram->read(s.bank, s.addr, dst, size);
  else
    std::memmove(dst, s.l1, size);
}

static void api_noc_write(uint32_t src_l1, uint64_t dst, uint32_t size) {
  const uint8_t* src = l1_target(t_fiber->core, src_l1, size, "noc_async_write");
  NocTarget d = decode_noc(dst, size, "noc_async_write");
  if (d.dram)
    t_fiber->core->run->dram->write(d.bank, d.addr, src, size);
  else
    std::memmove(d.l1, src, size);
}

static void api_noc_mcast_write(uint32_t src_l1, uint64_t dst, uint32_t size, uint32_t include_self) {
  const uint8_t* src = l1_target(t_fiber->core, src_l1, size, "noc_async_write_multicast");
  for_each_mcast(dst, size, include_self != 0, "noc_async_write_multicast", [&](uint8_t* p) {
    if (p != src) std::memmove(p, src, size);
  });
}

static void api_noc_atomic_inc(uint64_t dst, uint32_t incr) {
  NocTarget d = decode_noc(dst, 4, "noc_semaphore_inc");
  if (d.dram) kernel_fail("noc_semaphore_inc: the target is DRAM, not a core's L1");
  __atomic_fetch_add(reinterpret_cast<uint32_t*>(d.l1), incr, __ATOMIC_SEQ_CST);
}

static void api_noc_atomic_inc_mcast(uint64_t dst, uint32_t incr, uint32_t include_self) {
  for_each_mcast(dst, 4, include_self != 0, "noc_semaphore_inc_multicast", [&](uint8_t* p) {
    __atomic_fetch_add(reinterpret_cast<uint32_t*>(p), incr, __ATOMIC_SEQ_CST);
  });
}

static void inline_store(uint8_t* p, uint32_t value, uint32_t be) {
  for (int i = 0; i < 4; i++)
    if (be & (1u << i)) __atomic_store_n(p + i, static_cast<uint8_t>(value >> (8 * i)), __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void api_noc_inline_write(uint64_t dst, uint32_t value, uint32_t be, uint32_t mcast) {
  if (be & ~0xfu) kernel_fail("noc_inline_dw_write: byte enable " + hex(be) + " is wider than the 4 bytes written");
  if (mcast) {
    for_each_mcast(dst, 4, mcast == 2, "noc_inline_dw_write (multicast)",
                   [&](uint8_t* p) { inline_store(p, value, be); });
    return;
  }
  NocTarget d = decode_noc(dst, 4, "noc_inline_dw_write");
  if (d.dram) kernel_fail("noc_inline_dw_write: the target is a DRAM bank; inline writes reach only L1 (tt-metal does not support DRAM targets)");
  inline_store(d.l1, value, be);
}

static uint64_t api_l1_noc_addr(uint32_t x, uint32_t y, uint32_t addr) { return noc_addr(x, y, addr); }

static void api_core_xy(uint32_t* x, uint32_t* y) {
  *x = t_fiber->core->col + 1;
  *y = t_fiber->core->row + 1;
}

static void api_core_info(zyx_emu_core_info* out) {
  const CoreState* c = t_fiber->core;
  out->logical_x = c->col, out->logical_y = c->row;
  out->relative_x = c->col, out->relative_y = c->row;
  out->noc_x = c->col + 1, out->noc_y = c->row + 1;
  out->grid_cols = c->run->board->cols, out->grid_rows = c->run->board->rows;
}

static uint32_t api_semaphore_addr(uint32_t id) {
  if (id >= kSemaphoresPerCore)
    kernel_fail("get_semaphore(" + std::to_string(id) + "): the emulator has " + std::to_string(kSemaphoresPerCore) +
                " semaphores per core");
  return l1_va(semaphore_offset(*t_fiber->core->run->board, id));
}

static void api_wait_word(uint32_t addr, uint32_t value, uint32_t cmp) {
  Wait w;
  w.kind = Wait::Word;
  w.word = reinterpret_cast<volatile uint32_t*>(l1_target(t_fiber->core, addr, 4, "noc_semaphore_wait"));
  w.value = value, w.cmp = cmp;
  block_until(w);
}

// A DRAM address, or an L1 address (a core's pointer or a plain offset);
// an L1 lookup is tried for values that are pointers into L1 or that no DRAM
// buffer of the run has.
static uint32_t api_buffer_page_size(uint32_t addr) {
  RunState* rs = t_fiber->core->run;
  if (!rs->l1->contains(addr)) {
    auto it = rs->dram_page_sizes.find(addr);
    if (it != rs->dram_page_sizes.end()) return it->second;
  }
  auto it = rs->l1_page_sizes.find(static_cast<uint32_t>(addr & (L1Arena::kWindow - 1)));
  return it == rs->l1_page_sizes.end() ? 0 : it->second;
}

static uint64_t* api_scratch() { return t_fiber->api.scratch; }

static void api_fail(const char* msg) { kernel_fail(msg ? msg : "kernel failure"); }

// ---- API: debug ------------------------------------------------------------------

// DPRINT output is on when the runtime runs with ZYX_EMU_DPRINT set (not "0").
static bool dprint_on() {
  const char* v = std::getenv("ZYX_EMU_DPRINT");
  return v && *v && std::strcmp(v, "0") != 0;
}

static int api_dprint_enabled() { return dprint_on() ? 1 : 0; }

// Writes one finished DPRINT line, tagged with the core and processor
// (docs/protocol.md, "Run output"), in one write so lines do not interleave.
static void emit_dprint_line(const Fiber* f, uint32_t tag, const std::string& text) {
  std::string line = "dprint: core (" + std::to_string(f->core->row) + "," + std::to_string(f->core->col) + ") " +
                     processor_of(f, tag) + ": " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

static void flush_dprint(Fiber* f) {
  KernelState& k = f->api;
  if (!k.dprint_line.empty()) emit_dprint_line(f, k.dprint_line_tag, k.dprint_line);
  k.dprint_line.clear();
}

static void api_dprint(const char* text) {
  if (!text || !dprint_on()) return;
  Fiber* f = t_fiber;
  KernelState& k = f->api;
  std::string in = text;  // read the kernel's text before anything else
  if (!k.dprint_line.empty() && k.dprint_line_tag != k.dprint_tag) flush_dprint(f);
  k.dprint_line_tag = k.dprint_tag;
  size_t start = 0;
  for (size_t nl; (nl = in.find('\n', start)) != std::string::npos; start = nl + 1) {
    k.dprint_line.append(in, start, nl - start);
    emit_dprint_line(f, k.dprint_line_tag, k.dprint_line);
    k.dprint_line.clear();
  }
  k.dprint_line.append(in, start, std::string::npos);
}

static uint32_t api_dprint_tag(uint32_t tag) {
  KernelState& k = t_fiber->api;
  uint32_t old = k.dprint_tag;
  k.dprint_tag = tag <= 3 ? tag : 0;
  return old;
}

static void api_waypoint(const char* name) {
  KernelState& k = t_fiber->api;
  size_t i = 0;
  for (; name && i + 1 < sizeof k.waypoint && name[i]; i++) k.waypoint[i] = name[i];
  k.waypoint[i] = 0;
}

static void api_assert_fail(const char* cond, const char* file, uint32_t line) {
  kernel_fail(std::string("ASSERT(") + (cond ? cond : "?") + ") failed at " + (file ? file : "?") + ":" +
              std::to_string(line));
}

static const uint32_t* api_dst_tile(uint32_t tile, uint32_t* is_int) {
  CoreState* c = t_fiber->core;
  if (tile >= c->dst.size())
    kernel_fail("dprint_tensix_dest_reg(" + std::to_string(tile) + "): DST holds " + std::to_string(c->dst.size()) +
                " tiles");
  if (is_int) *is_int = c->dst_kind[tile] == DstKind::Int ? 1 : 0;
  return c->dst[tile].data();
}

// ---- fault guard -------------------------------------------------------------------
//
// A kernel that dereferences a bad pointer faults on its fiber. The signal
// handler (on the worker's alternate stack) checks that the faulting thread
// is running a kernel fiber that armed the guard, records the fault and
// siglongjmps back to run_kernel_guarded on the fiber's own stack, which
// reports a run_error; the kernel's frames are abandoned (no destructors
// run). A fault anywhere else goes to the handler that was installed before
// ours, or kills the process as it would have without us.
//
// A kernel that would end the process leaves the same way (stop_kernel):
// its own calls to abort, exit, _exit, _Exit, quick_exit and a failed C
// assert's __assert_fail reach api_kernel_exit (kernel_prelude.h), while
// std::terminate (terminate_handler) and a SIGABRT the C or C++ library
// raises on the kernel's behalf (fault_handler) are caught process-wide and
// stop the kernel only when the calling thread is running one.

namespace {
struct sigaction g_prev_action[65];
std::once_flag g_fault_once;
std::terminate_handler g_prev_terminate = nullptr;
// SIGABRT: an abort raised inside the C or C++ library (their own calls to
// abort are not wrapped).
const int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Leaves the running kernel for run_kernel_guarded, which reports why.
[[noreturn]] void stop_kernel(KernelState& k) {
  k.fault_armed = 0;
  siglongjmp(k.fault_jmp, 1);
}

// Whether a SIGABRT was raised by the receiving thread itself (abort and
// raise send it with tgkill to the calling thread), not sent by another
// process (kill -ABRT may land on any thread, a worker running a kernel
// included: that keeps its default action).
bool raised_here(const siginfo_t* si) { return si && si->si_code == SI_TKILL && si->si_pid == getpid(); }

// SIGABRT on a thread running a kernel. The C library's abort raises it
// with none of its own locks held: glibc up to 2.40 releases abort's lock
// (and resets its stage) before raise, and 2.41 raises first and locks
// only if a handler returns. So leaving the handler by siglongjmp leaves
// abort's state as it was, and the next abort works. What called abort may
// hold locks, though: the stack protector, fortified string functions and
// libstdc++'s assertions hold none, but malloc may find heap corruption
// while it holds its arena's lock; the heap is damaged then anyway, and
// the error says where to look (docs/emulator.md, "Faults").
void fault_handler(int sig, siginfo_t* si, void* uctx) {
  Fiber* f = t_fiber;
  if (f && f->api.fault_armed && (sig != SIGABRT || raised_here(si))) {
    KernelState& k = f->api;
    k.fault_armed = 0;
    k.fault_sig = sig;
    k.fault_code = si ? si->si_code : 0;
    k.fault_addr = si ? reinterpret_cast<uintptr_t>(si->si_addr) : 0;
#if defined(__x86_64__)
    k.fault_pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    k.fault_pc = static_cast<uintptr_t>(static_cast<ucontext_t*>(uctx)->uc_mcontext.pc);
#endif
    stop_kernel(k);
  }
  const struct sigaction& prev = g_prev_action[sig];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, si, uctx);
    return;
  }
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  if (sig == SIGABRT && !(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN) return;
  // As without us: the default action, when the instruction faults again
  // (a fault) or at once (SIGABRT, which nothing raises again; SA_NODEFER
  // delivers it inside this handler).
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (sig == SIGABRT) raise(sig);
}

std::string demangled(const char* name) {
  int st = 0;
  char* dem = abi::__cxa_demangle(name, nullptr, nullptr, &st);
  std::string out = st == 0 && dem ? dem : name;
  std::free(dem);
  return out;
}

// Why std::terminate was called, as far as the C++ runtime tells.
std::string describe_terminate() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (!type) return "std::terminate was called";
  std::string s = "std::terminate was called while an exception of type " + demangled(type->name()) + " was active";
  try {
    std::rethrow_exception(std::current_exception());
  } catch (const std::exception& e) {
    s += std::string(" (what(): ") + e.what() + ")";
  } catch (...) {
  }
  return s + "; an exception that leaves a noexcept function, or is thrown while another unwinds, ends there";
}

// std::terminate on a thread running a kernel stops the kernel. The C++
// runtime calls the handler in ordinary code with no lock of its own held
// (GCC's personality routine calls it in the unwinder's second phase, after
// the frame lookup has let its locks go; clang's __clang_call_terminate
// from a landing pad), so leaving by siglongjmp is as safe as leaving a
// fault. The exception being handled stays on the fiber's list of caught
// exceptions (its handler never ends), which goes with the fiber (EhState):
// it costs the exception object. Anywhere else: the handler in place before
// ours.
void terminate_handler() {
  Fiber* f = t_fiber;
  if (f && f->api.fault_armed) {
    KernelState& k = f->api;
    try {
      k.exit_call = describe_terminate();
    } catch (...) {
      k.exit_call = "std::terminate was called";
    }
    stop_kernel(k);
  }
  if (g_prev_terminate) g_prev_terminate();
  std::abort();
}

void install_fault_handler() {
  std::call_once(g_fault_once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = fault_handler;
    sigemptyset(&sa.sa_mask);
    // NODEFER: the handler leaves by siglongjmp without restoring the mask.
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    for (int s : kFaultSignals) sigaction(s, &sa, &g_prev_action[s]);
    g_prev_terminate = std::set_terminate(terminate_handler);
  });
}

constexpr size_t kAltStack = 64 * 1024;

void unblock_fault_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kFaultSignals) sigaddset(&set, s);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}
}  // namespace

// What a kernel called that would end the process (zyx_emu_exit_call).
static std::string describe_exit_call(uint32_t call, int32_t status, const char* expr, const char* file,
                                      uint32_t line, const char* function) {
  auto with_status = [status](const char* name) {
    return "the kernel called " + std::string(name) + "(" + std::to_string(status) + ")";
  };
  switch (call) {
    case ZYX_EXIT_ABORT: return "the kernel called abort()";
    case ZYX_EXIT_EXIT: return with_status("exit");
    case ZYX_EXIT_POSIX_EXIT: return with_status("_exit");
    case ZYX_EXIT_C_EXIT: return with_status("_Exit");
    case ZYX_EXIT_QUICK: return with_status("quick_exit");
    case ZYX_EXIT_ASSERT: {
      std::string s = std::string("assertion \"") + (expr ? expr : "?") + "\" failed at " + (file ? file : "?") +
                      ":" + std::to_string(line);
      return function && *function ? s + " in " + function : s;
    }
    default:
      return "the kernel called a function that ends the process (kernel_exit call " + std::to_string(call) + ")";
  }
}

// Stops the kernel as a fault does (run_kernel_guarded reports it); outside
// a kernel it returns, and the kernel's wrapper makes the real call.
static void api_kernel_exit(uint32_t call, int32_t status, const char* expr, const char* file, uint32_t line,
                            const char* function) {
  Fiber* f = t_fiber;
  if (!f || !f->api.fault_armed) return;
  f->api.exit_call = describe_exit_call(call, status, expr, file, line, function);
  stop_kernel(f->api);
}

FaultStack::FaultStack() {
  install_fault_handler();
  mem_ = mmap(nullptr, kAltStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem_ == MAP_FAILED) {
    mem_ = nullptr;  // no recovery from a stack overflow on this thread; other faults still are
    return;
  }
  stack_t ss{};
  ss.ss_sp = mem_;
  ss.ss_size = kAltStack;
  ss.ss_flags = 0;
  installed_ = sigaltstack(&ss, &old_) == 0;
}

FaultStack::~FaultStack() {
  if (installed_) {
    if (old_.ss_flags & SS_DISABLE) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    } else {
      sigaltstack(&old_, nullptr);
    }
  }
  if (mem_) munmap(mem_, kAltStack);
}

void KernelState::reset() {
  args_in_l1 = 0;
  dprint_line.clear();
  dprint_tag = dprint_line_tag = 0;
  waypoint[0] = 0;
  std::memset(scratch, 0, sizeof scratch);
  cb_iface_valid = 0;
  fault_armed = 0;
  fault_sig = 0;
  fault_code = 0;
  fault_addr = 0;
  fault_pc = 0;
  exit_call.clear();
}

// Says what a faulting address was, as the kernel author can act on it.
static std::string describe_fault(const Fiber* f) {
  const KernelState& k = f->api;
  const CoreState* self = f->core;
  const RunState* rs = self->run;
  uintptr_t a = k.fault_addr;
  uint64_t l1_size = rs->board->l1_size;
  std::ostringstream s;
  if (k.fault_sig == SIGABRT)  // the pc is in the C library's raise: no help
    return "abort: SIGABRT raised inside the C or C++ library, by a failed library check (stack smashing, a "
           "fortified buffer overflow, heap corruption) or raise(SIGABRT); the library's message, if any, is on the "
           "runtime's stderr";
  const char* what = k.fault_sig == SIGSEGV ? "invalid memory access"
                     : k.fault_sig == SIGBUS ? "bus error"
                     : k.fault_sig == SIGFPE ? "arithmetic fault (integer division by zero?)"
                                             : "illegal instruction";
  s << what;
  if (k.fault_sig == SIGSEGV || k.fault_sig == SIGBUS) {
    s << " at address " << hex(a) << ": ";
    uintptr_t stack = reinterpret_cast<uintptr_t>(f->stack);
    uintptr_t arena = reinterpret_cast<uintptr_t>(rs->l1->core_base(0));
    uintptr_t arena_end = arena + uint64_t(rs->l1->cores()) * L1Arena::kWindow;
    if (stack && a >= stack && a < stack + kGuard + 4096) {
      s << "the kernel overflowed its " << (kStackSize - kGuard) / 1024 << " KiB stack (large local arrays?)";
    } else if (a < L1Arena::kWindow) {
      s << "this is L1 offset " << hex(a) << " used as a pointer; in the emulator an L1 address can be "
        << "dereferenced only as the API hands it out (get_write_ptr, get_read_ptr, get_semaphore, get_arg_addr, "
        << "an L1 buffer's address arg), while plain offsets work in NOC calls";
    } else if (a >= arena && a < arena_end) {
      uint32_t k_core = static_cast<uint32_t>((a - arena) / L1Arena::kWindow);
      uint64_t off = (a - arena) % L1Arena::kWindow;
      if (k_core == self->index)
        s << "offset " << hex(off) << " is past the end of this core's " << l1_size << " bytes of L1";
      else
        s << "this is core " << k_core << "'s L1 (offset " << hex(off) << "), not this core's";
    } else {
      s << "outside this core's L1 (and any core's)";
    }
  }
  if (k.fault_pc) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(k.fault_pc), &info) && info.dli_sname) s << " in " << demangled(info.dli_sname);
    s << " [pc " << hex(k.fault_pc) << "]";
  }
  return s.str();
}

void run_kernel_guarded(Fiber* f) {
  KernelState& k = f->api;
  k.reset();
  if (sigsetjmp(k.fault_jmp, 0) == 0) {
    k.fault_armed = 1;
    try {
      f->kernel->run();
    } catch (...) {
      k.fault_armed = 0;
      flush_dprint(f);
      throw;
    }
    k.fault_armed = 0;
    flush_dprint(f);
    return;
  }
  // Back from a fault in the kernel: its frames are gone. The handler runs
  // with SA_NODEFER and an empty sa_mask and sigsetjmp saved no mask, so the
  // thread's mask is as it was; fiber switches neither save nor restore it
  // (fiber.hpp). Unblock the fault signals anyway, once, here: a blocked one
  // would turn the next kernel fault on this thread into the process's death.
  unblock_fault_signals();
  flush_dprint(f);
  throw Error("run_error", k.exit_call.empty() ? describe_fault(f) : k.exit_call);
}

void prepare_core_l1(uint8_t* l1, const Board& b) {
  std::memset(l1 + ZYX_EMU_L1_ZEROS_OFFSET, 0, ZYX_EMU_L1_ZEROS_SIZE);
  std::memset(l1 + ZYX_EMU_L1_SIGNALS_OFFSET, 0, 32 * 4);
  for (uint32_t s = 0; s < kSemaphoresPerCore; s++) std::memset(l1 + semaphore_offset(b, s), 0, 4);
}

// Compute functions live in tile_math.cpp.
void fill_compute_api(zyx_emu_api& api);

const zyx_emu_api* kernel_api() {
  static const zyx_emu_api api = [] {
    zyx_emu_api a{};
    a.abi_version = ZYX_EMU_ABI_VERSION;
    a.args = api_args;
    a.cb_reserve_back = api_cb_reserve_back;
    a.cb_push_back = api_cb_push_back;
    a.cb_wait_front = api_cb_wait_front;
    a.cb_pop_front = api_cb_pop_front;
    a.cb_pages_available_at_front = api_cb_pages_available_at_front;
    a.cb_pages_reservable_at_back = api_cb_pages_reservable_at_back;
    a.cb_write_ptr = api_cb_write_ptr;
    a.cb_read_ptr = api_cb_read_ptr;
    a.cb_page_size = api_cb_page_size;
    a.cb_format = api_cb_format;
    a.cb_num_pages = api_cb_num_pages;
    a.noc_read = api_noc_read;
    a.noc_write = api_noc_write;
    a.noc_atomic_inc = api_noc_atomic_inc;
    a.l1_noc_addr = api_l1_noc_addr;
    a.core_xy = api_core_xy;
    a.semaphore_addr = api_semaphore_addr;
    a.wait_word = api_wait_word;
    a.l1_ptr = api_l1_ptr;
    a.fail = api_fail;
    a.dprint = api_dprint;
    a.buffer_page_size = api_buffer_page_size;
    a.l1_range = api_l1_range;
    a.noc_mcast_write = api_noc_mcast_write;
    a.noc_inline_write = api_noc_inline_write;
    a.noc_atomic_inc_mcast = api_noc_atomic_inc_mcast;
    a.core_info = api_core_info;
    a.cb_interface = api_cb_interface;
    a.scratch = api_scratch;
    a.dprint_enabled = api_dprint_enabled;
    a.dprint_tag = api_dprint_tag;
    a.waypoint = api_waypoint;
    a.assert_fail = api_assert_fail;
    a.dst_tile = api_dst_tile;
    a.arg_past_end = api_arg_past_end;
    a.kernel_exit = api_kernel_exit;
    fill_compute_api(a);
    return a;
  }();
  return &api;
}

// ---- Runner ----------------------------------------------------------------

CurrentCoreFp32::operator bool() const { return t_fiber && t_fiber->core->fp32_dest_acc; }

// Helper threads for Runner::execute. start(n, job) has helpers 1..n run
// job(id) (creating threads as needed; fewer when the system refuses more),
// wait() returns when they all have. One run at a time uses it (run_mu_).
// Each helper sets up its fault stack once, for its lifetime.
struct Runner::WorkerPool {
  std::mutex mu;
  std::condition_variable wake, done;
  std::vector<std::thread> threads;
  const std::function<void(unsigned)>* job = nullptr;
  uint64_t generation = 0;
  unsigned want = 0, running = 0;
  bool stop = false;

  void loop(unsigned id) {
    FaultStack fault_stack;  // kernel faults become run errors on this thread
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      wake.wait(lock, [&] { return stop || generation != seen; });
      if (stop) return;
      seen = generation;
      if (id > want) continue;
      const std::function<void(unsigned)>* j = job;
      lock.unlock();
      (*j)(id);
      lock.lock();
      if (--running == 0) done.notify_all();
    }
  }
  unsigned start(unsigned n, const std::function<void(unsigned)>* j) {
    std::lock_guard<std::mutex> lock(mu);
    while (threads.size() < n) {
      try {
        threads.emplace_back(&WorkerPool::loop, this, static_cast<unsigned>(threads.size() + 1));
      } catch (const std::system_error&) {
        break;  // fewer helpers: the run still finishes
      }
    }
    n = std::min<unsigned>(n, static_cast<unsigned>(threads.size()));
    job = j, want = n, running = n;
    generation++;
    wake.notify_all();
    return n;
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu);
    done.wait(lock, [&] { return running == 0; });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    wake.notify_all();
    for (auto& t : threads) t.join();
  }
};

Runner::Runner(const Board& board, DeviceMemory& memory, KernelBuilder& builder)
    : board_(board), memory_(memory), builder_(builder), pool_(std::make_unique<WorkerPool>()) {}

Runner::~Runner() {
  pool_.reset();
  for (void* s : stacks_) munmap(s, kStackSize);
}

void* Runner::take_stack() {
  {
    std::lock_guard<std::mutex> lock(stack_mu_);
    if (!stacks_.empty()) {
      void* s = stacks_.back();
      stacks_.pop_back();
      return s;
    }
  }
  void* s = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                 -1, 0);
  if (s == MAP_FAILED) throw Error("internal", "emulator: cannot map a kernel stack");
  mprotect(s, kGuard, PROT_NONE);  // overflow faults instead of corrupting
  return s;
}

void Runner::give_stack(void* s) {
  std::lock_guard<std::mutex> lock(stack_mu_);
  stacks_.push_back(s);
}

namespace {

Error invalid(const std::string& msg) { return Error("invalid_argument", msg); }

int slot_of(Processor p) {
  switch (p) {
    case Processor::Riscv0: return 0;
    case Processor::Riscv1: return 1;
    case Processor::Compute: return 2;
  }
  return -1;
}

// Fibers of a core run in this slot order: riscv_0, compute, riscv_1 (the
// reader, compute, writer order of a one-group program).
constexpr int kSlotOrder[3] = {0, 2, 1};

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

// The protocol name of an arg kind (the table the request parser reads).
const char* kind_name(ArgKind k) { return name_in(kArgKindNames, k, "unknown"); }

bool names_buffer(ArgKind k) {
  switch (k) {
    case ArgKind::BufferAddr:
    case ArgKind::BufferSize:
    case ArgKind::BufferPages:
    case ArgKind::PageSize:
    case ArgKind::BankId:
    case ArgKind::BankNocX:
    case ArgKind::BankNocY:
    case ArgKind::Accessor: return true;
    default: return false;
  }
}

bool layout_dependent(ArgKind k) {
  return k == ArgKind::BankId || k == ArgKind::BankNocX || k == ArgKind::BankNocY || k == ArgKind::Accessor;
}

void check_entry(const ArgEntry& e, const ProgramDesc& d, const Board& b, bool compile_list, const std::string& at) {
  switch (e.kind) {
    case ArgKind::Const: return;
    case ArgKind::CoreNocX:
    case ArgKind::CoreNocY:
      if (e.core.row >= b.rows || e.core.col >= b.cols)
        throw invalid(at + ": core " + core_text(e.core) + " is outside the " + std::to_string(b.rows) + "x" +
                      std::to_string(b.cols) + " grid");
      return;
    case ArgKind::SemaphoreAddr:
      if (e.value >= kSemaphoresPerCore)
        throw invalid(at + ": semaphore " + std::to_string(e.value) + "; a core has " +
                      std::to_string(kSemaphoresPerCore));
      return;
    default:
      // The rest name a param: a variable (param) or a buffer.
      if (e.kind != ArgKind::Param && !names_buffer(e.kind)) throw invalid(at + ": unknown arg kind");
      break;
  }
  if (e.param >= d.params.size())
    throw invalid(at + ": " + kind_name(e.kind) + " names param " + std::to_string(e.param) + "; the program has " +
                  std::to_string(d.params.size()));
  bool want_buffer = names_buffer(e.kind);
  const ParamDesc& p = d.params[e.param];
  if (want_buffer != p.is_buffer())
    throw invalid(at + ": " + kind_name(e.kind) + " needs a " + (want_buffer ? "buffer" : "variable") + " param, but " +
                  "param " + std::to_string(e.param) + " (" + p.name + ") is " + (p.is_buffer() ? "a buffer" : "a variable"));
  if (e.kind == ArgKind::Accessor && !compile_list) throw invalid(at + ": accessor entries belong in compile args");
}

// Whether an entry resolves from the program alone.
bool static_entry(const ArgEntry& e, const Program& p) {
  switch (e.kind) {
    case ArgKind::Const:
    case ArgKind::CoreNocX:
    case ArgKind::CoreNocY:
    case ArgKind::SemaphoreAddr: return true;
    default: return layout_dependent(e.kind) && p.decls.count(e.param);
  }
}

// Tensor-accessor compile-time words (docs/emulator.md), as tt-metal's
// TensorAccessorArgs lays them out: the ArgsConfig flags (bit 0 sharded,
// bit 1 DRAM) and the aligned page size; a sharded tensor adds the rank (2),
// the number of banks (shard holders), the tensor shape and the shard shape
// in pages (rows, cols), and the holders' NOC coordinates (x << 8) | y, two
// per word (even holders in the low half).
void accessor_words(const Geometry& g, const Board& b, std::vector<uint32_t>& out) {
  bool dram = g.spec.placement == Placement::Dram;
  uint64_t align = dram ? b.dram_alignment : b.l1_alignment;
  out.push_back((g.sharded() ? 1u : 0u) | (dram ? 2u : 0u));
  out.push_back(static_cast<uint32_t>((g.spec.page_size + align - 1) / align * align));
  if (!g.sharded()) return;
  const ShardSpec& s = *g.spec.shard;
  out.push_back(2);
  out.push_back(g.shards);
  out.push_back(s.tensor[0]), out.push_back(s.tensor[1]);
  out.push_back(s.shape[0]), out.push_back(s.shape[1]);
  for (uint32_t k = 0; k < g.shards; k += 2) {
    uint32_t packed = 0;
    for (uint32_t h = 0; h < 2 && k + h < g.shards; h++) {
      uint32_t u = g.shard_unit(k + h, b);
      uint32_t x = dram ? dram_noc_x(u) : worker_noc_x(u % b.cols), y = dram ? dram_noc_y(u) : worker_noc_y(u / b.cols);
      packed |= (((x & 0xff) << 8) | (y & 0xff)) << (16 * h);
    }
    out.push_back(packed);
  }
}

// Where arg values come from: at compile only the program; at a run also
// the args and their buffers, and for runtime and common args the core
// whose L1 pointers L1 buffer addresses become.
struct ArgSource {
  const Board* board = nullptr;
  const Program* prog = nullptr;
  const std::vector<RunArg>* args = nullptr;
  const std::vector<std::shared_ptr<const Buffer>>* bufs = nullptr;
  const L1Arena* l1 = nullptr;
  uint32_t core = 0;
};

// Resolves one entry; `at` names it in errors.
template <typename At>
void resolve(const ArgEntry& e, const ArgSource& src, std::vector<uint32_t>& out, At&& at) {
  const Board& b = *src.board;
  auto word = [&](uint64_t v, const char* what) {
    if (v > UINT32_MAX) throw invalid(at() + ": the " + what + " " + std::to_string(v) + " does not fit in 32 bits");
    out.push_back(static_cast<uint32_t>(v));
  };
  const Buffer* buf = nullptr;
  if (names_buffer(e.kind) && src.bufs) buf = (*src.bufs)[e.param].get();
  switch (e.kind) {
    case ArgKind::Const: out.push_back(e.value); return;
    case ArgKind::CoreNocX: out.push_back(worker_noc_x(e.core.col)); return;
    case ArgKind::CoreNocY: out.push_back(worker_noc_y(e.core.row)); return;
    case ArgKind::SemaphoreAddr:
      // In runtime and common args the core's own L1 pointer, which a
      // kernel may dereference; in compile args (one binary for every
      // core) the L1 offset, which the API's semaphore calls accept.
      if (src.l1)
        out.push_back(src.l1->core_addr(src.core, semaphore_offset(b, e.value)));
      else
        word(semaphore_offset(b, e.value), "semaphore offset");
      return;
    case ArgKind::Param: out.push_back(static_cast<uint32_t>((*src.args)[e.param].value)); return;
    case ArgKind::BufferAddr:
      if (buf->l1() && src.l1)
        out.push_back(src.l1->core_addr(src.core, buf->address));
      else
        word(buf->address, "buffer address");
      return;
    case ArgKind::BufferSize: word(buf->size, "buffer size"); return;
    case ArgKind::BufferPages: word(buf->pages, "page count"); return;
    case ArgKind::PageSize: word(buf->geo.spec.page_size, "page size"); return;
    default: break;
  }
  // Layout-dependent kinds use the declared layout when there is one.
  auto d = src.prog->decls.find(e.param);
  const Geometry& g = d != src.prog->decls.end() ? d->second : buf->geo;
  if (e.kind == ArgKind::Accessor) {
    accessor_words(g, b, out);
    return;
  }
  uint64_t limit = buf ? buf->pages : g.sharded() ? uint64_t(g.spec.shard->tensor[0]) * g.spec.shard->tensor[1] : 0;
  if ((buf || g.sharded()) && e.page >= limit)
    throw invalid(at() + ": page " + std::to_string(e.page) + " is past the buffer's " + std::to_string(limit) +
                  " pages");
  PageLoc l = g.locate(0, e.page, b);
  if (e.kind == ArgKind::BankId)
    out.push_back(l.unit);
  else if (e.kind == ArgKind::BankNocX)
    out.push_back(l.dram ? dram_noc_x(l.unit) : worker_noc_x(l.unit % b.cols));
  else
    out.push_back(l.dram ? dram_noc_y(l.unit) : worker_noc_y(l.unit / b.cols));
}

std::string entry_at(const ProgramDesc& d, uint32_t k, const char* list, size_t i) {
  return "kernels[" + std::to_string(k) + "] (" + d.kernels[k].name + ")." + list + "[" + std::to_string(i) + "]";
}

// The compile-time values of a kernel: positional, then named.
void compile_values(const Program& prog, uint32_t k, const ArgSource& src, std::vector<uint32_t>& pos,
                    std::vector<std::pair<std::string, uint32_t>>& named) {
  const KernelDesc& kd = prog.desc.kernels[k];
  for (size_t i = 0; i < kd.compile_args.size(); i++)
    resolve(kd.compile_args[i], src, pos, [&] { return entry_at(prog.desc, k, "compile_args", i); });
  std::vector<uint32_t> one;
  for (size_t i = 0; i < kd.named_compile_args.size(); i++) {
    one.clear();
    const auto& [name, e] = kd.named_compile_args[i];
    resolve(e, src, one, [&] { return entry_at(prog.desc, k, "named_compile_args", i) + " (" + name + ")"; });
    if (one.size() != 1)
      throw invalid(entry_at(prog.desc, k, "named_compile_args", i) + " (" + name + "): an entry of " +
                    std::to_string(one.size()) + " words cannot be a named arg");
    named.emplace_back(name, one[0]);
  }
}

}  // namespace

uint64_t Runner::compile(const ProgramDesc& desc) {
  auto prog = std::make_shared<Program>();
  prog->desc = desc;
  const ProgramDesc& d = prog->desc;
  const Board& b = board_;
  // Buffer declarations.
  for (size_t i = 0; i < d.buffers.size(); i++) {
    const BufferDecl& bd = d.buffers[i];
    std::string at = "buffers[" + std::to_string(i) + "]";
    if (bd.param >= d.params.size() || !d.params[bd.param].is_buffer())
      throw invalid(at + ": param " + std::to_string(bd.param) + " is not a buffer param");
    if (prog->decls.count(bd.param)) throw invalid(at + ": param " + std::to_string(bd.param) + " is declared twice");
    prog->decls.emplace(bd.param, make_geometry(bd.spec, 0, b, at));
  }
  // Include files: relative paths inside the build directory.
  std::set<std::string> paths;
  for (size_t i = 0; i < d.include_files.size(); i++) {
    const std::string& path = d.include_files[i].path;
    std::string at = "include_files[" + std::to_string(i) + "].path";
    if (std::string why = include_path_problem(path); !why.empty()) throw invalid(at + ": " + why);
    if (!paths.insert(path).second) throw invalid(at + ": \"" + path + "\" is given twice");
  }
  // Kernels on their cores.
  if (d.kernels.empty()) throw invalid("kernels: a program needs at least one kernel");
  if (d.kernels.size() > 64) throw invalid("kernels: at most 64 kernels (" + std::to_string(d.kernels.size()) + ")");
  std::vector<CorePlan> all(b.cores());
  for (uint32_t i = 0; i < b.cores(); i++) all[i].core = CoreCoord{i / b.cols, i % b.cols}, all[i].index = i;
  for (uint32_t k = 0; k < d.kernels.size(); k++) {
    const KernelDesc& kd = d.kernels[k];
    std::string at = "kernels[" + std::to_string(k) + "] (" + kd.name + ")";
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
    auto kp = std::make_unique<KernelPlan>();
    kp->index = k;
    kp->slot = slot;
    prog->kernels.push_back(std::move(kp));
  }
  for (auto& kp : prog->kernels) {
    const KernelDesc& kd = d.kernels[kp->index];
    kp->compile_static =
        std::all_of(kd.compile_args.begin(), kd.compile_args.end(), [&](const ArgEntry& e) { return static_entry(e, *prog); }) &&
        std::all_of(kd.named_compile_args.begin(), kd.named_compile_args.end(),
                    [&](const auto& n) { return static_entry(n.second, *prog); });
  }
  // Circular buffers: each config at one address on all its cores, above
  // the CBs already on any of them (as tt-metal places them), from the
  // unreserved base up. Configs on an L1 buffer are placed at run.
  std::vector<std::array<int, 32>> cb_owner(b.cores());
  for (auto& o : cb_owner) o.fill(-1);
  for (auto& cp : all) cp.cb_top = b.l1_unreserved_base;
  for (uint32_t i = 0; i < d.cbs.size(); i++) {
    const CBConfig& cfg = d.cbs[i];
    std::string at = "cbs[" + std::to_string(i) + "]";
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
      auto dec = prog->decls.find(p);
      if (dec != prog->decls.end() && dec->second.spec.placement != Placement::L1)
        throw invalid(at + ".buffer: param " + std::to_string(p) + " (" + d.params[p].name +
                      ") is declared in DRAM; a circular buffer sits on an L1 buffer");
    }
    std::vector<CoreCoord> cores = cfg.cores.cores();
    uint64_t addr = 0, end = 0;
    if (!cfg.buffer_param) {
      uint64_t top = b.l1_unreserved_base;
      for (CoreCoord c : cores) top = std::max(top, all[c.row * b.cols + c.col].cb_top);
      addr = align_up(top, 32);
      end = addr + cfg.total_bytes;
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
    }
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
      if (!cfg.buffer_param) cp.cb_top = end;
    }
  }
  // Semaphores: one id per core at most once.
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
  for (auto& cp : all)
    if (cp.runs() || cp.cb_top > b.l1_unreserved_base || !cp.buffer_cbs.empty()) prog->cores.push_back(std::move(cp));
  // Build the kernels whose compile args are known now, in parallel.
  std::vector<KernelPlan*> now;
  for (auto& kp : prog->kernels)
    if (kp->compile_static) now.push_back(kp.get());
  std::atomic<size_t> next{0};
  std::mutex err_mu;
  std::exception_ptr first;
  auto build = [&] {
    for (size_t i; (i = next.fetch_add(1)) < now.size();) {
      try {
        ArgSource src;
        src.board = &b, src.prog = prog.get();
        std::vector<uint32_t> pos;
        std::vector<std::pair<std::string, uint32_t>> named;
        compile_values(*prog, now[i]->index, src, pos, named);
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
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t id = next_id_++;
  programs_[id] = std::move(prog);
  return id;
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

static std::chrono::milliseconds timeout_from_env() {
  if (const char* s = std::getenv("ZYX_EMU_TIMEOUT_MS")) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && v > 0) return std::chrono::milliseconds(v);
  }
  return std::chrono::milliseconds(10000);
}

static std::string spec_text(const BufferSpec& s) {
  static const char* layouts[] = {"interleaved", "height_sharded", "width_sharded", "block_sharded"};
  std::ostringstream o;
  o << (s.placement == Placement::L1 ? "l1 " : "dram ") << layouts[static_cast<int>(s.layout) & 3] << " with "
    << s.page_size << "-byte pages";
  if (s.shard) {
    o << ", shard " << s.shard->shape[0] << "x" << s.shard->shape[1] << " of " << s.shard->tensor[0] << "x"
      << s.shard->tensor[1] << " pages on";
    for (auto& r : s.shard->cores.ranges) o << " " << range_text(r);
    o << (s.shard->orientation == ShardOrientation::ColMajor ? " col_major" : " row_major");
  }
  return o.str();
}

uint64_t Runner::run(uint64_t id, const std::vector<RunArg>& args, bool timed) {
  std::shared_ptr<Program> prog;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = programs_.find(id);
    if (it == programs_.end()) throw Error("unknown_program", "program " + std::to_string(id) + " does not exist");
    prog = it->second;
  }
  const ProgramDesc& d = prog->desc;
  const Board& b = board_;
  if (args.size() != d.params.size())
    throw invalid(std::to_string(args.size()) + " args for " + std::to_string(d.params.size()) + " params");
  std::vector<std::shared_ptr<const Buffer>> bufs(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    if (args[i].is_buffer != d.params[i].is_buffer())
      throw invalid("arg " + std::to_string(i) + " (" + d.params[i].name + ") must be a " +
                    (d.params[i].is_buffer() ? "buffer" : "value"));
    if (args[i].is_buffer) bufs[i] = memory_.get(args[i].buffer);  // unknown_buffer if it is gone
  }
  for (auto& [p, g] : prog->decls)
    if (!(bufs[p]->geo.spec == g.spec))
      throw invalid("arg " + std::to_string(p) + " (" + d.params[p].name + "): buffer " +
                    std::to_string(args[p].buffer) + " is " + spec_text(bufs[p]->geo.spec) +
                    ", but the program was built for " + spec_text(g.spec));
  // Circular buffers on L1 buffers, and CBs that would overlap a live L1 buffer.
  auto live = memory_.live_l1();
  for (const CorePlan& cp : prog->cores) {
    for (auto [ci, index] : cp.buffer_cbs) {
      const CBConfig& cfg = d.cbs[ci];
      uint32_t p = *cfg.buffer_param;
      const Buffer& buf = *bufs[p];
      std::string at = "cbs[" + std::to_string(ci) + "] on param " + std::to_string(p) + " (" + d.params[p].name + ")";
      if (!buf.l1()) throw invalid(at + ": buffer " + std::to_string(buf.id) + " is in DRAM, not L1");
      if (!buf.on_core(cp.index))
        throw invalid(at + ": core " + core_text(cp.core) + " holds no part of L1 buffer " + std::to_string(buf.id));
      if (cfg.total_bytes > buf.span)
        throw invalid(at + ": total_bytes " + std::to_string(cfg.total_bytes) + " exceed the " +
                      std::to_string(buf.span) + " bytes buffer " + std::to_string(buf.id) + " has on core " +
                      core_text(cp.core));
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
  std::lock_guard<std::mutex> run_lock(run_mu_);
  L1Arena& l1 = memory_.l1();
  std::vector<std::shared_ptr<KernelObject>> objs(prog->kernels.size());
  for (size_t k = 0; k < prog->kernels.size(); k++) objs[k] = kernel_for(*prog, *prog->kernels[k], args, bufs);

  RunState rs;
  rs.board = &b;
  rs.dram = &memory_.dram();
  rs.l1 = &l1;
  rs.timeout = timeout_from_env();
  for (const auto& buf : bufs) {
    if (!buf) continue;
    auto& m = buf->l1() ? rs.l1_page_sizes : rs.dram_page_sizes;
    m[static_cast<uint32_t>(buf->address)] = static_cast<uint32_t>(buf->geo.spec.page_size);
  }
  // Reserved L1 of every core (zeros, semaphores zero), then the declared
  // semaphore initial values.
  for (uint32_t c = 0; c < b.cores(); c++) prepare_core_l1(l1.core_base(c), b);
  for (const SemaphoreDesc& s : d.semaphores)
    for (CoreCoord c : s.cores.cores())
      std::memcpy(l1.core_base(c.row * b.cols + c.col) + semaphore_offset(b, s.id), &s.initial, 4);
  size_t running = 0;
  for (const CorePlan& cp : prog->cores) running += cp.runs();
  rs.cores.reserve(running);
  if (core_pool_.size() < running) core_pool_.resize(running);
  ArgSource src;
  src.board = &b, src.prog = prog.get(), src.args = &args, src.bufs = &bufs, src.l1 = &l1;
  for (const CorePlan& cp : prog->cores) {
    if (!cp.runs()) continue;
    // Core states are reused across runs; DST keeps its contents, and its
    // written tiles are cleared at the next tile_regs_acquire.
    auto& core = core_pool_[rs.cores.size()];
    if (!core) core = std::make_unique<CoreState>();
    core->cbs = cp.cbs;
    for (auto [ci, index] : cp.buffer_cbs) {
      core->cbs[index].offset = bufs[*d.cbs[ci].buffer_param]->address;
      core->cbs[index].on_buffer = true;
    }
    core->cstate.reset();
    core->fibers = {};
    core->nfibers = 0;
    core->dst_acquired = false;
    core->fp32_dest_acc = false;
    core->row = cp.core.row, core->col = cp.core.col, core->index = cp.index;
    core->l1 = l1.core_base(cp.index);
    core->run = &rs;
    src.core = cp.index;
    for (int slot : kSlotOrder) {
      if (cp.kernel[slot] < 0) continue;
      uint32_t k = static_cast<uint32_t>(cp.kernel[slot]);
      const KernelDesc& kd = d.kernels[k];
      Fiber& f = core->fibers[core->nfibers++];
      f.core = core.get();
      f.processor = kd.processor;
      f.desc = &kd;
      f.kernel = objs[k];
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
      if (slot == 2) core->fp32_dest_acc = kd.compute.fp32_dest_acc;
    }
    rs.cores.push_back(core.get());
  }
  auto t0 = std::chrono::steady_clock::now();
  execute(rs);
  auto t1 = std::chrono::steady_clock::now();
  if (!rs.err_code.empty()) throw Error(rs.err_code, rs.err_msg);
  return timed ? static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()) : 0;
}

static void fiber_main() {
  Fiber* f = t_fiber;
  try {
    run_kernel_guarded(f);
  } catch (const Cancelled&) {
  } catch (const Error& e) {
    f->core->run->fail(e.code, where(f) + ": " + e.what());
  } catch (const std::exception& e) {
    f->core->run->fail("run_error", where(f) + ": " + e.what());
  } catch (...) {
    f->core->run->fail("run_error", where(f) + ": unknown exception");
  }
  f->done = true;
}

// A fiber's first and last frame: runs its kernel, then switches back to
// its worker for good (the worker never resumes a finished fiber).
static void fiber_entry(void* arg) {
  Fiber* f = static_cast<Fiber*>(arg);
  fiber_main();
  fiber_switch(f->ctx, f->worker->sched);
  std::abort();
}

namespace {

// What every worker publishes for stall detection: when it last made
// progress, and whether it is inside a kernel now (that counts as progress:
// a long stretch of real work is no deadlock).
struct alignas(64) WorkerClock {
  std::atomic<int64_t> last_progress{0};
  std::atomic<bool> inside{false};
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// This thread's exception-handling state (EhState's layout is the ABI's).
EhState& thread_eh() { return *reinterpret_cast<EhState*>(abi::__cxa_get_globals()); }

}  // namespace

void Runner::execute(RunState& rs) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  if (const char* s = std::getenv("ZYX_EMU_THREADS")) {
    int v = std::atoi(s);
    if (v > 0) hw = static_cast<unsigned>(v);
  }
  unsigned nworkers = std::max(1u, std::min<unsigned>(hw, static_cast<unsigned>(rs.cores.size())));
  std::unique_ptr<WorkerClock[]> clocks(new WorkerClock[nworkers]);
  for (unsigned i = 0; i < nworkers; i++) clocks[i].last_progress.store(now_ns());
  std::atomic<unsigned> started{0}, exited{0};
  const int64_t timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(rs.timeout).count();
  // No worker inside a kernel and none has made progress for the timeout.
  auto stalled = [&](int64_t now) {
    unsigned n = started.load();
    for (unsigned i = 0; i < n; i++)
      if (clocks[i].inside.load(std::memory_order_acquire) ||
          now - clocks[i].last_progress.load(std::memory_order_acquire) <= timeout_ns)
        return false;
    return true;
  };
  std::function<void(unsigned)> work = [this, &rs, &clocks, &started, &exited, &stalled, timeout_ns](unsigned w) {
    Worker wk;
    WorkerClock& me = clocks[w];
    std::vector<CoreState*> active;
    uint32_t answered = 0;  // the stall epoch this worker has reported for
    EhState& thread_eh_state = thread_eh();
    auto resume = [&](Fiber& f) {
      t_fiber = &f;
      me.inside.store(true, std::memory_order_release);
      std::swap(thread_eh_state, f.eh);
      fiber_switch(wk.sched, f.ctx);
      std::swap(thread_eh_state, f.eh);
      me.inside.store(false, std::memory_order_release);
      t_fiber = nullptr;
    };
    // Takes core c on, or fails the run when its stacks cannot be mapped: an
    // exception must not leave a worker thread.
    auto start = [&](CoreState* c) {
      uint32_t taken = 0;
      try {
        for (; taken < c->nfibers; taken++) c->fibers[taken].stack = take_stack();
      } catch (const Error& e) {
        while (taken > 0) {
          Fiber& f = c->fibers[--taken];
          give_stack(f.stack);
          f.stack = nullptr;
        }
        rs.fail(e.code, e.what());
        return;
      }
      for (uint32_t i = 0; i < c->nfibers; i++) {
        Fiber& f = c->fibers[i];
        f.worker = &wk;
        fiber_make(f.ctx, static_cast<char*>(f.stack) + kGuard, kStackSize - kGuard, fiber_entry, &f);
      }
      active.push_back(c);
    };
    // Adds this worker's blocked kernels to the report of stall epoch `epoch`.
    auto answer = [&](uint32_t epoch) {
      std::lock_guard<std::mutex> lock(rs.stall_mu);
      if (rs.stall_phase.load() != static_cast<int>(epoch)) return;
      for (CoreState* c : active)
        for (uint32_t i = 0; i < c->nfibers; i++) {
          Fiber& f = c->fibers[i];
          if (!f.done && f.blocked) rs.stall_report.emplace_back(uint64_t(c->index) * 4 + i, describe_wait(&f));
        }
      answered = epoch;
      rs.stall_answers.fetch_add(1);
    };
    while (true) {
      bool progressed = false;
      bool cancel = rs.cancel.load(std::memory_order_relaxed);
      for (size_t i = 0; i < active.size();) {
        CoreState* c = active[i];
        bool all_done = true;
        for (uint32_t j = 0; j < c->nfibers; j++) {
          Fiber& f = c->fibers[j];
          if (f.done) continue;
          if (cancel && !f.started) {
            f.done = true;
            continue;
          }
          if (cancel || !f.blocked || satisfied(*c, f.wait)) {
            f.started = true;
            resume(f);
            progressed = true;
          }
          if (!f.done) all_done = false;
        }
        if (all_done) {
          for (uint32_t j = 0; j < c->nfibers; j++) give_stack(c->fibers[j].stack), c->fibers[j].stack = nullptr;
          active.erase(active.begin() + static_cast<long>(i));
        } else {
          i++;
        }
      }
      if (progressed) {
        me.last_progress.store(now_ns(), std::memory_order_release);
        continue;
      }
      if (!rs.cancel.load()) {
        uint32_t k = rs.next_core.fetch_add(1);
        if (k < rs.cores.size()) {
          start(rs.cores[k]);
          me.last_progress.store(now_ns(), std::memory_order_release);
          continue;
        }
      }
      if (active.empty()) break;
      if (rs.cancel.load()) continue;
      int phase = rs.stall_phase.load();
      if ((phase & 1) && answered != static_cast<uint32_t>(phase)) answer(static_cast<uint32_t>(phase));
      int64_t now = now_ns();
      if (!(phase & 1) && stalled(now) && rs.stall_phase.compare_exchange_strong(phase, phase + 1)) {
        // This worker collects the report: its own part, then every other
        // worker's (a worker that has finished has nothing blocked).
        uint32_t epoch = static_cast<uint32_t>(phase + 1);
        answer(epoch);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (rs.stall_answers.load() + exited.load() < started.load() && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        std::lock_guard<std::mutex> lock(rs.stall_mu);
        if (!stalled(now_ns())) {
          // Someone moved after all: no deadlock; forget this report.
          rs.stall_report.clear();
          rs.stall_answers.store(0);
          rs.stall_phase.store(phase + 2);
        } else {
          auto& r = rs.stall_report;
          std::sort(r.begin(), r.end());
          std::string msg;
          for (auto& [key, text] : r) msg += (msg.empty() ? "" : "; ") + text;
          unsigned missing = started.load() - rs.stall_answers.load() - exited.load();
          if (missing)
            msg += "; " + std::to_string(missing) +
                   " worker(s) did not answer (a kernel may be spinning without calling the kernel API)";
          rs.fail("deadlock", msg + " (no progress on any core for " + std::to_string(timeout_ns / 1000000) +
                                  " ms)");
        }
        continue;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    exited.fetch_add(1);
  };
  // This thread is worker 0, the pool's helpers the others. Fewer threads
  // than asked for still finish the run (each worker takes cores until none
  // are left), so a thread that cannot be created is no error.
  FaultStack fault_stack;  // kernel faults become run errors on this thread
  started.store(nworkers);
  unsigned helpers = pool_->start(nworkers - 1, &work);
  started.store(1 + helpers);
  work(0);
  pool_->wait();
}

}  // namespace zyx::emu
