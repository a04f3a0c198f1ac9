// The rest of tt-metal's kernel debug API (api/debug/): DPRINT's type codes
// and its record decoder (debug_print), the typed register arrays, the tile
// printer's index helpers, the watcher's mailbox (waypoints, ring buffer,
// pause), NOC transfer logging and the timing-perturbation NOPs. The
// watcher's mailbox is per core in reserved L1 (ZYX_EMU_L1_DEBUG_OFFSET),
// cleared at each run; docs/emulator.md, "Debugging", says what each does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace zyx_emu_detail {
// The hardware thread (tt-metal's get_hw_thread_idx) of this section:
// riscv_0 0, riscv_1 1, the TRISCs 2-4. The single build of a compute
// kernel does the work of all three TRISCs: it answers for the first and
// hw_thread_count() says how many it stands for.
constexpr uint32_t hw_thread_first() {
#if defined(ZYX_EMU_TRISC)
  return ZYX_EMU_PROCESSOR == 2 ? 1 + ZYX_EMU_TRISC : ZYX_EMU_PROCESSOR;
#else
  return ZYX_EMU_PROCESSOR;
#endif
}
constexpr uint32_t hw_thread_count() {
#if defined(ZYX_EMU_TRISC)
  return 1;
#else
  return ZYX_EMU_PROCESSOR == 2 ? 3 : 1;
#endif
}
template <typename T>
inline volatile T* debug_mailbox(uint32_t offset, uint32_t bytes, const char* op) {
  return static_cast<volatile T*>(ZYX_API.l1_range(offset, bytes, op));
}
}  // namespace zyx_emu_detail

// ---- dprint.h: the type codes of DPRINT's buffer records ----
// tt-metal's hostdevcommon/dprint_common.h order.
enum DPrintTypeID : uint8_t {
  DPrintCSTR, DPrintENDL, DPrintSETW, DPrintUINT8, DPrintUINT16, DPrintUINT32, DPrintUINT64, DPrintINT8,
  DPrintINT16, DPrintINT32, DPrintINT64, DPrintFLOAT32, DPrintCHAR, DPrintBFLOAT16, DPrintSETPRECISION,
  DPrintFIXED, DPrintDEFAULTFLOAT, DPrintHEX, DPrintOCT, DPrintDEC, DPrintTILESLICE, DPrintU32_ARRAY,
  DPrintTYPED_U32_ARRAY, DPrintTypeID_Count,
};
// The subtypes of TYPED_U32_ARRAY.
enum TypedU32_ARRAY_Format {
  TypedU32_ARRAY_Format_INVALID,
  TypedU32_ARRAY_Format_Raw,
  TypedU32_ARRAY_Format_Tensix_Config_Register_Data_Format_Type,
  TypedU32_ARRAY_Format_COUNT,
};

// A string's size in the buffer: its characters and the terminating zero.
inline uint32_t DebugPrintStrLen(const char* val) { return static_cast<uint32_t>(std::strlen(val)) + 1; }

// The type code of each value DPRINT streams (the emulator's manipulator
// types stand for tt-metal's structs of the same names).
template <typename T>
uint8_t DebugPrintTypeToId();
#define ZYX_EMU_DPRINT_TYPE_ID(T, id) \
  template <>                         \
  inline uint8_t DebugPrintTypeToId<T>() { return id; }
ZYX_EMU_DPRINT_TYPE_ID(const char*, DPrintCSTR)
ZYX_EMU_DPRINT_TYPE_ID(char*, DPrintCSTR)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::Endl, DPrintENDL)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::SetW, DPrintSETW)
ZYX_EMU_DPRINT_TYPE_ID(uint8_t, DPrintUINT8)
ZYX_EMU_DPRINT_TYPE_ID(uint16_t, DPrintUINT16)
ZYX_EMU_DPRINT_TYPE_ID(unsigned, DPrintUINT32)
ZYX_EMU_DPRINT_TYPE_ID(unsigned long, sizeof(unsigned long) == 4 ? DPrintUINT32 : DPrintUINT64)
ZYX_EMU_DPRINT_TYPE_ID(unsigned long long, DPrintUINT64)
ZYX_EMU_DPRINT_TYPE_ID(int8_t, DPrintINT8)
ZYX_EMU_DPRINT_TYPE_ID(int16_t, DPrintINT16)
ZYX_EMU_DPRINT_TYPE_ID(int, DPrintINT32)
ZYX_EMU_DPRINT_TYPE_ID(long, sizeof(long) == 4 ? DPrintINT32 : DPrintINT64)
ZYX_EMU_DPRINT_TYPE_ID(long long, DPrintINT64)
ZYX_EMU_DPRINT_TYPE_ID(float, DPrintFLOAT32)
ZYX_EMU_DPRINT_TYPE_ID(char, DPrintCHAR)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::Bf16Value, DPrintBFLOAT16)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::SetPrecision, DPrintSETPRECISION)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::Fixed, DPrintFIXED)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::DefaultFloat, DPrintDEFAULTFLOAT)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::Hex, DPrintHEX)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::Oct, DPrintOCT)
ZYX_EMU_DPRINT_TYPE_ID(zyx_emu_detail::Dec, DPrintDEC)
ZYX_EMU_DPRINT_TYPE_ID(TileSlice, DPrintTILESLICE)
ZYX_EMU_DPRINT_TYPE_ID(U32_ARRAY, DPrintU32_ARRAY)
ZYX_EMU_DPRINT_TYPE_ID(TYPED_U32_ARRAY, DPrintTYPED_U32_ARRAY)
#undef ZYX_EMU_DPRINT_TYPE_ID

