// Kernel-side data movement API of zyx-tt's Tensix emulator: NOC reads and
// writes (plain, one-packet, stateful, with transaction ids, inline),
// multicast, address generators, tensor accessors, semaphores, and the
// object API (Noc, CircularBuffer, DataflowBuffer, Semaphore, CoreLocalMem,
// endpoints).
//
// NOC addresses are laid out as on Wormhole: (y << 42) | (x << 36) | local
// address, and a multicast address carries the rectangle as tt-metal's
// NOC_MULTICAST_ENCODING does (end corner in bits 36-47, start corner in
// bits 48-59). DRAM bank b is the node (0, b); the worker core at logical
// (row r, col c) is (c + 1, r + 1); L1 bank b is the worker core
// (b / cols, b % cols). Every transfer is complete when its call
// returns, so every barrier and flush is already satisfied when called.
#pragma once

#include <tuple>
#include <utility>

#include "hostdevcommon/common_values.hpp"
#include "zyx_emu/common.h"
#include "zyx_emu/bindings.h"
// tt-metal's dataflow_api.h brings mulsi3 and the const-divisor forms
// (through risc_common.h and internal/mod_div_lib.h), as compute.h does.
#include "zyx_emu/mod_div.h"

// The board's L1 banks (one per worker core, row-major: bank b is worker
// core (b / cols, b % cols)) and L1 alignment; the kernel builder defines them.
#ifndef NUM_L1_BANKS
#define NUM_L1_BANKS 64
#endif
#ifndef ZYX_EMU_GRID_COLS
#define ZYX_EMU_GRID_COLS 8
#endif
#ifndef ZYX_EMU_L1_ALIGNMENT
#define ZYX_EMU_L1_ALIGNMENT 16
#endif

#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif
// The kernel's default NOC (internal linkage: it differs between kernels).
static constexpr uint8_t noc_index = NOC_INDEX;
// The NOC modes, with tt-metal's values. The emulator runs every
// data-movement kernel in dedicated-NOC mode: a kernel's NOC is its own, as
// the default DM_DEDICATED_NOC gives it.
enum : uint8_t { DM_DEDICATED_NOC = 0, DM_DYNAMIC_NOC = 1, DM_INVALID_NOC = 2 };
#ifndef NOC_MODE
#define NOC_MODE DM_DEDICATED_NOC
#endif
static constexpr uint8_t noc_mode = NOC_MODE;
static_assert(noc_mode == DM_DEDICATED_NOC, "the emulator runs kernels in dedicated-NOC mode only");

#define NUM_NOCS 2
#define NOC_ADDR_LOCAL_BITS 36
#define NOC_ADDR_NODE_ID_BITS 6
#define NOC_MAX_BURST_SIZE 8192
#define NOC_UNICAST_WRITE_VC 1
#define NOC_MULTICAST_WRITE_VC 4
#define NOC_DISPATCH_MULTICAST_WRITE_VC 5
#define NOC_MAX_TRANSACTION_ID 0xF
#define NOC_MAX_TRANSACTION_ID_COUNT 255
#define NOC_CLEAR_OUTSTANDING_REQ_MASK 0xFFFFFFFF
#define NOC_L1_READ_ALIGNMENT_BYTES 16
#define NOC_L1_WRITE_ALIGNMENT_BYTES 16
#define NOC_DRAM_READ_ALIGNMENT_BYTES ZYX_EMU_DRAM_ALIGNMENT
#define NOC_DRAM_WRITE_ALIGNMENT_BYTES ZYX_EMU_DRAM_ALIGNMENT
// An L1 region of zeros kernels copy from (noc_async_read of MEM_ZEROS_BASE).
#define MEM_ZEROS_BASE ZYX_EMU_L1_ZEROS_OFFSET
// A plain int 512, as tt-metal defines it: kernels pass it with int operands
// to std::min, which an unsigned constant would not deduce with.
#define MEM_ZEROS_SIZE 512
static_assert(MEM_ZEROS_SIZE == ZYX_EMU_L1_ZEROS_SIZE, "the zeros region the runtime provides");
// Coordinates as a NOC sees them: the emulator's cores have virtual
// coordinates, the same on both NOCs, so these are the identity (as on
// Wormhole and Blackhole, where tt-metal's NOC_0_X is too).
#define NOC_X(x) (x)
#define NOC_Y(y) (y)
#define DYNAMIC_NOC_X(noc, x) ((void)(noc), (x))
#define DYNAMIC_NOC_Y(noc, y) ((void)(noc), (y))
#define NOC_XY_ENCODING(x, y) ((((uint32_t)(y)) << NOC_ADDR_NODE_ID_BITS) | ((uint32_t)(x)))
#define NOC_MULTICAST_ENCODING(x_start, y_start, x_end, y_end)                                                \
  ((((uint32_t)(x_start)) << (2 * NOC_ADDR_NODE_ID_BITS)) | (((uint32_t)(y_start)) << (3 * NOC_ADDR_NODE_ID_BITS)) | \
   ((uint32_t)(x_end)) | (((uint32_t)(y_end)) << NOC_ADDR_NODE_ID_BITS))
// Where a NOC node's coordinates start in a 64-bit NOC address, and the
// first worker's node: logical core (0, 0) is node (1, 1).
#define NOC_ADDR_COORD_SHIFT NOC_ADDR_LOCAL_BITS
#define VIRTUAL_TENSIX_START_X 1
#define VIRTUAL_TENSIX_START_Y 1
#define NOC_XY_ADDR(x, y, addr) \
  ((uint64_t(y) << 42) | (uint64_t(x) << 36) | (uint64_t(addr) & ((uint64_t(1) << 36) - 1)))
// The local address (in the node's L1 or DRAM bank) of a 64-bit NOC address.
#define NOC_LOCAL_ADDR_OFFSET(addr) ((addr) & ((uint64_t(1) << NOC_ADDR_LOCAL_BITS) - 1))
#define NOC_UNICAST_ADDR_X(addr) (((addr) >> NOC_ADDR_LOCAL_BITS) & 0x3F)
#define NOC_UNICAST_ADDR_Y(addr) (((addr) >> (NOC_ADDR_LOCAL_BITS + NOC_ADDR_NODE_ID_BITS)) & 0x3F)
#define NOC_REG_SPACE_START_ADDR 0xFF000000u

// Command buffers (the stateful calls keep state per NOC and buffer).
inline constexpr uint32_t read_cmd_buf = 0, write_cmd_buf = 1, write_reg_cmd_buf = 2, write_at_cmd_buf = 3;

namespace zyx_emu_detail {
struct MyCoord {
  bool is_x;
  uint32_t operator[](int) const {
    uint32_t x, y;
    ZYX_API.core_xy(&x, &y);
    return is_x ? x : y;
  }
};
// Where a section's NOC state lives in its scratch words.
enum ScratchSlot : uint32_t {
  kReadHi = 0,      // [noc]: the address (coordinates) set by *_read_*set_state
  kReadSize = 2,    // [noc]
  kWriteHi = 4,     // [noc * 4 + cmd_buf]
  kWriteSize = 12,  // [noc * 4 + cmd_buf]
  kReadTrid = 20,   // [noc]
  kWriteTrid = 22,  // [noc * 4 + cmd_buf]
  kInlineAddr = 30,  // [noc * 4 + cmd_buf]
  kInlineVal = 38,   // [noc * 4 + cmd_buf]: value | be << 32
  kReadsIssued = 46,  // [noc]
};
inline uint64_t& slot(uint32_t index) { return ZYX_API.scratch()[index]; }
inline uint32_t nocsel(uint8_t noc) { return noc & 1u; }
inline uint32_t bufsel(uint8_t noc, uint8_t cmd_buf) { return (noc & 1u) * 4 + (cmd_buf & 3u); }
constexpr uint64_t kHiMask = ~uint64_t(0xffffffffu);
inline zyx_emu_core_info core_info() {
  zyx_emu_core_info i;
  ZYX_API.core_info(&i);
  return i;
}
}  // namespace zyx_emu_detail

// NOC coordinates of this core, indexed by NOC (virtual coordinates: both
// NOCs agree).
inline constexpr zyx_emu_detail::MyCoord my_x{true};
inline constexpr zyx_emu_detail::MyCoord my_y{false};

// Logical coordinates of this core (no sub-devices: absolute = relative).
inline uint8_t get_absolute_logical_x() { return static_cast<uint8_t>(zyx_emu_detail::core_info().logical_x); }
inline uint8_t get_absolute_logical_y() { return static_cast<uint8_t>(zyx_emu_detail::core_info().logical_y); }
inline uint8_t get_relative_logical_x() { return static_cast<uint8_t>(zyx_emu_detail::core_info().relative_x); }
inline uint8_t get_relative_logical_y() { return static_cast<uint8_t>(zyx_emu_detail::core_info().relative_y); }

inline bool is_l1_address(uint64_t addr) { return (addr & 0xFFFFFFFF) < NOC_REG_SPACE_START_ADDR; }
inline constexpr uint32_t get_num_dram_banks() { return NUM_DRAM_BANKS; }

