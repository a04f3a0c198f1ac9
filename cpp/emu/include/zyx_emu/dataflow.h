// Kernel-side data movement API of zyx-tt's Tensix emulator: NOC reads and
// writes, address generators, tensor accessors and semaphores.
//
// NOC addresses are (y << 42) | (x << 36) | local address. DRAM bank b is the
// node (0, b); the worker core at logical (row r, col c) is (c + 1, r + 1).
// L1 bank b is the worker core (b / cols, b % cols). All transfers complete
// before the call returns, so barriers are no-ops.
#pragma once

#include "zyx_emu/common.h"

// The board's L1 banks (one per worker core, row-major) and L1 alignment;
// the emulator's kernel builder defines them.
#ifndef NUM_L1_BANKS
#define NUM_L1_BANKS 64
#endif
#ifndef ZYX_EMU_GRID_COLS
#define ZYX_EMU_GRID_COLS 8
#endif
#ifndef ZYX_EMU_L1_ALIGNMENT
#define ZYX_EMU_L1_ALIGNMENT 16
#endif

inline constexpr uint8_t noc_index = 0;
#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif
#define NOC_XY_ADDR(x, y, addr) \
  ((uint64_t(y) << 42) | (uint64_t(x) << 36) | (uint64_t(addr) & ((uint64_t(1) << 36) - 1)))

namespace zyx_emu_detail {
struct MyCoord {
  bool is_x;
  uint32_t operator[](int) const {
    uint32_t x, y;
    ZYX_API.core_xy(&x, &y);
    return is_x ? x : y;
  }
};
// Multicast destinations: bit 63 set, the rectangle's corners in bits 36-59.
constexpr uint64_t kMcastBit = uint64_t(1) << 63;
inline void mcast(uint32_t src, uint64_t dst, uint32_t size, bool include_self) {
  uint32_t x0 = (dst >> 36) & 63, y0 = (dst >> 42) & 63, x1 = (dst >> 48) & 63, y1 = (dst >> 54) & 63;
  uint32_t local = static_cast<uint32_t>(dst & 0xfffffffffull);
  uint32_t mx, my;
  ZYX_API.core_xy(&mx, &my);
  if (x0 > x1) {
    uint32_t t = x0;
    x0 = x1, x1 = t;
  }
  if (y0 > y1) {
    uint32_t t = y0;
    y0 = y1, y1 = t;
  }
  for (uint32_t y = y0; y <= y1; y++)
    for (uint32_t x = x0; x <= x1; x++) {
      if (!include_self && x == mx && y == my) continue;
      ZYX_API.noc_write(src, NOC_XY_ADDR(x, y, local), size);
    }
}
}  // namespace zyx_emu_detail

inline constexpr zyx_emu_detail::MyCoord my_x{true};
inline constexpr zyx_emu_detail::MyCoord my_y{false};

namespace ckernel {

// ---- NOC addresses ----
FORCE_INLINE uint64_t get_noc_addr(uint32_t x, uint32_t y, uint32_t addr, uint8_t = noc_index) {
  return NOC_XY_ADDR(x, y, addr);
}
FORCE_INLINE uint64_t get_noc_addr(uint32_t addr, uint8_t = noc_index) {
  return NOC_XY_ADDR(my_x[0], my_y[0], addr);
}
template <bool DRAM = true>
FORCE_INLINE uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset, uint8_t = noc_index) {
  if constexpr (!DRAM) {
    if (bank_id >= NUM_L1_BANKS) ZYX_API.fail("get_noc_addr_from_bank_id<false>: L1 bank id out of range");
    return NOC_XY_ADDR(bank_id % ZYX_EMU_GRID_COLS + 1, bank_id / ZYX_EMU_GRID_COLS + 1, bank_address_offset);
  }
  if (bank_id >= NUM_DRAM_BANKS) ZYX_API.fail("get_noc_addr_from_bank_id: DRAM bank id out of range");
  return NOC_XY_ADDR(0, bank_id, bank_address_offset);
}
FORCE_INLINE uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                                             uint32_t addr, uint8_t = noc_index) {
  return zyx_emu_detail::kMcastBit | (uint64_t(y_end) << 54) | (uint64_t(x_end) << 48) | (uint64_t(y_start) << 42) |
         (uint64_t(x_start) << 36) | addr;
}