// The payload size of a value in DPRINT's buffer.
template <typename T>
uint32_t DebugPrintTypeToSize(T) {
  return sizeof(T);
}
template <>
inline uint32_t DebugPrintTypeToSize<U32_ARRAY>(U32_ARRAY val) {
  return val.len * sizeof(uint32_t);
}
template <>
inline uint32_t DebugPrintTypeToSize<TYPED_U32_ARRAY>(TYPED_U32_ARRAY val) {
  return val.len * sizeof(uint32_t);
}
template <>
inline uint32_t DebugPrintTypeToSize<const char*>(const char* val) {
  return DebugPrintStrLen(val);
}
template <>
inline uint32_t DebugPrintTypeToSize<char*>(char* val) {
  return DebugPrintStrLen(val);
}

// One record of DPRINT's buffer: its size, payload and type code.
struct DebugPrintData {
  uint32_t sz;
  const uint8_t* data_ptr;
  uint8_t type_id;
};
using DebugPrinter = zyx_emu_detail::Printer;

namespace zyx_emu_detail {
// An fp16 value's bits (the low 16 of `bits`), widened to float.
inline float fp16_bits_to_float(uint32_t bits) {
  _Float16 h;
  uint16_t b = static_cast<uint16_t>(bits);
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}
// One word of a register dump, as tt-metal's print server decodes a
// TYPED_U32_ARRAY of data_format values: each datum the word holds, then a
// space.
inline void print_register_datum(Printer& p, uint32_t w, uint32_t data_format) {
  switch (data_format) {
    case 1: case 2: case 3: case 11: case 10:  // Float16 and the exponent-A formats
      p << fp16_bits_to_float(w & 0xffff) << ' ' << fp16_bits_to_float(w >> 16) << ' ';
      break;
    case 5: case 6: case 7: case 15:  // Float16_b and the exponent-B formats
      p << bf16_bits_to_float(static_cast<uint16_t>(w)) << ' ' << bf16_bits_to_float(static_cast<uint16_t>(w >> 16))
        << ' ';
      break;
    case 0: {  // Float32
      float f;
      std::memcpy(&f, &w, 4);
      p << f << ' ';
      break;
    }
    case 24: p << w << ' '; break;                                        // UInt32
    case 9: p << (w & 0xffff) << ' ' << (w >> 16) << ' '; break;          // UInt16
    case 8: p << static_cast<int32_t>(w) << ' '; break;                   // Int32
    case 14:                                                              // Int8
      for (int b = 0; b < 4; b++) p << static_cast<int>(static_cast<int8_t>(w >> (8 * b))) << ' ';
      break;
    case 30:  // UInt8
      for (int b = 0; b < 4; b++) p << ((w >> (8 * b)) & 0xff) << ' ';
      break;
    default: p << "Unknown data format " << data_format << ' '; break;
  }
}
template <typename T>
inline T record_value(const DebugPrintData& d) {
  T v{};
  std::memcpy(&v, d.data_ptr, sizeof(T) < d.sz ? sizeof(T) : d.sz);
  return v;
}
}  // namespace zyx_emu_detail

// Appends one record to the printer as tt-metal's print server decodes it
// from the buffer: strings, integers, floats, manipulators and word arrays.
// A TILESLICE record (a card's serialized slice) has no meaning here.
inline void debug_print(DebugPrinter& dp, DebugPrintData data) {
  using zyx_emu_detail::record_value;
  switch (data.type_id) {
    case DPrintCSTR: dp << reinterpret_cast<const char*>(data.data_ptr); break;
    case DPrintENDL: dp << ENDL(); break;
    case DPrintSETW: dp << SETW(record_value<int8_t>(data)); break;
    case DPrintUINT8: dp << static_cast<uint32_t>(record_value<uint8_t>(data)); break;
    case DPrintUINT16: dp << record_value<uint16_t>(data); break;
    case DPrintUINT32: dp << record_value<uint32_t>(data); break;
    case DPrintUINT64: dp << record_value<uint64_t>(data); break;
    case DPrintINT8: dp << static_cast<int32_t>(record_value<int8_t>(data)); break;
    case DPrintINT16: dp << record_value<int16_t>(data); break;
    case DPrintINT32: dp << record_value<int32_t>(data); break;
    case DPrintINT64: dp << record_value<int64_t>(data); break;
    case DPrintFLOAT32: dp << record_value<float>(data); break;
    case DPrintCHAR: dp << record_value<char>(data); break;
    case DPrintBFLOAT16: dp << BF16(record_value<uint16_t>(data)); break;
    case DPrintSETPRECISION: dp << SETPRECISION(record_value<int8_t>(data)); break;
    case DPrintFIXED: dp << FIXED(); break;
    case DPrintDEFAULTFLOAT: dp << DEFAULTFLOAT(); break;
    case DPrintHEX: dp << HEX(); break;
    case DPrintOCT: dp << OCT(); break;
    case DPrintDEC: dp << DEC(); break;
    case DPrintU32_ARRAY:
    case DPrintTYPED_U32_ARRAY: {
      // The typed form's last word is its type, not data.
      uint32_t n = data.sz / 4 - (data.type_id == DPrintTYPED_U32_ARRAY ? 1 : 0);
      for (uint32_t i = 0; i < n; i++) {
        uint32_t w;
        std::memcpy(&w, data.data_ptr + 4 * i, 4);
        if (i) dp << ' ';
        dp << w;
      }
      break;
    }
    default: dp << "<debug_print: type " << static_cast<uint32_t>(data.type_id) << " not decodable>"; break;
  }
}

