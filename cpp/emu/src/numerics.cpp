// The bit-level FPU model of numerics.hpp. Written from the public
// descriptions of the Tensix datapath (the Tensix ISA documentation's
// ELWADD/ELWMUL/MVMUL pages, tt-llk's fidelity-phase and MVMUL order, and
// the behaviour ttsim documents for the accumulator, unpacker and packer).
#include "numerics.hpp"

#include <algorithm>
#include <bit>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace zyx::emu::hw {

namespace {

// One addend of the accumulator: sign, biased exponent and a magnitude on
// the scale where 1.0 is bit 23 (products and group sums may be wider).
struct Term {
  uint32_t sign = 0;
  int32_t exp = 0;
  int64_t man = 0;
};

inline bool is_zero(uint32_t v) { return (v & 0x7f800000u) == 0; }

// Shifts a magnitude right by d >= 1, rounding half up; `down` (a negative
// addend) moves exact halves down instead.
inline int64_t align(int64_t m, int32_t d, uint32_t down) {
  if (d >= 31) return 0;
  return (m + (int64_t(1) << (d - 1)) - down) >> d;
}

// The accumulator: DST + the terms. Every addend is aligned to the largest
// exponent among them and DST; a 16-bit DST first rounds each aligned
// addend to 11 bits. The signed sum is normalised and rounded half away
// from zero to 24 bits (32-bit DST), 8 bits (bf16 DST) or 11 bits (fp16
// DST). Results below the normal range are +0, above it infinity (an fp16
// DST saturates at exponent 31, every mantissa bit set).
uint32_t accumulate(const Term* t, int n, uint32_t dst, const Config& c) {
  const uint32_t dsign = dst >> 31;
  const int32_t dexp = (dst >> 23) & 255;
  int64_t dman = dexp ? ((dst & 0x7fffffu) | 0x800000u) : 0;
  int32_t e = dexp;
  for (int i = 0; i < n; i++) e = std::max(e, t[i].exp);
  if (e <= 0) return 0;
  if (dexp < e) dman = align(dman, e - dexp, 0);
  if (!c.fp32_dest) dman = (dman + 0x1000) & ~int64_t(0x1fff);
  uint32_t sign = dsign;
  int64_t man = dman;
  for (int i = 0; i < n; i++) {
    int64_t m = t[i].man;
    if (t[i].exp < e) m = align(m, e - t[i].exp, t[i].sign);
    if (!c.fp32_dest) m = (m + 0x1000 - t[i].sign) & ~int64_t(0x1fff);
    man += t[i].sign == sign ? m : -m;
  }
  if (man < 0) man = -man, sign ^= 1;
  if (man == 0) return 0;
  int lead = 63 - __builtin_clzll(static_cast<uint64_t>(man));
  int32_t left = 23 - lead;  // the shift that puts the leading one at bit 23
  // Wormhole's leading-sign count sees every bit set in -1: a negative sum
  // of exactly one unit normalises as if it stood four bits higher.
  if (c.wormhole && sign && man == 1) left -= 27;
  int32_t exp = e - left;
  const int32_t dropped = c.fp32_dest ? 0 : c.fp16 ? 13 : 16;  // the DST format's unused mantissa bits
  int32_t s = left - dropped;
  if (s < 0) {
    int32_t r = -s;
    man = r >= 62 ? 0 : (man + (int64_t(1) << (r - 1))) >> r;
  } else {
    man <<= s;
  }
  man <<= dropped;
  if (man & 0x1000000) exp++;
  uint32_t m23 = static_cast<uint32_t>(man) & 0x7fffffu;
  if (exp <= 0) return 0;
  if (c.fp16 && !c.fp32_dest && exp >= 32) return (sign << 31) | (31u << 23) | 0x7fe000u;
  if (exp >= 255) return (sign << 31) | 0x7f800000u;
  return (sign << 31) | (uint32_t(exp) << 23) | m23;
}

// The exponent correction of a product: the biases of both operands (fp16
// operands into a 32-bit DST are rebiased to f32's: -30 + 127), and the
// weight of the slices a phase takes.
// product_adj8 is the 8-bit-exponent datapath's, all the tile loops run.
inline int32_t product_adj8(int phase) { return -127 - ((phase & 1) ? 5 : 0) - ((phase & 2) ? 7 : 0); }
inline int32_t product_adj(int phase, const Config& c) {
  if (!c.fp16) return product_adj8(phase);
  return (c.fp32_dest ? 127 - 30 : -15) - ((phase & 1) ? 5 : 0) - ((phase & 2) ? 7 : 0);
}
// The exponent a zero product stands at when the multiplier aligns it with
// the other addends: the correction, when positive (fp16 operands into a
// 32-bit DST), else 0. A DST word far below it loses bits to the alignment.
inline int32_t zero_product_exp(int phase, const Config& c) { return std::max(product_adj(phase, c), 0); }

// The multiplier's slices of a source value's 11-bit significand.
inline uint32_t slice_a(uint32_t v, int phase) {
  uint32_t m = ((v >> 13) & 0x3ffu) | 0x400u;
  return (phase & 1) ? (m >> 1) & 31u : m >> 6;
}
inline uint32_t slice_b(uint32_t v, int phase) {
  uint32_t m = ((v >> 13) & 0x3ffu) | 0x400u;
  return (phase & 2) ? (m & 15u) << 3 : m >> 4;
}
inline int32_t exp_of(uint32_t v) { return (v >> 23) & 255; }

}  // namespace

