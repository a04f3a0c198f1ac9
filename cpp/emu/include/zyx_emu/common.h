// Kernel-side API shared by every section: arguments, circular buffers, data
// formats, debug printing. Part of zyx-tt's Tensix emulator; kernels include
// it through the tt-metal style paths next to this directory.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tt-metalium/constants.hpp"
#include "zyx_emu/abi.h"

// Compile-time args arrive as tt-metal passes them: KERNEL_COMPILE_TIME_ARGS
// (the comma-separated values), KERNEL_COMPILE_TIME_ARG_<i> (one macro per
// index, usable in #if) and KERNEL_COMPILE_TIME_ARG_MAP ({"name", value}
// pairs for get_named_compile_time_arg_val).
#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif
#ifndef ZYX_EMU_FP32_DEST_ACC
#define ZYX_EMU_FP32_DEST_ACC 0
#endif
#ifndef ZYX_EMU_MATH_APPROX
#define ZYX_EMU_MATH_APPROX 0
#endif
#ifndef NUM_DRAM_BANKS
#define NUM_DRAM_BANKS 12
#endif
// The L1 alignment of NOC reads and writes, which tt-metal's
// noc_parameters.h gives every kernel, compute kernels too, as a uint32_t.
#define L1_ALIGNMENT (static_cast<uint32_t>(16))
#ifndef ZYX_EMU_DRAM_ALIGNMENT
#ifdef ARCH_BLACKHOLE
#define ZYX_EMU_DRAM_ALIGNMENT 64
#else
#define ZYX_EMU_DRAM_ALIGNMENT 32
#endif
#endif
// And the DRAM alignment, as noc_parameters.h gives it: the larger of the
// NOC's DRAM read and write alignments.
#define DRAM_ALIGNMENT (static_cast<uint32_t>(ZYX_EMU_DRAM_ALIGNMENT))

#define FORCE_INLINE inline __attribute__((always_inline))
#define ALWI inline __attribute__((always_inline))
#define tt_l1_ptr
#define tt_reg_ptr

// A 64-bit L1 word read as two 32-bit halves (tt-metal's internal/risc_attribs.h).
union tt_uint64_t {
  uint64_t v;
  struct {
    uint32_t hi;
    uint32_t lo;
  };
};
FORCE_INLINE uint64_t tt_l1_load(tt_uint64_t* p) {
  tt_uint64_t v;
  v.hi = p->hi;
  v.lo = p->lo;
  return v.v;
}
FORCE_INLINE uint64_t tt_l1_load(volatile tt_uint64_t* p) {
  tt_uint64_t v;
  v.hi = p->hi;
  v.lo = p->lo;
  return v.v;
}
// Where an inline NOC write lands (noc_inline_dw_write and the Noc object).
enum class InlineWriteDst : uint8_t { DEFAULT = 0, L1 = 1, REG = 2 };

// The RISC-V debug registers' wall clock, at tt-metal's addresses (the same
// on Wormhole and Blackhole). The emulator does not back register space: a
// kernel may name these, but reading them at run time is a fault the
// emulator reports; riscv_wait below is how a kernel waits.
#define RISCV_DEBUG_REGS_START_ADDR 0xFFB12000
#define RISCV_DEBUG_REG_WALL_CLOCK_L (RISCV_DEBUG_REGS_START_ADDR | 0x1F0)
#define RISCV_DEBUG_REG_WALL_CLOCK_H (RISCV_DEBUG_REGS_START_ADDR | 0x1F8)

// The function table, set once when the emulator loads the kernel object.
inline const zyx_emu_api* zyx_emu_api_ptr = nullptr;
extern "C" __attribute__((visibility("default"), used)) inline int zyx_emu_kernel_abi() { return ZYX_EMU_ABI_VERSION; }
extern "C" __attribute__((visibility("default"), used)) inline void zyx_emu_kernel_bind(const zyx_emu_api* api) {
  zyx_emu_api_ptr = api;
}
#define ZYX_API (*zyx_emu_api_ptr)

