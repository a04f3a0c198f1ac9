// SFPI, the SFPU's C++ programming model, on zyx-tt's Tensix emulator
// (kernels include it as "sfpi.h"). A vector is 32 lanes of 32 bits; float
// arithmetic is the Wormhole SFPU's (zyx_emu/sfpi_arith.h); v_if/v_elseif/
// v_else/v_endif keep a stack of lane enables that every assignment and DST
// store obeys; dst_reg[i] reads and writes DST where the SFPU's counter points,
// as SFPLOAD/SFPSTORE do. docs/emulator.md ("SFPI") lists what is modelled.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "zyx_emu/common.h"
#include "zyx_emu/sfpi_arith.h"

#ifndef sfpi_inline
#define sfpi_inline inline __attribute__((always_inline))
#endif

namespace sfpi {

// The model's own names live in impl_, as real SFPI's do: tt-metal's math
// build brings namespace sfpi into kernels, which may have a `detail` of
// their own.
namespace impl_ {

constexpr int kLanes = 32;
constexpr uint32_t kAllLanes = 0xffffffffu;

// The lanes of a vector register.
struct Lanes {
  uint32_t w[kLanes] = {};
  constexpr Lanes() = default;
  explicit constexpr Lanes(uint32_t v) {
    for (auto& x : w) x = v;
  }
};

// Per-thread SFPU state a kernel object keeps: the lane-enable stack, the
// programmable constant registers (LReg 12-14) and LReg 0-7 for l_reg. A
// kernel's SFPU code never blocks, so cores sharing a thread never interleave
// inside it.
struct State {
  struct Frame {
    uint32_t parent, taken;
  };
  uint32_t enabled = kAllLanes;
  int depth = 0;
  Frame stack[64];
  Lanes prgm[3];
  Lanes lreg[8];
  uint64_t rng = 0x2545f4914f6cdd1dull;
};
inline thread_local State tls_state;
sfpi_inline State& state() { return tls_state; }

// The SFPU's PRNG stand-in for stochastic rounding (23 bits).
inline uint32_t prng23() {
  uint64_t& s = state().rng;
  s ^= s << 13, s ^= s >> 7, s ^= s << 17;
  return uint32_t(s >> 20) & 0x7fffffu;
}

// Copies the enabled lanes of `from` into `to` (all of them outside v_if).
sfpi_inline void assign(Lanes& to, const Lanes& from) {
  uint32_t m = state().enabled;
  if (m == kAllLanes) {
    std::memcpy(to.w, from.w, sizeof to.w);
    return;
  }
  for (int i = 0; i < kLanes; i++)
    if (m >> i & 1) to.w[i] = from.w[i];
}

constexpr uint32_t fbits(float f) { return __builtin_bit_cast(uint32_t, f); }

}  // namespace impl_

class vFloat;
class vInt;
class vUInt;

// A 16-bit float immediate: sFloat16b is bf16 (a float truncated), sFloat16a
// fp16 (loaded with the exponent rebiased, as SFPLOADI does).
class sFloat16b {
  uint32_t v_;

 public:
  explicit constexpr sFloat16b(float f) : v_(impl_::fbits(f) >> 16) {}
  explicit constexpr sFloat16b(int32_t v) : v_(uint32_t(v) & 0xffff) {}
  explicit constexpr sFloat16b(uint32_t v) : v_(v & 0xffff) {}
  constexpr uint32_t get() const { return v_; }
};
class sFloat16a {
  uint32_t v_;