uint16_t bfp8_to_bf16(uint8_t x, uint8_t exponent) {
  uint32_t sign = x >> 7;
  uint32_t mag = (uint32_t(x) << 1) & 0xffu;
  if (mag == 0) return sign ? 0xff80 : 0;
  int lz = __builtin_clz(mag) - 24;
  mag <<= lz;
  uint8_t e = static_cast<uint8_t>(exponent - lz);
  return static_cast<uint16_t>((sign << 15) | (uint32_t(e) << 7) | (mag & 0x7eu));
}

uint32_t elwadd(uint32_t a, uint32_t b, bool sub, uint32_t dst, bool acc, const Config& c) {
  if (sub) b ^= 0x80000000u;
  if (is_zero(a)) a = 0;
  if (is_zero(b)) b = 0;
  if (!acc) dst = 0;
  if ((a & 0x7fffffffu) < (b & 0x7fffffffu)) std::swap(a, b);
  int32_t ea = exp_of(a), eb = exp_of(b);
  int64_t ma = a ? (((a >> 13) & 0x3ffu) | 0x400u) : 0;
  int64_t mb = b ? (((b >> 13) & 0x3ffu) | 0x400u) : 0;
  int32_t d = ea - eb;
  if (d > 0) mb = d < 12 ? (mb + (int64_t(1) << (d - 1))) >> d : 0;
  Term t;
  t.sign = a >> 31;
  t.exp = ea;
  // fp16 operands into a 32-bit DST: the sum is rebiased to f32's exponent
  // (a zero sum stands at 2^-30).
  if (c.fp16 && c.fp32_dest) t.exp = ea ? ea + 112 : 127 - 30;
  t.man = ((a >> 31) == (b >> 31) ? ma + mb : ma - mb) << 13;
  return accumulate(&t, 1, dst, c);
}

uint32_t elwmul_phase(uint32_t a, uint32_t b, uint32_t dst, int phase, const Config& c) {
  Term t;
  t.exp = zero_product_exp(phase, c);
  int32_t e = exp_of(a) + exp_of(b) + product_adj(phase, c);
  if (!is_zero(a) && !is_zero(b) && e > 0) {
    t.sign = (a ^ b) >> 31;
    t.exp = e;
    t.man = int64_t(slice_a(a, phase) * slice_b(b, phase)) << 13;
  }
  return accumulate(&t, 1, dst, c);
}

