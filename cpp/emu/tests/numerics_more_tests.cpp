// The FPU paths the hardware numerics added after the first model: max
// reductions (GMPOOL). Expected words come from a reference written here
// from the Tensix ISA documentation's description of GMPOOL, as real
// numbers rather than the model's integer keys: every compared value is
// +-(1 + m / 1024) * 2^(E - 254) for its 10-bit mantissa m and 9-bit
// exponent E (a DST word's field plus 127, so a DST zero counts as the
// lowest normal; a SrcA value's field plus its scaler's), a SrcA value with
// exponent 0 is exactly 0, and the largest one is written back in DST's
// width with its exponent less 127, modulo 256.
// Group `model`: numerics.hpp's gmpool against hand-worked words and the
// reference on random words. Group `reduce`: reduce_tile<MAX> by rows,
// columns and to a scalar through the emulator (Float16_b, Float32 and
// Bfp8_b tiles, both DST widths, Wormhole and Blackhole), word for word
// against the reference following tt-llk's instruction order. Group `mul`:
// mul_tiles adding to a DST that holds values.
#include <cmath>
#include <random>

#include "compute_harness.hpp"
#include "numerics.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;
namespace hw = zyx::emu::hw;

namespace {

std::string hex32(uint32_t w) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", w);
  return buf;
}

#define CHECK_WORD(got, want)                                                                                 \
  do {                                                                                                        \
    const uint32_t g_ = (got), w_ = (want);                                                                   \
    if (g_ != w_) throw Failure(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #got " = " +    \
                                hex32(g_) + ", want " + hex32(w_));                                           \
  } while (0)

// ---- The reference ----

// A value GMPOOL compares, with the fields it is written back from.
struct Candidate {
  double value = 0;
  bool zero = true;  // a SrcA operand with exponent 0: written as +0
  uint32_t sign = 0, exp9 = 0, man10 = 0;
};

double real_of(uint32_t sign, uint32_t exp9, uint32_t man10) {
  const double v = std::ldexp(1.0 + man10 / 1024.0, int(exp9) - 254);
  return sign ? -v : v;
}

// One column: DST word dst, SrcA values a[i * stride], SrcB values b[i].
uint32_t ref_gmpool(const uint32_t* a, int stride, const uint32_t* b, uint32_t dst, bool tf32_src, bool fp32_dest) {
  const uint32_t dst_mask = fp32_dest ? 0x3ffu : 0x3f8u, src_mask = tf32_src ? 0x3ffu : 0x3f8u;
  Candidate best;
  best.zero = false;
  best.sign = dst >> 31;
  best.exp9 = ((dst >> 23) & 255u) + 127;
  best.man10 = (dst >> 13) & dst_mask;
  best.value = real_of(best.sign, best.exp9, best.man10);
  for (int i = 0; i < 16; i++) {
    const uint32_t eb = (b[i] >> 23) & 255u, x = a[i * stride], ea = (x >> 23) & 255u;
    if (eb == 0) continue;  // scaled by zero's exponent: minus infinity, never the largest
    Candidate c;
    if (ea != 0) {
      c.zero = false;
      c.sign = x >> 31;
      c.exp9 = ea + eb;
      c.man10 = (x >> 13) & src_mask;
      c.value = real_of(c.sign, c.exp9, c.man10);
    }
    if (c.value >= best.value) best = c;
  }
  if (best.zero) return 0;
  return (best.sign << 31) | (((best.exp9 - 127) & 255u) << 23) | ((best.man10 & dst_mask) << 13);
}

// ---- Group model: numerics.hpp's gmpool ----

const hw::Config kBf16{false, true}, kFp32{true, true};

// 16 copies of one word.
struct Row {
  uint32_t v[16];
  explicit Row(uint32_t w) {
    for (auto& x : v) x = w;
  }
};
const Row kOnes(0x3f800000u);

