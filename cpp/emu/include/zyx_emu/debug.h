// Kernel-side debug API of zyx-tt's Tensix emulator: DPRINT (the stream form
// `DPRINT << x << ENDL();` and the format form `DPRINT("{} {:#x}\n", a, b)`),
// DEVICE_PRINT, the per-processor filters, TileSlice printing, ASSERT and
// WAYPOINT, and the profiler's zone markers (accepted, not timed).
//
// Output: lines on stderr, `dprint: core (r,c) <processor>: <text>`, when the
// runtime runs with ZYX_EMU_DPRINT set (docs/emulator.md, "Debugging").
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "zyx_emu/abi.h"

#ifndef ZYX_EMU_PROCESSOR
#define ZYX_EMU_PROCESSOR 0
#endif
#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif

namespace zyx_emu_detail {

// ---- manipulators and typed values (tt-metal's names) ----
struct Endl {};
struct Hex {};
struct Dec {};
struct Oct {};
struct Fixed {};
struct DefaultFloat {};
struct SetW {
  int w;
};
struct SetPrecision {
  int p;
};
struct Bf16Value {
  uint16_t bits;
};

inline float bf16_bits_to_float(uint16_t v) {
  uint32_t u = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- tile slices ----
}  // namespace zyx_emu_detail

// Rows h0..h1 step hs and columns w0..w1 step ws of a 32x32 tile.
struct SliceRange {
  uint8_t h0, h1, hs, w0, w1, ws;
  static constexpr SliceRange hw0_32_16() { return {0, 32, 16, 0, 32, 16}; }
  static constexpr SliceRange hw0_32_8() { return {0, 32, 8, 0, 32, 8}; }
  static constexpr SliceRange hw0_32_4() { return {0, 32, 4, 0, 32, 4}; }
  static constexpr SliceRange hw041() { return {0, 32, 4, 0, 32, 1}; }
  static constexpr SliceRange h0_w0_32() { return {0, 1, 1, 0, 32, 1}; }
  static constexpr SliceRange h0_32_w0() { return {0, 32, 1, 0, 1, 1}; }
  static constexpr SliceRange h1_w0_32() { return {1, 2, 1, 0, 32, 1}; }
  static constexpr SliceRange hw0() { return {0, 1, 1, 0, 1, 1}; }
  static constexpr SliceRange hw_all() { return {0, 32, 1, 0, 32, 1}; }
};
enum dprint_tslice_cb_t { TSLICE_INPUT_CB = 0, TSLICE_OUTPUT_CB = 1 };
enum dprint_tslice_ptr_t { TSLICE_RD_PTR = 0, TSLICE_WR_PTR = 1 };

struct tile_info_t;
// Prints elements of tile `tile_idx` of a circular buffer, at its read
// pointer (TSLICE_RD_PTR) or write pointer (TSLICE_WR_PTR), row by row.
struct TileSlice {
  // Where element (h, w) lies in the tile's data and which shared exponent
  // it uses (zyx_emu/debug_extra.h).
  static uint32_t get_data_index(tile_info_t& tile_info, uint32_t h, uint32_t w, bool untilize);
  static uint32_t get_exponent_index(tile_info_t& tile_info, uint32_t h, uint32_t w, bool untilize);
  uint8_t cb;
  int tile_idx;
  SliceRange range;
  dprint_tslice_cb_t cb_type;
  dprint_tslice_ptr_t ptr_type;
  bool endl_rows;
  bool print_untilized;
  TileSlice(uint8_t cb_id, int tile, const SliceRange& r, dprint_tslice_cb_t type = TSLICE_INPUT_CB,
            dprint_tslice_ptr_t ptr = TSLICE_RD_PTR, bool endl = true, bool untilized = true)
      : cb(cb_id), tile_idx(tile), range(r), cb_type(type), ptr_type(ptr), endl_rows(endl), print_untilized(untilized) {}
  TileSlice(uint8_t cb_id, int tile, const SliceRange& r, bool endl, bool untilized = true)
      : TileSlice(cb_id, tile, r, TSLICE_INPUT_CB, TSLICE_RD_PTR, endl, untilized) {}
};
#define TSLICE TileSlice

// DPRINT << RAISE{s} raises signal s (0-31) of this core; DPRINT << WAIT{s}
// waits until another processor of the core has raised it, which orders
// their prints as on a card.
struct RAISE {
  uint32_t signal;
};
struct WAIT {
  uint32_t signal;
};

// Arrays of 32-bit words (dprint.h): printed as the words, space-separated,
// in the current base. TYPED_U32_ARRAY appends its (type, subtype) word at
// ptr[len] as tt-metal's does (the caller's array has room for it); the
// emulator prints the data words only (a card's host decodes them by type).
struct U32_ARRAY {
  uint32_t* ptr;
  uint32_t len;
  U32_ARRAY(uint32_t* p, uint32_t n) : ptr(p), len(n) {}
};
struct TYPED_U32_ARRAY : public U32_ARRAY {
  TYPED_U32_ARRAY(uint16_t type, uint16_t subtype, uint32_t* p, uint32_t n) : U32_ARRAY(p, n + 1) {
    p[n] = (uint32_t(type) << 16) + uint32_t(subtype);
  }
};

// DEVICE_PRINT's typed values.
struct bf16_t {
  uint16_t val;
  bf16_t(uint16_t v) : val(v) {}
};
// One element of a block-float tile with its block's shared exponent: the
// low byte is the exponent, the high byte the element's sign and mantissa
// (tt-metal's layout; DEVICE_PRINT prints the value as a float).
struct bf4_t {
  union {
    struct {
      uint8_t exponent;
      uint8_t mantissa;
    };
    uint16_t val;
  };
  bf4_t(uint16_t v) : val(v) {}
  bf4_t(uint8_t e, uint8_t m) : exponent(e), mantissa(m) {}
};
struct bf8_t {
  union {
    struct {
      uint8_t exponent;
      uint8_t mantissa;
    };
    uint16_t val;
  };
  bf8_t(uint16_t v) : val(v) {}
  bf8_t(uint8_t e, uint8_t m) : exponent(e), mantissa(m) {}
};
// A compile-time string (CTSTR("...")): on a card the literal lives in an
// ELF section the host reads back; here it prints as the string.
struct ct_string {
  const char* ptr;
};
#define CTSTR(literal) (ct_string{literal})
// The card's DPRINT buffer per processor (tt-metal's dprint_common.h). The
// emulator prints each message whole, whatever its length.
constexpr static uint32_t DPRINT_BUFFER_SIZE = 204;

namespace zyx_emu_detail {

// A block-float element (sign above `bits` mantissa bits, which hold no
// hidden 1) with its shared 8-bit exponent, as a float: the mantissa is
// shifted up to its leading 1, which becomes the hidden bit, and the
// exponent lowered by the shift, as tt-metal's host decodes it. A zero
// mantissa is (signed) zero; an exponent below the shift, which tt-metal's
// host rejects, also gives zero.
inline float bfp_element_to_float(uint8_t data, uint8_t shared_exp, uint32_t bits) {
  uint32_t mask = (1u << bits) - 1, sign = (data >> bits) & 1u, man = data & mask, exp = shared_exp;
  uint32_t shift = 0;
  while (man != 0 && (man & (1u << (bits - 1))) == 0) man <<= 1, shift++;
  uint32_t word = sign << 31;
  if (man != 0 && exp >= shift) word |= ((exp - shift) << 23) | (((man << 1) & mask) << (23 - bits));
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

// A format string whose fields are checked against the argument count at
// compile time, by tt-metal's DEVICE_PRINT rules: a '{' not doubled opens a
// field of an optional index and an optional ':' spec; indexed and plain
// fields do not mix; an index names an argument and every argument is named;
// plain fields match the arguments one for one. Each rule fails the build at
// its own function's name.
void format_error_unbalanced_braces();
void format_error_placeholder_syntax();
void format_error_field_count();
void format_error_mixed_fields();
void format_error_index();
void format_error_unreferenced();

consteval void check_format(const char* s, size_t nargs) {
  size_t plain = 0, max_index = 0;
  bool any_indexed = false;
  unsigned long long referenced = 0;  // arguments 0-63 an index names
  for (size_t i = 0; s[i]; i++) {
    if (s[i] == '{') {
      if (s[i + 1] == '{') {
        i++;
        continue;
      }
      size_t j = i + 1;
      bool has_index = false;
      size_t idx = 0;
      while (s[j] >= '0' && s[j] <= '9') idx = idx * 10 + size_t(s[j++] - '0'), has_index = true;
      if (s[j] != '}' && s[j] != ':') format_error_placeholder_syntax();
      while (s[j] && s[j] != '}') j++;
      if (!s[j]) format_error_unbalanced_braces();
      if (has_index) {
        any_indexed = true;
        if (idx + 1 > max_index) max_index = idx + 1;
        if (idx < 64) referenced |= 1ull << idx;
      } else {
        plain++;
      }
      i = j;
    } else if (s[i] == '}') {
      if (s[i + 1] != '}') format_error_unbalanced_braces();
      i++;
    }
  }
  if (any_indexed && plain) format_error_mixed_fields();
  if (any_indexed && max_index > nargs) format_error_index();
  if (any_indexed)
    for (size_t a = 0; a < nargs && a < 64; a++)
      if (!(referenced >> a & 1)) format_error_unreferenced();
  if (!any_indexed && plain != nargs) format_error_field_count();
}

template <class... Args>
struct FormatString {
  const char* str;
  template <size_t N>
  consteval FormatString(const char (&s)[N]) : str(s) {
    check_format(s, sizeof...(Args));
  }
};

// One parsed {:spec}: [[fill]align][sign][#][0][width][.precision][type].
struct FormatSpec {
  char fill = ' ', align = 0, sign = 0, type = 0;
  bool alt = false, zero = false;
  int width = -1, precision = -1;
};

class Printer {
 public:
  Printer() : on_(ZYX_API.dprint_enabled() != 0) {}
  ~Printer() {
    if (len_) flush();
  }
  Printer(const Printer&) = delete;
  Printer& operator=(const Printer&) = delete;

  // ---- the stream form ----
  Printer& operator<<(const char* s) {
    if (!on_) return *this;
    pad_string(s ? s : "(null)", s ? std::strlen(s) : 6);
    return *this;
  }
  Printer& operator<<(std::string_view s) {
    if (on_) pad_string(s.data(), s.size());
    return *this;
  }
  Printer& operator<<(char c) {
    if (on_) pad_string(&c, 1);
    return *this;
  }
  Printer& operator<<(bool b) { return int_value(static_cast<unsigned long long>(b), false, 1); }
  Printer& operator<<(Endl) {
    put('\n');
    if (on_) flush();
    return *this;
  }
  Printer& operator<<(Hex) {
    base_ = 16;
    return *this;
  }
  Printer& operator<<(Dec) {
    base_ = 10;
    return *this;
  }
  Printer& operator<<(Oct) {
    base_ = 8;
    return *this;
  }
  Printer& operator<<(Fixed) {
    fixed_ = true;
    return *this;
  }
  Printer& operator<<(DefaultFloat) {
    fixed_ = false;
    return *this;
  }
  Printer& operator<<(SetW w) {
    width_ = w.w;
    return *this;
  }
  Printer& operator<<(SetPrecision p) {
    precision_ = p.p;
    return *this;
  }
  Printer& operator<<(float f) { return float_value(static_cast<double>(f)); }
  Printer& operator<<(double f) { return float_value(f); }
  Printer& operator<<(Bf16Value v) { return float_value(static_cast<double>(bf16_bits_to_float(v.bits))); }
  Printer& operator<<(bf16_t v) { return float_value(static_cast<double>(bf16_bits_to_float(v.val))); }
  template <typename T, typename std::enable_if<std::is_integral<T>::value && !std::is_same<T, char>::value &&
                                                    !std::is_same<T, bool>::value,
                                                int>::type = 0>
  Printer& operator<<(T v) {
    using U = typename std::make_unsigned<T>::type;
    if (std::is_signed<T>::value && v < 0 && base_ == 10)
      return int_value(static_cast<unsigned long long>(-static_cast<long long>(v)), true, sizeof(T));
    return int_value(static_cast<unsigned long long>(static_cast<U>(v)), false, sizeof(T));
  }
  template <typename T, typename std::enable_if<std::is_enum<T>::value, int>::type = 0>
  Printer& operator<<(T v) {
    return *this << static_cast<typename std::underlying_type<T>::type>(v);
  }
  // Pointers print as their 32-bit (L1) address, as tt-metal's do.
  template <typename T>
  Printer& operator<<(const volatile T* p) {
    return *this << static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
  }
  Printer& operator<<(const TYPED_U32_ARRAY& a) { return words(a.ptr, a.len - 1); }
  Printer& operator<<(const U32_ARRAY& a) { return words(a.ptr, a.len); }
  Printer& operator<<(const TileSlice& ts);
  Printer& operator<<(RAISE r) {
    auto* w = static_cast<volatile uint32_t*>(ZYX_API.l1_range(ZYX_EMU_L1_SIGNALS_OFFSET + 4 * (r.signal & 31), 4, "RAISE"));
    __atomic_store_n(const_cast<uint32_t*>(w), 1u, __ATOMIC_RELEASE);
    return *this;
  }
  Printer& operator<<(WAIT w) {
    if (len_) flush();  // what came before the wait is printed before it
    ZYX_API.wait_word(ZYX_EMU_L1_SIGNALS_OFFSET + 4 * (w.signal & 31), 0, 2);
    return *this;
  }

  // ---- the format form (DEVICE_PRINT, DPRINT(...)) ----
  template <class... Args>
  Printer& operator()(FormatString<std::type_identity_t<Args>...> fmt, const Args&... args) {
    if (on_) format(fmt.str, args...);
    return *this;
  }

 private:
  void put(char c) {
    if (!on_) return;
    if (len_ + 1 >= sizeof buf_) flush();
    buf_[len_++] = c;
  }
  void write(const char* s, size_t n) {
    for (size_t i = 0; i < n; i++) put(s[i]);
  }
  void flush() {
    buf_[len_] = 0;
    ZYX_API.dprint(buf_);
    len_ = 0;
  }
  void pad_string(const char* s, size_t n) {
    int w = width_;
    width_ = 0;
    for (int i = static_cast<int>(n); i < w; i++) put(' ');
    write(s, n);
  }
  Printer& int_value(unsigned long long v, bool negative, size_t bytes) {
    if (!on_) return *this;
    (void)bytes;
    char t[72];
    int n = 0;
    do {
      t[n++] = "0123456789abcdef"[v % base_];
      v /= base_;
    } while (v);
    if (negative) t[n++] = '-';
    char out[72];
    for (int i = 0; i < n; i++) out[i] = t[n - 1 - i];
    pad_string(out, static_cast<size_t>(n));
    return *this;
  }
  Printer& words(const uint32_t* p, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
      if (i) *this << ' ';
      *this << p[i];
    }
    return *this;
  }
  Printer& float_value(double f) {
    if (!on_) return *this;
    char b[64];
    int n = std::snprintf(b, sizeof b, fixed_ ? "%.*f" : "%.*g", precision_, f);
    pad_string(b, static_cast<size_t>(n > 0 ? n : 0));
    return *this;
  }

  // Format form: one field per argument.
  template <class... Args>
  void format(const char* f, const Args&... args) {
    constexpr size_t n = sizeof...(Args);
    // A volatile argument (a value read through an L1 pointer) prints as
    // its plain type.
    const void* ptrs[n ? n : 1] = {static_cast<const void*>(const_cast<const std::remove_volatile_t<Args>*>(&args))...};
    using Fn = void (*)(Printer&, const void*, const FormatSpec&);
    Fn fns[n ? n : 1] = {&Printer::field<std::remove_volatile_t<Args>>...};
    size_t next = 0;
    for (size_t i = 0; f[i]; i++) {
      char c = f[i];
      if (c == '{' && f[i + 1] == '{') {
        put('{'), i++;
        continue;
      }
      if (c == '}' && f[i + 1] == '}') {
        put('}'), i++;
        continue;
      }
      if (c != '{') {
        put(c);
        continue;
      }
      size_t j = i + 1, idx = 0;
      bool has_index = false;
      while (f[j] >= '0' && f[j] <= '9') idx = idx * 10 + size_t(f[j++] - '0'), has_index = true;
      FormatSpec spec;
      if (f[j] == ':') j = parse_spec(f, j + 1, spec);
      while (f[j] && f[j] != '}') j++;
      size_t a = has_index ? idx : next++;
      if (a < n) fns[a](*this, ptrs[a], spec);
      i = f[j] ? j : j - 1;
    }
  }
  static size_t parse_spec(const char* f, size_t j, FormatSpec& s) {
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^'; };
    if (f[j] && f[j] != '}' && is_align(f[j + 1])) s.fill = f[j], s.align = f[j + 1], j += 2;
    else if (is_align(f[j])) s.align = f[j++];
    if (f[j] == '+' || f[j] == '-' || f[j] == ' ') s.sign = f[j++];
    if (f[j] == '#') s.alt = true, j++;
    if (f[j] == '0') s.zero = true, j++;
    if (f[j] >= '0' && f[j] <= '9') {
      s.width = 0;
      while (f[j] >= '0' && f[j] <= '9') s.width = s.width * 10 + (f[j++] - '0');
    }
    if (f[j] == '.') {
      s.precision = 0, j++;
      while (f[j] >= '0' && f[j] <= '9') s.precision = s.precision * 10 + (f[j++] - '0');
    }
    if (f[j] && f[j] != '}') s.type = f[j++];
    return j;
  }
  // Writes body (with an optional sign/prefix) padded as the spec says.
  void emit(const char* prefix, const char* body, size_t n, const FormatSpec& s, bool numeric) {
    size_t plen = std::strlen(prefix), total = plen + n;
    size_t w = s.width > 0 ? static_cast<size_t>(s.width) : 0;
    size_t pad = w > total ? w - total : 0;
    char align = s.align ? s.align : (numeric ? '>' : '<');
    if (numeric && s.zero && !s.align) {
      write(prefix, plen);
      for (size_t i = 0; i < pad; i++) put('0');
      write(body, n);
      return;
    }
    size_t left = align == '>' ? pad : align == '^' ? pad / 2 : 0, right = pad - left;
    for (size_t i = 0; i < left; i++) put(s.fill);
    write(prefix, plen);
    write(body, n);
    for (size_t i = 0; i < right; i++) put(s.fill);
  }
  void fmt_uint(unsigned long long v, bool negative, const FormatSpec& s) {
    unsigned base = 10;
    const char* digits = "0123456789abcdef";
    const char* pre = "";
    switch (s.type) {
      case 'x': base = 16, pre = "0x"; break;
      case 'X': base = 16, pre = "0X", digits = "0123456789ABCDEF"; break;
      case 'o': base = 8, pre = "0"; break;
      case 'b': base = 2, pre = "0b"; break;
      case 'B': base = 2, pre = "0B"; break;
      case 'c': {
        char ch = static_cast<char>(v);
        emit("", &ch, 1, s, false);
        return;
      }
      default: break;
    }
    char t[72];
    int n = 0;
    do {
      t[n++] = digits[v % base];
      v /= base;
    } while (v);
    char body[72];
    for (int i = 0; i < n; i++) body[i] = t[n - 1 - i];
    char prefix[8];
    size_t p = 0;
    if (negative) prefix[p++] = '-';
    else if (s.sign == '+' || s.sign == ' ') prefix[p++] = s.sign;
    if (s.alt && v == 0 && base != 10 && !(base == 8 && body[0] == '0' && n == 1))
      for (const char* q = pre; *q; q++) prefix[p++] = *q;
    else if (s.alt && base != 10)
      for (const char* q = pre; *q; q++) prefix[p++] = *q;
    prefix[p] = 0;
    emit(prefix, body, static_cast<size_t>(n), s, true);
  }
  void fmt_float(double v, const FormatSpec& s) {
    char f[16];
    char type = s.type ? s.type : 'g';
    bool shortest = !s.type && s.precision < 0;
    char b[512];
    int n;
    if (shortest) {
      // fmt's default: the fewest significant digits that read back as the
      // same value, in fixed notation unless the decimal exponent is below
      // -4 or from 16 on ("10", "0.0001", "1e-05", "1e+16").
      int digits = 1;
      for (; digits < 17; digits++) {
        std::snprintf(b, sizeof b, "%.*e", digits - 1, v);
        if (std::strtod(b, nullptr) == v) break;
      }
      const char* e = std::strchr(b, 'e');
      int exp = e ? std::atoi(e + 1) : 0;
      if (exp < -4 || exp >= 16) n = std::snprintf(b, sizeof b, "%.*e", digits - 1, v);
      else n = std::snprintf(b, sizeof b, "%.*f", std::max(0, digits - 1 - exp), v);
    } else {
      std::snprintf(f, sizeof f, "%%%s.*%c", s.alt ? "#" : "", type == 'F' ? 'F' : type);
      n = std::snprintf(b, sizeof b, f, s.precision < 0 ? 6 : s.precision, v);
    }
    if (n < 0) n = 0;
    if (n > static_cast<int>(sizeof b) - 1) n = sizeof b - 1;
    const char* body = b;
    char prefix[2] = {0, 0};
    if (b[0] == '-') prefix[0] = '-', body = b + 1, n--;
    else if (s.sign == '+' || s.sign == ' ') prefix[0] = s.sign;
    emit(prefix, body, static_cast<size_t>(n), s, true);
  }
  template <class T>
  static void field(Printer& p, const void* v, const FormatSpec& s) {
    using D = std::remove_cv_t<std::remove_reference_t<T>>;
    const D& x = *static_cast<const D*>(v);
    if constexpr (std::is_same_v<D, bool>) {
      if (s.type && s.type != 's') p.fmt_uint(x ? 1 : 0, false, s);
      else p.emit("", x ? "true" : "false", x ? 4 : 5, s, false);
    } else if constexpr (std::is_same_v<D, char>) {
      if (s.type && s.type != 'c') p.fmt_uint(static_cast<unsigned char>(x), false, s);
      else p.emit("", &x, 1, s, false);
    } else if constexpr (std::is_integral_v<D> || std::is_enum_v<D>) {
      using I = std::conditional_t<std::is_enum_v<D>, std::underlying_type<D>, std::type_identity<D>>;
      using V = typename I::type;
      V iv = static_cast<V>(x);
      if constexpr (std::is_signed_v<V>) {
        if (iv < 0) return p.fmt_uint(static_cast<unsigned long long>(-static_cast<long long>(iv)), true, s);
      }
      p.fmt_uint(static_cast<unsigned long long>(static_cast<std::make_unsigned_t<V>>(iv)), false, s);
    } else if constexpr (std::is_floating_point_v<D>) {
      p.fmt_float(static_cast<double>(x), s);
    } else if constexpr (std::is_same_v<D, bf16_t>) {
      p.fmt_float(static_cast<double>(bf16_bits_to_float(x.val)), s);
    } else if constexpr (std::is_same_v<D, bf4_t> || std::is_same_v<D, bf8_t>) {
      constexpr uint32_t bits = std::is_same_v<D, bf4_t> ? 3 : 7;
      p.fmt_float(static_cast<double>(bfp_element_to_float(x.mantissa, x.exponent, bits)), s);
    } else if constexpr (std::is_same_v<D, ct_string>) {
      p.emit("", x.ptr, std::strlen(x.ptr), s, false);
    } else if constexpr (std::is_same_v<D, Bf16Value>) {
      p.fmt_float(static_cast<double>(bf16_bits_to_float(x.bits)), s);
    } else if constexpr (std::is_pointer_v<D> && std::is_same_v<std::remove_cv_t<std::remove_pointer_t<D>>, char>) {
      p.emit("", x ? x : "(null)", x ? std::strlen(x) : 6, s, false);
    } else if constexpr (std::is_array_v<D> && std::is_same_v<std::remove_cv_t<std::remove_extent_t<D>>, char>) {
      p.emit("", x, std::strlen(x), s, false);
    } else if constexpr (std::is_same_v<D, std::string_view>) {
      p.emit("", x.data(), x.size(), s, false);
    } else if constexpr (std::is_pointer_v<D>) {
      FormatSpec h = s;
      h.type = 'x', h.alt = true;
      p.fmt_uint(static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(x)), false, h);
    } else if constexpr (requires { p << x; }) {
      // What only the stream form knows (a TileSlice, a U32_ARRAY) prints
      // as it does there: tt-metal's kernels pass a TileSlice to "{}" too.
      p << x;
    } else {
      static_assert(sizeof(D) == 0, "DEVICE_PRINT: this argument type cannot be printed");
    }
  }