 public:
  explicit sFloat16a(float f) : v_(impl_::fp16_bits(impl_::fbits(f))) {}
  explicit constexpr sFloat16a(int32_t v) : v_(uint32_t(v) & 0xffff) {}
  explicit constexpr sFloat16a(uint32_t v) : v_(v & 0xffff) {}
  constexpr uint32_t get() const { return v_; }
};
using s2vFloat16b = sFloat16b;
using s2vFloat16a = sFloat16a;

// 32 fp32 lanes.
class vFloat : public impl_::Lanes {
 public:
  constexpr vFloat() = default;
  constexpr vFloat(const vFloat&) = default;
  constexpr vFloat(float f) : Lanes(impl_::fbits(f)) {}
  constexpr vFloat(sFloat16b h) : Lanes(h.get() << 16) {}
  vFloat(sFloat16a h) : Lanes(impl_::loadi_fp16(h.get())) {}
  explicit constexpr vFloat(const Lanes& l) : Lanes(l) {}
  vFloat& operator=(const vFloat& o) {
    impl_::assign(*this, o);
    return *this;
  }
  vFloat& operator+=(const vFloat& o);
  vFloat& operator-=(const vFloat& o);
  vFloat& operator*=(const vFloat& o);
};

// 32 lanes of 32-bit integers (two's complement; vUInt unsigned).
class vInt : public impl_::Lanes {
 public:
  constexpr vInt() = default;
  constexpr vInt(const vInt&) = default;
  // Any integer (not a float: lut2's overloads tell the two apart).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  constexpr vInt(I v) : Lanes(uint32_t(v)) {}
  vInt(const vUInt& u);
  explicit constexpr vInt(const Lanes& l) : Lanes(l) {}
  vInt& operator=(const vInt& o) {
    impl_::assign(*this, o);
    return *this;
  }
  vInt& operator+=(const vInt& o);
  vInt& operator-=(const vInt& o);
  vInt& operator&=(const vInt& o);
  vInt& operator|=(const vInt& o);
  vInt& operator^=(const vInt& o);
  vInt& operator<<=(unsigned n);
};

class vUInt : public impl_::Lanes {
 public:
  constexpr vUInt() = default;
  constexpr vUInt(const vUInt&) = default;
  // Any integer (not a float: lut2's overloads tell the two apart).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  constexpr vUInt(I v) : Lanes(uint32_t(v)) {}
  vUInt(const vInt& i) : Lanes(i) {}
  explicit constexpr vUInt(const Lanes& l) : Lanes(l) {}
  vUInt& operator=(const vUInt& o) {
    impl_::assign(*this, o);
    return *this;
  }
  vUInt& operator+=(const vUInt& o);
  vUInt& operator-=(const vUInt& o);
  vUInt& operator&=(const vUInt& o);
  vUInt& operator|=(const vUInt& o);
  vUInt& operator^=(const vUInt& o);
  vUInt& operator<<=(unsigned n);
  vUInt& operator>>=(unsigned n);
};

inline vInt::vInt(const vUInt& u) : Lanes(u) {}

// A vector's bits as another vector type.
template <class To, class From>
sfpi_inline To reinterpret(const From& v) {
  return To(static_cast<const impl_::Lanes&>(v));
}

namespace impl_ {

template <class T, class F>
sfpi_inline T map(const Lanes& a, F f) {
  Lanes r;
  for (int i = 0; i < kLanes; i++) r.w[i] = f(a.w[i]);
  return T(r);
}
template <class T, class F>
sfpi_inline T map2(const Lanes& a, const Lanes& b, F f) {
  Lanes r;
  for (int i = 0; i < kLanes; i++) r.w[i] = f(a.w[i], b.w[i]);
  return T(r);
}
sfpi_inline vFloat mad3(const Lanes& a, const Lanes& b, const Lanes& c) {
  Lanes r;
  for (int i = 0; i < kLanes; i++) r.w[i] = mad_fast(a.w[i], b.w[i], c.w[i]);
  return vFloat(r);
}
sfpi_inline vFloat negate(const Lanes& a) {
  return map<vFloat>(a, [](uint32_t x) { return x ^ kSign; });
}

}  // namespace impl_

// A product not yet rounded: SFPI's compiler folds a multiply into the add
// or subtract that consumes it (one SFPMAD), so `a * b + c` rounds once.
// Kept alone it becomes a vFloat (SFPMUL: a * b + 0).
struct vProd {
  vFloat a, b;
  operator vFloat() const { return impl_::mad3(a, b, impl_::Lanes(0u)); }
};

sfpi_inline vProd operator*(const vFloat& a, const vFloat& b) { return vProd{a, b}; }
sfpi_inline vFloat operator+(const vFloat& a, const vFloat& b) {
  return impl_::mad3(a, impl_::Lanes(impl_::fbits(1.0f)), b);
}
sfpi_inline vFloat operator-(const vFloat& a, const vFloat& b) {
  return impl_::mad3(b, impl_::Lanes(impl_::fbits(-1.0f)), a);
}
sfpi_inline vFloat operator-(const vFloat& a) { return impl_::negate(a); }
sfpi_inline vFloat operator+(const vFloat& a) { return a; }
sfpi_inline vFloat operator+(const vProd& p, const vFloat& c) { return impl_::mad3(p.a, p.b, c); }
sfpi_inline vFloat operator+(const vFloat& c, const vProd& p) { return impl_::mad3(p.a, p.b, c); }
sfpi_inline vFloat operator-(const vProd& p, const vFloat& c) { return impl_::mad3(p.a, p.b, impl_::negate(c)); }
sfpi_inline vFloat operator-(const vFloat& c, const vProd& p) { return impl_::mad3(impl_::negate(p.a), p.b, c); }
sfpi_inline vFloat operator+(const vProd& p, const vProd& q) { return impl_::mad3(q.a, q.b, vFloat(p)); }
sfpi_inline vFloat operator-(const vProd& p, const vProd& q) {
  return impl_::mad3(impl_::negate(q.a), q.b, vFloat(p));
}
sfpi_inline vFloat operator-(const vProd& p) { return impl_::negate(vFloat(p)); }

inline vFloat& vFloat::operator+=(const vFloat& o) { return *this = *this + o; }
inline vFloat& vFloat::operator-=(const vFloat& o) { return *this = *this - o; }
inline vFloat& vFloat::operator*=(const vFloat& o) { return *this = vFloat(*this * o); }

// Integer arithmetic wraps (SFPIADD, SFPAND/OR/XOR/NOT, SFPSHFT).
#define ZYX_SFPI_INT_OPS(T)                                                                              \
  sfpi_inline T operator+(const T& a, const T& b) {                                                     \
    return impl_::map2<T>(a, b, [](uint32_t x, uint32_t y) { return x + y; });                         \
  }                                                                                                      \
  sfpi_inline T operator-(const T& a, const T& b) {                                                     \
    return impl_::map2<T>(a, b, [](uint32_t x, uint32_t y) { return x - y; });                         \
  }                                                                                                      \
  sfpi_inline T operator&(const T& a, const T& b) {                                                     \
    return impl_::map2<T>(a, b, [](uint32_t x, uint32_t y) { return x & y; });                         \
  }                                                                                                      \
  sfpi_inline T operator|(const T& a, const T& b) {                                                     \
    return impl_::map2<T>(a, b, [](uint32_t x, uint32_t y) { return x | y; });                         \
  }                                                                                                      \
  sfpi_inline T operator^(const T& a, const T& b) {                                                     \
    return impl_::map2<T>(a, b, [](uint32_t x, uint32_t y) { return x ^ y; });                         \
  }                                                                                                      \
  sfpi_inline T operator~(const T& a) { return impl_::map<T>(a, [](uint32_t x) { return ~x; }); }      \
  sfpi_inline T operator-(const T& a) { return impl_::map<T>(a, [](uint32_t x) { return 0u - x; }); } \
  sfpi_inline T operator<<(const T& a, unsigned n) {                                                    \
    return impl_::map<T>(a, [n](uint32_t x) { return x << (n & 31); });                                \
  }                                                                                                      \
  inline T& T::operator+=(const T& o) { return *this = *this + o; }                                      \
  inline T& T::operator-=(const T& o) { return *this = *this - o; }                                      \
  inline T& T::operator&=(const T& o) { return *this = *this & o; }                                      \
  inline T& T::operator|=(const T& o) { return *this = *this | o; }                                      \
  inline T& T::operator^=(const T& o) { return *this = *this ^ o; }                                      \
  inline T& T::operator<<=(unsigned n) { return *this = *this << n; }
ZYX_SFPI_INT_OPS(vInt)
ZYX_SFPI_INT_OPS(vUInt)
#undef ZYX_SFPI_INT_OPS
sfpi_inline vUInt operator>>(const vUInt& a, unsigned n) {
  return impl_::map<vUInt>(a, [n](uint32_t x) { return x >> (n & 31); });
}
inline vUInt& vUInt::operator>>=(unsigned n) { return *this = *this >> n; }

// ---- conditions and predication ----

// A per-lane condition (bit i: lane i).
struct vBool {
  uint32_t m;
};
sfpi_inline vBool operator&&(vBool a, vBool b) { return {a.m & b.m}; }
sfpi_inline vBool operator||(vBool a, vBool b) { return {a.m | b.m}; }
sfpi_inline vBool operator!(vBool a) { return {~a.m}; }

namespace impl_ {

enum class Cmp { LT, LE, GT, GE, EQ, NE };

// SFPSETCC on a word read as a two's-complement integer.
sfpi_inline bool setcc(uint32_t d, Cmp c) {
  int32_t v = int32_t(d);
  switch (c) {
    case Cmp::LT: return v < 0;
    case Cmp::LE: return v <= 0;
    case Cmp::GT: return v > 0;
    case Cmp::GE: return v >= 0;
    case Cmp::EQ: return v == 0;
    default: return v != 0;
  }
}
sfpi_inline vBool test(const Lanes& d, Cmp c) {
  uint32_t m = 0;
  for (int i = 0; i < kLanes; i++) m |= uint32_t(setcc(d.w[i], c)) << i;
  return {m};
}

}  // namespace impl_

// Float compares subtract (SFPMAD a - b, flushing as it does) and test the
// difference's sign and zero; against a literal 0 they test the value itself.
#define ZYX_SFPI_CMP(op, c)                                                               \
  sfpi_inline vBool operator op(const vFloat& a, const vFloat& b) {                      \
    return impl_::test(a - b, impl_::Cmp::c);                                          \
  }                                                                                       \
  sfpi_inline vBool operator op(const vFloat& a, float b) {                              \
    return b == 0.0f ? impl_::test(a, impl_::Cmp::c) : impl_::test(a - vFloat(b), impl_::Cmp::c); \
  }                                                                                       \
  sfpi_inline vBool operator op(const vInt& a, const vInt& b) { return impl_::test(a - b, impl_::Cmp::c); } \
  sfpi_inline vBool operator op(const vUInt& a, const vUInt& b) { return impl_::test(a - b, impl_::Cmp::c); }
ZYX_SFPI_CMP(<, LT)
ZYX_SFPI_CMP(<=, LE)
ZYX_SFPI_CMP(>, GT)
ZYX_SFPI_CMP(>=, GE)
ZYX_SFPI_CMP(==, EQ)
ZYX_SFPI_CMP(!=, NE)
#undef ZYX_SFPI_CMP

namespace impl_ {

// One v_if ... v_endif (or v_block): the enables before it and the lanes a
// branch has taken. Nested blocks push on the per-thread stack.
class CCScope {
 public:
  CCScope() {
    State& s = state();
    if (s.depth == int(sizeof s.stack / sizeof s.stack[0])) ZYX_API.fail("SFPI: v_if nested too deep");
    s.stack[s.depth++] = {s.enabled, 0};
  }
  ~CCScope() {
    State& s = state();
    s.enabled = s.stack[--s.depth].parent;
  }
  CCScope(const CCScope&) = delete;
  CCScope& operator=(const CCScope&) = delete;
  void if_(vBool c) { branch(top().parent & c.m); }
  void if_(const vInt& v) { if_(v != vInt(0)); }
  void if_(const vUInt& v) { if_(v != vUInt(0u)); }
  template <class C>
  void elseif_(const C& c) {
    state().enabled = top().parent & ~top().taken;
    if_(c);
  }
  void else_() { state().enabled = top().parent & ~top().taken; }
  void and_(vBool c) { state().enabled &= c.m; }