namespace ckernel {

// ---- NOC addresses ----
FORCE_INLINE uint64_t get_noc_addr(uint32_t x, uint32_t y, uint32_t addr, uint8_t = noc_index) {
  return NOC_XY_ADDR(x, y, addr);
}
FORCE_INLINE uint64_t get_noc_addr(uint32_t addr, uint8_t = noc_index) {
  return NOC_XY_ADDR(my_x[0], my_y[0], addr);
}
FORCE_INLINE uint64_t get_noc_addr_helper(uint32_t noc_xy, uint32_t addr) {
  return (uint64_t(noc_xy) << NOC_ADDR_LOCAL_BITS) | addr;
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

// tt-metal's firmware bank tables (dataflow_api_common.h), which some kernels
// read to build NOC addresses themselves: each bank's NOC node, encoded as
// NOC_XY_ENCODING, and its address offset (0: the emulator's banks start at
// address 0), for both NOCs. An address built as
// (uint64_t(noc_xy) << NOC_ADDR_COORD_SHIFT) | (addr + offset) is the one
// get_noc_addr_from_bank_id gives.
typedef uint16_t bank_noc_xy_t;
namespace zyx_emu_detail_banks {
template <typename Banks>
struct BankTables;
template <size_t... B>
struct BankTables<std::index_sequence<B...>> {
  static constexpr bank_noc_xy_t dram[NUM_NOCS][sizeof...(B)] = {{NOC_XY_ENCODING(0, B)...},
                                                                 {NOC_XY_ENCODING(0, B)...}};
  static constexpr bank_noc_xy_t l1[NUM_NOCS][sizeof...(B)] = {
      {NOC_XY_ENCODING(B % ZYX_EMU_GRID_COLS + 1, B / ZYX_EMU_GRID_COLS + 1)...},
      {NOC_XY_ENCODING(B % ZYX_EMU_GRID_COLS + 1, B / ZYX_EMU_GRID_COLS + 1)...}};
};
}  // namespace zyx_emu_detail_banks
inline constexpr const bank_noc_xy_t (&dram_bank_to_noc_xy)[NUM_NOCS][NUM_DRAM_BANKS] =
    zyx_emu_detail_banks::BankTables<std::make_index_sequence<NUM_DRAM_BANKS>>::dram;
inline constexpr const bank_noc_xy_t (&l1_bank_to_noc_xy)[NUM_NOCS][NUM_L1_BANKS] =
    zyx_emu_detail_banks::BankTables<std::make_index_sequence<NUM_L1_BANKS>>::l1;
inline constexpr int32_t bank_to_dram_offset[NUM_DRAM_BANKS] = {};
inline constexpr int32_t bank_to_l1_offset[NUM_L1_BANKS] = {};

FORCE_INLINE uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                                             uint32_t addr, uint8_t = noc_index) {
  return get_noc_addr_helper(NOC_MULTICAST_ENCODING(x_start, y_start, x_end, y_end), addr);
}

// tt-metal's helpers of the interleaved address generators: page `id` of an
// interleaved buffer lies in bank id % banks (its bank index), at row
// id / banks of that bank (its bank offset index).
namespace interleaved_addr_gen {
template <bool DRAM>
FORCE_INLINE constexpr uint32_t num_banks() {
  return DRAM ? NUM_DRAM_BANKS : NUM_L1_BANKS;
}
template <bool DRAM>
FORCE_INLINE uint32_t get_bank_offset_index(uint32_t id) {
  return id / num_banks<DRAM>();
}
template <bool DRAM>
FORCE_INLINE uint32_t get_bank_index(uint32_t id, uint32_t bank_offset_index) {
  return id - bank_offset_index * num_banks<DRAM>();
}
// A bank index past the banks reads past tt-metal's bank tables: a run error.
template <bool DRAM>
FORCE_INLINE void check_bank_index(uint32_t bank_index) {
  if (bank_index >= num_banks<DRAM>()) ZYX_API.fail("interleaved_addr_gen: bank index out of range");
}
template <bool DRAM>
FORCE_INLINE uint32_t get_noc_xy(uint32_t bank_index, uint8_t noc = noc_index) {
  check_bank_index<DRAM>(bank_index);
  if (noc >= NUM_NOCS) ZYX_API.fail("interleaved_addr_gen::get_noc_xy: NOC index out of range");
  if constexpr (DRAM) return dram_bank_to_noc_xy[noc][bank_index];
  return l1_bank_to_noc_xy[noc][bank_index];
}
template <bool DRAM>
FORCE_INLINE uint32_t get_bank_offset(uint32_t bank_index) {
  check_bank_index<DRAM>(bank_index);
  if constexpr (DRAM) return bank_to_dram_offset[bank_index];
  return bank_to_l1_offset[bank_index];
}
template <bool DRAM>
FORCE_INLINE constexpr uint32_t get_allocator_alignment() {
  return DRAM ? ZYX_EMU_DRAM_ALIGNMENT : ZYX_EMU_L1_ALIGNMENT;
}
template <bool DRAM>
FORCE_INLINE constexpr uint32_t get_log_base2_of_allocator_alignment() {
  static_assert((get_allocator_alignment<DRAM>() & (get_allocator_alignment<DRAM>() - 1)) == 0,
                "allocator alignments are powers of two");
  return static_cast<uint32_t>(__builtin_ctz(get_allocator_alignment<DRAM>()));
}
}  // namespace interleaved_addr_gen

// tt-metal's MUL_WITH_TILE_SIZE<tile_hw>(format, index): index times the size
// of a tile of tile_hw datums in `format` (bfp formats: the mantissas plus one
// exponent byte per 16 datums, at least 16 exponent bytes).
template <uint32_t tile_hw = 1024>
FORCE_INLINE constexpr uint32_t MUL_WITH_TILE_SIZE(uint32_t format, uint32_t index) {
  static_assert(tile_hw >= 16 && tile_hw <= 1024 && (tile_hw & (tile_hw - 1)) == 0,
                "MUL_WITH_TILE_SIZE: tile_hw a power of two from 16 to 1024");
  constexpr uint32_t datum_shift = static_cast<uint32_t>(__builtin_ctz(tile_hw));
  constexpr uint32_t exp_shift = datum_shift > 8 ? datum_shift - 4 : 4;
  switch (static_cast<DataFormat>(format & 0x1f)) {
    case DataFormat::UInt8: return index << datum_shift;
    case DataFormat::UInt16:
    case DataFormat::Float16:
    case DataFormat::Float16_b: return index << (datum_shift + 1);
    case DataFormat::Int32:
    case DataFormat::UInt32:
    case DataFormat::Float32: return index << (datum_shift + 2);
    case DataFormat::Bfp2:
    case DataFormat::Bfp2_b: return (index << (datum_shift - 2)) + (index << exp_shift);
    case DataFormat::Bfp4:
    case DataFormat::Bfp4_b: return (index << (datum_shift - 1)) + (index << exp_shift);
    default: return (index << datum_shift) + (index << exp_shift);  // Bfp8, as tt-metal's default
  }
}

// ---- interleaved address generators ----
namespace zyx_emu_detail_ag {
FORCE_INLINE uint32_t aligned(uint32_t page_size, bool dram = true) {
  uint32_t a = dram ? ZYX_EMU_DRAM_ALIGNMENT : ZYX_EMU_L1_ALIGNMENT;
  return (page_size + a - 1) / a * a;
}
// Page id of an interleaved buffer: DRAM bank id % banks, or L1 bank (worker
// core) id % cores; `base` may be this core's pointer to an L1 buffer (the
// NOC uses its offset inside L1).
// The NOC address of `local` in DRAM bank `bank` (the emulator's DRAM bank
// b sits at NOC (0, b)).
FORCE_INLINE uint64_t dram_bank_noc_addr(uint32_t bank, uint64_t local) { return NOC_XY_ADDR(0, bank, local); }
FORCE_INLINE uint64_t interleaved_aligned(uint32_t base, uint32_t aligned_page, uint32_t id, uint32_t offset,
                                          bool dram) {
  if (!dram) {
    uint32_t bank = id % NUM_L1_BANKS;
    return NOC_XY_ADDR(bank % ZYX_EMU_GRID_COLS + 1, bank / ZYX_EMU_GRID_COLS + 1,
                       uint64_t(base) + uint64_t(id / NUM_L1_BANKS) * aligned_page + offset);
  }
  return dram_bank_noc_addr(id % NUM_DRAM_BANKS, uint64_t(base) + uint64_t(id / NUM_DRAM_BANKS) * aligned_page + offset);
}
FORCE_INLINE uint64_t interleaved(uint32_t base, uint32_t page_size, uint32_t id, uint32_t offset, bool dram) {
  return interleaved_aligned(base, aligned(page_size, dram), id, offset, dram);
}
}  // namespace zyx_emu_detail_ag

// Each generator's get_addr(id, bank_offset_index, bank_index, offset) is the
// address inside bank bank_index of row bank_offset_index (the helpers
// above give both from a page id), and get_noc_addr the NOC address of page
// id. The Fast form steps by its page size aligned, as the others do, where
// tt-metal steps by the size of a tile of its data format
// (MUL_WITH_TILE_SIZE): the two agree when the page is one such tile.
namespace zyx_emu_detail_ag {
template <bool DRAM, class AddrGen>
FORCE_INLINE uint64_t page_noc_addr(const AddrGen& g, uint32_t id, uint32_t offset, uint8_t noc) {
  uint32_t row = interleaved_addr_gen::get_bank_offset_index<DRAM>(id);
  uint32_t bank = interleaved_addr_gen::get_bank_index<DRAM>(id, row);
  return get_noc_addr_helper(interleaved_addr_gen::get_noc_xy<DRAM>(bank, noc), g.get_addr(id, row, bank, offset));
}
}  // namespace zyx_emu_detail_ag

template <bool DRAM>
struct InterleavedAddrGen {
  uint32_t bank_base_address;
  uint32_t page_size;
  FORCE_INLINE uint32_t get_addr(uint32_t, uint32_t bank_offset_index, uint32_t bank_index, uint32_t offset = 0) const {
    return bank_offset_index * zyx_emu_detail_ag::aligned(page_size, DRAM) + bank_base_address + offset +
           interleaved_addr_gen::get_bank_offset<DRAM>(bank_index);
  }
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
    return zyx_emu_detail_ag::page_noc_addr<DRAM>(*this, id, offset, noc);
  }
  FORCE_INLINE uint32_t get_page_size() const { return page_size; }
};

template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
  uint32_t bank_base_address;
  uint32_t page_size;
  DataFormat data_format;
  FORCE_INLINE uint32_t get_addr(uint32_t, uint32_t bank_offset_index, uint32_t bank_index, uint32_t offset = 0) const {
    return bank_offset_index * zyx_emu_detail_ag::aligned(page_size, DRAM) + bank_base_address + offset +
           interleaved_addr_gen::get_bank_offset<DRAM>(bank_index);
  }
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
    return zyx_emu_detail_ag::page_noc_addr<DRAM>(*this, id, offset, noc);
  }
  FORCE_INLINE uint32_t get_page_size() const { return page_size; }
  FORCE_INLINE void noc_async_read_tile(uint32_t id, uint32_t dst, uint32_t offset = 0, uint8_t = noc_index) const {
    ZYX_API.noc_read(get_noc_addr(id, offset), dst, page_size);
  }
  FORCE_INLINE void noc_async_write_tile(uint32_t id, uint32_t src, uint8_t = noc_index) const {
    ZYX_API.noc_write(src, get_noc_addr(id), page_size);
  }
};

// The power-of-two forms: a page of 1 << log_base_2_of_page_size bytes, at
// least the allocator alignment apart.
namespace zyx_emu_detail_ag {
template <bool DRAM>
FORCE_INLINE uint32_t pow2_row_addr(uint32_t log_page, uint32_t row) {
  uint32_t log_align = interleaved_addr_gen::get_log_base2_of_allocator_alignment<DRAM>();
  return row << (log_page > log_align ? log_page : log_align);
}
}  // namespace zyx_emu_detail_ag

template <bool DRAM>
struct InterleavedPow2AddrGen {
  uint32_t bank_base_address;
  uint32_t log_base_2_of_page_size;
  FORCE_INLINE uint32_t get_addr(uint32_t, uint32_t bank_offset_index, uint32_t bank_index, uint32_t offset = 0) const {
    return zyx_emu_detail_ag::pow2_row_addr<DRAM>(log_base_2_of_page_size, bank_offset_index) + bank_base_address +
           offset + interleaved_addr_gen::get_bank_offset<DRAM>(bank_index);
  }
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
    return zyx_emu_detail_ag::page_noc_addr<DRAM>(*this, id, offset, noc);
  }
  FORCE_INLINE uint32_t get_page_size() const { return 1u << log_base_2_of_page_size; }
};

template <bool DRAM>
struct InterleavedPow2AddrGenFast {
  uint32_t bank_base_address;
  uint32_t log_base_2_of_page_size;
  FORCE_INLINE uint32_t get_addr(uint32_t, uint32_t bank_offset_index, uint32_t bank_index, uint32_t offset = 0) const {
    return zyx_emu_detail_ag::pow2_row_addr<DRAM>(log_base_2_of_page_size, bank_offset_index) + bank_base_address +
           offset + interleaved_addr_gen::get_bank_offset<DRAM>(bank_index);
  }
  FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t noc = noc_index) const {
    return zyx_emu_detail_ag::page_noc_addr<DRAM>(*this, id, offset, noc);
  }
  FORCE_INLINE uint32_t get_page_size() const { return 1u << log_base_2_of_page_size; }
};

}  // namespace ckernel

// ---- tensor accessors ----
// The accessor's compile-time words are tt-metal's TensorAccessorArgs layout:
//   [ArgsConfig flags, aligned page size]                     interleaved
//   [flags, aligned page size, rank, banks, tensor shape (rank words),
//    shard shape (rank words), bank coordinates (two per word)] sharded
// Shapes are in pages; bank b's coordinates are (x << 8) | y in the low
// (even b) or high (odd b) half of word b / 2: a worker's NOC coordinates
// for L1, and for DRAM, as tt-metal's host writes them, the logical DRAM
// core (x = the DRAM bank id, y = 0), which the accessor maps through the
// DRAM bank table as tt-metal's device side does. Shard s is held by bank
// s % banks, at page s / banks * shard volume of that bank.
namespace tensor_accessor {
inline constexpr size_t UNKNOWN = static_cast<size_t>(-1);
enum class ArgConfig : uint8_t {
  None = 0,
  Sharded = 1 << 0,
  IsDram = 1 << 1,
  RuntimeRank = 1 << 2,
  RuntimeNumBanks = 1 << 3,
  RuntimeTensorShape = 1 << 4,
  RuntimeShardShape = 1 << 5,
  RuntimeBankCoords = 1 << 6,
};
struct ArgsConfig {
  using Underlying = uint8_t;
  Underlying bits;
  constexpr explicit ArgsConfig(Underlying b) : bits(b) {}
  constexpr bool test(ArgConfig c) const { return (bits & static_cast<Underlying>(c)) != 0; }
};
// The NOC address of the start of DRAM bank bank_id % banks, on NOC noc.
FORCE_INLINE uint64_t get_dram_bank_base_offset(uint32_t bank_id, uint8_t noc) {
  namespace ag = ckernel::interleaved_addr_gen;
  uint32_t bank = ag::get_bank_index<true>(bank_id, ag::get_bank_offset_index<true>(bank_id));
  return ckernel::get_noc_addr_helper(ag::get_noc_xy<true>(bank, noc), ag::get_bank_offset<true>(bank));
}
}  // namespace tensor_accessor

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = tensor_accessor::UNKNOWN>
struct TensorAccessorArgs {
  static constexpr auto args_config =
      tensor_accessor::ArgsConfig(static_cast<uint8_t>(get_compile_time_arg_val(CTA_OFFSET)));
  static constexpr bool is_sharded = args_config.test(tensor_accessor::ArgConfig::Sharded);
  static constexpr bool is_dram = args_config.test(tensor_accessor::ArgConfig::IsDram);
  static_assert((args_config.bits & 0x7c) == 0,
                "TensorAccessorArgs: runtime (common-arg) shapes and banks are not emulated; zyx-tt's driver puts "
                "them in compile-time args");
  static constexpr uint32_t AlignedPageSizeCTAOffset = CTA_OFFSET + 1;
  static constexpr uint32_t AlignedPageSize = get_compile_time_arg_val(AlignedPageSizeCTAOffset);
  static constexpr uint32_t RankCTAOffset = CTA_OFFSET + 2;
  static constexpr uint32_t NumBanksCTAOffset = RankCTAOffset + 1;
  static constexpr uint32_t RankCT = is_sharded ? get_compile_time_arg_val(is_sharded ? RankCTAOffset : 0) : 0;
  static constexpr uint32_t NumBanksCT = is_sharded ? get_compile_time_arg_val(is_sharded ? NumBanksCTAOffset : 0) : 0;
  static constexpr uint32_t PhysicalNumBanksCT = (NumBanksCT + 1) / 2;
  static_assert(!is_sharded || (RankCT > 0 && RankCT <= 8), "TensorAccessorArgs: a sharded rank must be 1 to 8");
  static_assert(!is_sharded || NumBanksCT > 0, "TensorAccessorArgs: a sharded tensor needs banks");
  static constexpr uint32_t TensorShapeCTAOffset = NumBanksCTAOffset + 1;
  static constexpr uint32_t ShardShapeCTAOffset = TensorShapeCTAOffset + RankCT;
  static constexpr uint32_t BankCoordsCTAOffset = ShardShapeCTAOffset + RankCT;
  static constexpr uint32_t NumArgsCT = is_sharded ? BankCoordsCTAOffset + PhysicalNumBanksCT - CTA_OFFSET : 2;