// ---- dprint_tensix.h: a register dump's words, decoded by data format ----
// What the print server prints for the TYPED_U32_ARRAY tt-metal's row dumps
// send: each word's data in the format, then the line's end.
template <int count>
inline void dprint_array_with_data_type(uint32_t data_format, uint32_t* data) {
  DebugPrinter p;
  for (int i = 0; i < count; i++) zyx_emu_detail::print_register_datum(p, data[i], data_format);
  p << ENDL();
}

// ---- dprint_tile.h: the tile printer's view of a CB ----
struct tile_info_t {
  uint32_t tile_dim_r;
  uint32_t tile_dim_c;
  uint32_t tile_size;
  uint32_t face_dim_r;
  uint32_t face_dim_c;
  uint32_t num_faces;
  uint32_t cb_ptr;
  uint8_t data_format;
};
// Datum idx of packed data: 2-bit and 4-bit block-float mantissas share a
// byte (low first), every other format is read a byte at a time.
inline uint8_t get_datum(DataFormat data_format, volatile uint8_t* data, uint32_t idx) {
  switch (data_format) {
    case DataFormat::Bfp2: case DataFormat::Bfp2_b: return (data[idx / 4] >> ((idx % 4) * 2)) & 0x3;
    case DataFormat::Bfp4: case DataFormat::Bfp4_b: return (data[idx / 2] >> ((idx % 2) * 4)) & 0xf;
    default: return data[idx];
  }
}
// A CB's tile shape, format and pointer as the tile printer reads them: in a
// compute kernel the read pointer (the unpacker's view); in a data-movement
// kernel the pointer ptr_type picks (the format is the CB's either way: the
// emulator gives a CB one format for its producer and its consumer).
inline tile_info_t get_tile_info(uint8_t cb, dprint_tslice_cb_t cb_type = TSLICE_INPUT_CB,
                                 dprint_tslice_ptr_t ptr_type = TSLICE_RD_PTR) {
  (void)cb_type;
  tile_info_t info{};
  uint32_t rows = 32, cols = 32, faces = 4;
  ZYX_API.tile_shape(cb, &rows, &cols, &faces);
  info.tile_dim_r = rows;
  info.tile_dim_c = cols;
  info.num_faces = faces;
  info.face_dim_r = rows < 16 ? rows : 16;
  info.face_dim_c = rows * cols / faces / info.face_dim_r;
  info.tile_size = ZYX_API.cb_page_size(cb);
  info.data_format = static_cast<uint8_t>(ZYX_API.cb_format(cb));
  info.cb_ptr = ptr_type == TSLICE_WR_PTR ? ZYX_API.cb_write_ptr(cb) : ZYX_API.cb_read_ptr(cb);
  return info;
}
namespace zyx_emu_detail {
// The face a tile element is in, and its row and column in the face.
struct FacePosition {
  uint32_t face, row, col;
};
inline FacePosition face_position(const tile_info_t& t, uint32_t h, uint32_t w) {
  uint32_t faces_per_row = t.tile_dim_c / t.face_dim_c;
  return {(h / t.face_dim_r) * faces_per_row + w / t.face_dim_c, h % t.face_dim_r, w % t.face_dim_c};
}
}  // namespace zyx_emu_detail
// Where element (h, w) of a tile lies: in a tiled tile (untilize true) face
// by face, row-major within each face; else row-major over the tile.
inline uint32_t TileSlice::get_data_index(tile_info_t& tile_info, uint32_t h, uint32_t w, bool untilize) {
  if (!untilize) return w + h * tile_info.tile_dim_r;
  auto p = zyx_emu_detail::face_position(tile_info, h, w);
  return p.face * tile_info.face_dim_r * tile_info.face_dim_c + p.row * tile_info.face_dim_c + p.col;
}
// The shared exponent of element (h, w) of a block-float tile: one per face
// row in a tiled tile, one per face_dim_c elements in row-major order else.
inline uint32_t TileSlice::get_exponent_index(tile_info_t& tile_info, uint32_t h, uint32_t w, bool untilize) {
  if (!untilize) return (w + h * tile_info.tile_dim_r) / tile_info.face_dim_c;
  auto p = zyx_emu_detail::face_position(tile_info, h, w);
  return p.face * tile_info.face_dim_r + p.row;
}

// ---- the watcher's mailbox ----
// waypoint.h: a waypoint name of up to 4 characters as one word, the first
// character lowest.
template <size_t N, size_t... Is>
constexpr uint32_t fold(const char (&s)[N], std::index_sequence<Is...>) {
  static_assert(sizeof...(Is) <= 4, "Up to 4 characters allowed in WATCHER_WAYPOINT");
  return (0u | ... | (static_cast<uint32_t>(static_cast<uint8_t>(s[Is])) << (8 * Is)));
}
template <size_t N>
constexpr uint32_t helper(const char (&s)[N]) {
  return fold(s, std::make_index_sequence<N - 1>{});
}
// The emulator's waypoint mailbox: a word per hardware thread.
#define WATCHER_WAYPOINT_MAILBOX                                                                               \
  (::zyx_emu_detail::debug_mailbox<uint32_t>(ZYX_EMU_L1_WAYPOINT_OFFSET, 5 * sizeof(uint32_t), "waypoint"))