  char buf_[512];
  size_t len_ = 0;
  bool on_;
  bool fixed_ = false;
  unsigned base_ = 10;
  int width_ = 0, precision_ = 6;
};

// Sets the TRISC tag of the enclosed prints (DPRINT_UNPACK/MATH/PACK).
struct TagScope {
  uint32_t old;
  explicit TagScope(uint32_t tag) : old(ZYX_API.dprint_tag(tag)) {}
  ~TagScope() { ZYX_API.dprint_tag(old); }
  TagScope(const TagScope&) = delete;
  TagScope& operator=(const TagScope&) = delete;
};

// The head of a pasted DPRINT statement (ZYX_EMU_DPRINT_ONE).
struct DprintSink {
  Printer& operator<<(Printer&& p) { return p; }
  Printer& operator<<(Printer& p) { return p; }
  template <size_t N>
  void operator<<(const char (&text)[N]) {
    Printer{} << text;
  }
};

// What the filtered forms hand over: an already-streamed printer (the old
// `DPRINT_MATH(DPRINT << x << ENDL())` form), or a format and its args.
inline void dprint_any(Printer&) {}
template <class... Args>
inline void dprint_any(FormatString<std::type_identity_t<Args>...> fmt, const Args&... args) {
  Printer()(fmt, args...);
}

// Element (r, c) of a tile as a double, by data format (face layout when
// untilized is asked for).
inline bool tile_element(const uint8_t* tile, uint32_t format, int r, int c, bool untilized, double* out) {
  int idx = untilized ? ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15) : r * 32 + c;
  switch (format) {
    case 0: {  // Float32
      float f;
      std::memcpy(&f, tile + 4 * idx, 4);
      *out = f;
      return true;
    }
    case 5: {  // Float16_b
      uint16_t h;
      std::memcpy(&h, tile + 2 * idx, 2);
      *out = bf16_bits_to_float(h);
      return true;
    }
    case 1: {  // Float16
      _Float16 h;
      std::memcpy(&h, tile + 2 * idx, 2);
      *out = static_cast<double>(h);
      return true;
    }
    case 8: {  // Int32
      int32_t v;
      std::memcpy(&v, tile + 4 * idx, 4);
      *out = v;
      return true;
    }
    case 24: {  // UInt32
      uint32_t v;
      std::memcpy(&v, tile + 4 * idx, 4);
      *out = v;
      return true;
    }
    case 9: {  // UInt16
      uint16_t v;
      std::memcpy(&v, tile + 2 * idx, 2);
      *out = v;
      return true;
    }
    case 30: *out = tile[idx]; return true;  // UInt8
    default: return false;
  }
}