  constexpr TensorAccessorArgs() : crta_offset_rt_(0) {}
  constexpr explicit TensorAccessorArgs(uint32_t crta_offset) : crta_offset_rt_(crta_offset) {
    static_assert(CRTA_OFFSET == tensor_accessor::UNKNOWN, "Do not pass crta_offset when CRTA_OFFSET is known");
  }
  constexpr uint32_t crta_offset() const {
    if constexpr (CRTA_OFFSET != tensor_accessor::UNKNOWN)
      return static_cast<uint32_t>(CRTA_OFFSET);
    else
      return crta_offset_rt_;
  }
  static constexpr uint32_t get_aligned_page_size() { return AlignedPageSize; }
  constexpr uint32_t get_rank() const { return RankCT; }
  constexpr uint32_t get_num_banks() const { return is_sharded ? NumBanksCT : is_dram ? NUM_DRAM_BANKS : NUM_L1_BANKS; }
  constexpr uint32_t get_physical_num_banks() const { return (get_num_banks() + 1) / 2; }
  static constexpr uint32_t tensor_shape(uint32_t d) { return get_compile_time_arg_val(TensorShapeCTAOffset + d); }
  static constexpr uint32_t shard_shape(uint32_t d) { return get_compile_time_arg_val(ShardShapeCTAOffset + d); }
  static constexpr uint32_t packed_bank_coord(uint32_t bank) {
    return (get_compile_time_arg_val(BankCoordsCTAOffset + bank / 2) >> ((bank % 2) * 16)) & 0xffffu;
  }
  static constexpr uint32_t num_compile_time_args() { return NumArgsCT; }
  static constexpr uint32_t next_compile_time_args_offset() { return CTA_OFFSET + NumArgsCT; }
  static constexpr uint32_t compile_time_args_skip() { return NumArgsCT; }
  // Where each runtime part would start in the common runtime args: every
  // part is compile-time here (see the static_assert above), so each takes
  // no words and all start at crta_offset(), as tt-metal's do then.
  constexpr uint32_t rank_crta_offset() const { return crta_offset(); }
  constexpr uint32_t num_banks_crta_offset() const { return rank_crta_offset(); }
  constexpr uint32_t tensor_shape_crta_offset() const { return num_banks_crta_offset(); }
  constexpr uint32_t shard_shape_crta_offset() const { return tensor_shape_crta_offset(); }
  constexpr uint32_t bank_coords_crta_offset() const { return shard_shape_crta_offset(); }
  constexpr uint32_t num_common_runtime_args() const { return 0; }
  constexpr uint32_t next_common_runtime_args_offset() const { return crta_offset(); }
  static constexpr uint32_t runtime_args_skip() { return 0; }

 private:
  uint32_t crta_offset_rt_;
};

namespace tensor_accessor::detail {
template <uint32_t IDX, uint32_t CTA_OFFSET>
constexpr uint32_t cta_offset_of() {
  if constexpr (IDX == 0)
    return CTA_OFFSET;
  else
    return TensorAccessorArgs<cta_offset_of<IDX - 1, CTA_OFFSET>()>::next_compile_time_args_offset();
}
template <uint32_t CTA_OFFSET, uint32_t... I>
constexpr auto make_args_tuple(std::integer_sequence<uint32_t, I...>) {
  return std::make_tuple(TensorAccessorArgs<cta_offset_of<I, CTA_OFFSET>()>()...);
}
}  // namespace tensor_accessor::detail

// NUM_TENSORS accessor args laid out one after another from CTA_OFFSET.
template <uint32_t NUM_TENSORS, uint32_t CTA_OFFSET>
constexpr auto make_tensor_accessor_args_tuple() {
  return tensor_accessor::detail::make_args_tuple<CTA_OFFSET>(std::make_integer_sequence<uint32_t, NUM_TENSORS>());
}
// The accessor args at CTA_OFFSET (optionally with a known CRTA_OFFSET).
template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = tensor_accessor::UNKNOWN>
constexpr auto make_tensor_accessor_args() {
  return TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>();
}

namespace tensor_accessor {
// A page of a tensor: its NOC address and id (pages_address_iterator.h).
class Page {
 public:
  Page(uint64_t noc_addr, uint32_t global_page_id, bool is_padding = false)
      : noc_addr_(noc_addr), global_page_id_(global_page_id), is_padding_(is_padding) {}
  uint64_t noc_addr() const { return noc_addr_; }
  uint32_t page_id() const { return global_page_id_; }
  bool is_padding() const { return is_padding_; }

 private:
  uint64_t noc_addr_;
  uint32_t global_page_id_;
  bool is_padding_;
};
// Iterator over page ids [id, end) of an accessor.
template <typename Accessor>
class PagesAddressIterator {
 public:
  using value_type = Page;
  using difference_type = std::ptrdiff_t;
  using reference = const Page&;
  using pointer = const Page*;
  PagesAddressIterator(const Accessor& a, uint32_t id, uint32_t end, uint8_t noc)
      : a_(&a), id_(id < end ? id : end), end_(end), noc_(noc), page_(0, id_) {
    update();
  }
  uint32_t page_id() const { return id_; }
  reference operator*() const { return page_; }
  pointer operator->() const { return &page_; }
  PagesAddressIterator& operator++() { return *this += 1; }
  PagesAddressIterator operator++(int) {
    auto t = *this;
    ++*this;
    return t;
  }
  PagesAddressIterator& operator+=(difference_type n) {
    if (n < 0) ZYX_API.fail("PagesAddressIterator: negative step");
    id_ = uint64_t(id_) + uint64_t(n) >= end_ ? end_ : id_ + static_cast<uint32_t>(n);
    update();
    return *this;
  }
  PagesAddressIterator operator+(difference_type n) const {
    auto t = *this;
    t += n;
    return t;
  }
  Page operator[](difference_type n) const { return *(*this + n); }
  bool operator==(const PagesAddressIterator& o) const { return id_ == o.id_; }
  bool operator!=(const PagesAddressIterator& o) const { return id_ != o.id_; }
  bool operator<(const PagesAddressIterator& o) const { return id_ < o.id_; }
  bool operator>(const PagesAddressIterator& o) const { return id_ > o.id_; }
  bool operator<=(const PagesAddressIterator& o) const { return id_ <= o.id_; }
  bool operator>=(const PagesAddressIterator& o) const { return id_ >= o.id_; }

 private:
  void update() {
    if (id_ < end_) page_ = Page(a_->get_noc_addr(id_, 0, noc_), id_);
  }
  const Accessor* a_;
  uint32_t id_, end_;
  uint8_t noc_;
  Page page_;
};
// tt-metal's names of the iterator of an interleaved and of a sharded
// accessor's pages: one iterator here serves both (the accessor maps ids).
template <typename Accessor>
using PagesAddressIteratorInterleaved = PagesAddressIterator<Accessor>;
template <typename Accessor>
using PagesAddressIteratorSharded = PagesAddressIterator<Accessor>;
template <typename Accessor>
class Pages {
 public:
  using iterator = PagesAddressIterator<Accessor>;
  using const_iterator = iterator;
  Pages(const Accessor& a, uint32_t start, uint32_t end, uint8_t noc = noc_index) : a_(a), start_(start), end_(end), noc_(noc) {
    if (start > end) ZYX_API.fail("TensorAccessor::pages: the start page is after the end page");
  }
  iterator begin() const { return iterator(a_, start_, end_, noc_); }
  iterator end() const { return iterator(a_, end_, end_, noc_); }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }

 private:
  const Accessor& a_;
  uint32_t start_, end_;
  uint8_t noc_;
};
// Iterator over the pages of one shard in its local row-major order.
template <typename Accessor>
class ShardPagesAddressIterator {
 public:
  using value_type = Page;
  using difference_type = std::ptrdiff_t;
  using reference = const Page&;
  using pointer = const Page*;
  ShardPagesAddressIterator(const Accessor& a, uint32_t shard, uint32_t local, uint32_t end, uint8_t noc)
      : a_(&a), shard_(shard), local_(local < end ? local : end), end_(end), noc_(noc), page_(0, 0) {
    skip_padding();
  }
  uint32_t page_id() const { return page_.page_id(); }
  reference operator*() const { return page_; }
  pointer operator->() const { return &page_; }
  ShardPagesAddressIterator& operator++() {
    if (local_ < end_) local_++;
    skip_padding();
    return *this;
  }
  ShardPagesAddressIterator operator++(int) {
    auto t = *this;
    ++*this;
    return t;
  }
  ShardPagesAddressIterator& operator+=(difference_type n) {
    if (n < 0) ZYX_API.fail("ShardPagesAddressIterator: negative step");
    for (difference_type i = 0; i < n && local_ < end_; i++) ++*this;
    return *this;
  }
  ShardPagesAddressIterator operator+(difference_type n) const {
    auto t = *this;
    t += n;
    return t;
  }
  Page operator[](difference_type n) const { return *(*this + n); }
  bool operator==(const ShardPagesAddressIterator& o) const { return shard_ == o.shard_ && local_ == o.local_; }
  bool operator!=(const ShardPagesAddressIterator& o) const { return !(*this == o); }
  bool operator<(const ShardPagesAddressIterator& o) const { return shard_ == o.shard_ && local_ < o.local_; }
  bool operator>(const ShardPagesAddressIterator& o) const { return o < *this; }
  bool operator<=(const ShardPagesAddressIterator& o) const { return *this < o || *this == o; }
  bool operator>=(const ShardPagesAddressIterator& o) const { return !(*this < o); }

 private:
  // The global page id of local page `local` of the shard, or false past the tensor.
  bool global_id(uint32_t local, uint32_t* id) const {
    using Spec = typename Accessor::DSpec;
    constexpr uint32_t rank = Spec::RankCT;
    uint32_t grid[8], sc[8], lc[8];
    for (uint32_t d = 0; d < rank; d++) grid[d] = (Spec::tensor_dim(d) + Spec::shard_dim(d) - 1) / Spec::shard_dim(d);
    uint32_t rs = shard_, rl = local;
    for (uint32_t k = rank; k-- > 0;) {
      sc[k] = rs % grid[k], rs /= grid[k];
      lc[k] = rl % Spec::shard_dim(k), rl /= Spec::shard_dim(k);
    }
    uint32_t g = 0;
    for (uint32_t d = 0; d < rank; d++) {
      uint32_t c = sc[d] * Spec::shard_dim(d) + lc[d];
      if (c >= Spec::tensor_dim(d)) return false;
      g = g * Spec::tensor_dim(d) + c;
    }
    *id = g;
    return true;
  }
  void skip_padding() {
    uint32_t id = 0;
    while (local_ < end_ && !global_id(local_, &id)) local_++;
    if (local_ < end_)
      page_ = Page(a_->get_shard_noc_addr(shard_, local_ * a_->get_aligned_page_size(), noc_), id);
  }
  const Accessor* a_;
  uint32_t shard_, local_, end_;
  uint8_t noc_;
  Page page_;
};
template <typename Accessor>
class ShardPages {
 public:
  using iterator = ShardPagesAddressIterator<Accessor>;
  using const_iterator = iterator;
  ShardPages(const Accessor& a, uint32_t shard, uint32_t start, uint32_t end, uint8_t noc = noc_index)
      : a_(a), shard_(shard), start_(start), end_(end), noc_(noc) {
    if (end > Accessor::shard_volume()) ZYX_API.fail("TensorAccessor::shard_pages: the end is past the shard");
  }
  iterator begin() const { return iterator(a_, shard_, start_, end_, noc_); }
  iterator end() const { return iterator(a_, shard_, end_, end_, noc_); }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }

 private:
  const Accessor& a_;
  uint32_t shard_, start_, end_;
  uint8_t noc_;
};
}  // namespace tensor_accessor

namespace tensor_accessor {
// The accessor's distribution spec. As on tt-metal, it is the accessor's type
// parameter and holds the layout's values (sharded or interleaved, DRAM or
// L1, rank, banks, the tensor and shard shapes in pages, the packed bank
// coordinates), not where in the compile-time args they lie: accessors of
// one layout share one type (every interleaved DRAM accessor, say), which
// `cond ? TensorAccessor(a, ...) : TensorAccessor(b, ...)` needs. dspec()
// gives rank, banks, shapes and volumes (every part is static here);
// interleaved tensors have rank 0. Not given: the strides and the shard grid.
template <bool Sharded, bool Dram, uint32_t Rank, uint32_t Banks, typename TensorShape, typename ShardShape,
          typename BankCoords>
struct DistributionSpec;
template <bool Sharded, bool Dram, uint32_t Rank, uint32_t Banks, uint32_t... TensorDims, uint32_t... ShardDims,
          uint32_t... Coords>
struct DistributionSpec<Sharded, Dram, Rank, Banks, std::integer_sequence<uint32_t, TensorDims...>,
                        std::integer_sequence<uint32_t, ShardDims...>, std::integer_sequence<uint32_t, Coords...>> {
  static_assert(sizeof...(TensorDims) == Rank && sizeof...(ShardDims) == Rank && sizeof...(Coords) == Banks);
  static constexpr bool has_static_rank = Rank != 0;
  static constexpr bool has_static_num_banks = true;
  static constexpr bool tensor_shape_static = has_static_rank;
  static constexpr bool shard_shape_static = has_static_rank;
  static constexpr bool bank_coords_static = has_static_rank;
  static constexpr bool shapes_static = tensor_shape_static && shard_shape_static;
  static constexpr bool is_static = shapes_static && bank_coords_static;
  static constexpr bool is_interleaved = !Sharded;
  static constexpr bool is_sharded = Sharded;
  static constexpr bool is_dram = Dram;
  static constexpr uint32_t RankCT = Rank;
  static constexpr uint32_t NumBanksCT = Banks;
  using Shape = std::array<uint32_t, Rank>;
  constexpr uint32_t rank() const { return Rank; }
  constexpr uint32_t num_banks() const { return Sharded ? Banks : Dram ? NUM_DRAM_BANKS : NUM_L1_BANKS; }
  constexpr const Shape& tensor_shape() const { return tensor_shape_; }
  constexpr const Shape& shard_shape() const { return shard_shape_; }
  constexpr uint32_t tensor_volume() const { return (1u * ... * TensorDims); }
  constexpr uint32_t shard_volume() const { return (1u * ... * ShardDims); }
  // Dimension d of the shapes and bank b's (x << 8) | y, for the accessor.
  static constexpr uint32_t tensor_dim(uint32_t d) { return tensor_shape_[d]; }
  static constexpr uint32_t shard_dim(uint32_t d) { return shard_shape_[d]; }
  static constexpr uint32_t packed_bank_coord(uint32_t bank) { return bank_coords_[bank]; }

 private:
  static constexpr Shape tensor_shape_{TensorDims...};
  static constexpr Shape shard_shape_{ShardDims...};
  static constexpr std::array<uint32_t, Banks> bank_coords_{Coords...};
};
template <typename DSpec>
inline constexpr DSpec distribution_spec{};

namespace detail {
template <uint32_t (*Value)(uint32_t), size_t... I>
constexpr std::integer_sequence<uint32_t, Value(I)...> values_of(std::index_sequence<I...>) {
  return {};
}
template <uint32_t (*Value)(uint32_t), uint32_t N>
using values_t = decltype(values_of<Value>(std::make_index_sequence<N>()));
}  // namespace detail
// The distribution spec of the layout that accessor args describe.
template <typename Args>
using DistributionSpecOf =
    DistributionSpec<Args::is_sharded, Args::is_dram, Args::RankCT, Args::NumBanksCT,
                     detail::values_t<&Args::tensor_shape, Args::RankCT>,
                     detail::values_t<&Args::shard_shape, Args::RankCT>,
                     detail::values_t<&Args::packed_bank_coord, Args::NumBanksCT>>;
}  // namespace tensor_accessor