 private:
  static State::Frame& top() { return state().stack[state().depth - 1]; }
  void branch(uint32_t lanes) {
    lanes &= ~top().taken;
    top().taken |= lanes;
    state().enabled = lanes;
  }
};

}  // namespace impl_

// ---- DST ----

namespace impl_ {

inline Lanes dst_load(int32_t addr) {
  uint32_t flags = 0;
  const uint32_t* p = ZYX_API.sfpu_dst(ZYX_SFPU_LOAD, addr, &flags);
  Lanes r;
  for (int l = 0; l < kLanes; l++) r.w[l] = load_word(p[lane_word(l, flags)], flags);
  return r;
}
inline void dst_store(int32_t addr, const Lanes& v) {
  uint32_t flags = 0;
  uint32_t* p = ZYX_API.sfpu_dst(ZYX_SFPU_STORE, addr, &flags);
  uint32_t m = state().enabled;
  for (int l = 0; l < kLanes; l++)
    if (m >> l & 1) p[lane_word(l, flags)] = store_word(v.w[l], flags);
}

}  // namespace impl_

// dst_reg[i]: DST rows counter + 2i and the next (SFPLOAD/SFPSTORE's
// address), read when made, written by assignment.
class DstRef : public vFloat {
  int32_t addr_;

 public:
  explicit DstRef(int32_t addr) : vFloat(vFloat(impl_::dst_load(addr))), addr_(addr) {}
  DstRef(const DstRef&) = default;
  const DstRef& operator=(const vFloat& v) const {
    impl_::dst_store(addr_, v);
    return *this;
  }
  const DstRef& operator=(const DstRef& v) const { return *this = static_cast<const vFloat&>(v); }
  const DstRef& operator=(const vInt& v) const {
    impl_::dst_store(addr_, v);
    return *this;
  }
  const DstRef& operator=(const vUInt& v) const {
    impl_::dst_store(addr_, v);
    return *this;
  }
  const DstRef& operator=(float f) const { return *this = vFloat(f); }
  const DstRef& operator+=(const vFloat& v) const { return *this = *this + v; }
  const DstRef& operator-=(const vFloat& v) const { return *this = *this - v; }
  const DstRef& operator*=(const vFloat& v) const { return *this = vFloat(*this * v); }
  operator vInt() const { return vInt(static_cast<const impl_::Lanes&>(*this)); }
  operator vUInt() const { return vUInt(static_cast<const impl_::Lanes&>(*this)); }
};

struct DstReg {
  DstRef operator[](int32_t i) const { return DstRef(2 * i); }
  // dst_reg++: the counter moves two rows (SFP_DESTREG_STRIDE).
  void operator++(int) const { ZYX_API.sfpu_dst(ZYX_SFPU_INCR, 2, nullptr); }
  void operator++() const { ZYX_API.sfpu_dst(ZYX_SFPU_INCR, 2, nullptr); }
  void operator+=(int n) const { ZYX_API.sfpu_dst(ZYX_SFPU_INCR, 2 * n, nullptr); }
};
inline constexpr DstReg dst_reg{};

// ---- local and constant registers ----

enum LRegs { LReg0 = 0, LReg1, LReg2, LReg3, LReg4, LReg5, LReg6, LReg7, LRegCount };

// l_reg[LRegs::LRegN]: LReg N, shared with raw SFPU code on the card.
struct LRegRef {
  int n;
  operator vFloat() const { return vFloat(impl_::state().lreg[n]); }
  operator vInt() const { return vInt(impl_::state().lreg[n]); }
  operator vUInt() const { return vUInt(impl_::state().lreg[n]); }
  const LRegRef& operator=(const impl_::Lanes& v) const {
    impl_::assign(impl_::state().lreg[n], v);
    return *this;
  }
};
struct LRegFile {
  LRegRef operator[](int n) const { return LRegRef{n & 7}; }
};
inline constexpr LRegFile l_reg{};

// The programmable constants (LReg 12-14) as floats and as integers.
struct PrgmFloat {
  int n;
  operator vFloat() const { return vFloat(impl_::state().prgm[n]); }
  const PrgmFloat& operator=(float f) const {
    impl_::state().prgm[n] = impl_::Lanes(impl_::fbits(f));
    return *this;
  }
  const PrgmFloat& operator=(const vFloat& v) const {
    impl_::state().prgm[n] = v;
    return *this;
  }
};
struct PrgmInt {
  int n;
  operator vInt() const { return vInt(impl_::state().prgm[n]); }
  const PrgmInt& operator=(int32_t v) const {
    impl_::state().prgm[n] = impl_::Lanes(uint32_t(v));
    return *this;
  }
};
inline constexpr PrgmFloat vConstFloatPrgm0{0}, vConstFloatPrgm1{1}, vConstFloatPrgm2{2};
inline constexpr PrgmInt vConstIntPrgm0{0}, vConstIntPrgm1{1}, vConstIntPrgm2{2};

// The fixed constant registers: LReg 9 (0), 10 (1.0), 8 (0.8373), the
// compiler's LReg 11 (-1.0), and LReg 15 (lane i holds 2i).
inline constexpr vFloat vConst0{0.0f};
inline constexpr vFloat vConst1{1.0f};
inline constexpr vFloat vConstNeg1{-1.0f};
inline constexpr vFloat vConst0p8373{0.8373f};
inline const vInt vConstTileId = [] {
  impl_::Lanes l;
  for (int i = 0; i < impl_::kLanes; i++) l.w[i] = uint32_t(2 * i);
  return vInt(l);
}();

}  // namespace sfpi

#define v_if(x)                    \
  {                                \
    ::sfpi::impl_::CCScope zyx_cc_; \
    zyx_cc_.if_(x);                \
    {
#define v_elseif(x)    \
  }                    \
  zyx_cc_.elseif_(x); \
  {
#define v_else     \
  }                \
  zyx_cc_.else_(); \
  {
#define v_endif \
  }             \
  }
#define v_block                    \
  {                                \
    ::sfpi::impl_::CCScope zyx_cc_; \
    {
#define v_and(x) zyx_cc_.and_(x)
#define v_endblock \
  }                \
  }

#include "zyx_emu/sfpi_lib.h"