inline Printer& Printer::operator<<(const TileSlice& ts) {
  if (!on_) return *this;
  uint32_t format = ZYX_API.cb_format(ts.cb);
  uint32_t page = ZYX_API.cb_page_size(ts.cb);
  uint32_t ptr = ts.ptr_type == TSLICE_WR_PTR ? ZYX_API.cb_write_ptr(ts.cb) : ZYX_API.cb_read_ptr(ts.cb);
  const auto* tile = static_cast<const uint8_t*>(
      ZYX_API.l1_range(ptr + static_cast<uint32_t>(ts.tile_idx) * page, page, "TileSlice"));
  const SliceRange& r = ts.range;
  uint32_t hs = r.hs ? r.hs : 1, ws = r.ws ? r.ws : 1;
  for (uint32_t h = r.h0; h < r.h1 && h < 32; h += hs) {
    bool first = true;
    for (uint32_t w = r.w0; w < r.w1 && w < 32; w += ws) {
      double v = 0;
      if (!first) put(' ');
      first = false;
      if (!tile_element(tile, format, static_cast<int>(h), static_cast<int>(w), ts.print_untilized, &v)) {
        *this << "<TileSlice: data format " << format << " is not printable>";
        break;
      }
      if (format == 0 || format == 1 || format == 5)
        float_value(v);
      else
        *this << static_cast<long long>(v);
    }
    if (ts.endl_rows) *this << Endl{};
  }
  return *this;
}