template <typename DSpecT>
struct TensorAccessor {
  using DSpec = DSpecT;
  constexpr const DSpec& dspec() const { return tensor_accessor::distribution_spec<DSpec>; }
  uint32_t address = 0;
  uint32_t page_size = 0;
  constexpr TensorAccessor() = default;
  // Without a page size the accessor takes the page size of the run's buffer
  // at that address, or else the aligned page size of its args. Pages are
  // laid out at the args' aligned page size.
  template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
  TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>& args, uint32_t bank_base_address,
                 uint32_t page_size_bytes = 0)
      : address(bank_base_address), page_size(page_size_bytes), aligned_page_size_(args.get_aligned_page_size()) {
    using ArgsSpec = tensor_accessor::DistributionSpecOf<TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>>;
    static_assert(std::is_same_v<ArgsSpec, DSpec>, "TensorAccessor: the args describe another distribution");
    if (!page_size) page_size = ZYX_API.buffer_page_size(bank_base_address);
    if (!page_size) page_size = aligned_page_size_;
  }
  // A Metal 2.0 tensor binding (ta::name): the buffer's address from the
  // common args, the layout from the compile args the token names.
  template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
  TensorAccessor(tensor_accessor::TensorAccessorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>)
      : TensorAccessor(TensorAccessorArgs<CTA_OFFSET>(),
                       ckernel::get_common_arg_val<uint32_t>(static_cast<int>(ADDR_CRTA_OFFSET / 4))) {}
  constexpr uint32_t get_aligned_page_size() const { return aligned_page_size_; }
  FORCE_INLINE uint32_t get_page_size() const { return page_size; }
  // Pages per shard (sharded tensors).
  static constexpr uint32_t shard_volume() { return tensor_accessor::distribution_spec<DSpec>.shard_volume(); }
  struct PageMapping {
    uint32_t bank_id;
    uint32_t bank_page_offset;
  };
  // The bank holding page_id and the page's index among that bank's pages.
  FORCE_INLINE PageMapping get_bank_and_offset(uint32_t page_id) const {
    if constexpr (!DSpec::is_sharded) {
      uint32_t banks = DSpec::is_dram ? NUM_DRAM_BANKS : NUM_L1_BANKS;
      return {page_id % banks, page_id / banks};
    } else {
      constexpr uint32_t rank = DSpec::RankCT;
      uint32_t rest = page_id, shard = 0, within = 0, shard_stride = 1, within_stride = 1;
      if (page_id >= tensor_volume()) ZYX_API.fail("TensorAccessor: page id past the sharded tensor");
      for (uint32_t k = rank; k-- > 0;) {  // innermost dimension last in row-major order
        uint32_t t = DSpec::tensor_dim(k), s = DSpec::shard_dim(k);
        uint32_t c = rest % t;
        rest /= t;
        shard += (c / s) * shard_stride;
        within += (c % s) * within_stride;
        shard_stride *= (t + s - 1) / s;
        within_stride *= s;
      }
      return {shard % DSpec::NumBanksCT, (shard / DSpec::NumBanksCT) * shard_volume() + within};
    }
  }
  FORCE_INLINE uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t = noc_index) const {
    if constexpr (!DSpec::is_sharded) {
      return ckernel::zyx_emu_detail_ag::interleaved_aligned(address, aligned_page_size_, page_id, offset,
                                                             DSpec::is_dram);
    } else {
      PageMapping m = get_bank_and_offset(page_id);
      return bank_noc_addr(m.bank_id, uint64_t(address) + uint64_t(m.bank_page_offset) * aligned_page_size_ + offset);
    }
  }
  // The NOC address of `local` in sharded bank `bank` (see the layout above).
  static FORCE_INLINE uint64_t bank_noc_addr(uint32_t bank, uint64_t local) {
    uint32_t xy = DSpec::packed_bank_coord(bank);
    if constexpr (DSpec::is_dram) return ckernel::zyx_emu_detail_ag::dram_bank_noc_addr(xy >> 8, local);
    return NOC_XY_ADDR(xy >> 8, xy & 0xff, local);
  }
  // The NOC address of shard shard_id's first page (sharded tensors), plus offset.
  FORCE_INLINE uint64_t get_shard_noc_addr(uint32_t shard_id, uint32_t offset = 0, uint8_t = noc_index) const {
    static_assert(DSpec::is_sharded, "get_shard_noc_addr needs a sharded tensor");
    uint64_t shard_start = uint64_t(shard_id / DSpec::NumBanksCT) * shard_volume() * aligned_page_size_;
    return bank_noc_addr(shard_id % DSpec::NumBanksCT, uint64_t(address) + shard_start + offset);
  }
  // The bank-relative base address (an L1-sharded tensor's local base).
  FORCE_INLINE constexpr uint32_t get_bank_base_address() const { return address; }
  // Pages of the whole tensor (sharded tensors).
  static constexpr uint32_t tensor_volume() { return tensor_accessor::distribution_spec<DSpec>.tensor_volume(); }
  // Range-for over pages [start, end): tensor_accessor::Page (NOC address,
  // page id). Interleaved tensors need the range; sharded ones default to all.
  tensor_accessor::Pages<TensorAccessor> pages(uint32_t start_page_id, uint32_t end_page_id,
                                               uint8_t noc = noc_index) const {
    return tensor_accessor::Pages<TensorAccessor>(*this, start_page_id, end_page_id, noc);
  }
  tensor_accessor::Pages<TensorAccessor> pages(uint8_t noc = noc_index) const
    requires(DSpec::is_sharded)
  {
    return tensor_accessor::Pages<TensorAccessor>(*this, 0, tensor_volume(), noc);
  }
  // Range-for over the pages of one shard, local pages [start, end) (end 0:
  // the whole shard), skipping the slots of an edge shard past the tensor.
  tensor_accessor::ShardPages<TensorAccessor> shard_pages(uint32_t shard_id, uint32_t start_page_offset = 0,
                                                          uint32_t end_page_offset = 0, uint8_t noc = noc_index) const {
    static_assert(DSpec::is_sharded, "shard_pages needs a sharded tensor");
    return tensor_accessor::ShardPages<TensorAccessor>(*this, shard_id, start_page_offset,
                                                       end_page_offset ? end_page_offset : shard_volume(), noc);
  }
  FORCE_INLINE bool is_local_bank(uint32_t x, uint32_t y, uint8_t = noc_index) const {
    return x == my_x[0] && y == my_y[0];
  }
  FORCE_INLINE bool is_local_addr(uint64_t noc_addr, uint8_t noc = noc_index) const {
    return is_local_bank(NOC_UNICAST_ADDR_X(noc_addr), NOC_UNICAST_ADDR_Y(noc_addr), noc);
  }
  FORCE_INLINE bool is_local_page(uint32_t page_id, uint8_t noc = noc_index) const {
    return is_local_addr(get_noc_addr(page_id), noc);
  }
  FORCE_INLINE bool is_local_shard(uint32_t shard_id, uint8_t noc = noc_index) const {
    return is_local_addr(get_shard_noc_addr(shard_id, 0, noc), noc);
  }

 private:
  uint32_t aligned_page_size_ = 0;
};
template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
TensorAccessor(tensor_accessor::TensorAccessorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>)
    -> TensorAccessor<tensor_accessor::DistributionSpecOf<TensorAccessorArgs<CTA_OFFSET>>>;
template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, uint32_t, uint32_t)
    -> TensorAccessor<tensor_accessor::DistributionSpecOf<TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>>>;
template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET>
TensorAccessor(const TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>&, uint32_t)
    -> TensorAccessor<tensor_accessor::DistributionSpecOf<TensorAccessorArgs<CTA_OFFSET, CRTA_OFFSET>>>;
// Whether an address generator has a page_size member or a
// get_aligned_page_size() (tt-metal's traits, which ttnn's helpers test).
template <typename, typename = void>
inline constexpr bool has_page_size_v = false;
template <typename T>
inline constexpr bool has_page_size_v<T, std::void_t<decltype(std::declval<T>().page_size)>> = true;
template <typename, typename = void>
inline constexpr bool has_get_aligned_page_size_v = false;
template <typename T>
inline constexpr bool
    has_get_aligned_page_size_v<T, std::void_t<decltype(std::declval<T>().get_aligned_page_size())>> = true;

// The earlier name of the same construction, which kernels of 2025 use.
template <typename Args>
FORCE_INLINE auto make_tensor_accessor_from_args(const Args& args, uint32_t bank_base_address,
                                                  uint32_t page_size_bytes) {
  return TensorAccessor(args, bank_base_address, page_size_bytes);
}

// One accessor per args of a tuple, at the buffer addresses of consecutive
// runtime args from address_rt_arg_index_start.
namespace tensor_accessor::detail {
template <typename... Args, uint32_t... I>
auto make_tensor_accessor_tuple(const std::tuple<Args...>& args, uint32_t start, std::integer_sequence<uint32_t, I...>) {
  return std::make_tuple(TensorAccessor(std::get<I>(args), ckernel::get_arg_val<uint32_t>(static_cast<int>(start + I)))...);
}
}  // namespace tensor_accessor::detail
template <typename... Args>
auto make_tensor_accessor_tuple(const std::tuple<Args...>& args, uint32_t address_rt_arg_index_start) {
  return tensor_accessor::detail::make_tensor_accessor_tuple(args, address_rt_arg_index_start,
                                                             std::make_integer_sequence<uint32_t, sizeof...(Args)>());
}

// A type-erased accessor: get_noc_addr of any TensorAccessor.
class AbstractTensorAccessorWrapper {
 public:
  AbstractTensorAccessorWrapper() = default;
  template <typename Accessor>
  AbstractTensorAccessorWrapper(const Accessor& accessor)
      : accessor_(&accessor), fn_([](const void* a, uint32_t page, uint32_t offset, uint8_t noc) {
          return static_cast<const Accessor*>(a)->get_noc_addr(page, offset, noc);
        }) {}
  uint64_t get_noc_addr(uint32_t page_idx, uint32_t offset = 0, uint8_t noc = noc_index) const {
    if (!fn_) ZYX_API.fail("AbstractTensorAccessorWrapper: no accessor");
    return fn_(accessor_, page_idx, offset, noc);
  }

 private:
  const void* accessor_ = nullptr;
  uint64_t (*fn_)(const void*, uint32_t, uint32_t, uint8_t) = nullptr;
};
template <typename... Accessors>
auto make_abstract_tensor_accessor_wrappers(const std::tuple<Accessors...>& accessors) {
  return std::apply([](const auto&... a) { return std::array<AbstractTensorAccessorWrapper, sizeof...(Accessors)>{
                                               AbstractTensorAccessorWrapper(a)...}; },
                    accessors);
}
// Adapters for the Noc calls: pages (PageView) or shards (ShardView) of an accessor.
template <typename Accessor>
struct PageView {
  const Accessor& accessor;
  explicit PageView(const Accessor& acc) : accessor(acc) {}
  uint64_t get_noc_addr(uint32_t page_id, uint32_t offset, uint8_t noc) const {
    return accessor.get_noc_addr(page_id, offset, noc);
  }
};
template <typename Accessor>
struct ShardView {
  const Accessor& accessor;
  explicit ShardView(const Accessor& acc) : accessor(acc) {}
  bool is_local_shard(uint32_t shard_id, uint8_t noc) const { return accessor.is_local_shard(shard_id, noc); }
  uint64_t get_noc_addr(uint32_t shard_id, uint32_t offset, uint8_t noc) const {
    return accessor.get_shard_noc_addr(shard_id, offset, noc);
  }
};