// Stores waypoint x in this processor's slot of the mailbox (each thread
// the single compute build stands for) and records it as WAYPOINT does,
// so deadlock reports name it.
template <uint32_t x>
inline void write_debug_waypoint(volatile uint32_t* debug_waypoint) {
  constexpr uint32_t first = zyx_emu_detail::hw_thread_first(), n = zyx_emu_detail::hw_thread_count();
  for (uint32_t i = 0; i < n; i++) debug_waypoint[first + i] = x;
  static constexpr char name[5] = {static_cast<char>(x & 0xff), static_cast<char>((x >> 8) & 0xff),
                                   static_cast<char>((x >> 16) & 0xff), static_cast<char>(x >> 24), 0};
  ZYX_API.waypoint(name);
}

// ring_buffer.h: the watcher's ring buffer of the core (32 words; the index
// starts at -1, wraps to the start and then sets `wrapped`).
constexpr static int16_t DEBUG_RING_BUFFER_STARTING_INDEX = -1;
constexpr static int DEBUG_RING_BUFFER_ELEMENTS = ZYX_EMU_RING_BUFFER_ELEMENTS;
struct debug_ring_buf_msg_t {
  int16_t current_ptr;
  uint16_t wrapped;
  uint32_t data[DEBUG_RING_BUFFER_ELEMENTS];
};
inline void push_to_ring_buffer(uint32_t val) {
  auto* buf = zyx_emu_detail::debug_mailbox<debug_ring_buf_msg_t>(ZYX_EMU_L1_RING_BUFFER_OFFSET,
                                                                  sizeof(debug_ring_buf_msg_t), "push_to_ring_buffer");
  if (buf->current_ptr >= DEBUG_RING_BUFFER_ELEMENTS - 1) {
    buf->current_ptr = DEBUG_RING_BUFFER_STARTING_INDEX;
    buf->wrapped = 1;
  }
  buf->current_ptr = static_cast<int16_t>(buf->current_ptr + 1);
  buf->data[buf->current_ptr] = val;
}

// pause.h: raises this processor's pause flag and waits for the host to
// clear it. The emulator's host does not stop for input: it clears the
// flag at once, so the kernel passes waypoints PASW and PASD and goes on.
inline void watcher_pause() {
  auto* flags = zyx_emu_detail::debug_mailbox<uint8_t>(ZYX_EMU_L1_PAUSE_OFFSET, 5, "watcher_pause");
  constexpr uint32_t first = zyx_emu_detail::hw_thread_first(), n = zyx_emu_detail::hw_thread_count();
  for (uint32_t i = 0; i < n; i++) flags[first + i] = 1;
  write_debug_waypoint<helper("PASW")>(WATCHER_WAYPOINT_MAILBOX);
  for (uint32_t i = 0; i < n; i++) flags[first + i] = 0;  // the host's resume
  write_debug_waypoint<helper("PASD")>(WATCHER_WAYPOINT_MAILBOX);
}

// noc_logging.h: counts a NOC transfer of len bytes in the core's histogram
// of transfer sizes (word k counts the lengths whose highest set bit is k).
inline void log_noc_xfer(uint32_t len) {
  auto* buckets = zyx_emu_detail::debug_mailbox<uint32_t>(ZYX_EMU_L1_NOC_LOG_OFFSET, 32 * 4, "log_noc_xfer");
  int highest = 0;
  while (len >>= 1) highest++;
  buckets[highest] = buckets[highest] + 1;
}
#if defined(NOC_LOGGING_ENABLED) && !defined(SKIP_NOC_LOGGING)
#define LOG_LEN(l) log_noc_xfer(l);
#else
#define LOG_LEN(l)
#endif

// dprint.h: an ethernet core's switch to its base firmware. The emulator has
// no ethernet cores and no base firmware: the call returns at once.
namespace internal_ {
inline void risc_context_switch(bool = false) {}
}  // namespace internal_

// ---- timing_perturbation.h ----
namespace tt::compute::common {
// num_nops Tensix or RISC-V NOPs. The emulator keeps no instruction timing
// (kernels run as fibers, not in cycles), so NOPs change nothing here.
template <const int num_nops, const int is_riscv_nop, const int use_loop = 0>
inline void add_nops() {
  static_assert(num_nops >= 0, "add_nops: a count of NOPs");
}
// Prints the NOP counts as tt-metal's does, then "inserts" them (see add_nops).
template <const int num_unpack_nops, const int num_math_nops, const int num_pack_nops, const int is_riscv_nop,
          const int use_loop = 0>
inline void add_compute_nops() {
  DPRINT << "is_riscv_nop: " << (uint32_t)is_riscv_nop << " Unpack NOPs: " << (uint32_t)num_unpack_nops
         << " Math NOPs: " << (uint32_t)num_math_nops << " Pack NOPs: " << (uint32_t)num_pack_nops << ENDL();
  add_nops<num_unpack_nops, is_riscv_nop, use_loop>();
  add_nops<num_math_nops, is_riscv_nop, use_loop>();
  add_nops<num_pack_nops, is_riscv_nop, use_loop>();
}
}  // namespace tt::compute::common