// Prints a DST register tile as dprint_tensix_dest_reg lays it out: "Tile ID
// = n", then the tile's 64 face rows (faces 0-3, 16 rows each) of 16 values,
// fixed with width 8 and precision 4; by_face: a blank line after each face.
inline void print_dst_tile(uint32_t tile, bool by_face) {
  uint32_t is_int = 0;
  const uint32_t* t = ZYX_API.dst_tile(tile, &is_int);
#if defined(ARCH_WORMHOLE)
  if (!is_int && ZYX_API.fp32_dest_acc())
    Printer{} << "WARNING: Float32 on Wormhole displays limited precision - lower 16 mantissa bits are not shown"
              << Endl{};
#endif
  Printer{} << Fixed{} << SetW{8} << SetPrecision{4} << "Tile ID = " << tile << Endl{};
  for (int face = 0; face < 4; face++) {
    for (int row = 0; row < 16; row++) {
      Printer p;
      p << Fixed{} << SetPrecision{4};
      for (int c = 0; c < 16; c++) {
        uint32_t v = t[face * 256 + row * 16 + c];
        if (c) p << ' ';
        p << SetW{8};
        if (is_int) {
          p << static_cast<int32_t>(v);
        } else {
          float f;
          std::memcpy(&f, &v, 4);
          p << f;
        }
      }
      p << Endl{};
    }
    if (by_face) Printer{} << Endl{};
  }
}

}  // namespace zyx_emu_detail