namespace ckernel {

// get_noc_addr(page, addrgen): only for objects that compute page addresses,
// so that get_noc_addr(1, 0, addr) with integer literals is the (x, y, addr)
// form, as on tt-metal.
template <typename AddrGen>
  requires requires(const AddrGen& g, uint32_t i) { g.get_noc_addr(i, i); }
FORCE_INLINE uint64_t get_noc_addr(uint32_t id, const AddrGen& s, uint32_t offset = 0, uint8_t = noc_index) {
  return s.get_noc_addr(id, offset);
}

namespace zyx_emu_detail_ag {
template <typename G>
FORCE_INLINE uint32_t page_size_of(const G& g) {
  if constexpr (requires { g.get_aligned_page_size(); })
    return g.get_aligned_page_size();
  else if constexpr (requires { g.page_size; })
    return g.page_size;
  else
    return 1u << g.log_base_2_of_page_size;
}
}  // namespace zyx_emu_detail_ag

// ---- reads ----
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                 uint8_t = noc_index, uint32_t = NOC_UNICAST_WRITE_VC) {
  ZYX_API.noc_read(src_noc_addr, dst_local_l1_addr, size);
}
template <bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_one_packet(uint64_t src, uint32_t dst, uint32_t size, uint8_t = noc_index,
                                            uint32_t = NOC_UNICAST_WRITE_VC) {
  if (size > NOC_MAX_BURST_SIZE) ZYX_API.fail("noc_async_read_one_packet: size is larger than one packet (8192 bytes)");
  ZYX_API.noc_read(src, dst, size);
}
// Stateful reads: *_set_state keeps the source's NOC coordinates (and, for
// one packet, the size); *_with_state supplies the low 32 address bits.
template <bool use_vc = false>
FORCE_INLINE void noc_async_read_one_packet_set_state(uint64_t src_noc_addr, uint32_t size, const uint32_t = 0,
                                                      uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  slot(kReadHi + nocsel(noc)) = src_noc_addr & kHiMask;
  slot(kReadSize + nocsel(noc)) = size;
}
template <bool inc_num_issued = true, bool use_vc = false>
FORCE_INLINE void noc_async_read_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                       const uint32_t = 0, uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  ZYX_API.noc_read(slot(kReadHi + nocsel(noc)) | src_local_l1_addr, dst_local_l1_addr,
                   static_cast<uint32_t>(slot(kReadSize + nocsel(noc))));
}
FORCE_INLINE void noc_async_read_set_state(uint64_t src_noc_addr, uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  slot(kReadHi + nocsel(noc)) = src_noc_addr & kHiMask;
}
template <bool inc_num_issued = true>
FORCE_INLINE void noc_async_read_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                            uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  ZYX_API.noc_read(slot(kReadHi + nocsel(noc)) | src_local_l1_addr, dst_local_l1_addr, size);
}
FORCE_INLINE void noc_async_read_inc_num_issued(uint32_t num_issued_reads_inc, uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  slot(kReadsIssued + nocsel(noc)) += num_issued_reads_inc;
}
// Transaction ids: reads are tagged with the id set last on their NOC.
FORCE_INLINE void noc_async_read_set_trid(uint32_t trid = 0, uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_read_set_trid: transaction id is beyond 0xF");
  slot(kReadTrid + nocsel(noc)) = trid;
}
template <bool skip_ptr_update = false, bool skip_cmdbuf_chk = false>
FORCE_INLINE void noc_async_read_one_packet_with_state_with_trid(uint32_t src_base_addr, uint32_t src_addr,
                                                                 uint32_t dest_addr, uint32_t trid = 0,
                                                                 uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_read_one_packet_with_state_with_trid: trid beyond 0xF");
  slot(kReadTrid + nocsel(noc)) = trid;
  ZYX_API.noc_read(slot(kReadHi + nocsel(noc)) | uint32_t(src_base_addr + src_addr), dest_addr,
                   static_cast<uint32_t>(slot(kReadSize + nocsel(noc))));
}
// Reads of a DRAM-sharded tensor: *_set_state keeps bank bank_id's NOC
// coordinates and the page size and returns the bank's address of
// bank_base_address (the same in every bank here); *_with_state reads the
// page at src_base_addr + src_addr of that bank into dest_addr.
template <bool use_vc = false>
FORCE_INLINE uint32_t noc_async_read_tile_dram_sharded_set_state(uint32_t bank_base_address, uint32_t page_size,
                                                                 uint32_t bank_id = 0, const uint32_t = 0,
                                                                 uint8_t noc = noc_index) {
  noc_async_read_one_packet_set_state(get_noc_addr_from_bank_id<true>(bank_id, bank_base_address), page_size, 0, noc);
  return bank_base_address;
}
FORCE_INLINE void noc_async_read_tile_dram_sharded_with_state(uint32_t src_base_addr, uint32_t src_addr,
                                                              uint32_t dest_addr, uint32_t trid = 0,
                                                              uint8_t noc = noc_index) {
  (void)trid;
  using namespace zyx_emu_detail;
  ZYX_API.noc_read(slot(kReadHi + nocsel(noc)) | uint32_t(src_base_addr + src_addr), dest_addr,
                   static_cast<uint32_t>(slot(kReadSize + nocsel(noc))));
}
FORCE_INLINE void noc_async_read_tile_dram_sharded_set_trid(uint32_t trid = 0, uint8_t noc = noc_index) {
  noc_async_read_set_trid(trid, noc);
}
template <bool skip_ptr_update = false>
FORCE_INLINE void noc_async_read_tile_dram_sharded_with_state_with_trid(uint32_t src_base_addr, uint32_t src_addr,
                                                                        uint32_t dest_addr, uint32_t trid = 0,
                                                                        uint8_t noc = noc_index) {
  noc_async_read_one_packet_with_state_with_trid(src_base_addr, src_addr, dest_addr, trid, noc);
}
// Completes every outstanding read, not only those of trid (the emulator
// does not track transaction ids).
FORCE_INLINE void noc_async_read_barrier_with_trid(uint32_t trid, uint8_t = noc_index) {
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_read_barrier_with_trid: transaction id is beyond 0xF");
  ZYX_API.noc_barrier(ZYX_EMU_NOC_READS);
}
FORCE_INLINE uint32_t noc_available_transactions(uint8_t, uint32_t) { return NOC_MAX_TRANSACTION_ID_COUNT; }
// The NOC status polls of tt-metal's noc_nonblocking_api.h: every transfer
// is complete when its call returns here, so each reports done.
FORCE_INLINE bool ncrisc_noc_reads_flushed(uint32_t) { return true; }
FORCE_INLINE bool ncrisc_noc_read_with_transaction_id_flushed(uint32_t, uint32_t) { return true; }
FORCE_INLINE bool ncrisc_noc_nonposted_writes_sent(uint32_t) { return true; }
FORCE_INLINE bool ncrisc_noc_posted_writes_sent(uint32_t) { return true; }
FORCE_INLINE bool ncrisc_noc_nonposted_writes_flushed(uint32_t) { return true; }
FORCE_INLINE bool ncrisc_noc_nonposted_write_with_transaction_id_sent(uint32_t, uint32_t) { return true; }
FORCE_INLINE bool ncrisc_noc_nonposted_write_with_transaction_id_flushed(uint32_t, uint32_t) { return true; }
FORCE_INLINE bool ncrisc_noc_nonposted_atomics_flushed(uint32_t) { return true; }

template <typename AddrGen, bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_page(const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr,
                                      uint32_t offset = 0, uint8_t = noc_index) {
  ZYX_API.noc_read(addrgen.get_noc_addr(id, offset), dst_local_l1_addr, zyx_emu_detail_ag::page_size_of(addrgen));
}
template <typename AddrGen>
FORCE_INLINE void noc_async_read_tile(const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr,
                                      uint32_t offset = 0, uint8_t = noc_index) {
  ZYX_API.noc_read(addrgen.get_noc_addr(id, offset), dst_local_l1_addr, zyx_emu_detail_ag::page_size_of(addrgen));
}

// ---- writes ----
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                  uint8_t = noc_index, uint32_t = NOC_UNICAST_WRITE_VC) {
  ZYX_API.noc_write(src_local_l1_addr, dst_noc_addr, size);
}
template <bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_one_packet(uint32_t src, uint64_t dst, uint32_t size, uint8_t = noc_index,
                                             uint32_t = NOC_UNICAST_WRITE_VC) {
  if (size > NOC_MAX_BURST_SIZE) ZYX_API.fail("noc_async_write_one_packet: size is larger than one packet (8192 bytes)");
  ZYX_API.noc_write(src, dst, size);
}
template <bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_set_state(uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index,
                                                       uint8_t = NOC_UNICAST_WRITE_VC) {
  using namespace zyx_emu_detail;
  slot(kWriteHi + bufsel(noc, write_cmd_buf)) = dst_noc_addr & kHiMask;
  slot(kWriteSize + bufsel(noc, write_cmd_buf)) = size;
}
template <bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_with_state(uint32_t src_local_l1_addr, uint32_t dst_local_l1_addr,
                                                        uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  uint32_t b = bufsel(noc, write_cmd_buf);
  ZYX_API.noc_write(src_local_l1_addr, slot(kWriteHi + b) | dst_local_l1_addr, static_cast<uint32_t>(slot(kWriteSize + b)));
}
FORCE_INLINE void noc_async_write_set_trid(uint32_t trid = 0, uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_write_set_trid: transaction id is beyond 0xF");
  slot(kWriteTrid + bufsel(noc, write_cmd_buf)) = trid;
}
template <bool update_counter = true, bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_with_trid(uint32_t src_local_l1_addr, uint64_t dst_noc_addr,
                                                       uint32_t size, uint32_t trid,
                                                       uint8_t cmd_buf = write_cmd_buf, uint8_t noc = noc_index,
                                                       uint8_t = NOC_UNICAST_WRITE_VC) {
  using namespace zyx_emu_detail;
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_write_one_packet_with_trid: trid beyond 0xF");
  slot(kWriteTrid + bufsel(noc, cmd_buf)) = trid;
  ZYX_API.noc_write(src_local_l1_addr, dst_noc_addr, size);
}
template <bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_with_trid_set_state(uint64_t dst_noc_addr,
                                                                 uint8_t cmd_buf = write_cmd_buf,
                                                                 uint8_t noc = noc_index,
                                                                 uint8_t = NOC_UNICAST_WRITE_VC) {
  using namespace zyx_emu_detail;
  slot(kWriteHi + bufsel(noc, cmd_buf)) = dst_noc_addr & kHiMask;
}
template <bool update_counter = true, bool posted = false>
FORCE_INLINE void noc_async_write_one_packet_with_trid_with_state(uint32_t src_local_l1_addr,
                                                                  uint32_t dst_local_l1_addr, uint32_t size,
                                                                  uint32_t trid, uint8_t cmd_buf = write_cmd_buf,
                                                                  uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_write_one_packet_with_trid_with_state: trid beyond 0xF");
  uint32_t b = bufsel(noc, cmd_buf);
  slot(kWriteTrid + b) = trid;
  ZYX_API.noc_write(src_local_l1_addr, slot(kWriteHi + b) | dst_local_l1_addr, size);
}
FORCE_INLINE void noc_async_write_barrier_with_trid(uint32_t trid, uint8_t = noc_index) {
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_write_barrier_with_trid: transaction id is beyond 0xF");
  ZYX_API.noc_barrier(ZYX_EMU_NOC_WRITES);
}
FORCE_INLINE void noc_async_write_flushed_with_trid(uint32_t trid, uint8_t = noc_index) {
  if (trid > NOC_MAX_TRANSACTION_ID) ZYX_API.fail("noc_async_write_flushed_with_trid: transaction id is beyond 0xF");
  ZYX_API.noc_barrier(ZYX_EMU_NOC_WRITES);
}
FORCE_INLINE void reset_noc_trid_barrier_counter(uint32_t = NOC_CLEAR_OUTSTANDING_REQ_MASK, uint32_t = noc_index) {}

template <typename AddrGen, bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_page(const uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                       uint32_t size = 0, uint32_t offset = 0, uint8_t = noc_index) {
  ZYX_API.noc_write(src_local_l1_addr, addrgen.get_noc_addr(id, offset),
                    size ? size : zyx_emu_detail_ag::page_size_of(addrgen));
}
// A whole shard of a sharded tensor (its aligned pages back to back).
template <typename DSpec>
FORCE_INLINE void noc_async_read_shard(const uint32_t shard_id, const TensorAccessor<DSpec>& s,
                                       uint32_t dst_local_l1_addr, uint8_t noc = noc_index) {
  ZYX_API.noc_read(s.get_shard_noc_addr(shard_id, 0, noc), dst_local_l1_addr,
                   s.shard_volume() * s.get_aligned_page_size());
}
template <typename DSpec, bool posted = false>
FORCE_INLINE void noc_async_write_shard(const uint32_t shard_id, const TensorAccessor<DSpec>& s,
                                        uint32_t src_local_l1_addr, uint8_t noc = noc_index) {
  ZYX_API.noc_write(src_local_l1_addr, s.get_shard_noc_addr(shard_id, 0, noc),
                    s.shard_volume() * s.get_aligned_page_size());
}
template <typename AddrGen>
FORCE_INLINE void noc_async_write_tile(const uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                       uint8_t = noc_index) {
  ZYX_API.noc_write(src_local_l1_addr, addrgen.get_noc_addr(id), zyx_emu_detail_ag::page_size_of(addrgen));
}

// ---- multicast ----
template <bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_write_multicast_one_packet(uint32_t src, uint64_t dst_mcast, uint32_t size,
                                                       uint32_t = 0, bool = false, uint8_t = noc_index) {
  ZYX_API.noc_mcast_write(src, dst_mcast, size, 0);
}
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1>
FORCE_INLINE void noc_async_write_multicast(uint32_t src, uint64_t dst_mcast, uint32_t size, uint32_t = 0,
                                            bool = false, uint8_t = noc_index, uint8_t = NOC_MULTICAST_WRITE_VC) {
  ZYX_API.noc_mcast_write(src, dst_mcast, size, 0);
}
FORCE_INLINE void noc_async_write_multicast_loopback_src(uint32_t src, uint64_t dst_mcast, uint32_t size,
                                                         uint32_t = 0, bool = false, uint8_t = noc_index) {
  ZYX_API.noc_mcast_write(src, dst_mcast, size, 1);
}

// ---- barriers: transfers are complete when issued, except the reads of
// the watcher's strict NOC mode, whose data lands at the read barrier ----
FORCE_INLINE void noc_async_read_barrier(uint8_t = noc_index) { ZYX_API.noc_barrier(ZYX_EMU_NOC_READS); }
FORCE_INLINE void noc_async_write_barrier(uint8_t = noc_index) { ZYX_API.noc_barrier(ZYX_EMU_NOC_WRITES); }
FORCE_INLINE void noc_async_writes_flushed(uint8_t = noc_index) { ZYX_API.noc_barrier(ZYX_EMU_NOC_WRITES); }
FORCE_INLINE void noc_async_posted_writes_flushed(uint8_t = noc_index) { ZYX_API.noc_barrier(ZYX_EMU_NOC_WRITES); }
FORCE_INLINE void noc_async_atomic_barrier(uint8_t = noc_index) {}
FORCE_INLINE void noc_async_full_barrier(uint8_t = noc_index) {
  ZYX_API.noc_barrier(ZYX_EMU_NOC_READS | ZYX_EMU_NOC_WRITES);
}
inline void RISC_POST_HEARTBEAT(uint32_t& heartbeat) { heartbeat++; }