uint32_t elwmul(uint32_t a, uint32_t b, Fidelity f, const Config& c) {
  uint32_t d = 0;
  for (int p = 0; p < phases(f); p++) d = elwmul_phase(a, b, d, p, c);
  return d;
}

uint32_t mvmul_phase(const uint32_t* a, int a_stride, const uint32_t* b, int b_stride, uint32_t dst, int phase,
                     const Config& c) {
  const int32_t adj = product_adj(phase, c), zero_exp = zero_product_exp(phase, c);
  Term g[2];
  for (int grp = 0; grp < 2; grp++) {
    uint32_t sign[8], man[8];
    int32_t exp[8], emax = 0;
    for (int i = 0; i < 8; i++) {
      int k = grp * 8 + i;
      uint32_t x = a[k * a_stride], y = b[k * b_stride];
      if (is_zero(x) || is_zero(y)) {
        sign[i] = 0, exp[i] = zero_exp, man[i] = 0;
      } else {
        sign[i] = (x ^ y) >> 31;
        exp[i] = exp_of(x) + exp_of(y) + adj;
        man[i] = slice_a(x, phase) * slice_b(y, phase);
      }
      emax = i ? std::max(emax, exp[i]) : exp[i];
    }
    if (emax <= 0) continue;  // the whole group is zero
    int32_t sum = 0;
    for (int i = 0; i < 8; i++) {
      int32_t d = std::min(emax - exp[i], 30);
      int32_t m = static_cast<int32_t>(((man[i] << 1) + (1u << d)) >> (d + 1));
      sum += sign[i] ? -m : m;
    }
    if (sum < 0) g[grp].sign = 1, sum = -sum;
    g[grp].exp = emax;
    g[grp].man = int64_t(sum) << 13;
  }
  return accumulate(g, 2, dst, c);
}

namespace {
// GMPOOL's view of a value: sign, a 9-bit exponent (DST words and scaled
// SrcA values both biased by 254) and a 10-bit mantissa, ordered by sign and
// then (exponent, mantissa) as one integer.
struct PoolValue {
  uint32_t sign = 0;
  int32_t exp = 0;
  uint32_t man = 0;
  int32_t key() const {
    const int32_t k = (exp << 10) + int32_t(man);
    return sign ? -k : k;
  }
};
}  // namespace

uint32_t gmpool(const uint32_t* a, int a_stride, const uint32_t* b, uint32_t dst, bool tf32_src, const Config& c) {
  const uint32_t dst_bits = c.fp32_dest ? 0x3ffu : 0x3f8u, src_bits = tf32_src ? 0x3ffu : 0x3f8u;
  PoolValue best{dst >> 31, exp_of(dst) + 127, (dst >> 13) & dst_bits};
  for (int i = 0; i < 16; i++) {
    const int32_t scale = exp_of(b[i]);
    if (!scale) continue;  // scaled to below any DST word: never the largest
    const uint32_t x = a[i * a_stride];
    PoolValue v;  // +0 for an operand with exponent 0
    if (exp_of(x)) v = PoolValue{x >> 31, exp_of(x) + scale, (x >> 13) & src_bits};
    if (v.key() >= best.key()) best = v;
  }
  if (best.exp == 0) return 0;
  return (best.sign << 31) | (uint32_t(best.exp - 127) & 255u) << 23 | (best.man & dst_bits) << 13;
}

uint16_t bfp_intermediate(uint32_t d, bool fp32_dest, bool precise) {
  uint32_t h;
  if (fp32_dest) {
    if (precise) {
      h = d >> 16;
    } else {
      if ((d & 0x7fffffffu) > 0x7f800000u) d = (d & 0x80000000u) | 0x7f800000u;
      h = ((d >> 16) + 1) & ~1u;
    }
    if ((h & 0x7fffu) < 0x80u) h = 0;
  } else {
    h = d >> 16;
    if ((h & 0x7fffu) > 0x7f80u) h = (h & 0x8000u) | 0x7f80u;
    else if ((h & 0x7fffu) < 0x80u) h = 0;
    if (!precise) h = (h + 1) & ~1u;
  }
  return static_cast<uint16_t>(h & 0xffffu);
}