// tt-metal's DataFormat numbering.
enum class DataFormat : uint8_t {
  Float32 = 0,
  Float16 = 1,
  Bfp8 = 2,
  Bfp4 = 3,
  Tf32 = 4,
  Float16_b = 5,
  Bfp8_b = 6,
  Bfp4_b = 7,
  Int32 = 8,
  UInt16 = 9,
  Lf8 = 10,
  Bfp2 = 11,
  Int8 = 14,
  Bfp2_b = 15,
  UInt32 = 24,
  UInt8 = 30,
  RawUInt8 = 0xf0,
  RawUInt16 = 0xf1,
  RawUInt32 = 0xf2,
  Invalid = 0xff
};

namespace tt {
using ::DataFormat;
enum CBIndex : uint8_t {
  c_0 = 0, c_1, c_2, c_3, c_4, c_5, c_6, c_7, c_8, c_9, c_10, c_11, c_12, c_13, c_14, c_15,
  c_16, c_17, c_18, c_19, c_20, c_21, c_22, c_23, c_24, c_25, c_26, c_27, c_28, c_29, c_30, c_31,
  SIZE = 32
};
// The older names: inputs 0-7, outputs 16-23, intermediates 24-31.
enum CB : uint8_t {
  c_in0 = 0, c_in1, c_in2, c_in3, c_in4, c_in5, c_in6, c_in7,
  dataflow0 = 8, dataflow1, dataflow2, dataflow3, dataflow4, dataflow5, dataflow6, dataflow7,
  c_out0 = 16, c_out1, c_out2, c_out3, c_out4, c_out5, c_out6, c_out7,
  c_intermed0 = 24, c_intermed1, c_intermed2, c_intermed3, c_intermed4, c_intermed5, c_intermed6, c_intermed7
};
// The oldest names (hostdevcommon/kernel_structs.h's HlkOperand, from which
// CBs evolved): inputs 0-7, params 8-15, outputs 16-23, intermediates 24-31.
enum HlkOperand : uint8_t {
  in0 = 0, in1, in2, in3, in4, in5, in6, in7,
  param0 = 8, param1, param2, param3, param4, param5, param6, param7,
  out0 = 16, out1, out2, out3, out4, out5, out6, out7,
  intermed0 = 24, intermed1, intermed2, intermed3, intermed4, intermed5, intermed6, intermed7
};
}  // namespace tt

// tt-metal's make_array<T>(values...): a std::array of the values, each
// converted to T (how the compile-time args become an array).
template <class T, class... Ts>
constexpr std::array<T, sizeof...(Ts)> make_array(Ts... values) {
  return {T(values)...};
}

// tt-metal's names: the array, get_ct_arg<i>() and get_compile_time_arg_val(i),
// all constant expressions (template args, array sizes, if constexpr).
// Internal linkage (static, not inline): an inline variable would be one
// process-wide (GNU unique) symbol shared by every loaded kernel object, and
// a runtime index into it would read the args of whichever kernel was
// loaded first.
static constexpr auto kernel_compile_time_args = make_array<uint32_t>(KERNEL_COMPILE_TIME_ARGS);

template <uint32_t Idx>
constexpr uint32_t get_ct_arg() {
  static_assert(Idx < kernel_compile_time_args.size(), "get_compile_time_arg_val: index beyond the compile-time args");
  return kernel_compile_time_args[Idx];
}