// ---- inline writes ----
template <InlineWriteDst dst_type = InlineWriteDst::DEFAULT, bool posted = false, bool flush = true>
FORCE_INLINE void noc_inline_dw_write(uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t = noc_index,
                                      uint8_t = NOC_UNICAST_WRITE_VC, uint32_t = 0) {
  ZYX_API.noc_inline_write(addr, val, be, 0);
}
template <InlineWriteDst dst_type = InlineWriteDst::DEFAULT, bool posted = false, bool flush = true>
FORCE_INLINE void noc_inline_mcast_dw_write(uint64_t addr, uint32_t val, uint8_t be = 0xF, uint8_t = noc_index,
                                            uint8_t = NOC_MULTICAST_WRITE_VC, uint32_t = 0, uint32_t = 1) {
  ZYX_API.noc_inline_write(addr, val, be, 1);
}
template <bool posted = false, bool set_val = false>
FORCE_INLINE void noc_inline_dw_write_set_state(uint64_t addr, uint32_t val = 0, uint8_t be = 0xF,
                                                uint8_t cmd_buf = write_at_cmd_buf, uint8_t noc = noc_index,
                                                uint8_t = NOC_UNICAST_WRITE_VC) {
  using namespace zyx_emu_detail;
  uint32_t b = bufsel(noc, cmd_buf);
  slot(kInlineAddr + b) = addr;
  uint64_t old = slot(kInlineVal + b);
  slot(kInlineVal + b) = (uint64_t(be) << 32) | (set_val ? val : static_cast<uint32_t>(old));
}
template <bool update_addr_lo = false, bool update_counter = true, bool posted = false, bool update_addr_hi = false,
          bool update_val = false, InlineWriteDst dst_type = InlineWriteDst::DEFAULT>
FORCE_INLINE void noc_inline_dw_write_with_state(uint32_t val, uint32_t addr = 0, uint8_t cmd_buf = write_at_cmd_buf,
                                                 uint8_t noc = noc_index) {
  using namespace zyx_emu_detail;
  uint32_t b = bufsel(noc, cmd_buf);
  uint64_t a = slot(kInlineAddr + b);
  if constexpr (update_addr_lo) a = (a & kHiMask) | addr;
  if constexpr (update_addr_hi) a = (uint64_t(addr) << 32) | (a & 0xffffffffu);
  slot(kInlineAddr + b) = a;
  uint64_t vb = slot(kInlineVal + b);
  uint32_t v = update_val ? val : static_cast<uint32_t>(vb);
  if constexpr (update_val) slot(kInlineVal + b) = (vb & kHiMask) | val;
  ZYX_API.noc_inline_write(a, v, static_cast<uint32_t>(vb >> 32), 0);
}

// ---- semaphores ----
enum class ProgrammableCoreType { TENSIX = 0, ACTIVE_ETH = 1, IDLE_ETH = 2 };
template <ProgrammableCoreType type = ProgrammableCoreType::TENSIX>
FORCE_INLINE uint32_t get_semaphore(uint32_t semaphore_id) {
  return ZYX_API.semaphore_addr(semaphore_id);
}
namespace zyx_emu_detail_sem {
FORCE_INLINE volatile uint32_t* word(volatile uint32_t* p, const char* op) {
  return static_cast<volatile uint32_t*>(
      ZYX_API.l1_range(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p)), 4, op));
}
}  // namespace zyx_emu_detail_sem
FORCE_INLINE void noc_semaphore_set(volatile uint32_t* sem_addr, uint32_t val) {
  __atomic_store_n(const_cast<uint32_t*>(zyx_emu_detail_sem::word(sem_addr, "noc_semaphore_set")), val,
                   __ATOMIC_RELEASE);
}
template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t = noc_index,
                                    uint8_t = NOC_UNICAST_WRITE_VC) {
  ZYX_API.noc_atomic_inc(addr, incr);
}
// Atomic increment of the word at the same address on every core of the
// rectangle, not the sender.
template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc_multicast(uint64_t addr, uint32_t incr, uint32_t = 0, uint8_t = noc_index,
                                              uint8_t = NOC_MULTICAST_WRITE_VC) {
  ZYX_API.noc_atomic_inc_mcast(addr, incr, 0);
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
                                              bool = false, uint8_t = noc_index, uint8_t = NOC_MULTICAST_WRITE_VC) {
  ZYX_API.noc_mcast_write(src_local_l1_addr, dst_mcast, 4, 0);
}
FORCE_INLINE void noc_semaphore_set_multicast_loopback_src(uint32_t src, uint64_t dst_mcast, uint32_t = 0,
                                                           bool = false, uint8_t = noc_index) {
  ZYX_API.noc_mcast_write(src, dst_mcast, 4, 1);
}
}  // namespace ckernel

// ---- the object API (Device 2.0 / Metal 2.0) ----

template <typename T>
struct noc_traits_t {
  static_assert(sizeof(T) == 0, "NoC transactions are not supported for this type");
};

// Flags of the Noc calls (tt-metal's NocOptions).
enum class NocOptions : uint32_t {
  DEFAULT = 0,
  TXN_ID = 1u << 0,
  POSTED = 1u << 1,
  CUSTOM_VC = 1u << 2,
  MCAST_INCL_SRC = 1u << 3,
  INLINE_L1 = 1u << 4,
  INLINE_REG = 1u << 5,
};
constexpr NocOptions operator|(NocOptions a, NocOptions b) noexcept {
  return static_cast<NocOptions>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr bool has_flag(NocOptions opts, NocOptions flag) noexcept {
  return (static_cast<uint32_t>(opts) & static_cast<uint32_t>(flag)) != 0;
}
struct NocOptVals {
  uint32_t vc = NOC_UNICAST_WRITE_VC;
  uint32_t trid = 0;
};
struct MulticastEndpoint;

// The Noc object. Its calls take tt-metal's template options in either of
// its forms: NocOptions flags (async_read<NocOptions::TXN_ID>(…, {.trid = 1}))
// or the earlier enums (async_read<Noc::TxnIdMode::ENABLED>(…, vc, trid)).
class Noc {
 public:
  enum class AddressType { NOC, LOCAL_L1 };
  enum class TxnIdMode { ENABLED, DISABLED };
  enum class ResponseMode { NON_POSTED, POSTED };
  enum class BarrierMode { TXN_ID, FULL };
  enum class McastMode { INCLUDE_SRC, EXCLUDE_SRC };
  enum class VcSelection { DEFAULT, CUSTOM };
  static constexpr uint32_t INVALID_TXN_ID = 0xFFFFFFFF;

 private:
  template <typename T>
  using src_args_t = typename noc_traits_t<T>::src_args_type;
  template <typename T>
  using dst_args_t = typename noc_traits_t<T>::dst_args_type;
  template <typename T>
  using dst_args_mcast_t = typename noc_traits_t<T>::dst_args_mcast_type;

  struct Opts {
    bool txn = false, posted = false, mcast_incl = false, inline_l1 = false, inline_reg = false;
  };
  static constexpr void apply(Opts& o, NocOptions v) {
    o.txn |= has_flag(v, NocOptions::TXN_ID);
    o.posted |= has_flag(v, NocOptions::POSTED);
    o.mcast_incl |= has_flag(v, NocOptions::MCAST_INCL_SRC);
    o.inline_l1 |= has_flag(v, NocOptions::INLINE_L1);
    o.inline_reg |= has_flag(v, NocOptions::INLINE_REG);
  }
  static constexpr void apply(Opts& o, TxnIdMode v) { o.txn |= v == TxnIdMode::ENABLED; }
  static constexpr void apply(Opts& o, ResponseMode v) { o.posted |= v == ResponseMode::POSTED; }
  static constexpr void apply(Opts& o, McastMode v) { o.mcast_incl |= v == McastMode::INCLUDE_SRC; }
  static constexpr void apply(Opts& o, BarrierMode v) { o.txn |= v == BarrierMode::TXN_ID; }
  static constexpr void apply(Opts&, VcSelection) {}
  template <typename T>
  static constexpr void apply(Opts&, T) {}  // max_page_size, enable_noc_tracing: no effect here
  template <auto... V>
  static constexpr Opts opts() {
    Opts o;
    (apply(o, V), ...);
    return o;
  }

  template <AddressType address_type, typename Src>
  auto src_ptr(const Src& src, const src_args_t<Src>& a) const {
    return noc_traits_t<Src>::template src_addr<address_type>(src, *this, a);
  }
  template <AddressType address_type, typename Dst>
  auto dst_ptr(const Dst& dst, const dst_args_t<Dst>& a) const {
    return noc_traits_t<Dst>::template dst_addr<address_type>(dst, *this, a);
  }
  template <AddressType address_type, typename Dst>
  auto dst_ptr_mcast(const Dst& dst, const dst_args_mcast_t<Dst>& a) const {
    return noc_traits_t<Dst>::template dst_addr_mcast<address_type>(dst, *this, a);
  }

 public:
  Noc() : noc_id_(noc_index) {}
  explicit Noc(uint8_t noc_id) : noc_id_(noc_id) {}
  uint8_t get_noc_id() const { return noc_id_; }
  bool is_local_bank(uint32_t x, uint32_t y) const { return x == my_x[noc_id_] && y == my_y[noc_id_]; }
  bool is_local_addr(uint64_t noc_addr) const {
    return is_local_bank(NOC_UNICAST_ADDR_X(noc_addr), NOC_UNICAST_ADDR_Y(noc_addr));
  }

  // ---- reads ----
  template <auto... O, typename Src, typename Dst>
  void async_read(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                  const dst_args_t<Dst>& dst_args, const NocOptVals& v = {}) const {
    if constexpr (opts<O...>().txn) ckernel::noc_async_read_set_trid(v.trid, noc_id_);
    ckernel::noc_async_read(uint64_t(src_ptr<AddressType::NOC>(src, src_args)),
                            uint32_t(dst_ptr<AddressType::LOCAL_L1>(dst, dst_args)), size_bytes, noc_id_);
  }
  template <auto... O, typename Src, typename Dst>
  void async_read(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                  const dst_args_t<Dst>& dst_args, uint32_t vc, uint32_t trid = INVALID_TXN_ID) const {
    async_read<O...>(src, dst, size_bytes, src_args, dst_args, NocOptVals{vc, trid == INVALID_TXN_ID ? 0 : trid});
  }
  template <auto... O, typename Src>
  void set_async_read_state(const Src& src, uint32_t size_bytes, const src_args_t<Src>& src_args,
                            const NocOptVals& v = {}) const {
    ckernel::noc_async_read_one_packet_set_state(uint64_t(src_ptr<AddressType::NOC>(src, src_args)), size_bytes, 0,
                                                 noc_id_);
    if constexpr (opts<O...>().txn) ckernel::noc_async_read_set_trid(v.trid, noc_id_);
  }
  template <auto... O, typename Src>
  void set_async_read_state(const Src& src, uint32_t size_bytes, const src_args_t<Src>& src_args, uint8_t) const {
    set_async_read_state<O...>(src, size_bytes, src_args, NocOptVals{});
  }
  template <auto... O, typename Src, typename Dst>
  void async_read_with_state(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                             const dst_args_t<Dst>& dst_args, const NocOptVals& = {}) const {
    ckernel::noc_async_read_with_state(uint32_t(src_ptr<AddressType::NOC>(src, src_args)),
                                       uint32_t(dst_ptr<AddressType::LOCAL_L1>(dst, dst_args)), size_bytes, noc_id_);
  }
  template <auto... O, typename Src, typename Dst>
  void async_read_with_state(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                             const dst_args_t<Dst>& dst_args, uint8_t) const {
    async_read_with_state<O...>(src, dst, size_bytes, src_args, dst_args, NocOptVals{});
  }

  // ---- writes ----
  template <auto... O, typename Src, typename Dst>
  void async_write(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                   const dst_args_t<Dst>& dst_args, const NocOptVals& v = {}) const {
    if constexpr (opts<O...>().txn) ckernel::noc_async_write_set_trid(v.trid, noc_id_);
    ckernel::noc_async_write(uint32_t(src_ptr<AddressType::LOCAL_L1>(src, src_args)),
                             uint64_t(dst_ptr<AddressType::NOC>(dst, dst_args)), size_bytes, noc_id_);
  }
  template <auto... O, typename Src, typename Dst>
  void async_write(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                   const dst_args_t<Dst>& dst_args, uint32_t vc, uint32_t trid = INVALID_TXN_ID) const {
    async_write<O...>(src, dst, size_bytes, src_args, dst_args, NocOptVals{vc, trid == INVALID_TXN_ID ? 0 : trid});
  }
  template <auto... O, typename Src, typename Dst>
  void async_write_multicast(const Src& src, const Dst& dst, uint32_t size_bytes, uint32_t num_dsts,
                             const src_args_t<Src>& src_args, const dst_args_mcast_t<Dst>& dst_args,
                             bool linked = false, uint32_t = INVALID_TXN_ID) const {
    static_assert(!opts<O...>().txn, "Mcasts with transaction id are not supported");
    static_assert(!opts<O...>().posted, "Mcasts with posted transactions are not supported");
    uint32_t s = uint32_t(src_ptr<AddressType::LOCAL_L1>(src, src_args));
    uint64_t d = uint64_t(dst_ptr_mcast<AddressType::NOC>(dst, dst_args));
    if constexpr (opts<O...>().mcast_incl)
      ckernel::noc_async_write_multicast_loopback_src(s, d, size_bytes, num_dsts, linked, noc_id_);
    else
      ckernel::noc_async_write_multicast(s, d, size_bytes, num_dsts, linked, noc_id_);
  }
  template <auto... O, typename Dst>
  void set_async_write_state(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& dst_args,
                             const NocOptVals& = {}) const {
    static_assert(!opts<O...>().txn, "NocOptions::TXN_ID is not supported for set_async_write_state");
    ckernel::noc_async_write_one_packet_set_state(uint64_t(dst_ptr<AddressType::NOC>(dst, dst_args)), size_bytes,
                                                  noc_id_);
  }
  template <auto... O, typename Dst>
  void set_async_write_state(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& dst_args, uint8_t) const {
    set_async_write_state<O...>(dst, size_bytes, dst_args, NocOptVals{});
  }
  template <auto... O, typename Src, typename Dst>
  void async_write_with_state(const Src& src, const Dst& dst, uint32_t size_bytes, const src_args_t<Src>& src_args,
                              const dst_args_t<Dst>& dst_args, const NocOptVals& = {}) const {
    using namespace zyx_emu_detail;
    uint32_t b = bufsel(noc_id_, write_cmd_buf);
    ZYX_API.noc_write(uint32_t(src_ptr<AddressType::LOCAL_L1>(src, src_args)),
                      slot(kWriteHi + b) | uint32_t(dst_ptr<AddressType::NOC>(dst, dst_args)), size_bytes);
  }
  template <auto... O, typename Dst>
  void inline_dw_write(const Dst& dst, uint32_t val, const dst_args_t<Dst>& dst_args, uint8_t be = 0xF,
                       const NocOptVals& = {}) const {
    static_assert(!opts<O...>().txn, "TxnId is not supported for inline_dw_write");
    static_assert(!(opts<O...>().inline_l1 && opts<O...>().inline_reg), "INLINE_L1 and INLINE_REG are exclusive");
    ckernel::noc_inline_dw_write(uint64_t(dst_ptr<AddressType::NOC>(dst, dst_args)), val, be, noc_id_);
  }

  // ---- barriers (the options form is the transaction-id form with the
  // options' id) ----
  bool is_read_trid_flushed(uint32_t) const { return true; }
  template <auto... O>
  void async_read_barrier(const NocOptVals& v = {}) const {
    async_read_barrier<O...>(v.trid);
  }
  template <auto... O>
  void async_read_barrier(uint32_t trid) const {
    if constexpr (opts<O...>().txn)
      ckernel::noc_async_read_barrier_with_trid(trid, noc_id_);
    else
      ZYX_API.noc_barrier(ZYX_EMU_NOC_READS);
  }
  template <auto... O>
  void async_write_barrier(const NocOptVals& v = {}) const {
    async_write_barrier<O...>(v.trid);
  }
  template <auto... O>
  void async_write_barrier(uint32_t trid) const {
    if constexpr (opts<O...>().txn)
      ckernel::noc_async_write_barrier_with_trid(trid, noc_id_);
    else
      ZYX_API.noc_barrier(ZYX_EMU_NOC_WRITES);
  }
  template <auto... O>
  void async_writes_flushed(const NocOptVals& v = {}) const {
    async_writes_flushed<O...>(v.trid);
  }
  template <auto... O>
  void async_writes_flushed(uint32_t trid) const {
    if constexpr (opts<O...>().txn)
      ckernel::noc_async_write_flushed_with_trid(trid, noc_id_);
    else
      ZYX_API.noc_barrier(ZYX_EMU_NOC_WRITES);
  }
  void async_atomic_barrier() const {}
  void async_full_barrier() const { ZYX_API.noc_barrier(ZYX_EMU_NOC_READS | ZYX_EMU_NOC_WRITES); }

  // ---- zeroing ----
  // Zeroes size_bytes of a local destination (CircularBuffer, DataflowBuffer, …).
  template <typename Dst>
  void async_write_zeros(const Dst& dst, uint32_t size_bytes, const dst_args_t<Dst>& args = {}) const {
    uint32_t a = uint32_t(dst_ptr<AddressType::LOCAL_L1>(dst, args));
    std::memset(ZYX_API.l1_range(a, size_bytes, "Noc::async_write_zeros"), 0, size_bytes);
  }
  // Zeroes size_bytes of a page of a DRAM tensor from a zeroed scratch buffer
  // (read at its read pointer), as tt-metal does.
  template <typename DSpecT, typename Scratch>
  void async_write_zeros(const TensorAccessor<DSpecT>& accessor, uint32_t size_bytes,
                         const dst_args_t<TensorAccessor<DSpecT>>& args, const Scratch& scratch) const {
    uint32_t src = scratch.get_read_ptr();
    for (uint32_t done = 0; done < size_bytes;) {
      uint32_t n = size_bytes - done < NOC_MAX_BURST_SIZE ? size_bytes - done : NOC_MAX_BURST_SIZE;
      ZYX_API.noc_write(src, accessor.get_noc_addr(args.page_id, args.offset_bytes + done), n);
      done += n;
    }
  }
  void write_zeros_l1_barrier() const {}
  void write_zeros_dram_barrier() const {}

 private:
  uint8_t noc_id_;
};

// ---- endpoints ----
struct UnicastEndpoint {
  uint64_t get_noc_unicast_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc) const {
    return ckernel::get_noc_addr(noc_x, noc_y, addr, noc);
  }
};
struct MulticastEndpoint {
  uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end, uint32_t addr,
                                  uint8_t noc) const {
    return ckernel::get_noc_multicast_addr(x_start, y_start, x_end, y_end, addr, noc);
  }
};
enum class AllocatorBankType { L1, DRAM };
template <AllocatorBankType bank_type>
struct AllocatorBank {
  uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t addr, uint8_t noc) const {
    return ckernel::get_noc_addr_from_bank_id<bank_type == AllocatorBankType::DRAM>(bank_id, addr, noc);
  }
};