// ---- dprint_pages.h ----
namespace tt::data_movement::common {
inline void print_u32_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
  const uint32_t* p = zyx_detail::l1_elems<uint32_t>(l1_addr, elts_per_page, npages, start, "print_u32_pages");
  for (uint32_t page = 0; page < npages; page++) {
    auto d = DPRINT;
    d << start + page << ": ";
    for (uint32_t j = 0; j < elts_per_page; j++) d << p[(start + page) * elts_per_page + j] << " ";
    d << ENDL();
  }
}
}  // namespace tt::data_movement::common

// ---- dprint_tensix.h: DST rows as the register dumps read them ----
namespace zyx_emu_detail {
// The 16 values of logical DST row `row` (row 64 t + 16 face + r is row r
// of face `face` of tile t), as the emulator's DST holds them: float32 bits,
// or the integers of an integer tile.
inline const uint32_t* dst_row_values(uint16_t row) {
  uint32_t is_int = 0;
  const uint32_t* tile = ZYX_API.dst_tile(row / 64u, &is_int);
  return tile + (row % 64u) * 16u;
}
// A DST value as the 16-bit datum a row read gives in a 16-bit DST format:
// bf16 (the float's high half: DST in that format holds bf16 values), fp16,
// or the low bits of an integer (uint16; the 8-bit formats in the low byte).
inline uint32_t dst_datum16(uint32_t v, uint32_t data_format) {
  switch (data_format) {
    case 1: {
      float f;
      std::memcpy(&f, &v, 4);
      _Float16 h = static_cast<_Float16>(f);
      uint16_t b;
      std::memcpy(&b, &h, 2);
      return b;
    }
    case 9: return v & 0xffffu;
    case 14: case 30: return v & 0xffu;
    default: return v >> 16;
  }
}
// A row read of a 16-bit DST format: 8 words, two columns each, the even
// column in the low half; printed as tt-metal's server decodes them.
inline void print_dst_row16(uint32_t data_format, uint16_t row) {
  const uint32_t* v = dst_row_values(row);
  uint32_t words[8];
  for (int i = 0; i < 8; i++)
    words[i] = dst_datum16(v[2 * i], data_format) | (dst_datum16(v[2 * i + 1], data_format) << 16);
  dprint_array_with_data_type<8>(data_format, words);
}
}  // namespace zyx_emu_detail
inline void dprint_tensix_dest_reg_row_float16(uint32_t data_format, uint16_t row) {
  zyx_emu_detail::print_dst_row16(data_format, row);
}
inline void dprint_tensix_dest_reg_row_uint16(uint32_t data_format, uint16_t row) {
  zyx_emu_detail::print_dst_row16(data_format, row);
}
inline void dprint_tensix_dest_reg_row_uint8(uint32_t data_format, uint16_t row) {
  zyx_emu_detail::print_dst_row16(data_format, row);
}
inline void dprint_tensix_dest_reg_row_int8(uint32_t data_format, uint16_t row) {
  zyx_emu_detail::print_dst_row16(data_format, row);
}
// A 32-bit DST row: 16 float32 values. (Wormhole reads each value as two
// 16-bit halves and joins them; the value is the same.)
inline void dprint_tensix_dest_reg_row_float32(uint16_t row) {
  uint32_t words[16];
  std::memcpy(words, zyx_emu_detail::dst_row_values(row), sizeof words);
  dprint_array_with_data_type<16>(0, words);
}
// 16 int32 values on Blackhole; Wormhole's dump cannot read them.
inline void dprint_tensix_dest_reg_row_int32(uint16_t row) {
#if defined(ARCH_BLACKHOLE)
  uint32_t words[16];
  std::memcpy(words, zyx_emu_detail::dst_row_values(row), sizeof words);
  dprint_array_with_data_type<16>(8, words);
#else
  (void)row;
  DPRINT << "Int32 format not supported on this architecture" << ENDL();
#endif
}