namespace zyx_emu_detail {
// The watcher's arg check (ZYX_EMU_WATCHER) makes an index past the args
// the host set a run error; a kernel built with ZYX_EMU_ALLOW_ARGS_PAST_END
// defined reads 0 there instead, with a warning.
#ifdef ZYX_EMU_ALLOW_ARGS_PAST_END
constexpr uint32_t kArgsPastEndFlag = 0x100;
#else
constexpr uint32_t kArgsPastEndFlag = 0;
#endif
// A run-time index past the compile-time args (kind 2).
inline uint32_t compile_arg_past_end(size_t i) {
  return ZYX_API.arg_past_end(2 | kArgsPastEndFlag, static_cast<int32_t>(i),
                              static_cast<uint32_t>(kernel_compile_time_args.size()));
}
constexpr uint32_t compile_arg(size_t i) {
  if (i < kernel_compile_time_args.size()) return kernel_compile_time_args[i];
  if (std::is_constant_evaluated()) throw "get_compile_time_arg_val: index beyond the compile-time args";
  return compile_arg_past_end(i);
}
struct NamedCompileArg {
  std::string_view name;
  uint32_t value;
};
// A name is any string, the empty one too, as on tt-metal.
#ifdef KERNEL_COMPILE_TIME_ARG_MAP
static constexpr NamedCompileArg named_compile_args[] = {KERNEL_COMPILE_TIME_ARG_MAP};
static constexpr size_t num_named_compile_args = sizeof(named_compile_args) / sizeof(named_compile_args[0]);
#else
static constexpr NamedCompileArg named_compile_args[] = {{std::string_view(), 0}};
static constexpr size_t num_named_compile_args = 0;
#endif
constexpr uint32_t named_compile_arg(std::string_view name) {
  for (size_t i = 0; i < num_named_compile_args; i++)
    if (named_compile_args[i].name == name) return named_compile_args[i].value;
  throw "get_named_compile_time_arg_val: the kernel has no named compile-time arg of this name";
}
// Page size of each CB index on the kernel's cores, 0 where there is none
// (the generated source defines ZYX_EMU_CB_TILE_SIZES; internal linkage as
// for the compile-time args).
// The builder writes one size per CB index of a core.
#ifdef ZYX_EMU_CB_TILE_SIZES
static constexpr uint32_t cb_tile_sizes[] = {ZYX_EMU_CB_TILE_SIZES};
#else
static constexpr uint32_t cb_tile_sizes[] = {0};
#endif
// Data format (0xff: none single) and tile rows and columns (0: none
// single) of each CB index, as the builder writes them.
#ifdef ZYX_EMU_CB_FORMATS
static constexpr uint32_t cb_formats[] = {ZYX_EMU_CB_FORMATS};
static constexpr uint32_t cb_tile_rows[] = {ZYX_EMU_CB_TILE_ROWS};
static constexpr uint32_t cb_tile_cols[] = {ZYX_EMU_CB_TILE_COLS};
#else
static constexpr uint32_t cb_formats[] = {0xff};
static constexpr uint32_t cb_tile_rows[] = {0};
static constexpr uint32_t cb_tile_cols[] = {0};
#endif
template <typename T>
FORCE_INLINE T arg_as(uint32_t kind, int i) {
  uint32_t n = 0;
  const uint32_t* a = ZYX_API.args(kind, &n);
  // A pointer arg (get_arg_val<T*>) is the 32-bit L1 address the word holds,
  // as on the card, whose pointers are 32 bits: the emulator's L1 addresses
  // are host pointers (docs/emulator.md, "Memory").
  static_assert(sizeof(T) <= 4 || std::is_pointer_v<T>, "kernel args are 32-bit words");
  if (i < 0) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "%s(%d): negative index (the kernel has %u %s args)",
                  kind ? "get_common_arg_val" : "get_arg_val", i, n, kind ? "common" : "runtime");
    ZYX_API.fail(msg);
  }
  // Past the args the host set a card reads whatever L1 holds there; the
  // emulator fails the run (or, opted out, reads 0 and warns once per kernel).
  uint32_t word = static_cast<uint32_t>(i) < n ? a[i] : ZYX_API.arg_past_end(kind | kArgsPastEndFlag, i, n);
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(static_cast<uintptr_t>(word));
  } else {
    T v;
    std::memcpy(&v, &word, sizeof(T));
    return v;
  }
}
}  // namespace zyx_emu_detail

#define get_compile_time_arg_val(i) (zyx_emu_detail::compile_arg(i))

// The value of a named compile-time arg: a constant expression; a name the
// kernel was not given is a compile error.
constexpr uint32_t get_named_compile_time_arg_val(std::string_view name) {
  return zyx_emu_detail::named_compile_arg(name);
}
constexpr uint32_t get_named_ct_arg(std::string_view name) { return zyx_emu_detail::named_compile_arg(name); }

