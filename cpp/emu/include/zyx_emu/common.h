// Kernel-side API shared by every section: arguments, circular buffers, data
// formats, debug printing. Part of zyx-tt's Tensix emulator; kernels include
// it through the tt-metal style paths next to this directory.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "zyx_emu/abi.h"

#ifndef ZYX_EMU_NUM_COMPILE_ARGS
#define ZYX_EMU_NUM_COMPILE_ARGS 0
#define ZYX_EMU_COMPILE_ARGS 0u
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
#ifndef ZYX_EMU_DRAM_ALIGNMENT
#ifdef ARCH_BLACKHOLE
#define ZYX_EMU_DRAM_ALIGNMENT 64
#else
#define ZYX_EMU_DRAM_ALIGNMENT 32
#endif
#endif

#define FORCE_INLINE inline __attribute__((always_inline))
#define ALWI inline __attribute__((always_inline))
#define tt_l1_ptr
#define tt_reg_ptr

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
namespace constants {
inline constexpr uint32_t TILE_HEIGHT = 32, TILE_WIDTH = 32, TILE_HW = 1024, FACE_HEIGHT = 16, FACE_WIDTH = 16;
}
}  // namespace tt

namespace zyx_emu_detail {
// Internal linkage: an inline variable would be one process-wide (GNU unique)
// symbol shared by every loaded kernel object, and a runtime index into it
// would read the args of whichever kernel was loaded first.
static constexpr uint32_t compile_args[] = {ZYX_EMU_COMPILE_ARGS};
constexpr uint32_t compile_arg(size_t i) {
  return i < ZYX_EMU_NUM_COMPILE_ARGS ? compile_args[i]
                                      : throw "get_compile_time_arg_val: index beyond the compile-time args";
}
template <typename T>
FORCE_INLINE T arg_as(uint32_t kind, int i) {
  uint32_t n = 0;
  const uint32_t* a = ZYX_API.args(kind, &n);
  if (i < 0 || static_cast<uint32_t>(i) >= n) ZYX_API.fail(kind ? "get_common_arg_val: index out of range"
                                                               : "get_arg_val: index out of range");
  T v;
  static_assert(sizeof(T) <= 4, "kernel args are 32-bit words");
  std::memcpy(&v, &a[i], sizeof(T));
  return v;
}
}  // namespace zyx_emu_detail

#define get_compile_time_arg_val(i) (zyx_emu_detail::compile_arg(i))

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
FORCE_INLINE void cb_reserve_back(int32_t cb, int32_t pages) { ZYX_API.cb_reserve_back(cb, pages); }
FORCE_INLINE void cb_push_back(int32_t cb, int32_t pages) { ZYX_API.cb_push_back(cb, pages); }
FORCE_INLINE void cb_wait_front(int32_t cb, int32_t pages) { ZYX_API.cb_wait_front(cb, pages); }
FORCE_INLINE void cb_pop_front(int32_t cb, int32_t pages) { ZYX_API.cb_pop_front(cb, pages); }
FORCE_INLINE bool cb_pages_available_at_front(int32_t cb, int32_t pages) {
  return ZYX_API.cb_pages_available_at_front(cb, pages) != 0;
}
FORCE_INLINE bool cb_pages_reservable_at_back(int32_t cb, int32_t pages) {
  return ZYX_API.cb_pages_reservable_at_back(cb, pages) != 0;
}
FORCE_INLINE uint32_t get_write_ptr(uint32_t cb) { return ZYX_API.cb_write_ptr(cb); }
FORCE_INLINE uint32_t get_read_ptr(uint32_t cb) { return ZYX_API.cb_read_ptr(cb); }
FORCE_INLINE uint32_t get_tile_size(uint32_t cb) { return ZYX_API.cb_page_size(cb); }
FORCE_INLINE uint32_t get_tile_hw(uint32_t) { return 1024; }
FORCE_INLINE uint32_t get_tile_num_faces(uint32_t) { return 4; }
FORCE_INLINE DataFormat get_dataformat(uint32_t cb) { return static_cast<DataFormat>(ZYX_API.cb_format(cb)); }

}  // namespace ckernel