void test_gmpool_words(DeviceLayer&) {
  Row a(0xbf800000u);  // -1.0
  // An empty DST (every bit set) gives way to anything.
  CHECK_WORD(hw::gmpool(a.v, 1, kOnes.v, hw::kPoolEmpty, true, kFp32), 0xbf800000u);
  CHECK_WORD(hw::gmpool(a.v, 1, kOnes.v, hw::kPoolEmpty, false, kBf16), 0xbf800000u);
  // Equal maxima of opposite sign: the positive one.
  a.v[7] = 0x40000000u, a.v[11] = 0xc0000000u;
  CHECK_WORD(hw::gmpool(a.v, 1, kOnes.v, hw::kPoolEmpty, true, kFp32), 0x40000000u);
  // Signed zeros and denormals are +0, above every negative value.
  Row z(0xbf800000u);
  z.v[3] = 0x80000000u;
  CHECK_WORD(hw::gmpool(z.v, 1, kOnes.v, hw::kPoolEmpty, true, kFp32), 0u);
  z.v[3] = 0x80400000u;  // a negative denormal
  CHECK_WORD(hw::gmpool(z.v, 1, kOnes.v, hw::kPoolEmpty, true, kFp32), 0u);
  // A DST zero counts as the lowest normal: it stays against SrcA zeros and
  // negatives; a DST -0 stays against negatives, gives way to a SrcA zero.
  CHECK_WORD(hw::gmpool(Row(0x80000000u).v, 1, kOnes.v, 0u, true, kFp32), 0u);
  CHECK_WORD(hw::gmpool(Row(0xbf800000u).v, 1, kOnes.v, 0x80000000u, true, kFp32), 0x80000000u);
  CHECK_WORD(hw::gmpool(z.v, 1, kOnes.v, 0x80000000u, true, kFp32), 0u);
  // ... and a denormal DST word stays as it is above a SrcA zero.
  CHECK_WORD(hw::gmpool(Row(0u).v, 1, kOnes.v, 0x00400000u, true, kFp32), 0x00400000u);
  // Infinity is the largest normal, NaN's mantissa larger still.
  Row inf(0x7f800000u);
  CHECK_WORD(hw::gmpool(inf.v, 1, kOnes.v, hw::kPoolEmpty, true, kFp32), 0x7f800000u);
  inf.v[5] = 0x7fc00000u;
  CHECK_WORD(hw::gmpool(inf.v, 1, kOnes.v, hw::kPoolEmpty, true, kFp32), 0x7fc00000u);
  CHECK_WORD(hw::gmpool(Row(0xffc00000u).v, 1, kOnes.v, 0xff800000u, true, kFp32), 0xff800000u);
  // A 32-bit DST is read as TF32, so its low 13 bits go even if it stays.
  CHECK_WORD(hw::gmpool(Row(0x3f800000u).v, 1, kOnes.v, 0x3f803fffu, true, kFp32), 0x3f802000u);
  CHECK_WORD(hw::gmpool(Row(0x3f800000u).v, 1, kOnes.v, 0x3f801fffu, true, kFp32), 0x3f800000u);
  // A non-TF32 SrcA keeps 7 mantissa bits (a Float32 tile with 16-bit DST
  // is bf16 already; a DST word moved back into SrcA is not).
  CHECK_WORD(hw::gmpool(Row(0x3f812000u).v, 1, kOnes.v, hw::kPoolEmpty, false, kFp32), 0x3f810000u);
  // 16-bit DST: bf16 words, a bf16 DST value read with its 7 bits.
  CHECK_WORD(hw::gmpool(Row(0x3f810000u).v, 1, kOnes.v, 0x3f820000u, false, kBf16), 0x3f820000u);
  // The scaler's exponent alone scales: 2.0 and 3.0 both double; 0 drops
  // the row (so the DST value stays); a carry past 254 wraps.
  CHECK_WORD(hw::gmpool(Row(0x3f400000u).v, 1, Row(0x40000000u).v, 0x3f800000u, true, kFp32), 0x3fc00000u);
  CHECK_WORD(hw::gmpool(Row(0x3f400000u).v, 1, Row(0x40400000u).v, 0x3f800000u, true, kFp32), 0x3fc00000u);
  CHECK_WORD(hw::gmpool(Row(0x40000000u).v, 1, Row(0u).v, 0xbf800000u, true, kFp32), 0xbf800000u);
  CHECK_WORD(hw::gmpool(Row(0x7f400000u).v, 1, Row(0x40800000u).v, hw::kPoolEmpty, true, kFp32), 0x00400000u);
  // Nothing above an empty DST: it comes back as the all-ones pattern of
  // DST's width.
  CHECK_WORD(hw::gmpool(Row(0x40000000u).v, 1, Row(0u).v, hw::kPoolEmpty, true, kFp32), 0xffffe000u);
  CHECK_WORD(hw::gmpool(Row(0x40000000u).v, 1, Row(0u).v, hw::kPoolEmpty, false, kBf16), 0xffff0000u);
  // The stride walks a column.
  uint32_t col[256];
  for (int i = 0; i < 256; i++) col[i] = i % 16 == 3 ? 0x3f800000u + (uint32_t(i / 16) << 16) : 0xc0000000u;
  CHECK_WORD(hw::gmpool(col + 3, 16, kOnes.v, hw::kPoolEmpty, false, kBf16), 0x3f8f0000u);
}
ZYX_TEST(model, test_gmpool_words);