template <>
struct noc_traits_t<UnicastEndpoint> {
  struct src_args_type {
    uint32_t noc_x{}, noc_y{}, addr{};
  };
  struct dst_args_type {
    uint32_t noc_x{}, noc_y{}, addr{};
  };
  template <Noc::AddressType t>
  static auto src_addr(const UnicastEndpoint& e, const Noc& noc, const src_args_type& a) {
    if constexpr (t == Noc::AddressType::LOCAL_L1)
      return uint64_t(a.addr);
    else
      return e.get_noc_unicast_addr(a.noc_x, a.noc_y, a.addr, noc.get_noc_id());
  }
  template <Noc::AddressType t>
  static auto dst_addr(const UnicastEndpoint& e, const Noc& noc, const dst_args_type& a) {
    if constexpr (t == Noc::AddressType::LOCAL_L1)
      return uint64_t(a.addr);
    else
      return e.get_noc_unicast_addr(a.noc_x, a.noc_y, a.addr, noc.get_noc_id());
  }
};
template <>
struct noc_traits_t<MulticastEndpoint> {
  struct dst_args_mcast_type {
    uint32_t noc_x_start{}, noc_y_start{}, noc_x_end{}, noc_y_end{}, addr{};
  };
  template <Noc::AddressType t>
  static auto dst_addr_mcast(const MulticastEndpoint& e, const Noc& noc, const dst_args_mcast_type& a) {
    static_assert(t == Noc::AddressType::NOC);
    return e.get_noc_multicast_addr(a.noc_x_start, a.noc_y_start, a.noc_x_end, a.noc_y_end, a.addr, noc.get_noc_id());
  }
};
template <AllocatorBankType bank_type>
struct noc_traits_t<AllocatorBank<bank_type>> {
  struct src_args_type {
    uint32_t bank_id{}, addr{};
  };
  struct dst_args_type {
    uint32_t bank_id{}, addr{};
  };
  template <Noc::AddressType t>
  static auto src_addr(const AllocatorBank<bank_type>& b, const Noc& noc, const src_args_type& a) {
    static_assert(t == Noc::AddressType::NOC, "an allocator bank is a NOC address");
    return b.get_noc_addr_from_bank_id(a.bank_id, a.addr, noc.get_noc_id());
  }
  template <Noc::AddressType t>
  static auto dst_addr(const AllocatorBank<bank_type>& b, const Noc& noc, const dst_args_type& a) {
    static_assert(t == Noc::AddressType::NOC, "an allocator bank is a NOC address");
    return b.get_noc_addr_from_bank_id(a.bank_id, a.addr, noc.get_noc_id());
  }
};
// An accessor's pages as a NOC source or destination: a TensorAccessor, or
// the type-erased AbstractTensorAccessorWrapper over one.
template <typename A>
struct accessor_noc_traits {
  struct src_args_type {
    uint32_t page_id{};
    uint32_t offset_bytes = 0;
  };
  struct dst_args_type {
    uint32_t page_id{};
    uint32_t offset_bytes = 0;
  };
  template <Noc::AddressType t>
  static auto src_addr(const A& s, const Noc& noc, const src_args_type& a) {
    uint64_t addr = s.get_noc_addr(a.page_id, a.offset_bytes, noc.get_noc_id());
    if constexpr (t == Noc::AddressType::LOCAL_L1) {
      if (!noc.is_local_addr(addr)) ZYX_API.fail("TensorAccessor page used as local L1 is not on this core");
      return uint64_t(uint32_t(addr));
    } else {
      return addr;
    }
  }
  template <Noc::AddressType t>
  static auto dst_addr(const A& s, const Noc& noc, const dst_args_type& a) {
    return src_addr<t>(s, noc, src_args_type{a.page_id, a.offset_bytes});
  }
};
template <typename DSpec>
struct noc_traits_t<TensorAccessor<DSpec>> : accessor_noc_traits<TensorAccessor<DSpec>> {};
template <>
struct noc_traits_t<AbstractTensorAccessorWrapper> : accessor_noc_traits<AbstractTensorAccessorWrapper> {};

// ---- CircularBuffer (common.h) as a NOC endpoint ----
template <CircularBuffer::AddrSelector AddrSel>
struct CircularBufferView {
  const CircularBuffer& cb;
  explicit constexpr CircularBufferView(const CircularBuffer& c) : cb(c) {}
};
template <CircularBuffer::AddrSelector AddrSel>
constexpr auto use(const CircularBuffer& cb) {
  return CircularBufferView<AddrSel>(cb);
}

namespace zyx_emu_detail {
// Traits of a local L1 object that reads at rd() and writes at wr().
template <typename T, typename Rd, typename Wr>
struct LocalTraits {
  struct src_args_type {
    uint32_t offset_bytes{};
  };
  struct dst_args_type {
    uint32_t offset_bytes{};
  };
  struct dst_args_mcast_type {
    uint32_t noc_x_start{}, noc_y_start{}, noc_x_end{}, noc_y_end{}, offset_bytes{};
  };
  template <Noc::AddressType t>
  static auto src_addr(const T& s, const Noc&, const src_args_type& a) {
    static_assert(t == Noc::AddressType::LOCAL_L1, "this object is a local L1 source");
    return uint64_t(Rd{}(s) + a.offset_bytes);
  }
  template <Noc::AddressType t>
  static auto dst_addr(const T& d, const Noc&, const dst_args_type& a) {
    static_assert(t == Noc::AddressType::LOCAL_L1, "this object is a local L1 destination");
    return uint64_t(Wr{}(d) + a.offset_bytes);
  }
  template <Noc::AddressType t>
  static auto dst_addr_mcast(const T& d, const Noc& noc, const dst_args_mcast_type& a) {
    static_assert(t == Noc::AddressType::NOC, "a multicast destination is a NOC address");
    return ckernel::get_noc_multicast_addr(a.noc_x_start, a.noc_y_start, a.noc_x_end, a.noc_y_end,
                                           Wr{}(d) + a.offset_bytes, noc.get_noc_id());
  }
};
struct ReadPtr {
  template <typename T>
  uint32_t operator()(const T& t) const {
    return t.get_read_ptr();
  }
};
struct WritePtr {
  template <typename T>
  uint32_t operator()(const T& t) const {
    return t.get_write_ptr();
  }
};
template <CircularBuffer::AddrSelector S>
struct ViewPtr {
  uint32_t operator()(const CircularBufferView<S>& v) const {
    return S == CircularBuffer::AddrSelector::READ_PTR ? v.cb.get_read_ptr() : v.cb.get_write_ptr();
  }
};
}  // namespace zyx_emu_detail

template <>
struct noc_traits_t<CircularBuffer>
    : zyx_emu_detail::LocalTraits<CircularBuffer, zyx_emu_detail::ReadPtr, zyx_emu_detail::WritePtr> {};
template <CircularBuffer::AddrSelector S>
struct noc_traits_t<CircularBufferView<S>>
    : zyx_emu_detail::LocalTraits<CircularBufferView<S>, zyx_emu_detail::ViewPtr<S>, zyx_emu_detail::ViewPtr<S>> {};

// ---- CoreLocalMem: a typed pointer into this core's L1 ----
template <typename T, typename AddressType = uintptr_t>
class CoreLocalMem {
  using difference_type = std::ptrdiff_t;
  static_assert(std::is_integral<AddressType>::value && std::is_unsigned<AddressType>::value,
                "AddressType must be an unsigned integral type");