uint8_t bfp_block(const uint16_t* v, bool bfp4, uint8_t* out) {
  uint32_t emax = 0;
  for (int i = 0; i < 16; i++) emax = std::max<uint32_t>(emax, (v[i] >> 7) & 255u);
  for (int i = 0; i < 16; i++) {
    uint32_t s = v[i] >> 15, e = (v[i] >> 7) & 255u, m = v[i] & 127u;
    if (e) m |= 128u;
    uint32_t shift = emax - e;
    if (shift >= 8) {
      m = 0;
    } else {
      m = (m + (1u << shift)) >> (shift + 1);
      if (m == 128) m = 127;
    }
    if (bfp4) m >>= 4;
    out[i] = static_cast<uint8_t>(m ? (s << (bfp4 ? 3 : 7)) | m : 0);
  }
  return static_cast<uint8_t>(emax);
}

uint16_t relu_bf16(uint16_t v, uint32_t mode, uint16_t threshold) {
  if (!mode) return v;
  if (v & 0x8000u) return 0;
  if (mode == 2 && v <= threshold) return 0;
  if (mode == 3 && v > threshold) return threshold;
  return v;
}

uint32_t relu_f32(uint32_t v, uint32_t mode, uint16_t threshold) {
  if (!mode) return v;
  const uint32_t t = uint32_t(threshold) << 16;
  if (v & 0x80000000u) return 0;
  if (mode == 2 && v <= t) return 0;
  if (mode == 3 && (v >> 13) > (t >> 13)) return t;
  return v;
}

namespace {
uint32_t flush_denormal(uint32_t u) { return (u & 0x7fffffffu) < 0x800000u ? u & 0x80000000u : u; }
}  // namespace

uint32_t l1_acc_f32(uint32_t in_l1, uint32_t packed) {
  const float sum = std::bit_cast<float>(flush_denormal(in_l1)) + std::bit_cast<float>(flush_denormal(packed));
  const uint32_t r = std::bit_cast<uint32_t>(sum);
  if ((r & 0x7fffffffu) > 0x7f800000u) return 0x7fc00000u;
  return flush_denormal(r);
}

uint16_t l1_acc_bf16(uint16_t in_l1, uint16_t packed) {
  if ((in_l1 == 0x7f80 && packed == 0xff80) || (in_l1 == 0xff80 && packed == 0x7f80)) return 0x7fc0;
  // Each operand exactly as a double: denormals flushed, a NaN as a normal
  // beyond the bf16 range (the value in L1 as the largest double, the packed
  // one with its own mantissa at exponent 2^128), so the sum is exact before
  // the one rounding.
  auto widen = [](uint16_t h, bool in_l1_side) {
    if ((h & 0x7fffu) < 0x80u) h &= 0x8000u;
    if ((h & 0x7fffu) > 0x7f80u) {
      const uint64_t sign = uint64_t(h & 0x8000u) << 48;
      if (in_l1_side) return std::bit_cast<double>(sign | ((0x7ffull << 52) - 1));
      return std::bit_cast<double>(sign | (uint64_t(255 - 127 + 1023) << 52) | (uint64_t(h & 0x7fu) << 45));
    }
    return double(std::bit_cast<float>(uint32_t(h) << 16));
  };
  const uint64_t r = std::bit_cast<uint64_t>(widen(in_l1, true) + widen(packed, false));
  const uint32_t s = uint32_t(r >> 63);
  const int32_t e = int32_t((r >> 52) & 0x7ff) - 1023 + 127;
  const uint64_t m = r & ((1ull << 52) - 1);
  if (e <= 0) return static_cast<uint16_t>(s << 15);
  if (e >= 255) return static_cast<uint16_t>((s << 15) | 0x7f80u);
  // Round the 52-bit fraction to 7 bits, to nearest even; a carry runs into
  // the exponent, and into infinity from the largest finite value.
  const uint64_t rounded = (m + (1ull << 44) - 1 + ((m >> 45) & 1)) >> 45;
  return static_cast<uint16_t>((s << 15) | ((uint32_t(e) << 7) + uint32_t(rounded)));
}