// Random words of every kind (zeros of both signs, denormals, exponent 255,
// near-equal values of both signs), scalers of 1.0 and random ones, DST
// words and empty DST: the model equals the reference.
void test_gmpool_random(DeviceLayer&) {
  std::mt19937 rng(24);
  auto word = [&]() -> uint32_t {
    const uint32_t sign = (rng() & 1) << 31, k = rng() % 16;
    if (k == 0) return sign;
    if (k == 1) return sign | (rng() & 0x7fffffu);                          // denormal
    if (k == 2) return sign | 0x7f800000u | (rng() % 4 ? 0 : rng() & 0x7fffffu);  // infinity, NaN
    if (k < 6) return sign | ((1 + rng() % 254) << 23) | (rng() & 0x7fffffu);
    return sign | ((126 + rng() % 3) << 23) | (rng() & 0x7e000u) | (rng() & 0x1fffu);  // near 1, ties in the top bits
  };
  int checked = 0;
  for (int n = 0; n < 200000; n++) {
    uint32_t a[16], b[16];
    for (auto& x : a) x = word();
    const bool unit_scale = rng() % 4 != 0;
    for (auto& x : b) x = unit_scale ? 0x3f800000u : (rng() % 8 ? ((100 + rng() % 50) << 23) : word());
    const bool fp32 = rng() & 1, tf32 = fp32 && (rng() & 1);
    if (!tf32)
      for (auto& x : a) x &= 0xffff0000u;
    uint32_t dst = rng() % 5 == 0 ? hw::kPoolEmpty : word();
    if (!fp32) dst &= 0xffff0000u;
    const hw::Config c{fp32, true};
    const uint32_t got = hw::gmpool(a, 1, b, dst, tf32, c), want = ref_gmpool(a, 1, b, dst, tf32, fp32);
    if (got != want)
      throw Failure("gmpool case " + std::to_string(n) + ": got " + hex32(got) + ", want " + hex32(want));
    // With a scaler of 1.0, ttsim's description: the largest word in the
    // sign-magnitude total order (-0 below +0), DST truncated to its width.
    if (unit_scale) {
      auto order = [](uint32_t w) { return w >> 31 ? -int64_t(w & 0x7fffffffu) - 1 : int64_t(w); };
      uint32_t best = dst & (fp32 ? 0xffffe000u : 0xffff0000u);
      for (uint32_t x : a) {
        const uint32_t v = (x & 0x7f800000u) ? x & (tf32 ? 0xffffe000u : 0xffff0000u) : 0;
        if (order(v) > order(best)) best = v;
      }
      if (got != best)
        throw Failure("gmpool case " + std::to_string(n) + ": got " + hex32(got) + ", total order " + hex32(best));
    }
    checked++;
  }
  CHECK_EQ(checked, 200000);
}
ZYX_TEST(model, test_gmpool_random);

// ---- Group reduce: reduce_tile<MAX> through the emulator ----

constexpr uint32_t kRow = 0, kCol = 1, kScalar = 2;
const char* kDimNames[] = {"row", "col", "scalar"};