// ---- DPRINT ----
#define DPRINT ::zyx_emu_detail::Printer{}
#define DEVICE_PRINT(...) (::zyx_emu_detail::Printer{}(__VA_ARGS__))

// Filtered forms: DATA0 prints only on riscv_0 (BRISC), DATA1 only on
// riscv_1 (NCRISC), UNPACK/MATH/PACK only in compute kernels, tagged as the
// TRISC (trisc0/1/2) that would print it on a card.
// One argument is tt-metal's form, a statement pasted as it is
// (`DPRINT_MATH(DPRINT << x << ENDL();)`, which may hold several statements)
// or a lone format string; more arguments are a format and its values.
#define ZYX_EMU_DPRINT_IF(cond, tag, ...)                                                  \
  do {                                                                                     \
    if constexpr (cond) {                                                                  \
      ::zyx_emu_detail::TagScope zyx_emu_tag_scope_(tag);                                  \
      ZYX_EMU_DPRINT_ARGS(ZYX_EMU_DPRINT_ONE_OR_MORE(__VA_ARGS__), __VA_ARGS__)            \
    }                                                                                      \
  } while (0)
#define ZYX_EMU_DPRINT_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define ZYX_EMU_DPRINT_ONE_OR_MORE(...)                                                                        \
  ZYX_EMU_DPRINT_PICK(__VA_ARGS__, MORE, MORE, MORE, MORE, MORE, MORE, MORE, MORE, MORE, MORE, MORE, MORE, MORE, \
                      MORE, MORE, ONE, )
#define ZYX_EMU_DPRINT_ARGS(n, ...) ZYX_EMU_DPRINT_ARGS_(n, __VA_ARGS__)
#define ZYX_EMU_DPRINT_ARGS_(n, ...) ZYX_EMU_DPRINT_##n(__VA_ARGS__)
#define ZYX_EMU_DPRINT_MORE(...) ::zyx_emu_detail::dprint_any(__VA_ARGS__);
// The statement after a sink: `sink << DPRINT << x;` streams as DPRINT would,
// `sink << "text";` prints the text, and any later statements run as written.
#define ZYX_EMU_DPRINT_ONE(...)                  \
  {                                              \
    ::zyx_emu_detail::DprintSink zyx_emu_sink_;  \
    zyx_emu_sink_ << __VA_ARGS__;                \
  }