using namespace ckernel;

// Experimental wrapper over a circular buffer index.
namespace experimental {
class CircularBuffer {
 public:
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
  operator uint32_t() const { return id_; }

 private:
  uint32_t id_;
};
}  // namespace experimental

// ---- debug printing (DPRINT) ----
// Output goes to stderr only when the emulator runs with ZYX_EMU_DPRINT set.
namespace zyx_emu_detail {
struct Endl {};
struct Hex {};
struct Dec {};
struct SetW {
  int w;
};
struct SetPrecision {
  int p;
};
class Printer {
 public:
  ~Printer() {
    if (len_) flush();
  }
  Printer& operator<<(const char* s) {
    while (s && *s) put(*s++);
    return *this;
  }
  Printer& operator<<(char c) {
    put(c);
    return *this;
  }
  Printer& operator<<(Endl) {
    put('\n');
    flush();
    return *this;
  }
  Printer& operator<<(Hex) {
    hex_ = true;
    return *this;
  }
  Printer& operator<<(Dec) {
    hex_ = false;
    return *this;
  }
  Printer& operator<<(SetW) { return *this; }
  Printer& operator<<(SetPrecision) { return *this; }
  Printer& operator<<(float f) { return num(static_cast<double>(f), true); }
  Printer& operator<<(double f) { return num(f, true); }
  template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  Printer& operator<<(T v) {
    if (std::is_signed<T>::value && v < 0) {
      put('-');
      return unum(static_cast<unsigned long long>(-static_cast<long long>(v)));
    }
    return unum(static_cast<unsigned long long>(v));
  }
  template <typename T, typename std::enable_if<std::is_enum<T>::value, int>::type = 0>
  Printer& operator<<(T v) {
    return unum(static_cast<unsigned long long>(v));
  }

 private:
  void put(char c) {
    if (len_ + 1 < sizeof buf_) buf_[len_++] = c;
  }
  void flush() {
    buf_[len_] = 0;
    ZYX_API.dprint(buf_);
    len_ = 0;
  }
  Printer& unum(unsigned long long v) {
    char t[24];
    int n = 0;
    unsigned base = hex_ ? 16 : 10;
    do {
      t[n++] = "0123456789abcdef"[v % base];
      v /= base;
    } while (v);
    if (hex_) put('0'), put('x');
    while (n) put(t[--n]);
    return *this;
  }
  Printer& num(double f, bool) {
    if (f < 0) put('-'), f = -f;
    unsigned long long ip = static_cast<unsigned long long>(f);
    bool h = hex_;
    hex_ = false;
    unum(ip);
    put('.');
    double frac = f - static_cast<double>(ip);
    for (int i = 0; i < 6; i++) {
      frac *= 10;
      int d = static_cast<int>(frac);
      put(static_cast<char>('0' + d));
      frac -= d;
    }
    hex_ = h;
    return *this;
  }
  char buf_[512];
  size_t len_ = 0;
  bool hex_ = false;
};
}  // namespace zyx_emu_detail

#define DPRINT zyx_emu_detail::Printer()
#define DPRINT_UNPACK(x) x
#define DPRINT_MATH(x) x
#define DPRINT_PACK(x) x
#define DPRINT_DATA0(x) x
#define DPRINT_DATA1(x) x
inline zyx_emu_detail::Endl ENDL() { return {}; }
inline zyx_emu_detail::Hex HEX() { return {}; }
inline zyx_emu_detail::Dec DEC() { return {}; }
inline zyx_emu_detail::SetW SETW(int w) { return {w}; }
inline zyx_emu_detail::SetPrecision SETPRECISION(int p) { return {p}; }
inline float BF16(uint16_t v) {
  uint32_t u = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float F32(float f) { return f; }
inline uint32_t U32(uint32_t v) { return v; }