// ---- interleaved address generators ----
namespace zyx_emu_detail_ag {
FORCE_INLINE uint64_t interleaved(uint32_t base, uint32_t page_size, uint32_t id, uint32_t offset, bool dram) {
  if (!dram) {
    // L1 bank b is worker core (b / cols, b % cols); `base` may be this core's
    // pointer to the buffer (the NOC uses its offset inside L1).
    uint32_t aligned = (page_size + ZYX_EMU_L1_ALIGNMENT - 1) / ZYX_EMU_L1_ALIGNMENT * ZYX_EMU_L1_ALIGNMENT;
    uint32_t bank = id % NUM_L1_BANKS;
    return NOC_XY_ADDR(bank % ZYX_EMU_GRID_COLS + 1, bank / ZYX_EMU_GRID_COLS + 1,
                       uint64_t(base) + uint64_t(id / NUM_L1_BANKS) * aligned + offset);
  }
  uint32_t aligned = (page_size + ZYX_EMU_DRAM_ALIGNMENT - 1) / ZYX_EMU_DRAM_ALIGNMENT * ZYX_EMU_DRAM_ALIGNMENT;
  uint32_t bank = id % NUM_DRAM_BANKS;
  return NOC_XY_ADDR(0, bank, uint64_t(base) + uint64_t(id / NUM_DRAM_BANKS) * aligned + offset);
}
}  // namespace zyx_emu_detail_ag

template <bool DRAM>
struct InterleavedAddrGen {
  uint32_t bank_base_address;
  uint32_t page_size;
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t = noc_index) const {
    return zyx_emu_detail_ag::interleaved(bank_base_address, page_size, id, offset, DRAM);
  }
  FORCE_INLINE uint32_t get_page_size() const { return page_size; }
};

template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
  uint32_t bank_base_address;
  uint32_t page_size;
  DataFormat data_format;
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t = noc_index) const {
    return zyx_emu_detail_ag::interleaved(bank_base_address, page_size, id, offset, DRAM);
  }
  FORCE_INLINE uint32_t get_page_size() const { return page_size; }
  FORCE_INLINE void noc_async_read_tile(uint32_t id, uint32_t dst, uint32_t offset = 0, uint8_t = noc_index) const {
    ZYX_API.noc_read(get_noc_addr(id, offset), dst, page_size);
  }
  FORCE_INLINE void noc_async_write_tile(uint32_t id, uint32_t src, uint8_t = noc_index) const {
    ZYX_API.noc_write(src, get_noc_addr(id), page_size);
  }
};

template <bool DRAM>
struct InterleavedPow2AddrGen {
  uint32_t bank_base_address;
  uint32_t log_base_2_of_page_size;
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t = noc_index) const {
    return zyx_emu_detail_ag::interleaved(bank_base_address, 1u << log_base_2_of_page_size, id, offset, DRAM);
  }
  FORCE_INLINE uint32_t get_page_size() const { return 1u << log_base_2_of_page_size; }
};

template <bool DRAM>
struct InterleavedPow2AddrGenFast {
  uint32_t bank_base_address;
  uint32_t log_base_2_of_page_size;
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t = noc_index) const {
    return zyx_emu_detail_ag::interleaved(bank_base_address, 1u << log_base_2_of_page_size, id, offset, DRAM);
  }
  FORCE_INLINE uint32_t get_page_size() const { return 1u << log_base_2_of_page_size; }
};