#define DPRINT_DATA0(...) ZYX_EMU_DPRINT_IF(ZYX_EMU_PROCESSOR == 0, 0, __VA_ARGS__)
#define DPRINT_DATA1(...) ZYX_EMU_DPRINT_IF(ZYX_EMU_PROCESSOR == 1, 0, __VA_ARGS__)
// In a TRISC build (ZYX_EMU_TRISC 1-3) only that TRISC's prints.
#if defined(ZYX_EMU_TRISC)
#define ZYX_EMU_DPRINT_ON_TRISC(t) (ZYX_EMU_TRISC == (t))
#else
#define ZYX_EMU_DPRINT_ON_TRISC(t) (ZYX_EMU_PROCESSOR == 2)
#endif
#define DPRINT_UNPACK(...) ZYX_EMU_DPRINT_IF(ZYX_EMU_DPRINT_ON_TRISC(1), 1, __VA_ARGS__)
#define DPRINT_MATH(...) ZYX_EMU_DPRINT_IF(ZYX_EMU_DPRINT_ON_TRISC(2), 2, __VA_ARGS__)
#define DPRINT_PACK(...) ZYX_EMU_DPRINT_IF(ZYX_EMU_DPRINT_ON_TRISC(3), 3, __VA_ARGS__)
// tt-metal's DEVICE_PRINT_DATA0/1 filter by the kernel's NOC (noc_index).
#define DEVICE_PRINT_DATA0(...) ZYX_EMU_DPRINT_IF(ZYX_EMU_PROCESSOR != 2 && NOC_INDEX == 0, 0, __VA_ARGS__)
#define DEVICE_PRINT_DATA1(...) ZYX_EMU_DPRINT_IF(ZYX_EMU_PROCESSOR != 2 && NOC_INDEX == 1, 0, __VA_ARGS__)
#define DEVICE_PRINT_UNPACK(...) DPRINT_UNPACK(__VA_ARGS__)
#define DEVICE_PRINT_MATH(...) DPRINT_MATH(__VA_ARGS__)
#define DEVICE_PRINT_PACK(...) DPRINT_PACK(__VA_ARGS__)

inline zyx_emu_detail::Endl ENDL() { return {}; }
inline zyx_emu_detail::Hex HEX() { return {}; }
inline zyx_emu_detail::Dec DEC() { return {}; }
inline zyx_emu_detail::Oct OCT() { return {}; }
inline zyx_emu_detail::Fixed FIXED() { return {}; }
inline zyx_emu_detail::DefaultFloat DEFAULTFLOAT() { return {}; }
inline zyx_emu_detail::SetW SETW(int w) { return {w}; }
inline zyx_emu_detail::SetPrecision SETPRECISION(int p) { return {p}; }
inline zyx_emu_detail::Bf16Value BF16(uint16_t v) { return {v}; }
inline float F32(float f) { return f; }
inline uint32_t U32(uint32_t v) { return v; }