// ---- checkpoint.h: a barrier of the core's processors, with a CB dump ----
// The state in the core's mailbox: the epoch, the processors taking part
// (bit i: hardware thread i), the one that releases the others, and each
// one's arrival epoch.
struct debug_checkpoint_state_t {
  volatile uint32_t proceed;
  volatile uint32_t participant_mask;
  volatile uint32_t orchestrator_idx;
  volatile uint32_t arrived[5];
};
static_assert(sizeof(debug_checkpoint_state_t) == 32, "the checkpoint slot of the debug mailbox");
constexpr uint32_t DEBUG_CHECKPOINT_MAX_RISCS = 5;
namespace zyx_emu_detail {
inline volatile debug_checkpoint_state_t* checkpoint_state() {
  return static_cast<volatile debug_checkpoint_state_t*>(
      ZYX_API.l1_range(ZYX_EMU_L1_CHECKPOINT_OFFSET, sizeof(debug_checkpoint_state_t), "debug_checkpoint"));
}
// DST tile 0, its 64 rows in DST's format: Float32 with 32-bit DST, Int32
// for an integer tile, else Float16_b (the formats a checkpoint can dump).
inline void checkpoint_dump_dest(const char* name) {
  DPRINT << "=== CKPT " << name << " dest regs ===" << ENDL();
  uint32_t is_int = 0;
  ZYX_API.dst_tile(0, &is_int);
  for (uint16_t row = 0; row < 64; row++) {
    if (ZYX_API.fp32_dest_acc()) dprint_tensix_dest_reg_row_float32(row);
    else if (is_int) dprint_tensix_dest_reg_row_int32(row);
    else dprint_tensix_dest_reg_row_float16(5, row);
  }
}
}  // namespace zyx_emu_detail
// The processors that take part (bit i: hardware thread i, 0 riscv_0, 1
// riscv_1, 2-4 the TRISCs); the lowest releases the others. On a card the
// firmware calls it before the kernels start; here a kernel does, before
// any processor of the core reaches a checkpoint.
inline void debug_checkpoint_init(uint32_t enables) {
  auto* s = zyx_emu_detail::checkpoint_state();
  uint32_t mask = enables & ((1u << DEBUG_CHECKPOINT_MAX_RISCS) - 1u);
  s->participant_mask = mask;
  s->proceed = 0;
  for (uint32_t i = 0; i < DEBUG_CHECKPOINT_MAX_RISCS; i++) s->arrived[i] = 0;
  uint32_t orch = 0;
  while (orch < DEBUG_CHECKPOINT_MAX_RISCS && !(mask & (1u << orch))) orch++;
  s->orchestrator_idx = orch;
}
// Every taking part processor waits here until all have arrived. Waiting is
// the emulator's blocking wait, so a processor that never arrives shows as
// a deadlock naming this call.
inline void debug_checkpoint_barrier() {
  auto* s = zyx_emu_detail::checkpoint_state();
  const uint32_t mask = s->participant_mask, orch = s->orchestrator_idx;
  if (mask == 0) ZYX_API.fail("debug_checkpoint_barrier: no processor takes part (call debug_checkpoint_init first)");
  const uint32_t epoch = s->proceed, next = epoch + 1;
  constexpr uint32_t first = zyx_emu_detail::hw_thread_first(), n = zyx_emu_detail::hw_thread_count();
  for (uint32_t i = first; i < first + n; i++) s->arrived[i] = next;
  if (orch >= first && orch < first + n) {
    const uint32_t base = ZYX_EMU_L1_CHECKPOINT_OFFSET + offsetof(debug_checkpoint_state_t, arrived);
    for (uint32_t i = 0; i < DEBUG_CHECKPOINT_MAX_RISCS; i++)
      if (mask & (1u << i)) ZYX_API.wait_word(base + 4 * i, next, 0);
    s->proceed = next;
  } else {
    ZYX_API.wait_word(ZYX_EMU_L1_CHECKPOINT_OFFSET + offsetof(debug_checkpoint_state_t, proceed), epoch, 2);
  }
}
// The dump between a checkpoint's two barriers. Data-movement kernels and
// the compute kernel's unpack and pack threads print each configured CB of
// the first num_cbs (all when 0): "CB<n> sz= rd= wr= ack= rcv=" and
// words_per_cb words at its read pointer, four a line; the math thread, when
// dump_dest, prints DST tile 0 row by row in DST's format. The single build
// of a compute kernel prints the CBs once (as RISC2) and, when dump_dest,
// DST.
template <uint8_t num_cbs = 0, uint16_t words_per_cb = 0, bool dump_dest = false>
inline void debug_checkpoint_dump_cbs_impl(const char* name) {
  constexpr uint32_t idx = zyx_emu_detail::hw_thread_first();
  constexpr bool math_here = ZYX_EMU_PROCESSOR == 2 && (zyx_emu_detail::hw_thread_count() == 3 || idx == 3);
  constexpr bool cbs_here = !(ZYX_EMU_PROCESSOR == 2 && zyx_emu_detail::hw_thread_count() == 1 && idx == 3);
  if constexpr (math_here && dump_dest) zyx_emu_detail::checkpoint_dump_dest(name);
  if constexpr (cbs_here) {
    DPRINT << "=== CKPT " << name << " RISC" << idx << " CBs ===" << ENDL();
    constexpr uint32_t max_cb = num_cbs == 0 ? NUM_CIRCULAR_BUFFERS : num_cbs;
    for (uint32_t cb = 0; cb < max_cb && cb < unpack_src_format.size(); cb++) {
      // A CB the program does not configure has no interface here (on a
      // card its size reads 0): the kernel's format table marks it 0xff.
      if (unpack_src_format[cb] == 0xff) continue;
      const LocalCBInterface& c = get_local_cb_interface(cb);
      if (c.fifo_size == 0) continue;
      DPRINT << "CB" << cb << " sz=" << c.fifo_size << " rd=" << c.fifo_rd_ptr << " wr=" << c.fifo_wr_ptr
             << " ack=" << c.tiles_acked << " rcv=" << c.tiles_received << ENDL();
      if constexpr (words_per_cb > 0) {
        const auto* data = static_cast<const uint32_t*>(ZYX_API.l1_range(c.fifo_rd_ptr, 4u * words_per_cb, name));
        for (uint16_t w = 0; w < words_per_cb; w += 4) {
          DebugPrinter line;
          line << "  [" << w << "] ";
          for (uint16_t j = w; j < words_per_cb && j < w + 4; j++) line << HEX() << data[j] << " ";
          line << DEC() << ENDL();
        }
      }
    }
  }
}
#if defined(DEBUG_CHECKPOINT_ENABLED)
#undef DEBUG_CHECKPOINT
#undef DEBUG_CHECKPOINT_EX
#define DEBUG_CHECKPOINT(name)                  \
  do {                                          \
    WAYPOINT("CKW");                            \
    debug_checkpoint_barrier();                 \
    debug_checkpoint_dump_cbs_impl<>(name);     \
    debug_checkpoint_barrier();                 \
    WAYPOINT("CKD");                            \
  } while (0)