uint16_t l1_acc_f16(uint16_t in_l1, uint16_t packed) {
  auto widen = [](uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    return (h & 0x7fffu) >= 0x400u ? sign | ((uint32_t(h & 0x7fffu) << 13) + (112u << 23)) : sign;
  };
  const uint32_t r = std::bit_cast<uint32_t>(std::bit_cast<float>(widen(in_l1)) + std::bit_cast<float>(widen(packed)));
  const uint16_t sign = static_cast<uint16_t>((r >> 16) & 0x8000u);
  if (!(r & 0x7fffffffu)) return static_cast<uint16_t>(sign | (((in_l1 >> 10) & 31u) >= 30 ? 0x7fffu : 0u));
  const int32_t e = int32_t((r >> 23) & 255u) - 112;
  if (e <= 0) return static_cast<uint16_t>(sign | (e < 0 ? 0x7fffu : 0u));
  // The 23-bit fraction to 10 bits, to nearest even; a carry runs into the
  // exponent, and past exponent 31 saturates.
  const uint32_t m = r & 0x7fffffu;
  const uint32_t packed16 = (uint32_t(e) << 10) + ((m + (1u << 12) - 1 + ((m >> 13) & 1u)) >> 13);
  return static_cast<uint16_t>(sign | (packed16 < 0x8000u ? packed16 : 0x7fffu));
}

// The tile loops are written once (always inlined) and instantiated twice
// on x86-64: for AVX-512 (F; BW for the matmul's 16-bit lanes, CD for the
// leading-zero count) and for the
// baseline, picked once at run time.
#define ZYX_NUM_INLINE inline __attribute__((always_inline))
#if defined(__x86_64__) && defined(__GNUC__)
#define ZYX_NUM_AVX512 __attribute__((target("avx512f,avx512bw,avx512cd")))
bool host_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd");
}
#else
#define ZYX_NUM_AVX512
bool host_avx512() { return false; }
#endif
bool tiles_avx512 = host_avx512();
inline bool avx512() { return tiles_avx512; }

// 16 lanes of 32 bits, or 32 of 16 bits, in the tile loops (numerics_tiles.inc).
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef uint32_t vu16 __attribute__((vector_size(64)));
typedef float vf16 __attribute__((vector_size(64)));
typedef int16_t vh32 __attribute__((vector_size(64)));
typedef int16_t vh16 __attribute__((vector_size(32)));

namespace {

// The operands of a matmul tile, split for the multipliers, row-major (A:
// SrcA's k x column, B: SrcB's row x k), 16 bits each: exponent (far below
// any real one for a zero, so that a product with a zero operand never sets
// its MVMUL group's exponent), sign (-1 negative, else 0), and the two
// slices each phase may take, signed (0 for a zero; SrcA's doubled, which
// the rounding of an aligned product, (2 m + 2^d) >> (d + 1), wants).
constexpr int16_t kZeroExp = -1024;
struct Split {
  int16_t exp[1024], sign[1024], hi[1024], lo[1024];
};

inline int fpos(int r, int c) { return ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15); }

// The count of leading zero bits of each lane (32 for 0): AVX512CD's, or
// from the exponent of the lane's conversion to float, one less where that
// rounded up to the next power of two.
#if defined(__x86_64__) && defined(__GNUC__)
ZYX_NUM_AVX512 ZYX_NUM_INLINE vi16 lzcnt_avx512(vu16 x) { return (vi16)_mm512_lzcnt_epi32((__m512i)x); }
#endif
ZYX_NUM_INLINE vi16 lzcnt_base(vu16 x) {
  const vu16 fb = (vu16)__builtin_convertvector((vi16)x, vf16);
  vi16 lead = (vi16)(fb >> 23) - 127;
  lead = lead < 0 ? (vi16){} : lead;
  lead = (x >> (vu16)lead) == 0 ? lead - 1 : lead;
  return 31 - lead;
}