namespace ckernel {

template <typename T>
FORCE_INLINE T get_arg_val(int i) {
  return zyx_emu_detail::arg_as<T>(0, i);
}
template <typename T>
FORCE_INLINE T get_common_arg_val(int i) {
  return zyx_emu_detail::arg_as<T>(1, i);
}
FORCE_INLINE uintptr_t get_arg_addr(int i) {
  uint32_t n = 0;
  return reinterpret_cast<uintptr_t>(ZYX_API.args(0, &n) + i);
}
FORCE_INLINE uintptr_t get_common_arg_addr(int i) {
  uint32_t n = 0;
  return reinterpret_cast<uintptr_t>(ZYX_API.args(1, &n) + i);
}

// ---- circular buffers ----
// In the TRISC builds of a compute kernel (ZYX_EMU_TRISC), as on the card:
// the consumer side is unpack's (1), the producer side pack's (3).
#if defined(ZYX_EMU_TRISC)
#define ZYX_EMU_CB_FRONT_HERE (ZYX_EMU_TRISC == 1)
#define ZYX_EMU_CB_BACK_HERE (ZYX_EMU_TRISC == 3)
#else
#define ZYX_EMU_CB_FRONT_HERE 1
#define ZYX_EMU_CB_BACK_HERE 1
#endif
FORCE_INLINE void cb_reserve_back(int32_t cb, int32_t pages) {
  if (ZYX_EMU_CB_BACK_HERE) ZYX_API.cb_reserve_back(cb, pages);
}
FORCE_INLINE void cb_push_back(int32_t cb, int32_t pages) {
  if (ZYX_EMU_CB_BACK_HERE) ZYX_API.cb_push_back(cb, pages);
}
FORCE_INLINE void cb_wait_front(int32_t cb, int32_t pages) {
  if (ZYX_EMU_CB_FRONT_HERE) ZYX_API.cb_wait_front(cb, pages);
}
FORCE_INLINE void cb_pop_front(int32_t cb, int32_t pages) {
  if (ZYX_EMU_CB_FRONT_HERE) ZYX_API.cb_pop_front(cb, pages);
}
FORCE_INLINE bool cb_pages_available_at_front(int32_t cb, int32_t pages) {
  return ZYX_API.cb_pages_available_at_front(cb, pages) != 0;
}
FORCE_INLINE bool cb_pages_reservable_at_back(int32_t cb, int32_t pages) {
  return ZYX_API.cb_pages_reservable_at_back(cb, pages) != 0;
}
FORCE_INLINE uint32_t get_write_ptr(uint32_t cb) { return ZYX_API.cb_write_ptr(cb); }
FORCE_INLINE uint32_t get_read_ptr(uint32_t cb) { return ZYX_API.cb_read_ptr(cb); }
// A constant expression where the kernel's cores give the CB one page size
// (tt-metal compiles the CBs' tile sizes into each kernel), so it may size
// arrays or initialise constexpr variables; else the CB's page size at run
// time.
constexpr inline __attribute__((always_inline)) uint32_t get_tile_size(uint32_t cb) {
  if (std::is_constant_evaluated())
    return cb < sizeof(zyx_emu_detail::cb_tile_sizes) / sizeof(uint32_t) && zyx_emu_detail::cb_tile_sizes[cb] != 0
               ? zyx_emu_detail::cb_tile_sizes[cb]
               : throw "get_tile_size: the CB has no single page size on the kernel's cores";
  return ZYX_API.cb_page_size(cb);
}
// Tile shape of a CB's pages (rows x cols, faces), from the program's CB
// config. get_tile_hw and get_dataformat are constant expressions where the
// kernel's cores give the CB one shape or format (tt-metal compiles both into
// each kernel), as get_tile_size is.
constexpr inline __attribute__((always_inline)) uint32_t get_tile_hw(uint32_t cb) {
  if (std::is_constant_evaluated())
    return cb < sizeof(zyx_emu_detail::cb_tile_rows) / sizeof(uint32_t) && zyx_emu_detail::cb_tile_rows[cb] != 0
               ? zyx_emu_detail::cb_tile_rows[cb] * zyx_emu_detail::cb_tile_cols[cb]
               : throw "get_tile_hw: the CB has no single tile shape on the kernel's cores";
  uint32_t r = 32, c = 32, f = 4;
  ZYX_API.tile_shape(cb, &r, &c, &f);
  return r * c;
}
FORCE_INLINE uint32_t get_tile_num_faces(uint32_t cb) {
  uint32_t r = 32, c = 32, f = 4;
  ZYX_API.tile_shape(cb, &r, &c, &f);
  return f;
}
constexpr inline __attribute__((always_inline)) DataFormat get_dataformat(uint32_t cb) {
  if (std::is_constant_evaluated())
    return cb < sizeof(zyx_emu_detail::cb_formats) / sizeof(uint32_t) && zyx_emu_detail::cb_formats[cb] != 0xff
               ? static_cast<DataFormat>(zyx_emu_detail::cb_formats[cb])
               : throw "get_dataformat: the CB has no single data format on the kernel's cores";
  return static_cast<DataFormat>(ZYX_API.cb_format(cb));
}
// The CB's read or write pointer as a pointer to T (ttnn's helpers' form).
template <typename T>
FORCE_INLINE volatile T* get_read_ptr(uint32_t cb) {
  return reinterpret_cast<volatile T*>(static_cast<uintptr_t>(get_read_ptr(cb)));
}
template <typename T>
FORCE_INLINE volatile T* get_write_ptr(uint32_t cb) {
  return reinterpret_cast<volatile T*>(static_cast<uintptr_t>(get_write_ptr(cb)));
}

}  // namespace ckernel