// ---- tensor accessors ----
// The emulator's accessor args (docs/emulator.md): compile-time word 0 holds
// tt-metal's ArgsConfig flags (bit 0 sharded, bit 1 DRAM); interleaved
// tensors have that word only. Sharded tensors add the rank (2), the number
// of banks (shard holders), the tensor shape and the shard shape in pages
// (rows, cols), and one word per bank, in shard order: its NOC (x << 16) | y.
template <uint32_t CTA_OFFSET, uint32_t CRTA_OFFSET = 0>
struct TensorAccessorArgs {
  static constexpr uint32_t flags = get_compile_time_arg_val(CTA_OFFSET);
  static constexpr bool is_sharded = (flags & 1u) != 0;
  static constexpr bool is_dram = (flags & 2u) != 0;
  static constexpr uint32_t cta_offset = CTA_OFFSET;
  static constexpr uint32_t word(uint32_t i) { return is_sharded ? get_compile_time_arg_val(CTA_OFFSET + i) : 0; }
  static constexpr uint32_t rank = is_sharded ? get_compile_time_arg_val(CTA_OFFSET + 1) : 0;
  static constexpr uint32_t num_banks = is_sharded ? get_compile_time_arg_val(CTA_OFFSET + 2) : 0;
  static constexpr uint32_t words = is_sharded ? 7 + num_banks : 1;
  static constexpr uint32_t next_compile_time_args_offset() { return CTA_OFFSET + words; }
  static constexpr uint32_t next_common_runtime_args_offset() { return CRTA_OFFSET; }
  static constexpr uint32_t compile_time_args_skip() { return words; }
  static constexpr uint32_t runtime_args_skip() { return 0; }
};

template <typename Args>
struct TensorAccessor {
  uint32_t address = 0;
  uint32_t page_size = 0;
  constexpr TensorAccessor() = default;
  // Without a page size, the accessor takes the page size of the buffer the
  // run passed at that address.
  TensorAccessor(const Args&, uint32_t bank_base_address, uint32_t page_size_bytes = 0)
      : address(bank_base_address),
        page_size(page_size_bytes ? page_size_bytes : ZYX_API.buffer_page_size(bank_base_address)) {
    if (!page_size) ZYX_API.fail("TensorAccessor: no page size given and no buffer of this run is at that address");
  }
  FORCE_INLINE uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t = noc_index) const {
    if constexpr (!Args::is_sharded) {
      return zyx_emu_detail_ag::interleaved(address, page_size, page_id, offset, Args::is_dram);
    } else {
      constexpr uint32_t t_rows = Args::word(3), t_cols = Args::word(4), s_rows = Args::word(5),
                         s_cols = Args::word(6);
      static_assert(Args::rank == 2 && t_cols > 0 && s_rows > 0 && s_cols > 0, "malformed sharded accessor args");
      uint32_t pr = page_id / t_cols, pc = page_id % t_cols;
      if (pr >= t_rows) ZYX_API.fail("TensorAccessor: page id past the sharded tensor");
      uint32_t shard = (pr / s_rows) * ((t_cols + s_cols - 1) / s_cols) + pc / s_cols;
      if (shard >= Args::num_banks) ZYX_API.fail("TensorAccessor: shard past the accessor's banks");
      uint32_t xy = zyx_emu_detail::compile_args[Args::cta_offset + 7 + shard];
      uint32_t local = (pr % s_rows) * s_cols + pc % s_cols;
      return NOC_XY_ADDR(xy >> 16, xy & 0xffff, uint64_t(address) + uint64_t(local) * get_aligned_page_size() + offset);
    }
  }
  FORCE_INLINE uint32_t get_page_size() const { return page_size; }
  FORCE_INLINE uint32_t get_aligned_page_size() const {
    constexpr uint32_t a = Args::is_dram ? ZYX_EMU_DRAM_ALIGNMENT : ZYX_EMU_L1_ALIGNMENT;
    return (page_size + a - 1) / a * a;
  }
};
template <typename Args>
TensorAccessor(const Args&, uint32_t, uint32_t) -> TensorAccessor<Args>;
template <typename Args>
TensorAccessor(const Args&, uint32_t) -> TensorAccessor<Args>;

template <typename Gen>
FORCE_INLINE uint64_t get_noc_addr(uint32_t id, const Gen& s, uint32_t offset = 0, uint8_t = noc_index) {
  return s.get_noc_addr(id, offset);
}