#define ZYX_TILES_TARGET ZYX_NUM_AVX512
#define ZYX_TILES_NAME(f) f##_avx512
#include "numerics_tiles.inc"
#undef ZYX_TILES_TARGET
#undef ZYX_TILES_NAME
#define ZYX_TILES_TARGET
#define ZYX_TILES_NAME(f) f##_base
#include "numerics_tiles.inc"
#undef ZYX_TILES_TARGET
#undef ZYX_TILES_NAME

// Calls fn<F32, WH>() for the configuration's DST width and architecture.
template <template <bool, bool> class Fn, class... Args>
void by_config(const Config& c, Args&&... args) {
  if (c.fp32_dest) {
    if (c.wormhole) Fn<true, true>::run(args...);
    else Fn<true, false>::run(args...);
  } else {
    if (c.wormhole) Fn<false, true>::run(args...);
    else Fn<false, false>::run(args...);
  }
}
template <bool F32, bool WH>
struct ElwmulTile {
  static void run(const uint32_t* a, const uint32_t* b, uint32_t* d, int n, int np, const Config& c) {
    if (avx512()) elwmul_tile_avx512<F32, WH>(a, b, d, n, np, c);
    else elwmul_tile_base<F32, WH>(a, b, d, n, np, c);
  }
};
template <bool F32, bool WH>
struct MatmulTile {
  static void run(const uint32_t* in0, const uint32_t* in1, Split& A, Split& B, uint32_t* d, int np) {
    if (avx512()) {
      split_avx512(in1, A, true);
      split_avx512(in0, B, false);
      matmul_avx512<F32, WH>(A, B, d, np);
    } else {
      split_base(in1, A, true);
      split_base(in0, B, false);
      matmul_base<F32, WH>(A, B, d, np);
    }
  }
};

}  // namespace

// Float16 operands take the element model (the tile loops are for the
// 8-bit-exponent datapath).
void elwadd_tile(const uint32_t* a, const uint32_t* b, uint32_t* d, int n, bool sub, const Config& c) {
  if (c.fp16) {
    for (int i = 0; i < n; i++) d[i] = elwadd(a[i], b[i], sub, 0, false, c);
  } else if (avx512()) elwadd_tile_avx512(a, b, d, n, sub, c);
  else elwadd_tile_base(a, b, d, n, sub, c);
}

void elwmul_tile(const uint32_t* a, const uint32_t* b, uint32_t* d, int n, Fidelity f, const Config& c) {
  if (c.fp16) {
    for (int i = 0; i < n; i++) d[i] = elwmul(a[i], b[i], f, c);
    return;
  }
  by_config<ElwmulTile>(c, a, b, d, n, phases(f), c);
}

void matmul_tile(const uint32_t* in0, const uint32_t* in1, uint32_t* d, Fidelity f, const Config& c) {
  if (c.fp16) {
    for (int p = 0; p < phases(f); p++)
      for (int r = 0; r < 32; r++)
        for (int col = 0; col < 32; col++)
          for (int kh = 0; kh < 2; kh++) {
            uint32_t& out = d[fpos(r, col)];
            out = mvmul_phase(&in1[fpos(16 * kh, col)], 16, &in0[fpos(r, 16 * kh)], 1, out, p, c);
          }
    return;
  }
  static thread_local Split A, B;
  by_config<MatmulTile>(c, in0, in1, A, B, d, phases(f));
}

void use_avx512_tiles(bool yes) { tiles_avx512 = yes && host_avx512(); }

// ---- Integer formats ----