// This section's view of a circular buffer, laid out as tt-metal's
// LocalCBInterface (byte L1 addresses). The emulator refreshes it at every
// circular-buffer call of the section; a kernel may move fifo_rd_ptr or
// fifo_wr_ptr to another page of the buffer, which the next call takes in.
using LocalCBInterface = zyx_emu_cb_interface;
FORCE_INLINE LocalCBInterface& get_local_cb_interface(uint32_t cb_id) { return *ZYX_API.cb_interface(cb_id); }
// On a card a compute kernel's interface holds addresses in 16-byte units
// and cb_addr_shift (4 there, 0 in data-movement kernels) turns them into
// bytes; the emulator's holds bytes in every kernel, so the shift is 0 and
// `ptr << cb_addr_shift` is the byte address on both.
constexpr uint32_t cb_addr_shift = 0;
// DPRINT's CB macros (tt-metal's dprint_tile.h): byte addresses and sizes.
#define CB_RD_PTR(id) (get_local_cb_interface(id).fifo_rd_ptr << cb_addr_shift)
#define CB_RD_SZ(id) (get_local_cb_interface(id).fifo_size << cb_addr_shift)
#define CB_WR_PTR(id) (get_local_cb_interface(id).fifo_wr_ptr << cb_addr_shift)
#define CB_PAGE_COUNT(id) (get_local_cb_interface(id).fifo_num_pages)
#define CB_PAGE_SIZE(id) (get_local_cb_interface(id).fifo_page_size << cb_addr_shift)

using namespace ckernel;

// A guard that runs a callable when it goes (the scoped locks of the object
// API; the emulator tracks nothing for them).
template <typename F>
class Lock {
 public:
  explicit Lock(F f) : f_(f) {}
  ~Lock() { f_(); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  F f_;
};

// The circular-buffer object (Device 2.0), for every kind of kernel.
class CircularBuffer {
 public:
  enum class AddrSelector { WRITE_PTR, READ_PTR };
  explicit CircularBuffer(uint32_t cb_id) : id_(cb_id) {}
  uint32_t get_cb_id() const { return id_; }
  void reserve_back(int32_t pages) { ckernel::cb_reserve_back(id_, pages); }
  void push_back(int32_t pages) { ckernel::cb_push_back(id_, pages); }
  void wait_front(int32_t pages) { ckernel::cb_wait_front(id_, pages); }
  void pop_front(int32_t pages) { ckernel::cb_pop_front(id_, pages); }
  bool pages_available_at_front(int32_t pages) const { return ckernel::cb_pages_available_at_front(id_, pages); }
  bool pages_reservable_at_back(int32_t pages) const { return ckernel::cb_pages_reservable_at_back(id_, pages); }
  uint32_t get_write_ptr() const { return ckernel::get_write_ptr(id_); }
  uint32_t get_read_ptr() const { return ckernel::get_read_ptr(id_); }
  uint32_t get_tile_size() const { return ckernel::get_tile_size(id_); }
  uint32_t get_tile_hw() const { return ckernel::get_tile_hw(id_); }
  DataFormat get_dataformat() const { return ckernel::get_dataformat(id_); }
  // Tile t at the read pointer, and one of its 32-bit words.
  uint32_t get_tile_address(uint32_t tile_index) const { return get_read_ptr() + tile_index * get_tile_size(); }
  uint32_t read_tile_value(uint32_t tile_index, uint32_t element_offset) const {
    uint32_t v;
    std::memcpy(&v, ZYX_API.l1_range(get_tile_address(tile_index) + 4 * element_offset, 4, "read_tile_value"), 4);
    return v;
  }
  [[nodiscard]] auto scoped_lock() {
    return Lock([] {});
  }
  operator uint32_t() const { return id_; }