// ---- ASSERT and WAYPOINT ----
// A failing ASSERT is a run error naming the core, the section, the
// condition and its source line (the kernel's file is "<kernel name>.cpp").
#ifndef ASSERT
#define ASSERT(condition, ...)                                                          \
  do {                                                                                  \
    if (!(condition)) ZYX_API.assert_fail(#condition, __FILE__, static_cast<uint32_t>(__LINE__)); \
  } while (0)
#endif
// The last waypoint of each section shows in deadlock reports.
#define WAYPOINT(x) ZYX_API.waypoint(x)
// tt-metal's assert kinds (hostdev/dev_msgs.h), which its watcher reports.
enum debug_assert_type_t {
  DebugAssertOK = 2,
  DebugAssertTripped = 3,
  DebugAssertNCriscNOCReadsFlushedTripped = 4,
  DebugAssertNCriscNOCNonpostedWritesSentTripped = 5,
  DebugAssertNCriscNOCNonpostedAtomicsFlushedTripped = 6,
  DebugAssertNCriscNOCPostedWritesSentTripped = 7,
  DebugAssertRtaOutOfBounds = 8,
  DebugAssertCrtaOutOfBounds = 9,
  DebugAssertHwFault = 10,
};
// What a failing ASSERT calls on a card: here the same run error as ASSERT,
// at the line the caller passes in the caller's file; a kind other than
// DebugAssertTripped is named by its number.
inline void assert_and_hang(uint32_t line_num, debug_assert_type_t assert_type = DebugAssertTripped,
                            const char* file = __builtin_FILE()) {
  char what[48];
  if (assert_type == DebugAssertTripped)
    std::snprintf(what, sizeof what, "assert_and_hang");
  else
    std::snprintf(what, sizeof what, "assert_and_hang, assert type %d", static_cast<int>(assert_type));
  ZYX_API.assert_fail(what, file, line_num);
}

// ---- debug checkpoints (api/debug/checkpoint.h) ----
// tt-metal builds them only with its checkpoint feature on
// (DEBUG_CHECKPOINT_ENABLED), which stops a core's RISCs at each checkpoint
// until all arrive; without it (its default) they are empty. With it,
// zyx_emu/debug_extra.h defines the first two; the global form stays empty.
#define DEBUG_CHECKPOINT(name)
#define DEBUG_CHECKPOINT_EX(name, num_cbs, words_per_cb, dump_dest)
#define DEBUG_CHECKPOINT_GLOBAL(name, sem_id, barrier_coord_x, barrier_coord_y, num_cores)

// ---- debug dumps (api/debug/dump.h), printed as DPRINT lines ----
namespace zyx_emu_detail {
// num_words 32-bit words from L1 address addr, four to a line, each line
// led by the index of its first word.
inline void dump_words(uint32_t addr, uint32_t num_words) {
  if (num_words == 0) return;
  const uint8_t* p = static_cast<const uint8_t*>(ZYX_API.l1_range(addr, 4 * num_words, "debug_dump"));
  for (uint32_t w = 0; w < num_words; w += 4) {
    Printer line;
    line << "  [" << w << "]" << HEX();
    for (uint32_t j = w; j < num_words && j < w + 4; j++) {
      uint32_t v;
      std::memcpy(&v, p + 4 * j, 4);
      line << " " << v;
    }
    line << ENDL();
  }
}
}  // namespace zyx_emu_detail
// A CB's state (size, read and write pointers, pages acknowledged and
// received) and num_words words at its read pointer.
inline void debug_dump_cb(uint32_t cb_id, uint32_t num_words = 0) {
  const LocalCBInterface& cb = get_local_cb_interface(cb_id);
  DPRINT << "CB" << cb_id << " sz=" << cb.fifo_size << " rd=" << cb.fifo_rd_ptr << " wr=" << cb.fifo_wr_ptr
         << " ack=" << static_cast<uint32_t>(cb.tiles_acked) << " rcv=" << static_cast<uint32_t>(cb.tiles_received)
         << ENDL();
  zyx_emu_detail::dump_words(cb.fifo_rd_ptr, num_words);
}
// Tile tile_idx at a CB's read pointer, as values of the CB's data format.
inline void debug_dump_cb_typed(uint32_t cb_id, uint32_t tile_idx = 0, bool untilize = true) {
  DPRINT << TileSlice(static_cast<uint8_t>(cb_id), static_cast<int>(tile_idx), SliceRange::hw0_32_16(),
                      TSLICE_INPUT_CB, TSLICE_RD_PTR, true, untilize);
}
// num_words words of L1 from addr.
inline void debug_dump_l1(uint32_t addr, uint32_t num_words) {
  DPRINT << "L1 " << HEX() << addr << DEC() << " words=" << num_words << ENDL();
  zyx_emu_detail::dump_words(addr, num_words);
}

// ---- profiler markers: accepted; the emulator does not time kernels ----
#define DeviceZoneScopedN(name)
#define DeviceZoneScopedMainN(name)
#define DeviceZoneScopedMainChildN(name)
#define DeviceZoneScopedSumN1(name)
#define DeviceZoneScopedSumN2(name)
#define DeviceZoneSetCounter(counter)
#define DeviceTimestampedData(name, data)
#define DeviceRecordEvent(event_id)

// ---- watcher features: the emulator's watcher is on, so these are what a
// card does with its watcher on (watcher_pause, push_to_ring_buffer in
// zyx_emu/debug_extra.h). DEVICE_PRINT needs no buffer lock.
#define PAUSE()      \
  do {               \
    watcher_pause(); \
  } while (0)
#define WATCHER_RING_BUFFER_PUSH(x) push_to_ring_buffer(x)
#define DEVICE_PRINT_INITIALIZE_LOCK()

// ---- dprint_pages.h ----
// One line with the fields of a CB's interface (L1 byte addresses and sizes).
inline void print_cb_details(uint32_t cb_id) {
  const zyx_emu_cb_interface& c = *ZYX_API.cb_interface(cb_id);
  DPRINT << "cb_id " << cb_id << ": { " << "size: " << c.fifo_size << ", " << "limit: " << c.fifo_limit << ", "
         << "page_size: " << c.fifo_page_size << ", " << "num_pages: " << c.fifo_num_pages << ", "
         << "rd_ptr: " << c.fifo_rd_ptr << ", " << "wr_ptr: " << c.fifo_wr_ptr << ", "
         << "wr_tile_ptr: " << c.fifo_wr_tile_ptr << " }" << ENDL();
}

namespace tt::data_movement::common {
// Pages [start, start + npages) of elts_per_page elements at an L1 address,
// one line per page: "<page>: " and the elements.
namespace zyx_detail {
template <typename T>
inline const T* l1_elems(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start, const char* op) {
  uint64_t n = uint64_t(elts_per_page) * (uint64_t(start) + npages);
  if (n == 0) return nullptr;
  if (n * sizeof(T) > 0xffffffffull) ZYX_API.fail(op);
  return static_cast<const T*>(ZYX_API.l1_range(l1_addr, static_cast<uint32_t>(n * sizeof(T)), op));
}
}  // namespace zyx_detail
inline void print_bf16_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
  const uint16_t* p = zyx_detail::l1_elems<uint16_t>(l1_addr, elts_per_page, npages, start, "print_bf16_pages");
  for (uint32_t page = 0; page < npages; page++) {
    auto d = DPRINT;
    d << start + page << ": ";
    for (uint32_t j = 0; j < elts_per_page; j++) d << BF16(p[(start + page) * elts_per_page + j]) << " ";
    d << ENDL();
  }
}
// As tt-metal's, each 32-bit word is converted to float by value (F32(word)).
inline void print_f32_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
  const uint32_t* p = zyx_detail::l1_elems<uint32_t>(l1_addr, elts_per_page, npages, start, "print_f32_pages");
  for (uint32_t page = 0; page < npages; page++) {
    auto d = DPRINT;
    d << start + page << ": ";
    for (uint32_t j = 0; j < elts_per_page; j++) d << F32(static_cast<float>(p[(start + page) * elts_per_page + j])) << " ";
    d << ENDL();
  }
}
inline void print_u8_pages(uint32_t l1_addr, uint32_t bytes_per_page, uint32_t npages, uint32_t start = 0) {
  const uint8_t* p = zyx_detail::l1_elems<uint8_t>(l1_addr, bytes_per_page, npages, start, "print_u8_pages");
  for (uint32_t page = 0; page < npages; page++) {
    auto d = DPRINT;
    d << start + page << ": ";
    for (uint32_t j = 0; j < bytes_per_page; j++)
      d << SETW(2) << HEX() << "0x" << static_cast<uint32_t>(p[(start + page) * bytes_per_page + j]) << " ";
    d << DEC() << ENDL();
  }
}
inline void print_u16_pages(uint32_t l1_addr, uint32_t elts_per_page, uint32_t npages, uint32_t start = 0) {
  const uint16_t* p = zyx_detail::l1_elems<uint16_t>(l1_addr, elts_per_page, npages, start, "print_u16_pages");
  for (uint32_t page = 0; page < npages; page++) {
    auto d = DPRINT;
    d << start + page << ": ";
    for (uint32_t j = 0; j < elts_per_page; j++) d << static_cast<uint32_t>(p[(start + page) * elts_per_page + j]) << " ";
    d << ENDL();
  }
}
}  // namespace tt::data_movement::common

namespace tt::compute::common {
// Rows [start_row, end_row) of a CB tile at the read pointer, columns
// [start_col, end_col), between "======" and "++++++" lines.
inline void print_tile_rows(uint32_t cb_idx, uint32_t tile_idx, bool untilize = false, uint16_t start_row = 0,
                            uint16_t end_row = 32, uint8_t start_col = 0, uint8_t end_col = 32) {
  DPRINT << "cb_idx: " << cb_idx << " tile_idx: " << tile_idx << ENDL();
  DPRINT << "======" << ENDL();
  for (uint16_t r = start_row; r < end_row; ++r)
    DPRINT << static_cast<uint32_t>(r) << " : "
           << TileSlice(static_cast<uint8_t>(cb_idx), static_cast<int>(tile_idx),
                        SliceRange{static_cast<uint8_t>(r), static_cast<uint8_t>(r + 1), 1, start_col, end_col, 1},
                        true, untilize)
           << ENDL();
  DPRINT << "++++++" << ENDL();
}
inline void print_full_tile(uint32_t cb_id, uint32_t tile_id = 0, bool untilize = false) {
  DPRINT << "======" << ENDL();
  for (uint16_t r = 0; r < 32; ++r)
    DPRINT << static_cast<uint32_t>(r) << " : "
           << TileSlice(static_cast<uint8_t>(cb_id), static_cast<int>(tile_id),
                        SliceRange{static_cast<uint8_t>(r), static_cast<uint8_t>(r + 1), 1, 0, 32, 1}, true, untilize)
           << ENDL();
  DPRINT << "++++++" << ENDL();
}
}  // namespace tt::compute::common
// The unqualified name of earlier tt-metal releases.
using tt::compute::common::print_full_tile;