uint32_t sfpcast_int_to_f32(uint32_t sm) {
  const uint32_t sign = sm & 0x80000000u;
  uint32_t mag = sm & 0x7fffffffu;
  if (!mag) return sign;  // -0 stays -0.0
  const int lead = __builtin_clz(mag);
  mag <<= lead;  // the leading one at bit 31
  uint32_t out = sign | ((uint32_t(157 - lead) << 23) + (mag >> 8));
  const uint32_t dropped = mag & 0xffu, half = 0x80u;
  if (dropped > half || (dropped == half && (out & 1u))) out++;  // to nearest even
  return out;
}

int32_t int8_mul_phase(int32_t a, int32_t b, int phase) {
  const int32_t ma = a < 0 ? -a : a, mb = b < 0 ? -b : b;
  const int32_t sa = (phase & 1) ? (ma & 0x1f) : (ma & 0xe0), sb = (phase & 2) ? (mb & 0x0f) : (mb & 0x3f0);
  return ((a < 0) != (b < 0)) ? -(sa * sb) : sa * sb;
}

uint32_t sfpu_int32_to_f32(uint32_t w) {
  // SFPABS (two's complement; INT32_MIN stays 0x80000000, a sign-magnitude
  // -0), SFPCAST, the original sign set, and -2^31 added where the absolute
  // value kept its sign bit.
  const uint32_t mag = (w & 0x80000000u) ? 0u - w : w;
  const uint32_t f = (sfpcast_int_to_f32(mag) & 0x7fffffffu) | (w & 0x80000000u);
  return (mag & 0x80000000u) ? 0xcf000000u : f;
}

uint32_t sfpu_uint32_to_f32(uint32_t w) {
  const uint32_t low = sfpcast_int_to_f32(w & 0x7fffffffu);  // SFPSETSGN clears bit 31 first
  if (!(w & 0x80000000u)) return low;
  // 2^31 + low is exact in a double; one rounding to f32 is SFPMAD's.
  const double sum = 2147483648.0 + static_cast<double>(std::bit_cast<float>(low));
  return std::bit_cast<uint32_t>(static_cast<float>(sum));
}

namespace {
// The integer part of |f| for an unbiased exponent 0..31: the 24-bit
// significand shifted, truncating.
uint32_t truncated_magnitude(uint32_t f, int exp) {
  const uint32_t sig = 0x800000u | (f & 0x7fffffu);
  return exp >= 23 ? sig << (exp - 23) : sig >> (23 - exp);
}
}  // namespace

uint32_t sfpu_f32_to_int32(uint32_t f) {
  const int exp = int((f >> 23) & 255) - 127;
  if (exp < 0) return 0;
  const uint32_t mag = exp >= 31 ? 0x80000000u : truncated_magnitude(f, exp);
  return (f & 0x80000000u) ? 0u - mag : mag;
}

uint32_t sfpu_f32_to_uint32(uint32_t f) {
  if (f & 0x80000000u) return 0;
  const int exp = int((f >> 23) & 255) - 127;
  if (exp < 0) return 0;
  return exp >= 32 ? 0xffffffffu : truncated_magnitude(f, exp);
}

uint16_t sfpu_f32_to_uint16(uint32_t f) {
  if (f & 0x80000000u) return 0;  // SFPSWAP keeps the larger of f and +0
  const int exp = int((f >> 23) & 255) - 127;
  if (exp < -1) return 0;
  if (exp >= 16) return 0xffff;
  uint64_t sig = 0x800000u | (f & 0x7fffffu);
  sig = exp >= 0 ? sig << exp : sig >> 1;
  const uint64_t mag = (sig >> 23) + ((sig & 0x7fffffu) >= 0x400000u);  // half away from zero
  return static_cast<uint16_t>(mag > 0xffff ? 0xffff : mag);
}

uint32_t sfpu_f32_to_bf16(uint32_t f) {
  const uint32_t exp = (f >> 23) & 255;
  if (exp == 0) return 0;
  if (exp == 255) return f & 0xff800000u;
  return (f + 0x8000u) & 0xffff0000u;  // a carry into the exponent is the next binade
}

}  // namespace zyx::emu::hw
