// Circular buffers (api/dataflow/circular_buffer.h, the CB calls of
// dataflow_api.h and of the compute API's cb_api.h): a bounded queue of
// pages per CB index of a core, shared by its kernels. A kernel that moves
// its read or write pointer through get_local_cb_interface is followed.
#include <algorithm>
#include <cstring>

#include "kernel_api.hpp"
#include "watcher.hpp"

namespace zyx::emu {

namespace {

CircularBuffer& cb_raw(uint32_t id) {
  if (id >= kCircularBuffersPerCore)
    kernel_fail("circular buffer index " + std::to_string(id) + " is out of range (0-" +
                std::to_string(kCircularBuffersPerCore - 1) + ")");
  auto& cb = t_fiber->core->cbs[id];
  if (!cb.configured) kernel_fail("circular buffer " + std::to_string(id) + " is not configured by the program");
  return cb;
}

// Brings this section's interface view of cb up to date.
void cb_refresh(uint32_t id, const CircularBuffer& cb) {
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
  k.cb_iface_valid.set(id);
}

// Takes in a read or write pointer the kernel moved through
// get_local_cb_interface, if it did.
void cb_adopt(uint32_t id, CircularBuffer& cb) {
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

CircularBuffer& cb_of(uint32_t id) {
  auto& cb = cb_raw(id);
  if (t_fiber->api.cb_iface_valid.test(id)) cb_adopt(id, cb);
  return cb;
}

void cb_touch(uint32_t id, const CircularBuffer& cb) {
  if (t_fiber->api.cb_iface_valid.test(id)) cb_refresh(id, cb);
}

// Blocks until `pages` pages of cb id are free (CBBack) or filled (CBFront);
// more pages than the buffer holds is a kernel error naming the call.
CircularBuffer& cb_wait_pages(const char* call, Wait::Kind kind, uint32_t id, uint32_t pages, void* site) {
  auto& cb = cb_of(id);
  if (pages > cb.num_pages)
    kernel_fail(std::string(call) + "(" + std::to_string(id) + ", " + std::to_string(pages) +
                "): the buffer has only " + std::to_string(cb.num_pages) +
                " pages, so the call would never return (watcher check cb: a wait or reserve larger than the CB)");
  Wait w;
  w.kind = kind, w.cb = id, w.pages = pages;
  w.site = reinterpret_cast<uintptr_t>(site);
  block_until(w);
  return cb;
}

// Strict NOC mode: the `pages` pages of cb from `page` on (wrapping past
// its last page) that a push hands to the consumer hold no read still
// landing (push), or that a pop hands back to the producer are the source
// of no write still unflushed (pop).
void cb_check_pages_settled(uint32_t id, const CircularBuffer& cb, uint32_t page, uint32_t pages, const char* call,
                            bool push) {
  std::string what = std::string(call) + "(" + std::to_string(id) + ", " + std::to_string(pages) + "): the pages";
  uint32_t first = std::min(pages, cb.num_pages - page);
  uint64_t off = cb.offset + uint64_t(page) * cb.page_size;
  auto check = [&](uint64_t o, uint32_t n) {
    if (!n) return;
    if (push)
      noc_check_no_pending_read(o, uint64_t(n) * cb.page_size, what);
    else
      noc_check_no_pending_write(o, uint64_t(n) * cb.page_size, what);
  };
  check(off, first);
  check(cb.offset, pages - first);
}

}  // namespace

void api_cb_reserve_back(uint32_t id, uint32_t pages) {
  ZYX_EMU_CHECK_STACK("cb_reserve_back");
  auto& cb = cb_wait_pages("cb_reserve_back", Wait::CBBack, id, pages, __builtin_return_address(0));
  cb.reserved = std::max(cb.reserved, pages);
  cb_touch(id, cb);
}

void api_cb_push_back(uint32_t id, uint32_t pages) {
  ZYX_EMU_CHECK_STACK("cb_push_back");
  auto& cb = cb_of(id);
  // A CB on an L1 buffer holds the buffer's data: its producer may push
  // pages it never reserved (a sharded input), as on a card.
  if (pages > cb.reserved && !cb.on_buffer && t_fiber->core->run->watch.cb)
    kernel_fail("cb_push_back(" + std::to_string(id) + ", " + std::to_string(pages) + ") pushes more than the " +
                std::to_string(cb.reserved) +
                " page(s) reserved with cb_reserve_back and not yet pushed (watcher check cb: reserve before you "
                "write and push; ZYX_EMU_WATCHER=no-cb turns it off)");
  if (cb.available() + pages > cb.num_pages)
    kernel_fail("cb_push_back(" + std::to_string(id) + ", " + std::to_string(pages) + ") overflows the buffer (" +
                std::to_string(cb.available()) + " of " + std::to_string(cb.num_pages) + " pages filled)");
  if (t_fiber->api.noc.strict) cb_check_pages_settled(id, cb, cb.wr_page, pages, "cb_push_back", true);
  cb.pushed += pages;
  cb.wr_page = (cb.wr_page + pages) % cb.num_pages;
  cb.pack_next = 0;
  cb.reserved = pages < cb.reserved ? cb.reserved - pages : 0;
  cb_touch(id, cb);
}

void api_cb_wait_front(uint32_t id, uint32_t pages) {
  ZYX_EMU_CHECK_STACK("cb_wait_front");
  auto& cb = cb_wait_pages("cb_wait_front", Wait::CBFront, id, pages, __builtin_return_address(0));
  cb.waited = std::max(cb.waited, pages);
  cb_touch(id, cb);
}

void api_cb_pop_front(uint32_t id, uint32_t pages) {
  ZYX_EMU_CHECK_STACK("cb_pop_front");
  auto& cb = cb_of(id);
  if (pages > cb.available() && cb.on_buffer && pages <= cb.num_pages)
    cb.pushed += pages - cb.available();  // the buffer's own pages, never pushed
  if (pages > cb.available())
    kernel_fail("cb_pop_front(" + std::to_string(id) + ", " + std::to_string(pages) + ") pops more than the " +
                std::to_string(cb.available()) + " filled page(s)");
  if (pages > cb.waited && !cb.on_buffer && t_fiber->core->run->watch.cb)
    kernel_fail("cb_pop_front(" + std::to_string(id) + ", " + std::to_string(pages) + ") pops more than the " +
                std::to_string(cb.waited) +
                " page(s) waited for with cb_wait_front and not yet popped (watcher check cb: wait before you read "
                "and pop; ZYX_EMU_WATCHER=no-cb turns it off)");
  if (t_fiber->api.noc.strict) cb_check_pages_settled(id, cb, cb.rd_page, pages, "cb_pop_front", false);
  cb.waited = pages < cb.waited ? cb.waited - pages : 0;
  cb.popped += pages;
  cb.rd_page = (cb.rd_page + pages) % cb.num_pages;
  cb_touch(id, cb);
}

// A poll that succeeds counts as the wait or reserve it stands for.
int api_cb_pages_available_at_front(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (cb.available() < pages) return 0;
  cb.waited = std::max(cb.waited, pages);
  return 1;
}
int api_cb_pages_reservable_at_back(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (cb.num_pages - cb.available() < pages) return 0;
  cb.reserved = std::max(cb.reserved, pages);
  return 1;
}

uint32_t api_cb_write_ptr(uint32_t id) {
  auto& cb = cb_of(id);
  return l1_va(cb.offset + uint64_t(cb.wr_page) * cb.page_size);
}
uint32_t api_cb_read_ptr(uint32_t id) {
  auto& cb = cb_of(id);
  return l1_va(cb.offset + uint64_t(cb.rd_page) * cb.page_size);
}
uint32_t api_cb_page_size(uint32_t id) { return cb_of(id).page_size; }
uint32_t api_cb_format(uint32_t id) { return static_cast<uint32_t>(cb_of(id).format); }
uint32_t api_cb_num_pages(uint32_t id) { return cb_of(id).num_pages; }

// The hot path of every instrumented load and store below 4 GiB: anything
// outside the span of the core's CBs returns at once.
void api_cb_access(uintptr_t addr, uintptr_t size, uint32_t write) {
  Fiber* f = t_fiber;
  if (!f || !f->core) return;
  const CoreState& core = *f->core;
  uint64_t off = addr - reinterpret_cast<uintptr_t>(core.l1);
  if (off < core.cb_lo || off >= core.cb_hi) return;
  const WatchConfig& w = core.run->watch;
  if (w.cb && w.cb_access) cb_check_kernel_access(off, size, write != 0);
}

zyx_emu_cb_interface* api_cb_interface(uint32_t id) {
  auto& cb = cb_of(id);
  cb_refresh(id, cb);
  return &t_fiber->api.cb_iface[id];
}

}  // namespace zyx::emu