#define DEBUG_CHECKPOINT_EX(name, num_cbs, words_per_cb, dump_dest)             \
  do {                                                                          \
    WAYPOINT("CKW");                                                            \
    debug_checkpoint_barrier();                                                 \
    debug_checkpoint_dump_cbs_impl<num_cbs, words_per_cb, dump_dest>(name);     \
    debug_checkpoint_barrier();                                                 \
    WAYPOINT("CKD");                                                            \
  } while (0)
#endif

// ---- dprint_tensix_unpack.h: the unpackers' registers, as modelled ----
// The emulator keeps no configuration registers. The compute calls that
// program the unpackers (compute_kernel_hw_startup, *_op_init_common,
// init_sfpu, the reconfig calls) note their CBs in the core's mailbox; the
// dumps print the registers as tt-llk's Wormhole configure_unpack_AB
// programs them for those CBs (docs/emulator.md says which field comes
// from what). Before any such call the registers read as at reset: zero.
namespace zyx_emu_detail {
struct ConfiguredOperands {
  uint8_t srca, srcb, pack, reserved;  // CB index + 1; 0: not configured yet
};
inline volatile ConfiguredOperands* configured_operands() {
  return debug_mailbox<ConfiguredOperands>(ZYX_EMU_L1_OPERANDS_OFFSET, sizeof(ConfiguredOperands), "operands");
}
// A negative CB leaves that operand as it is.
inline void note_operands(int32_t srca, int32_t srcb, int32_t pack) {
  auto* o = configured_operands();
  if (srca >= 0) o->srca = static_cast<uint8_t>(srca + 1);
  if (srcb >= 0) o->srcb = static_cast<uint8_t>(srcb + 1);
  if (pack >= 0) o->pack = static_cast<uint8_t>(pack + 1);
}
// The CB unpacker u (0: source A, 1: source B) was configured for, or -1.
inline int32_t unpacker_cb(uint32_t u) {
  const auto* o = configured_operands();
  return static_cast<int32_t>(u == 0 ? o->srca : o->srcb) - 1;
}
// tt-metal prints the unpacker dumps from the unpack thread only.
constexpr bool on_unpack_thread() {
#if defined(ZYX_EMU_TRISC)
  return ZYX_EMU_PROCESSOR == 2 && ZYX_EMU_TRISC == 1;
#else
  return ZYX_EMU_PROCESSOR == 2;
#endif
}
constexpr uint32_t kNumUnpackers = 2;
// tt-llk's tile descriptor for unpacker u: the CB's L1 format, uncompressed,
// y 1, z the tile's faces; unpacker B's x is a face's datums (A's is set per
// context elsewhere and reads 0 here).
inline ckernel::unpacker::unpack_tile_descriptor_t modelled_tile_descriptor(uint32_t u) {
  ckernel::unpacker::unpack_tile_descriptor_t d{};
  int32_t cb = unpacker_cb(u);
  if (cb < 0) return d;
  uint32_t rows = 32, cols = 32, faces = 4;
  ZYX_API.tile_shape(static_cast<uint32_t>(cb), &rows, &cols, &faces);
  d.in_data_format = static_cast<uint32_t>(unpack_src_format[cb]) & 0xf;
  d.uncompressed = 1;
  d.x_dim = u == 0 ? 0 : (rows < 16 ? rows : 16) * 16;
  d.y_dim = 1;
  d.z_dim = faces;
  return d;
}
// tt-llk's unpacker configuration: the CB's register format (the kernel's
// unpack_dst_format table), throttle mode 2, every context uncompressed.
inline ckernel::unpacker::unpack_config_t modelled_unpack_config(uint32_t u) {
  ckernel::unpacker::unpack_config_t c{};
  int32_t cb = unpacker_cb(u);
  if (cb < 0) return c;
  c.out_data_format = static_cast<uint32_t>(unpack_dst_format[cb]) & 0xf;
  c.throttle_mode = 2;
  c.uncompress_cntx0_3 = 0xf;
  c.uncompress_cntx4_7 = 0xf;
  return c;
}
// tt-metal's register-id walk: one register (1..count) under "REG_ID: n",
// all of them (0) with a blank line between, or the invalid-id line.
template <typename F>
inline void dump_registers(uint32_t reg_id, uint32_t count, F print_register) {
  if (reg_id >= 1 && reg_id <= count) {
    DPRINT << "REG_ID: " << reg_id << ENDL();
    print_register(reg_id - 1);
  } else if (reg_id == 0) {
    for (uint32_t i = 1; i <= count; i++) {
      DPRINT << "REG_ID: " << i << ENDL();
      print_register(i - 1);
      if (i != count) DPRINT << ENDL();
    }
  } else {
    DPRINT << "INVALID REGISTER ID! PLEASE CHOOSE A NUMBER BETWEEN 0 AND " << count << "." << ENDL();
  }
}
}  // namespace zyx_emu_detail
inline void dprint_tensix_unpack_tile_descriptor(uint32_t reg_id = 0) {
  if constexpr (zyx_emu_detail::on_unpack_thread())
    zyx_emu_detail::dump_registers(reg_id, zyx_emu_detail::kNumUnpackers, [](uint32_t u) {
      dprint_tensix_unpack_tile_descriptor_helper(zyx_emu_detail::modelled_tile_descriptor(u));
    });
}
inline void dprint_tensix_unpack_config(uint32_t reg_id = 0) {
  if constexpr (zyx_emu_detail::on_unpack_thread())
    zyx_emu_detail::dump_registers(reg_id, zyx_emu_detail::kNumUnpackers, [](uint32_t u) {
      dprint_tensix_unpack_config_helper(zyx_emu_detail::modelled_unpack_config(u));
    });
}

