// The kernel API as the emulator implements it: the functions a kernel
// object calls through the zyx_emu_api table (abi_table.cpp fills it), one
// group per tt-metal header family and file, and what those files share.
//
//   api_support.cpp          the calling kernel, blocking waits, L1 addresses
//   api_args.cpp             runtime and common args (get_arg_val, get_arg_addr)
//   api_circular_buffer.cpp  circular buffers (cb_reserve_back, …, get_local_cb_interface)
//   api_noc.cpp              NOC reads, writes, multicasts, atomics, coordinates
//   api_semaphore.cpp        get_semaphore, noc_semaphore_wait
//   api_l1.cpp               L1 pointers, the section's scratch words, buffer page sizes
//   api_debug.cpp            DPRINT, WAYPOINT, ASSERT, the DST dump, kernel failures
//   api_compute*.cpp         the compute API (api/compute/*, compute_api.hpp)
//   fault_guard.cpp          calls that would end the process (kernel_exit)
//
// Every entry point runs on a worker thread inside a kernel fiber: t_fiber
// is the calling kernel. A failure is kernel_fail (a run_error naming the
// core and kernel, added by the scheduler).
#pragma once

#include <cstdint>
#include <string>

#include "runner.hpp"

namespace zyx::emu {

// The kernel fiber running on this thread (set by the scheduler while it
// runs one), or nullptr.
extern constinit thread_local Fiber* t_fiber;

// Thrown out of a blocking call when the run is cancelled; the fiber's
// entry catches it (scheduler.cpp).
struct Cancelled {};

// ---- shared by the API files (api_support.cpp) ------------------------------

[[noreturn]] void kernel_fail(const std::string& msg);
std::string hex(uint64_t v);
// "core (r,c) NAME (PROCESSOR)" for messages.
std::string where(const Fiber* f);
// Whether wait w of a kernel of core c is over.
bool satisfied(const CoreState& c, const Wait& w);
// Switches to the worker until w is satisfied; throws Cancelled when the
// run is cancelled meanwhile.
void block_until(const Wait& w);
// What a TRISC build waits for in the hand-over (api_compute_trisc.cpp).
std::string trisc_wait_text(const CoreState& c, Wait::Kind k);
// What a blocked kernel waits for, for the deadlock report.
std::string describe_wait(const Fiber* f);
// The host pointer of an L1 offset of a core (as a 32-bit kernel address).
uint32_t l1_va(const CoreState* core, uint64_t offset);
uint32_t l1_va(uint64_t offset);
// Resolves an L1 address (a host pointer below 4 GiB or a plain offset) of
// core `core` to a host pointer, checking [addr, addr+size) fits in L1.
uint8_t* l1_target(const CoreState* core, uint32_t addr, uint64_t size, const char* op);

// ---- api_args.cpp ---------------------------------------------------------------
const uint32_t* api_args(uint32_t kind, uint32_t* count);
uint32_t api_arg_past_end(uint32_t kind, int32_t index, uint32_t count);

// ---- api_circular_buffer.cpp ----------------------------------------------------
void api_cb_reserve_back(uint32_t id, uint32_t pages);
void api_cb_push_back(uint32_t id, uint32_t pages);
void api_cb_wait_front(uint32_t id, uint32_t pages);
void api_cb_pop_front(uint32_t id, uint32_t pages);
int api_cb_pages_available_at_front(uint32_t id, uint32_t pages);
int api_cb_pages_reservable_at_back(uint32_t id, uint32_t pages);
uint32_t api_cb_write_ptr(uint32_t id);
uint32_t api_cb_read_ptr(uint32_t id);
uint32_t api_cb_page_size(uint32_t id);
uint32_t api_cb_format(uint32_t id);
uint32_t api_cb_num_pages(uint32_t id);
// The watcher's check of a kernel's own load or store (ABI 15, kernels built
// with the address-check instrumentation).
void api_cb_access(uintptr_t addr, uintptr_t size, uint32_t write);
zyx_emu_cb_interface* api_cb_interface(uint32_t id);

// ---- api_noc.cpp ------------------------------------------------------------------
void api_noc_read(uint64_t src, uint32_t dst_l1, uint32_t size);
void api_noc_write(uint32_t src_l1, uint64_t dst, uint32_t size);
void api_noc_mcast_write(uint32_t src_l1, uint64_t dst, uint32_t size, uint32_t include_self);
void api_noc_atomic_inc(uint64_t dst, uint32_t incr);
void api_noc_atomic_inc_mcast(uint64_t dst, uint32_t incr, uint32_t include_self);
void api_noc_inline_write(uint64_t dst, uint32_t value, uint32_t be, uint32_t mcast);
uint64_t api_l1_noc_addr(uint32_t x, uint32_t y, uint32_t addr);
// noc_strict.cpp: the NOC barriers (ABI 11).
void api_noc_barrier(uint32_t what);
void api_core_xy(uint32_t* x, uint32_t* y);
void api_core_info(zyx_emu_core_info* out);

// ---- api_semaphore.cpp ------------------------------------------------------------
uint32_t api_semaphore_addr(uint32_t id);
void api_wait_word(uint32_t addr, uint32_t value, uint32_t cmp);

// ---- api_l1.cpp -------------------------------------------------------------------
void* api_l1_ptr(uint32_t addr);
void* api_l1_range(uint32_t addr, uint32_t size, const char* op);
uint64_t* api_scratch();
uint32_t api_buffer_page_size(uint32_t addr);

// ---- api_debug.cpp ----------------------------------------------------------------
void api_fail(const char* msg);
int api_dprint_enabled();
void api_dprint(const char* text);
uint32_t api_dprint_tag(uint32_t tag);
void api_waypoint(const char* name);
void api_assert_fail(const char* cond, const char* file, uint32_t line);
const uint32_t* api_dst_tile(uint32_t tile, uint32_t* is_int);
// Writes the kernel's unfinished DPRINT line, if any (when it ends).
void flush_dprint(Fiber* f);

// ---- fault_guard.cpp --------------------------------------------------------------
// The kernel throws (its __cxa_throw is wrapped): keep the throw site.
void api_note_throw();
void api_kernel_exit(uint32_t call, int32_t status, const char* expr, const char* file, uint32_t line,
                     const char* function);

// ---- api_compute.cpp: DST, copy, pack, FPU operations, matmul, reduce ----------
void api_dst_acquire();
void api_dst_release();
void api_copy_tile(uint32_t cb, uint32_t tile, uint32_t dst);
void api_pack_tile(uint32_t dst, uint32_t cbid, uint32_t out_tile, int out_of_order);
void api_binary(uint32_t op, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst);
void api_binary_bcast(uint32_t op, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst,
                      uint32_t row);
void api_binary_dst(uint32_t op, uint32_t i0, uint32_t i1, uint32_t out);
void api_binary_reuse(uint32_t op, uint32_t reuse, uint32_t cb, uint32_t t, uint32_t dst);
void api_unary(uint32_t op, uint32_t dst, uint32_t param);
void api_unary_bcast(uint32_t bcast, uint32_t cb, uint32_t t, uint32_t dst);
void api_matmul(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst, uint32_t transpose);
void api_reduce(uint32_t op, uint32_t dim, uint32_t cb, uint32_t scb, uint32_t t, uint32_t ts, uint32_t dst);
void api_reduce_max_row_block(uint32_t cb, uint32_t scb, uint32_t t0, uint32_t block, uint32_t dst);
void api_transpose(uint32_t cb, uint32_t t, uint32_t dst);
void api_transpose_dst(uint32_t dst);
void api_copy_dst(uint32_t from, uint32_t to);
void api_typecast(uint32_t dst, uint32_t in_fmt, uint32_t out_fmt);
void api_mask(uint32_t data, uint32_t posinf);
void api_compute_config(uint32_t key, uint32_t value);
void api_compute_special(uint32_t op, uint32_t a, uint32_t b, uint32_t c, uint32_t d);
void api_tile_shape(uint32_t cb, uint32_t* rows, uint32_t* cols, uint32_t* faces);
int api_fp32_dest_acc();

// ---- api_compute_sfpu.cpp ---------------------------------------------------------
void api_sfpu_unary(uint32_t op, uint32_t dst, uint32_t p0, uint32_t p1, uint32_t p2);
void api_sfpu_binary(uint32_t op, uint32_t ia, uint32_t ib, uint32_t out, uint32_t p0);
void api_sfpu_ternary(uint32_t op, uint32_t ia, uint32_t ib, uint32_t ic, uint32_t out, uint32_t p0);
// SFPI's DST access and the SFPU's Dst counter (zyx_emu_sfpu_dst_op).
uint32_t* api_sfpu_dst(uint32_t op, int32_t arg, uint32_t* flags);
uint32_t api_special_flags(uint32_t op, uint32_t arg);
void api_dst_row(uint32_t row, uint32_t* out);

// ---- api_compute_tilize.cpp -------------------------------------------------------
void api_tilize(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_tile, uint32_t out_tile);
void api_untilize(uint32_t icb, uint32_t ntiles, uint32_t ocb);
void api_pack_untilize(uint32_t dst0, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct, uint32_t block_c,
                       uint32_t ocb);
void api_pack_rows(uint32_t dst, uint32_t ocb, uint32_t out_index);
void api_unpack_tilize_ab(uint32_t icb0, uint32_t icb1, uint32_t block, uint32_t tile_b, uint32_t num_faces,
                          uint32_t face_r_dim, uint32_t flags);

// ---- api_compute_welford.cpp ------------------------------------------------------
void api_welford(uint32_t op, uint32_t dst, uint32_t a, uint32_t b, const uint32_t* lut, uint32_t n);

}  // namespace zyx::emu