// ---- dprint_tensix.h: DST and struct fields (compute kernels) ----
template <bool print_by_face = false>
inline void dprint_tensix_dest_reg(int tile_id = 0) {
  ::zyx_emu_detail::print_dst_tile(static_cast<uint32_t>(tile_id), print_by_face);
}
// The name of a DataFormat value (no newline).
inline void dprint_data_format(uint8_t data_format) {
  const char* n = "INVALID DATA FORMAT";
  switch (data_format) {
    case 0: n = "Float32"; break;
    case 1: n = "Float16"; break;
    case 2: n = "Bfp8"; break;
    case 3: n = "Bfp4"; break;
    case 11: n = "Bfp2"; break;
    case 5: n = "Float16_b"; break;
    case 6: n = "Bfp8_b"; break;
    case 7: n = "Bfp4_b"; break;
    case 15: n = "Bfp2_b"; break;
    case 10: n = "Lf8"; break;
    case 14: n = "Int8"; break;
    case 30: n = "UInt8"; break;
    case 9: n = "UInt16"; break;
    case 8: n = "Int32"; break;
    case 24: n = "UInt32"; break;
    case 4: n = "Tf32"; break;
    default: break;
  }
  DPRINT << n;
}
// "name: " and the field (word & mask) >> shamt, in decimal or as 0x-hex.
inline void dprint_tensix_struct_field(uint32_t word, uint32_t mask, uint8_t shamt, const char* name,
                                       bool printDec = false) {
  auto d = DPRINT;
  d << name << ": ";
  if (printDec)
    d << DEC();
  else
    d << "0x" << HEX();
  d << ((word & mask) >> shamt) << ENDL();
}

// ---- dprint_tensix.h: DST row addressing and word helpers ----
// tt-metal's DST row dumps address DST rows through these; the emulator's
// dprint_tensix_dest_reg reads its DST model directly, and kernels may call
// them for their own arithmetic.
constexpr uint16_t NUM_FACES_PER_TILE = 4;
constexpr uint16_t NUM_ROWS_PER_FACE = 16;
constexpr uint16_t NUM_ROWS_PER_TILE = NUM_FACES_PER_TILE * NUM_ROWS_PER_FACE;
// Blackhole's DEST_ACCESS_CFG_remap_addrs: row bits 5:3 rotate (bit 3 to 5,
// bits 5:4 to 4:3).
inline uint16_t get_remapped_row_id(uint16_t row_id) {
  return static_cast<uint16_t>((row_id & 0xffc7) | ((row_id & 0x0008) << 2) | ((row_id & 0x0030) >> 1));
}
// Blackhole's DEST_ACCESS_CFG_swizzle_32b: row bits 3:2 permuted, by bit 4.
inline uint16_t get_swizzled_row_id(uint16_t row_id) {
  const uint16_t rest = row_id & 0xfff3;
  if (!(row_id & 0x10)) return static_cast<uint16_t>(rest | ((row_id & 0x4) << 1) | ((row_id & 0x8) >> 1));
  static constexpr uint16_t kBits32[4] = {0x8, 0x0, 0xc, 0x4};
  return static_cast<uint16_t>(rest | kBits32[(row_id & 0xc) >> 2]);
}
inline uint16_t get_logical_row_id(uint16_t tile_id, uint16_t face_id, uint16_t row_id) {
  return static_cast<uint16_t>(NUM_ROWS_PER_TILE * tile_id + NUM_ROWS_PER_FACE * face_id + row_id);
}
// The DST row of a logical row: with 32-bit DST each group of 8 rows is
// followed by the 8 rows of its low mantissa halves. Blackhole's remap and
// swizzle flags are configuration registers the emulator does not keep: they
// count as off.
inline uint16_t get_dest_row_id(uint16_t logical_row_id, bool is_float32) {
  uint16_t row = logical_row_id;
  if (is_float32) row = static_cast<uint16_t>(((row & 0xfff8) << 1) | (row & 0x7));
  return row;
}
inline uint16_t lo_word(uint32_t dword) { return static_cast<uint16_t>(dword & 0xffff); }
inline uint16_t hi_word(uint32_t dword) { return lo_word(dword >> 16); }
// A float32 from DST's two halves: the high half holds sign (bit 15), the
// top 7 mantissa bits (14:8) and the exponent (7:0); the low half the other
// 16 mantissa bits.
inline uint32_t reconstruct_float32(uint32_t float16, uint32_t mantissa16) {
  return ((float16 & 0x8000u) << 16) | ((float16 & 0xffu) << 23) | ((float16 & 0x7f00u) << 8) | mantissa16;
}

// ---- dprint_tile.h: the data formats tt-metal's tile printer handles ----
// Bytes per datum as the printer steps (block-float formats: one byte).
constexpr uint32_t dprint_datum_size(const DataFormat& format) {
  switch (format) {
    case DataFormat::Float32: case DataFormat::UInt32: case DataFormat::Int32: return 4;
    case DataFormat::UInt16: case DataFormat::Float16: case DataFormat::Float16_b: return 2;
    case DataFormat::Bfp2: case DataFormat::Bfp2_b: case DataFormat::Bfp4: case DataFormat::Bfp4_b:
    case DataFormat::Bfp8: case DataFormat::Bfp8_b: case DataFormat::Int8: case DataFormat::Lf8:
    case DataFormat::UInt8: return 1;
    default: return 0;
  }
}
constexpr bool is_bfp(const DataFormat& format) {
  switch (format) {
    case DataFormat::Bfp2: case DataFormat::Bfp2_b: case DataFormat::Bfp4: case DataFormat::Bfp4_b:
    case DataFormat::Bfp8: case DataFormat::Bfp8_b: return true;
    default: return false;
  }
}
// The formats tt-metal's TileSlice prints (others print an error there).
constexpr bool is_supported_format(const DataFormat& format) {
  switch (format) {
    case DataFormat::Bfp4_b: case DataFormat::Bfp8_b: case DataFormat::Float16_b: case DataFormat::Float32:
    case DataFormat::Int8: case DataFormat::UInt8: case DataFormat::UInt16: case DataFormat::UInt32:
    case DataFormat::Int32: return true;
    default: return false;
  }
}

#include "zyx_emu/debug_tensix_pack.h"
#include "zyx_emu/debug_tensix_unpack.h"
#include "zyx_emu/debug_extra.h"