// The reference's whole DST tile after a max reduction of source values a
// with scaler source values s into DST d (fresh: cleared before), in tt-llk's
// order (see tile_numerics.cpp's hw_reduce_max for the steps).
void ref_reduce_max(uint32_t dim, const std::vector<uint32_t>& a, const std::vector<uint32_t>& s, bool tf32,
                    bool fp32, bool fresh, std::vector<uint32_t>& d) {
  auto zero_rows = [&](int face, int first, int n) {
    for (int i = face * 256 + first * 16; i < face * 256 + (first + n) * 16; i++) d[i] = 0;
  };
  if (dim == kCol) {
    for (int col = 0; col < 32; col++) {
      uint32_t m = fresh ? hw::kPoolEmpty : d[fi(0, col)];
      for (int h = 0; h < 2; h++) {
        const int f = 2 * h + col / 16;
        m = ref_gmpool(&a[fi(16 * h, col)], 16, &s[f * 256], m, tf32, fp32);
      }
      d[fi(0, col)] = m;
    }
    zero_rows(0, 1, 3);
    zero_rows(1, 1, 3);
  } else if (dim == kRow) {
    for (int h = 0; h < 2; h++) {
      uint32_t res[16];
      for (int r = 0; r < 16; r++) {
        uint32_t m = fresh ? hw::kPoolEmpty : d[fi(16 * h, r)];
        for (int f = 2 * h; f < 2 * h + 2; f++) m = ref_gmpool(&a[f * 256 + r * 16], 1, &s[f * 256], m, tf32, fp32);
        // Through SrcB (TF32 if SrcA is TF32, else bf16) and back by ELWADD
        // with zero: exponent 0 is +0, exponent 255 infinity, anything else
        // unchanged.
        m &= tf32 ? 0xffffe000u : 0xffff0000u;
        if ((m & 0x7f800000u) == 0) m = 0;
        else if ((m & 0x7f800000u) == 0x7f800000u) m = (m & 0x80000000u) | 0x7f800000u;
        res[r] = m;
      }
      zero_rows(2 * h, 1, 3);
      for (int r = 0; r < 16; r++) d[fi(16 * h, r)] = d[fi(16 * h + r, 0)] = res[r];
    }
  } else {
    uint32_t v[16];
    for (int col = 0; col < 16; col++) {
      v[col] = hw::kPoolEmpty;
      for (int f = 0; f < 4; f++) v[col] = ref_gmpool(&a[f * 256 + col], 16, &s[f * 256], v[col], tf32, fp32);
      v[col] &= tf32 ? 0xffffe000u : 0xffff0000u;
    }
    d[0] = ref_gmpool(v, 1, &s[3 * 256], fresh ? hw::kPoolEmpty : d[0], tf32, fp32);
    zero_rows(0, 1, 7);
  }
}

// Tiles of bf16 words with the edge cases mixed in, their bytes in a format
// and the source values the unpacker makes of them.
struct Tile {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> src;
};