 private:
  uint32_t id_;
};
namespace experimental {
using ::CircularBuffer;
}  // namespace experimental

// Each CB index's L1 data format and tile shape, as tt-metal's build writes
// them into every kernel (the unpacker's and packer's views agree: one
// L1 format per CB). An index with none single on the kernel's cores reads
// 0xff (format) and 0 (shape).
namespace zyx_emu_detail {
template <typename T, size_t... I>
constexpr std::array<T, sizeof...(I)> cb_table(const uint32_t* values, std::index_sequence<I...>) {
  return {static_cast<T>(values[I])...};
}
template <typename T, size_t N>
constexpr auto cb_table(const uint32_t (&values)[N]) {
  return cb_table<T>(values, std::make_index_sequence<N>());
}
}  // namespace zyx_emu_detail
static constexpr auto unpack_src_format = zyx_emu_detail::cb_table<std::int32_t>(zyx_emu_detail::cb_formats);
static constexpr auto unpack_dst_format = zyx_emu_detail::cb_table<std::int32_t>(zyx_emu_detail::cb_formats);
static constexpr auto pack_dst_format = zyx_emu_detail::cb_table<unsigned char>(zyx_emu_detail::cb_formats);
static constexpr auto unpack_tile_r_dim = zyx_emu_detail::cb_table<uint8_t>(zyx_emu_detail::cb_tile_rows);
static constexpr auto unpack_tile_c_dim = zyx_emu_detail::cb_table<uint8_t>(zyx_emu_detail::cb_tile_cols);
static constexpr auto pack_tile_r_dim = zyx_emu_detail::cb_table<uint8_t>(zyx_emu_detail::cb_tile_rows);
static constexpr auto pack_tile_c_dim = zyx_emu_detail::cb_table<uint8_t>(zyx_emu_detail::cb_tile_cols);

// Address alignment (api/alignment.h). alignment must be a power of two for
// align_power_of_2, and nonzero for align.
constexpr inline __attribute__((always_inline)) uint32_t align_power_of_2(uint32_t addr, uint32_t alignment) {
  return ((addr - 1) | (alignment - 1)) + 1;
}
constexpr inline __attribute__((always_inline)) uint32_t align(uint32_t addr, uint32_t alignment) {
  return (addr + alignment - 1) / alignment * alignment;
}
constexpr inline __attribute__((always_inline)) bool is_power_of_2(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

// Waits `cycles` core clock cycles on a card. The emulator keeps no cycle
// clock (it runs kernels as fibers, not in time), so the wait is empty: code
// after it runs as it would after any delay.
inline void riscv_wait(uint32_t cycles) { (void)cycles; }
// tt-llk's ckernel::wait: the same wait, as kernels that include ckernel.h
// name it (a busy loop on the wall clock on a card).
namespace ckernel {
inline void wait(uint32_t cycles) { riscv_wait(cycles); }
// tt-llk's ckernel::tensix_sync: waits until the instructions the thread has
// issued to the Tensix engine are done. Each emulated call has done its work
// when it returns, so there is nothing left to wait for.
inline void tensix_sync() {}
}  // namespace ckernel

// A core's L1 data cache (Blackhole): the emulator's L1 is host memory that
// every section sees at once, so there is nothing to invalidate.
inline void invalidate_l1_cache() {}
// Turning that cache on or off (the card's CSR write) changes nothing here
// either: every read sees the latest write, as with the cache off.
template <bool enable = true>
inline void set_l1_data_cache() {}

// The kernel's threads (api/kernel_thread_globals.h): one kernel runs on one
// processor here, as on Wormhole and Blackhole, so one thread, number 0.
inline uint32_t get_num_threads() { return 1; }
inline uint32_t get_my_thread_id() { return 0; }

// NUM_CIRCULAR_BUFFERS and the CB config constants, which tt-metal's kernel
// API makes visible to every kernel.
#include "tt-metalium/circular_buffer_constants.h"

#include "zyx_emu/debug.h"