// ---- reads and writes ----
FORCE_INLINE void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                 uint8_t = noc_index) {
  ZYX_API.noc_read(src_noc_addr, dst_local_l1_addr, size);
}
FORCE_INLINE void noc_async_read_one_packet(uint64_t src, uint32_t dst, uint32_t size, uint8_t = noc_index) {
  ZYX_API.noc_read(src, dst, size);
}
FORCE_INLINE void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                  uint8_t = noc_index) {
  if (dst_noc_addr & zyx_emu_detail::kMcastBit)
    zyx_emu_detail::mcast(src_local_l1_addr, dst_noc_addr, size, false);
  else
    ZYX_API.noc_write(src_local_l1_addr, dst_noc_addr, size);
}
FORCE_INLINE void noc_async_write_one_packet(uint32_t src, uint64_t dst, uint32_t size, uint8_t = noc_index) {
  ZYX_API.noc_write(src, dst, size);
}
template <typename Gen>
FORCE_INLINE void noc_async_read_tile(uint32_t id, const Gen& s, uint32_t dst_local_l1_addr, uint32_t offset = 0,
                                      uint8_t = noc_index) {
  ZYX_API.noc_read(s.get_noc_addr(id, offset), dst_local_l1_addr, s.get_page_size());
}
template <typename Gen>
FORCE_INLINE void noc_async_write_tile(uint32_t id, const Gen& s, uint32_t src_local_l1_addr, uint8_t = noc_index) {
  ZYX_API.noc_write(src_local_l1_addr, s.get_noc_addr(id), s.get_page_size());
}
template <typename Gen>
FORCE_INLINE void noc_async_read_page(uint32_t id, const Gen& s, uint32_t dst_local_l1_addr, uint32_t offset = 0,
                                      uint8_t = noc_index) {
  ZYX_API.noc_read(s.get_noc_addr(id, offset), dst_local_l1_addr, s.get_page_size());
}
template <typename Gen>
FORCE_INLINE void noc_async_write_page(uint32_t id, const Gen& s, uint32_t src_local_l1_addr,
                                       uint32_t write_size_bytes = 0, uint32_t offset = 0, uint8_t = noc_index) {
  ZYX_API.noc_write(src_local_l1_addr, s.get_noc_addr(id, offset),
                    write_size_bytes ? write_size_bytes : s.get_page_size());
}
FORCE_INLINE void noc_async_write_multicast(uint32_t src, uint64_t dst_mcast, uint32_t size, uint32_t = 0,
                                            bool = false, bool = true, uint8_t = noc_index) {
  zyx_emu_detail::mcast(src, dst_mcast, size, false);
}
FORCE_INLINE void noc_async_write_multicast_loopback_src(uint32_t src, uint64_t dst_mcast, uint32_t size,
                                                         uint32_t = 0, bool = false, bool = true,
                                                         uint8_t = noc_index) {
  zyx_emu_detail::mcast(src, dst_mcast, size, true);
}
FORCE_INLINE void noc_async_read_barrier(uint8_t = noc_index) {}
FORCE_INLINE void noc_async_write_barrier(uint8_t = noc_index) {}
FORCE_INLINE void noc_async_writes_flushed(uint8_t = noc_index) {}
FORCE_INLINE void noc_async_posted_writes_flushed(uint8_t = noc_index) {}
FORCE_INLINE void noc_async_atomic_barrier(uint8_t = noc_index) {}
FORCE_INLINE void noc_async_full_barrier(uint8_t = noc_index) {}