Tile make_tile(const std::string& fmt, uint32_t seed, bool fp32) {
  static const uint16_t special[] = {0x0000, 0x8000, 0x0040, 0x8001, 0x7f80, 0xff80, 0x7fc0, 0x3f80,
                                     0xbf80, 0x7f7f, 0x0080, 0x3f81, 0xbf81, 0xff7f, 0x0100, 0x8100};
  std::mt19937 rng(seed);
  std::vector<uint32_t> u(1024);
  for (auto& w : u) {
    const uint32_t k = rng() % 100, sign = (rng() & 1) << 31;
    if (k < 8) w = uint32_t(special[rng() % 16]) << 16;
    else if (k < 40) w = sign | ((1 + rng() % 254) << 23) | (rng() & 0x7fffffu);
    else w = sign | ((126 + rng() % 3) << 23) | (rng() & 0x7fffffu);
  }
  Tile t;
  t.src.resize(1024);
  if (fmt == "Float32") {
    t.bytes = to_bytes(u);
    for (int i = 0; i < 1024; i++) t.src[i] = hw::src_from_f32(u[i], fp32);
  } else if (fmt == "Float16_b") {
    std::vector<uint16_t> h(1024);
    for (int i = 0; i < 1024; i++) h[i] = static_cast<uint16_t>(u[i] >> 16), t.src[i] = uint32_t(h[i]) << 16;
    t.bytes = to_bytes(h);
  } else {  // Bfp8_b, blocks made by the model's packer (no NaN in a block)
    t.bytes.resize(1088);
    for (int g = 0; g < 64; g++) {
      uint16_t v[16];
      for (int i = 0; i < 16; i++) {
        const uint16_t w = static_cast<uint16_t>(u[g * 16 + i] >> 16);
        v[i] = (w & 0x7fff) > 0x7f80 ? static_cast<uint16_t>((w & 0x8000) | 0x7f80) : w;
      }
      t.bytes[g] = hw::bfp_block(v, false, &t.bytes[64 + g * 16]);
    }
    for (int k = 0; k < 1024; k++) t.src[k] = uint32_t(hw::bfp8_to_bf16(t.bytes[64 + k], t.bytes[k / 16])) << 16;
  }
  return t;
}

// A reduce scaler tile as tt-metal builds it: `w` in row 0 of every face,
// zero elsewhere.
std::vector<uint32_t> scaler_words(uint32_t w) {
  std::vector<uint32_t> s(1024, 0);
  for (int f = 0; f < 4; f++)
    for (int i = 0; i < 16; i++) s[f * 256 + i] = w;
  return s;
}
Tile scaler_tile(const std::string& fmt, uint32_t w) {
  std::vector<uint32_t> s = scaler_words(w);
  Tile t;
  t.src = s;
  if (fmt == "Float32") {
    t.bytes = to_bytes(s);
  } else {
    std::vector<uint16_t> h(1024);
    for (int i = 0; i < 1024; i++) h[i] = static_cast<uint16_t>(s[i] >> 16);
    t.bytes = to_bytes(h);
  }
  return t;
}

// Packs the reference DST to Float32 or Float16_b bytes as the packer does
// (numerics.hpp's conversions, checked in emu_numerics).
std::vector<uint8_t> packed(const std::vector<uint32_t>& d, const std::string& fmt, bool fp32) {
  if (fmt == "Float32") {
    std::vector<uint32_t> w(1024);
    for (int i = 0; i < 1024; i++) w[i] = hw::pack_f32(d[i], fp32);
    return to_bytes(w);
  }
  std::vector<uint16_t> h(1024);
  for (int i = 0; i < 1024; i++) h[i] = hw::pack_bf16(d[i], fp32);
  return to_bytes(h);
}

// How a test reduces: once into a cleared DST, twice into the same DST
// (cb 0's tile, then cb 1's), or once over a copy of cb 1's tile.
enum class Into { Cleared, Twice, Copy };

// reduce_tile<MAX, dim> on the tiles of cbs 0, 1 (inputs) and 2 (the
// scaler).
Run reduce_run(uint32_t dim, Into into, const std::string& fin, const Tile& a, const Tile& b, const Tile& s) {
  static const char* dims[] = {"REDUCE_ROW", "REDUCE_COL", "REDUCE_SCALAR"};
  const std::string call = std::string("reduce_tile<PoolType::MAX, ReduceDim::") + dims[dim] + ">";
  std::string op = call + "(0, 2, 0, 0, 0);";
  if (into == Into::Twice) op += call + "(1, 2, 0, 0, 0);";
  if (into == Into::Copy) op = "copy_tile_to_dst_init_short(1); copy_tile(1, 0, 0);" + op;
  Run r;
  r.formats = {fin, fin, s.bytes.size() == 4096 ? "Float32" : "Float16_b"};
  r.inputs = {a.bytes, b.bytes, s.bytes};
  r.compute = copy_op_kernel();
  r.defines = {{"NIN", "3"}, {"COPY", "0"}, {"OP", op}};
  r.args = {0, 0, 0, 0};
  return r;
}