// ---- the ALU configuration, as modelled ----
namespace zyx_emu_detail {
constexpr bool on_math_thread() {
#if defined(ZYX_EMU_TRISC)
  return ZYX_EMU_PROCESSOR == 2 && ZYX_EMU_TRISC == 2;
#else
  return ZYX_EMU_PROCESSOR == 2;
#endif
}
// What tt-llk's setup programs into the ALU configuration for the noted
// CBs: no stochastic rounding (tt-metal's default), each source's register
// format (the kernel's unpack_dst_format) and whether its L1 format is
// UInt8, int8 math when a source is Int8 or Int32, the fp32 flags from
// DST_ACCUM_MODE, and the DST accumulation format the packer's setup writes
// (the pack CB's format; Float32 with 32-bit DST).
inline ckernel::unpacker::alu_config_t modelled_alu_config() {
  ckernel::unpacker::alu_config_t a{};
  const int32_t srca = unpacker_cb(0), srcb = unpacker_cb(1);
  const int32_t pack = static_cast<int32_t>(configured_operands()->pack) - 1;
  const uint32_t fa = srca < 0 ? 0 : static_cast<uint32_t>(unpack_dst_format[srca]);
  const uint32_t fb = srcb < 0 ? 0 : static_cast<uint32_t>(unpack_dst_format[srcb]);
  a.ALU_FORMAT_SPEC_REG0_SrcAUnsigned = srca >= 0 && unpack_src_format[srca] == 30;
  a.ALU_FORMAT_SPEC_REG0_SrcBUnsigned = srcb >= 0 && unpack_src_format[srcb] == 30;
  a.ALU_FORMAT_SPEC_REG0_SrcA = fa & 0xf;
  a.ALU_FORMAT_SPEC_REG1_SrcB = fb & 0xf;
  const bool fp32 = ZYX_EMU_FP32_DEST_ACC != 0;
  if (pack >= 0 && pack < static_cast<int32_t>(pack_dst_format.size()) && pack_dst_format[pack] != 0xff)
    a.ALU_FORMAT_SPEC_REG2_Dstacc = fp32 ? 0u : pack_dst_format[pack] & 0xfu;
  a.ALU_ACC_CTRL_Fp32_enabled = fp32;
  a.ALU_ACC_CTRL_SFPU_Fp32_enabled = fp32;
  const bool int8 = (srca >= 0 && ((fa & 0xf) == 14 || fa == 8)) || (srcb >= 0 && ((fb & 0xf) == 14 || fb == 8));
  a.ALU_ACC_CTRL_INT8_math_enabled = int8;
  return a;
}
}  // namespace zyx_emu_detail
// Every field of the ALU configuration under its register name, from the
// math thread, as tt-metal's dump prints them.
inline void dprint_tensix_alu_config() {
  if constexpr (zyx_emu_detail::on_math_thread()) {
    const ckernel::unpacker::alu_config_t c = zyx_emu_detail::modelled_alu_config();
    using zyx_emu_detail::print_named_field;
    print_named_field("ALU_ROUNDING_MODE_Fpu_srnd_en", c, dprint_tensix_alu_config_alu_rounding_mode_fpu_srnd_en);
    print_named_field("ALU_ROUNDING_MODE_Gasket_srnd_en", c, dprint_tensix_alu_config_alu_rounding_mode_gasket_srnd_en);
    print_named_field("ALU_ROUNDING_MODE_Packer_srnd_en", c, dprint_tensix_alu_config_alu_rounding_mode_packer_srnd_en);
    print_named_field("ALU_ROUNDING_MODE_Padding", c, dprint_tensix_alu_config_alu_rounding_mode_padding);
    print_named_field("ALU_ROUNDING_MODE_GS_LF", c, dprint_tensix_alu_config_alu_rounding_mode_gs_lf);
    print_named_field("ALU_ROUNDING_MODE_Bfp8_HF", c, dprint_tensix_alu_config_alu_rounding_mode_bfp8_hf);
    print_named_field("ALU_FORMAT_SPEC_REG0_SrcAUnsigned", c,
                      dprint_tensix_alu_config_alu_format_spec_reg0_srcaunsigned);
    print_named_field("ALU_FORMAT_SPEC_REG0_SrcBUnsigned", c,
                      dprint_tensix_alu_config_alu_format_spec_reg0_srcbunsigned);
    print_named_field("ALU_FORMAT_SPEC_REG0_SrcA", c, dprint_tensix_alu_config_alu_format_spec_reg0_srca);
    print_named_field("ALU_FORMAT_SPEC_REG1_SrcB", c, dprint_tensix_alu_config_alu_format_spec_reg1_srcb);
    print_named_field("ALU_FORMAT_SPEC_REG2_Dstacc", c, dprint_tensix_alu_config_alu_format_spec_reg2_dstacc);
    print_named_field("ALU_ACC_CTRL_Fp32_enabled", c, dprint_tensix_alu_config_alu_acc_ctrl_fp32_enabled);
    print_named_field("ALU_ACC_CTRL_SFPU_Fp32_enabled", c, dprint_tensix_alu_config_alu_acc_ctrl_sfpu_fp32_enabled);
    print_named_field("ALU_ACC_CTRL_INT8_math_enabled", c, dprint_tensix_alu_config_alu_acc_ctrl_int8_math_enabled);
  }
}