// ---- semaphores ----
FORCE_INLINE uint32_t get_semaphore(uint32_t semaphore_id) { return ZYX_API.semaphore_addr(semaphore_id); }
enum class ProgrammableCoreType { TENSIX = 0, ACTIVE_ETH = 1, IDLE_ETH = 2 };
template <ProgrammableCoreType type>
FORCE_INLINE uint32_t get_semaphore(uint32_t semaphore_id) {
  return ZYX_API.semaphore_addr(semaphore_id);
}
FORCE_INLINE void noc_semaphore_set(volatile uint32_t* sem_addr, uint32_t val) {
  __atomic_store_n(const_cast<uint32_t*>(sem_addr), val, __ATOMIC_RELEASE);
}
FORCE_INLINE void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t = noc_index) {
  ZYX_API.noc_atomic_inc(addr, incr);
}
FORCE_INLINE void noc_semaphore_wait(volatile uint32_t* sem_addr, uint32_t val) {
  ZYX_API.wait_word(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(sem_addr)), val, 0);
}
FORCE_INLINE void noc_semaphore_wait_min(volatile uint32_t* sem_addr, uint32_t val) {
  ZYX_API.wait_word(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(sem_addr)), val, 1);
}
FORCE_INLINE void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t = noc_index) {
  ZYX_API.noc_write(src_local_l1_addr, dst_noc_addr, 4);
}
FORCE_INLINE void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_mcast, uint32_t = 0,
                                              bool = false, uint8_t = noc_index) {
  zyx_emu_detail::mcast(src_local_l1_addr, dst_mcast, 4, false);
}
FORCE_INLINE void noc_semaphore_set_multicast_loopback_src(uint32_t src, uint64_t dst_mcast, uint32_t = 0,
                                                           bool = false, uint8_t = noc_index) {
  zyx_emu_detail::mcast(src, dst_mcast, 4, true);
}
}  // namespace ckernel

// Object-style data movement API (the Noc and CircularBuffer classes).
namespace experimental {
struct NocPageArgs {
  uint32_t page_id = 0;
  uint32_t offset_bytes = 0;
};
struct NocLocalArgs {
  uint32_t offset_bytes = 0;
};
struct NocBankArgs {
  uint32_t bank_id = 0;
  uint32_t addr = 0;
};
enum class AllocatorBankType { DRAM = 0, L1 = 1 };
template <AllocatorBankType T>
struct AllocatorBank {};
class Noc {
 public:
  explicit Noc(uint8_t = 0) {}
  uint8_t get_noc_id() const { return 0; }
  template <typename A>
  void async_read(const ckernel::TensorAccessor<A>& src, const CircularBuffer& dst, uint32_t size, NocPageArgs s,
                  NocLocalArgs d) const {
    ZYX_API.noc_read(src.get_noc_addr(s.page_id, s.offset_bytes), dst.get_write_ptr() + d.offset_bytes, size);
  }
  void async_read(const AllocatorBank<AllocatorBankType::DRAM>&, const CircularBuffer& dst, uint32_t size,
                  NocBankArgs s, NocLocalArgs d) const {
    ZYX_API.noc_read(ckernel::get_noc_addr_from_bank_id<true>(s.bank_id, s.addr), dst.get_write_ptr() + d.offset_bytes,
                     size);
  }
  template <typename A>
  void async_write(const CircularBuffer& src, const ckernel::TensorAccessor<A>& dst, uint32_t size, NocLocalArgs s,
                   NocPageArgs d) const {
    ZYX_API.noc_write(src.get_read_ptr() + s.offset_bytes, dst.get_noc_addr(d.page_id, d.offset_bytes), size);
  }
  void async_write(const CircularBuffer& src, const AllocatorBank<AllocatorBankType::DRAM>&, uint32_t size,
                   NocLocalArgs s, NocBankArgs d) const {
    ZYX_API.noc_write(src.get_read_ptr() + s.offset_bytes, ckernel::get_noc_addr_from_bank_id<true>(d.bank_id, d.addr),
                      size);
  }
  void async_read_barrier() const {}
  void async_write_barrier() const {}
  void async_writes_flushed() const {}
  void async_atomic_barrier() const {}
  void async_full_barrier() const {}
};
}  // namespace experimental
using experimental::CircularBuffer;
using experimental::Noc;

// The older helpers (dataflow_api.h of earlier tt-metal releases).
FORCE_INLINE uint64_t get_dram_noc_addr(uint32_t id, uint32_t page_size, uint32_t bank_base_address,
                                        uint32_t offset = 0, uint8_t = noc_index) {
  return ckernel::zyx_emu_detail_ag::interleaved(bank_base_address, page_size, id, offset, true);
}