void compare(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const std::string& what) {
  if (got == want) return;
  const size_t w = want.size() == 4096 ? 4 : 2;
  size_t at = 0;
  while (got[at] == want[at]) at++;
  at -= at % w;
  uint32_t g = 0, x = 0;
  std::memcpy(&g, &got[at], w);
  std::memcpy(&x, &want[at], w);
  throw Failure(what + ": element " + std::to_string(at / w) + ": got " + hex32(g) + ", want " + hex32(x));
}

// Every dimension, once into a cleared DST (packed to Float32), twice into
// the same DST (packed to Float16_b) and over a copy (to Float32), for each
// input format given and both DST widths.
void check_reduce_max(DeviceLayer& layer, const std::vector<const char*>& formats) {
  uint32_t seed = 7;
  for (const char* fin : formats)
    for (bool fp32 : {false, true})
      for (uint32_t dim : {kRow, kCol, kScalar})
        for (Into into : {Into::Cleared, Into::Twice, Into::Copy}) {
          seed += 2;
          const Tile a = make_tile(fin, seed, fp32), b = make_tile(fin, seed + 1, fp32);
          const Tile s = scaler_tile(std::string(fin) == "Float32" ? "Float32" : "Float16_b", 0x3f800000u);
          const bool tf32 = std::string(fin) == "Float32" && fp32;
          std::vector<uint32_t> d(1024, 0);
          if (into == Into::Copy)
            for (int i = 0; i < 1024; i++) d[i] = hw::src_to_dst(b.src[i], hw::Config{fp32, true});
          ref_reduce_max(dim, a.src, s.src, tf32, fp32, into != Into::Copy, d);
          if (into == Into::Twice) ref_reduce_max(dim, b.src, s.src, tf32, fp32, false, d);
          const char* fout = into == Into::Twice ? "Float16_b" : "Float32";
          Run r = reduce_run(dim, into, fin, a, b, s);
          r.out_format = fout;
          r.fp32 = fp32;
          static const char* names[] = {" ", " twice ", " over a copy "};
          compare(run(layer, r), packed(d, fout, fp32),
                  std::string("max ") + kDimNames[dim] + names[int(into)] + fin + " -> " + fout +
                      (fp32 ? ", fp32 DST" : ", 16-bit DST"));
        }
}

// A Float16_b reduction over a 32-bit DST holding a Float32 copy (TF32,
// more bits than the bf16 source registers hold): the DST values that stay
// the largest keep their 10 bits by columns; by rows they lose the low 3
// on the trip through SrcB, which holds bf16 here.
void test_reduce_max_over_tf32(DeviceLayer& layer) {
  for (uint32_t dim : {kRow, kCol}) {
    Tile a = make_tile("Float16_b", 91 + dim, true);
    const Tile x = make_tile("Float32", 93 + dim, true);
    // All negative, so that DST's positive words stay the largest.
    for (int i = 0; i < 1024; i++) a.src[i] |= 0x80000000u, a.bytes[2 * i + 1] |= 0x80;
    const Tile s = scaler_tile("Float16_b", 0x3f800000u);
    std::vector<uint32_t> d(1024);
    for (int i = 0; i < 1024; i++) d[i] = hw::src_to_dst(x.src[i], hw::Config{true, true});
    ref_reduce_max(dim, a.src, s.src, false, true, false, d);
    Run r = reduce_run(dim, Into::Copy, "Float16_b", a, x, s);
    r.formats[1] = "Float32";
    r.fp32 = true;
    compare(run(layer, r), packed(d, "Float32", true),
            std::string("max ") + kDimNames[dim] + " of Float16_b over a Float32 copy");
  }
}
ZYX_TEST(reduce, test_reduce_max_over_tf32);

void test_reduce_max_words(DeviceLayer& layer) { check_reduce_max(layer, {"Float16_b", "Float32", "Bfp8_b"}); }
ZYX_TEST(reduce, test_reduce_max_words);

// Blackhole (p150a) runs the same GMPOOL.
void test_reduce_max_blackhole(DeviceLayer& layer) { check_reduce_max(layer, {"Float16_b"}); }
ZYX_TEST_ON(reduce, test_reduce_max_blackhole, "p150a");