 public:
  CoreLocalMem(AddressType address) : address_(address) {}
  CoreLocalMem(T* ptr) : address_(reinterpret_cast<AddressType>(ptr)) {}
  CoreLocalMem(const CoreLocalMem&) = default;
  CoreLocalMem& operator=(const CoreLocalMem&) = default;
  T* get_unsafe_ptr() const { return reinterpret_cast<T*>(static_cast<uintptr_t>(address_)); }
  AddressType get_address() const { return address_; }
  // Element access is checked against this core's L1.
  T& operator[](uint32_t index) const { return *checked(address_ + index * sizeof(T)); }
  T& operator*() const { return *checked(address_); }
  T* operator->() const { return checked(address_); }
  CoreLocalMem& operator+=(difference_type n) {
    address_ += n * sizeof(T);
    return *this;
  }
  CoreLocalMem& operator-=(difference_type n) {
    address_ -= n * sizeof(T);
    return *this;
  }
  CoreLocalMem& operator++() {
    address_ += sizeof(T);
    return *this;
  }
  CoreLocalMem& operator--() {
    address_ -= sizeof(T);
    return *this;
  }
  CoreLocalMem operator++(int) {
    CoreLocalMem t = *this;
    ++*this;
    return t;
  }
  CoreLocalMem operator--(int) {
    CoreLocalMem t = *this;
    --*this;
    return t;
  }
  CoreLocalMem operator+(difference_type n) const { return CoreLocalMem(AddressType(address_ + n * sizeof(T))); }
  CoreLocalMem operator-(difference_type n) const { return CoreLocalMem(AddressType(address_ - n * sizeof(T))); }
  difference_type operator-(const CoreLocalMem& o) const {
    return (static_cast<difference_type>(address_) - static_cast<difference_type>(o.address_)) /
           static_cast<difference_type>(sizeof(T));
  }
  [[nodiscard]] auto scoped_lock(size_t = 1) {
    return Lock([] {});
  }
  bool operator==(const CoreLocalMem& o) const { return address_ == o.address_; }
  bool operator!=(const CoreLocalMem& o) const { return address_ != o.address_; }
  bool operator<(const CoreLocalMem& o) const { return address_ < o.address_; }
  bool operator<=(const CoreLocalMem& o) const { return address_ <= o.address_; }
  bool operator>(const CoreLocalMem& o) const { return address_ > o.address_; }
  bool operator>=(const CoreLocalMem& o) const { return address_ >= o.address_; }
  explicit operator bool() const { return address_ != 0; }

 private:
  static T* checked(uintptr_t a) {
    return static_cast<T*>(ZYX_API.l1_range(static_cast<uint32_t>(a), sizeof(T), "CoreLocalMem"));
  }
  AddressType address_;
};
template <typename T, typename A>
struct noc_traits_t<CoreLocalMem<T, A>> {
  struct src_args_type {
    A offset_bytes = 0;
  };
  struct dst_args_type {
    A offset_bytes = 0;
  };
  struct dst_args_mcast_type {};
  template <Noc::AddressType t>
  static auto src_addr(const CoreLocalMem<T, A>& m, const Noc&, const src_args_type& a) {
    static_assert(t == Noc::AddressType::LOCAL_L1, "CoreLocalMem can only be used as local L1 source");
    return uint64_t(m.get_address() + a.offset_bytes);
  }
  template <Noc::AddressType t>
  static auto dst_addr(const CoreLocalMem<T, A>& m, const Noc&, const dst_args_type& a) {
    static_assert(t == Noc::AddressType::LOCAL_L1, "CoreLocalMem can only be used as local L1 dest");
    return uint64_t(m.get_address() + a.offset_bytes);
  }
};

// ---- DataflowBuffer (Metal 2.0): on Wormhole and Blackhole a circular
// buffer; entries are its pages ----
struct DFBBindingToken {
  uint16_t id;
  constexpr explicit operator uint16_t() const { return id; }
};
struct DataflowBufferArgs {
  uint32_t offset_bytes{};
};
// DFBAccessor, a DataflowBuffer binding's accessor, is in zyx_emu/bindings.h.
template <bool IsWrite, typename ReleaseFunc>
class DfbScopedLock {
 public:
  DfbScopedLock(uint32_t pointer, ReleaseFunc release) : pointer_(pointer), release_(release) {}
  ~DfbScopedLock() { release_(); }
  DfbScopedLock(const DfbScopedLock&) = delete;
  DfbScopedLock& operator=(const DfbScopedLock&) = delete;
  template <typename T = uint32_t>
  [[nodiscard]] CoreLocalMem<std::conditional_t<IsWrite, T, const T>> get_ptr() const {
    return CoreLocalMem<std::conditional_t<IsWrite, T, const T>>(uintptr_t(pointer_));
  }

 private:
  uint32_t pointer_;
  ReleaseFunc release_;
};

class DataflowBuffer {
 public:
  using DFBInterface = LocalCBInterface;
  DataflowBuffer(DFBBindingToken token) : id_(static_cast<uint16_t>(token)) {}
  DataflowBuffer(DFBAccessor accessor) : id_(static_cast<uint16_t>(static_cast<uint32_t>(accessor))) {}
  DataflowBuffer(uint16_t logical_dfb_id) : id_(logical_dfb_id) {}
  uint16_t get_id() const { return id_; }
  uint32_t get_entry_size() const { return iface().fifo_page_size; }
  uint32_t get_stride_size() const { return iface().fifo_page_size; }
  uint32_t get_total_num_entries() const { return iface().fifo_num_pages; }
  uint32_t get_total_size_bytes() const { return iface().fifo_size; }
  uint32_t get_local_num_entries() const { return get_total_num_entries(); }
  uint32_t get_local_size_bytes() const { return get_total_size_bytes(); }
  uint32_t get_ring_span_bytes() const { return get_total_size_bytes(); }
  uint32_t get_ring_span_num_entries() const { return get_total_num_entries(); }
  void reserve_back(uint16_t n) { ckernel::cb_reserve_back(id_, n); }
  void push_back(uint16_t n) { ckernel::cb_push_back(id_, n); }
  void wait_front(uint16_t n) { ckernel::cb_wait_front(id_, n); }
  void pop_front(uint16_t n) { ckernel::cb_pop_front(id_, n); }
  bool pages_reservable_at_back(int32_t n) const { return ckernel::cb_pages_reservable_at_back(id_, n); }
  bool pages_available_at_front(int32_t n) const { return ckernel::cb_pages_available_at_front(id_, n); }
  uint32_t get_tile_size() const { return ckernel::get_tile_size(id_); }
  uint32_t get_tile_hw() const { return ckernel::get_tile_hw(id_); }
  uint32_t get_tile_num_faces() const { return ckernel::get_tile_num_faces(id_); }
  DataFormat get_dataformat() const { return ckernel::get_dataformat(id_); }
  void read_in() {}
  void write_out() {}
  void finish() {}
  void write_barrier(const Noc&) const {}
  uint32_t get_write_ptr() const { return ckernel::get_write_ptr(id_); }
  uint32_t get_read_ptr() const { return ckernel::get_read_ptr(id_); }
  // Entry t from the read pointer, and one of its 32-bit words (tt-metal
  // has them in compute kernels; here data-movement kernels have them too).
  uint32_t get_tile_address(uint32_t tile_index) const { return get_read_ptr() + tile_index * get_entry_size(); }
  uint32_t read_tile_value(uint32_t tile_index, uint32_t element_offset) const {
    uint32_t v;
    std::memcpy(&v, ZYX_API.l1_range(get_tile_address(tile_index) + 4 * element_offset, 4, "read_tile_value"), 4);
    return v;
  }
  // Moves the buffer's write or read pointer to another of its entries.
  void evil_set_write_ptr(uint32_t addr) { get_local_cb_interface(id_).fifo_wr_ptr = addr; }
  void evil_set_read_ptr(uint32_t addr) { get_local_cb_interface(id_).fifo_rd_ptr = addr; }
  [[nodiscard]] auto scoped_write_lock(uint16_t = 1) {
    auto f = [] {};
    return DfbScopedLock<true, decltype(f)>(get_write_ptr(), f);
  }
  [[nodiscard]] auto scoped_read_lock(uint16_t = 1) {
    auto f = [] {};
    return DfbScopedLock<false, decltype(f)>(get_read_ptr(), f);
  }
  [[nodiscard]] auto scoped_lock() {
    return Lock([] {});
  }

 private:
  LocalCBInterface& iface() const { return get_local_cb_interface(id_); }
  uint16_t id_;
};
template <>
struct noc_traits_t<DataflowBuffer>
    : zyx_emu_detail::LocalTraits<DataflowBuffer, zyx_emu_detail::ReadPtr, zyx_emu_detail::WritePtr> {};

// ---- Semaphore ----
template <ckernel::ProgrammableCoreType core_type = ckernel::ProgrammableCoreType::TENSIX>
class Semaphore {
 public:
  explicit Semaphore(uint32_t semaphore_id) : addr_(ckernel::get_semaphore<core_type>(semaphore_id)) {}
  // Adds value to this core's semaphore.
  void up(uint32_t value) { __atomic_fetch_add(word(), value, __ATOMIC_SEQ_CST); }
  // Atomically adds value to the semaphore of the core at (noc_x, noc_y).
  void up(const Noc& noc, uint32_t noc_x, uint32_t noc_y, uint32_t value, uint8_t vc = NOC_UNICAST_WRITE_VC) {
    ckernel::noc_semaphore_inc(ckernel::get_noc_addr(noc_x, noc_y, addr_), value, noc.get_noc_id(), vc);
  }
  // Waits until the semaphore is at least value, then takes value off it.
  void down(uint32_t value) {
    ckernel::noc_semaphore_wait_min(reinterpret_cast<volatile uint32_t*>(uintptr_t(addr_)), value);
    __atomic_fetch_sub(word(), value, __ATOMIC_SEQ_CST);
  }
  void wait(uint32_t value) { ckernel::noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(uintptr_t(addr_)), value); }
  void wait_min(uint32_t value) {
    ckernel::noc_semaphore_wait_min(reinterpret_cast<volatile uint32_t*>(uintptr_t(addr_)), value);
  }
  void set(uint32_t value) { ckernel::noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(uintptr_t(addr_)), value); }
  template <Noc::McastMode mcast_mode = Noc::McastMode::EXCLUDE_SRC>
  void set_multicast(const Noc& noc, uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                     uint32_t num_dests, bool linked = false) {
    uint64_t m = ckernel::get_noc_multicast_addr(x_start, y_start, x_end, y_end, addr_, noc.get_noc_id());
    if constexpr (mcast_mode == Noc::McastMode::INCLUDE_SRC)
      ckernel::noc_semaphore_set_multicast_loopback_src(addr_, m, num_dests, linked, noc.get_noc_id());
    else
      ckernel::noc_semaphore_set_multicast(addr_, m, num_dests, linked, noc.get_noc_id());
  }
  void inc_multicast(const Noc& noc, uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                     uint32_t value, uint32_t num_dests) {
    uint64_t m = ckernel::get_noc_multicast_addr(x_start, y_start, x_end, y_end, addr_, noc.get_noc_id());
    ckernel::noc_semaphore_inc_multicast(m, value, num_dests, noc.get_noc_id());
  }
  uint32_t get_address() const { return addr_; }

 private:
  uint32_t* word() const { return static_cast<uint32_t*>(ZYX_API.l1_range(addr_, 4, "Semaphore")); }
  uint32_t addr_;
};

// The experimental names of the same classes.
namespace experimental {
using ::AllocatorBank;
using ::AllocatorBankType;
using ::CircularBufferView;
using ::CoreLocalMem;
using ::DataflowBuffer;
using ::MulticastEndpoint;
using ::Noc;
using ::noc_traits_t;
using ::Semaphore;
using ::UnicastEndpoint;
using ::use;
}  // namespace experimental

// Page `id` of an interleaved DRAM or L1 buffer (dataflow_api_addrgen.h).
FORCE_INLINE uint64_t get_dram_noc_addr(uint32_t id, uint32_t page_size, uint32_t bank_base_address,
                                        uint32_t offset = 0, uint8_t = noc_index) {
  return ckernel::zyx_emu_detail_ag::interleaved(bank_base_address, page_size, id, offset, true);
}
FORCE_INLINE uint64_t get_l1_noc_addr(uint32_t id, uint32_t page_size, uint32_t bank_base_address, uint32_t offset = 0,
                                      uint8_t = noc_index) {
  return ckernel::zyx_emu_detail_ag::interleaved(bank_base_address, page_size, id, offset, false);
}
// The address generator for a page size: the power-of-two forms when it is one
// (the Fast form when a page fits one NOC burst), else InterleavedAddrGen.
template <bool DRAM, uint32_t page_size>
FORCE_INLINE auto get_interleaved_addr_gen(uint32_t base_addr) {
  static_assert(page_size > 0, "get_interleaved_addr_gen: page size 0");
  if constexpr ((page_size & (page_size - 1)) == 0) {
    constexpr uint32_t log2 = __builtin_ctz(page_size);
    if constexpr (page_size <= NOC_MAX_BURST_SIZE)
      return ckernel::InterleavedPow2AddrGenFast<DRAM>{.bank_base_address = base_addr, .log_base_2_of_page_size = log2};
    else
      return ckernel::InterleavedPow2AddrGen<DRAM>{.bank_base_address = base_addr, .log_base_2_of_page_size = log2};
  } else {
    return ckernel::InterleavedAddrGen<DRAM>{.bank_base_address = base_addr, .page_size = page_size};
  }
}
template <bool DRAM, bool is_size_pow2>
FORCE_INLINE auto get_interleaved_addr_gen(uint32_t base_addr, uint32_t page_size, uint32_t log2_page_size) {
  if constexpr (is_size_pow2)
    return ckernel::InterleavedPow2AddrGen<DRAM>{.bank_base_address = base_addr, .log_base_2_of_page_size = log2_page_size};
  else
    return ckernel::InterleavedAddrGen<DRAM>{.bank_base_address = base_addr, .page_size = page_size};
}
// As tt-metal's, the size is passed as both the page size and its log2.
template <bool DRAM, bool is_size_pow2>
FORCE_INLINE auto get_interleaved_addr_gen(uint32_t base_addr, uint32_t size) {
  return get_interleaved_addr_gen<DRAM, is_size_pow2>(base_addr, size, size);
}
// Spins (as a blocking wait) until the 32-bit word at addr equals val.
FORCE_INLINE void wait_for_sync_register_value(uintptr_t addr, int32_t val) {
  ZYX_API.wait_word(static_cast<uint32_t>(addr), static_cast<uint32_t>(val), 0);
}