// Words worked out by hand through the emulator: a tile of -1.0 with one
// larger value per row/column, and a scaler of 2.0 (its exponent doubles
// every value; tt-metal's max reductions pass 1.0).
void test_reduce_max_hand(DeviceLayer& layer) {
  Tile a;
  std::vector<uint16_t> h(1024, 0xbf80);  // -1.0
  for (int r = 0; r < 32; r++) h[fi(r, (r * 7) % 32)] = static_cast<uint16_t>(0x3f80 + r);  // 1 + r/128 in row r
  h[fi(5, 9)] = 0x8000;   // -0: +0 to GMPOOL, below row 5's maximum
  h[fi(31, 2)] = 0x4300;  // 128 in column 2, row 31
  a.bytes = to_bytes(h);
  a.src.resize(1024);
  for (int i = 0; i < 1024; i++) a.src[i] = uint32_t(h[i]) << 16;
  const Tile two = scaler_tile("Float16_b", 0x40000000u);
  auto run_dim = [&](uint32_t dim, const Tile& s) {
    Run r = reduce_run(dim, Into::Cleared, "Float16_b", a, a, s);
    r.out_format = "Float16_b";
    r.fp32 = false;
    std::vector<uint8_t> out = run(layer, r);
    std::vector<uint16_t> v(1024);
    std::memcpy(v.data(), out.data(), 2048);
    return v;
  };
  const Tile one = scaler_tile("Float16_b", 0x3f800000u);
  std::vector<uint16_t> rows = run_dim(kRow, one), rows2 = run_dim(kRow, two);
  for (int r = 0; r < 32; r++) {
    const uint16_t want = r == 31 ? 0x4300 : static_cast<uint16_t>(0x3f80 + r);
    CHECK_WORD(rows[fi(r, 0)], want);
    CHECK_WORD(rows2[fi(r, 0)], want + 0x80u);  // one exponent up
  }
  std::vector<uint16_t> cols = run_dim(kCol, one);
  for (int c = 0; c < 32; c++) {
    uint16_t want = 0xbf80;
    for (int r = 0; r < 32; r++)
      if ((r * 7) % 32 == c) want = static_cast<uint16_t>(0x3f80 + r);
    if (c == 2) want = 0x4300;
    CHECK_WORD(cols[fi(0, c)], want);
    for (int r = 1; r < 4; r++) CHECK_WORD(cols[fi(r, c)], 0u);  // GMPOOL zeroes the rows below
  }
  CHECK_WORD(run_dim(kScalar, one)[0], 0x4300u);
  CHECK_WORD(run_dim(kScalar, two)[0], 0x4400u);  // scaled twice: 128 * 2 * 2
}
ZYX_TEST(reduce, test_reduce_max_hand);

// ---- Group mul: mul_tiles into a DST that holds values ----

// ELWMUL adds to DST (the ISA documentation's Dst += SrcA * SrcB; tt-llk's
// mul_tiles issues no ZEROACC): copy_tile of cb 0 into DST 0, then the
// multiply of cbs 1 and 2 (plain, and broadcasting cb 2's column 0) adds
// every fidelity phase's product to that copy. The arithmetic of one phase
// is numerics.hpp's elwmul_phase (checked against ttsim's datapath in
// emu_numerics_ttsim); what is checked here is the instruction sequence:
// the copy is the first phase's addend, not zero.
void test_mul_into_dst(DeviceLayer& layer) {
  const char* cases[] = {"mul_tiles_init(1, 2); mul_tiles(1, 2, 0, 0, 0);",
                         "mul_tiles_bcast<BroadcastType::COL>(1, 2, 0, 0, 0);"};
  uint32_t seed = 301;
  for (const char* fin : {"Float16_b", "Float32"})
    for (bool fp32 : {false, true})
      for (const char* fid : {"LoFi", "HiFi4"})
        for (int k = 0; k < 2; k++) {
          seed += 3;
          const Tile x = make_tile(fin, seed, fp32), a = make_tile(fin, seed + 1, fp32),
                     b = make_tile(fin, seed + 2, fp32);
          const hw::Config c{fp32, true};
          const hw::Fidelity f = std::string(fid) == "LoFi"    ? hw::Fidelity::LoFi
                                 : std::string(fid) == "HiFi2" ? hw::Fidelity::HiFi2
                                                               : hw::Fidelity::HiFi4;
          std::vector<uint32_t> d(1024);
          for (int i = 0; i < 1024; i++) {
            const int r = (i >> 9) * 16 + ((i >> 4) & 15);
            const uint32_t y = k ? b.src[fi(r, 0)] : b.src[i];
            d[i] = hw::src_to_dst(x.src[i], c);
            for (int p = 0; p < hw::phases(f); p++) d[i] = hw::elwmul_phase(a.src[i], y, d[i], p, c);
          }
          for (const char* fout : {k ? "Float16_b" : "Float32"}) {
            Run r;
            r.formats = {fin, fin, fin};
            r.inputs = {x.bytes, a.bytes, b.bytes};
            r.compute = copy_op_kernel();
            r.defines = {{"NIN", "3"}, {"COPY", "0"},
                         {"OP", std::string("copy_tile_to_dst_init_short(0); copy_tile(0, 0, 0);") + cases[k]}};
            r.args = {0, 0, 0, 0};
            r.out_format = fout;
            r.fp32 = fp32;
            r.fidelity = fid;
            compare(run(layer, r), packed(d, fout, fp32),
                    std::string(k ? "mul bcast col" : "mul") + " into DST, " + fin + " -> " + fout + ", " + fid +
                        (fp32 ? ", fp32 DST" : ", 16-bit DST"));
          }
        }
}
ZYX_TEST(mul, test_mul_into_dst);

// By hand: DST 1.0 (copied), then 1.9921875 * 1.0. HiFi4 adds the exact
// product: 2.9921875 (0x403f8000); LoFi adds the product of A's top five
// significand bits, 1.9375: 2.9375 (0x403c0000). A fresh DST gives the
// product alone, and binary_dest_reuse_tiles (which clears DST after
// moving it to SrcA) multiplies the copy without adding it.
void test_mul_into_dst_hand(DeviceLayer& layer) {
  auto tile = [](uint16_t w) { return to_bytes(std::vector<uint16_t>(1024, w)); };
  auto word = [&](const std::string& op, const char* fid) {
    Run r;
    r.formats = {"Float16_b", "Float16_b", "Float16_b"};
    r.inputs = {tile(0x3f80), tile(0x3fff), tile(0x3f80)};
    r.compute = copy_op_kernel();
    r.defines = {{"NIN", "3"}, {"COPY", "0"}, {"OP", op}};
    r.args = {0, 0, 0, 0};
    r.fidelity = fid;
    std::vector<uint8_t> out = run(layer, r);
    for (size_t i = 4; i < out.size(); i += 4) CHECK(std::memcmp(&out[i], out.data(), 4) == 0);
    uint32_t w;
    std::memcpy(&w, out.data(), 4);
    return w;
  };
  const std::string copy = "copy_tile_to_dst_init_short(0); copy_tile(0, 0, 0);";
  const std::string mul = "mul_tiles_init(1, 2); mul_tiles(1, 2, 0, 0, 0);";
  CHECK_WORD(word(copy + mul, "HiFi4"), 0x403f8000u);
  CHECK_WORD(word(copy + mul, "LoFi"), 0x403c0000u);
  CHECK_WORD(word(mul, "HiFi4"), 0x3fff0000u);
  CHECK_WORD(word(mul, "LoFi"), 0x3ff80000u);
  // DST (1.0) to SrcA times cb 1 (1.9921875): the product alone.
  CHECK_WORD(word(copy + "binary_dest_reuse_tiles_init<EltwiseBinaryType::ELWMUL, "
                         "EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1); binary_dest_reuse_tiles<"
                         "EltwiseBinaryType::ELWMUL, EltwiseBinaryReuseDestType::DEST_TO_SRCA>(1, 0, 0);",
                  "HiFi4"),
             0x3fff0000u);
}
ZYX_TEST(mul, test_mul_into_dst_hand);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "numerics_more_"); }
