// The SFPU calls (api/compute/eltwise_unary/*, the binary and ternary SFPU
// headers, sfpu_reduce): element functions of compute_sfpu.cpp applied to
// DST tiles, with integer tiles kept as integers where tt-metal does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute_api.hpp"
#include "sfpu_card.hpp"
#include "zyx_emu/sfpi_arith.h"

namespace zyx::emu {

using namespace compute;

namespace {

bool int_format(uint32_t f) {
  return f == uint32_t(Format::Int32) || f == uint32_t(Format::UInt32) || f == uint32_t(Format::UInt16) ||
         f == uint32_t(Format::UInt8) || f == uint32_t(Format::Int8);
}

}  // namespace

namespace compute {

namespace {
// sfpu_reduce's Int32 column max/min as tt-llk runs it on Wormhole: every
// word loaded with INT32_2S_COMP, compared by SFPSWAP in sign-magnitude
// order, the winner stored back with INT32_2S_COMP, so INT32_MIN counts as
// 0 (and is stored as 0 where it wins).
void reduce_int32_max_min(uint32_t* d, bool max) {
  for (int c = 0; c < 32; c++) {
    uint32_t best = hw::sfpload_int32_2s_comp(d[fidx(0, c)]);
    for (int r = 1; r < 32; r++) {
      const uint32_t x = hw::sfpload_int32_2s_comp(d[fidx(r, c)]);
      const int32_t kx = hw::sign_magnitude_order(x), kb = hw::sign_magnitude_order(best);
      if (max ? kx > kb : kx < kb) best = x;
    }
    d[fidx(0, c)] = hw::sfpstore_int32_2s_comp(best);
  }
}

// relu_min_tile_int32 as tt-llk's Wormhole program computes it: the
// threshold (two's complement) made sign-magnitude, each word loaded with
// INT32_2S_COMP (INT32_MIN loads as 0), the larger in sign-magnitude order
// kept (SFPSWAP) and stored back with INT32_2S_COMP. So the result is
// max(x, threshold), except that INT32_MIN counts as 0 and a threshold of
// INT32_MIN (-0 once made sign-magnitude) that wins stores as INT32_MIN.
void relu_min_int32_wormhole(uint32_t* d, uint32_t threshold) {
  const int32_t t = static_cast<int32_t>(threshold);
  const uint32_t t_sm = t < 0 ? 0x80000000u | ((0u - threshold) & 0x7fffffffu) : threshold;
  for (int i = 0; i < 1024; i++) {
    const uint32_t x = hw::sfpload_int32_2s_comp(d[i]);
    const uint32_t m = hw::sign_magnitude_order(x) >= hw::sign_magnitude_order(t_sm) ? x : t_sm;
    d[i] = hw::sfpstore_int32_2s_comp(m);
  }
}

}  // namespace

// sfpu_reduce over the columns of a DST tile into row 0.
void sfpu_reduce_cols(uint32_t dst, uint32_t pool, uint32_t fmt) {
  if (pool > 3) kernel_fail("sfpu_reduce: unknown pool type " + std::to_string(pool));
  uint32_t* d = dst_tile(dst);
  bool was_int = core().dst_kind[dst] == DstKind::Int;
  if (int_format(fmt)) {
    if (pool == 1) kernel_fail("sfpu_reduce: AVG of an integer format is not emulated");
    bool sign = fmt == uint32_t(Format::Int32) || fmt == uint32_t(Format::Int8);
    if (core().hw_numerics && hw_config().wormhole && fmt == uint32_t(Format::Int32) && pool >= 2) {
      reduce_int32_max_min(d, pool == 2);
      mark(dst, DstKind::Int);
      return;
    }
    for (int c = 0; c < 32; c++) {
      int64_t acc = sign ? int64_t(int32_t(d[fidx(0, c)])) : int64_t(d[fidx(0, c)]);
      for (int r = 1; r < 32; r++) {
        int64_t x = sign ? int64_t(int32_t(d[fidx(r, c)])) : int64_t(d[fidx(r, c)]);
        acc = pool == 0 ? acc + x : (pool == 2 ? std::max(acc, x) : std::min(acc, x));
      }
      d[fidx(0, c)] = static_cast<uint32_t>(acc);  // sums wrap in 32 bits
    }
    if (fmt == uint32_t(Format::UInt16) && pool == 0)
      for (int c = 0; c < 32; c++) d[fidx(0, c)] &= 0xffffu;
    mark(dst, DstKind::Int);
    return;
  }
  alignas(64) float x[1024];
  dst_floats(dst, x);
  DstKind k = was_int ? (core().run->fp32_dest_acc ? DstKind::F32 : DstKind::BF16) : sfpu_float_kind(dst);
  if (was_int) std::memcpy(d, x, sizeof x);
  for (int c = 0; c < 32; c++) {
    float acc = x[fidx(0, c)];
    for (int r = 1; r < 32; r++) {
      float v = x[fidx(r, c)];
      acc = pool <= 1 ? acc + v : (pool == 2 ? std::max(acc, v) : std::min(acc, v));
    }
    if (pool == 1) acc /= 32.0f;
    float rv = k == DstKind::BF16 ? round_bf16(acc) : (k == DstKind::F16 ? round_f16(acc) : acc);
    d[fidx(0, c)] = f2u(rv);
  }
  mark(dst, k);
}

// sfpu_add_top_row: row 0 of DST[out] = row 0 of DST[a] + row 0 of DST[b].
void sfpu_add_top_row_of(uint32_t a, uint32_t b, uint32_t out, uint32_t fmt) {
  const uint32_t* x = dst_tile(a);
  const uint32_t* y = dst_tile(b);
  uint32_t* o = dst_tile(out);
  if (int_format(fmt)) {
    for (int c = 0; c < 32; c++) {
      uint32_t s = x[fidx(0, c)] + y[fidx(0, c)];
      o[fidx(0, c)] = fmt == uint32_t(Format::UInt16) ? (s & 0xffffu) : s;
    }
    mark(out, DstKind::Int);
    return;
  }
  bool xi = core().dst_kind[a] == DstKind::Int, yi = core().dst_kind[b] == DstKind::Int;
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : (core().dst_kind[a] == DstKind::F16 ? DstKind::F16 : DstKind::BF16);
  if (core().dst_kind[out] == DstKind::Int && (core().dst_written & (1u << out)))
    for (int i = 0; i < 1024; i++) o[i] = f2u(static_cast<float>(static_cast<int32_t>(o[i])));
  for (int c = 0; c < 32; c++) {
    float u = xi ? float(int32_t(x[fidx(0, c)])) : u2f(x[fidx(0, c)]);
    float v = yi ? float(int32_t(y[fidx(0, c)])) : u2f(y[fidx(0, c)]);
    float s = u + v;
    o[fidx(0, c)] = f2u(k == DstKind::BF16 ? round_bf16(s) : (k == DstKind::F16 ? round_f16(s) : s));
  }
  mark(out, k);
}

// cumsum_tile: each column's running sum from the top row down. A tile that
// is not the first of its column (first 0) starts from the sums the previous
// tile ended with, which the SFPU keeps at full precision; each written value
// is rounded to the tile's DST kind.
void sfpu_cumsum(uint32_t dst, uint32_t first) {
  uint32_t* d = dst_tile(dst);
  auto& carry = cstate().cumsum_carry;
  if (first) carry.fill(0.0f);
  bool is_int = core().dst_kind[dst] == DstKind::Int;
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : (core().dst_kind[dst] == DstKind::F16 ? DstKind::F16 : DstKind::BF16);
  for (int c = 0; c < 32; c++) {
    float s = carry[c];
    for (int r = 0; r < 32; r++) {
      uint32_t& e = d[fidx(r, c)];
      s += is_int ? float(int32_t(e)) : u2f(e);
      e = f2u(k == DstKind::BF16 ? round_bf16(s) : (k == DstKind::F16 ? round_f16(s) : s));
    }
    carry[c] = s;
  }
  mark(dst, k);
}

}  // namespace compute

// tiled_prod_tile as the card's SFPU code runs it, on the SFPU's lane
// layout: an SFPU row at DST row address A is the 4-row group from A & ~3,
// 8 lanes a row on the even columns (A & 2 clear) or the odd ones. Per face,
// each lane multiplies a running product (held in f32) into nine SFPU rows
// two DST rows apart from the face's first, storing it into each; the ninth
// is the first of the next face (after face 3, of the next DST tile), which
// that face then reads as stored.
static void sfpu_tiled_prod(uint32_t dst) {
  if (dst + 1 >= dst_capacity())
    kernel_fail("tiled_prod_tile(" + std::to_string(dst) + "): its last face writes into the next DST tile, past DST");
  float x[2048];
  dst_floats(dst, x);
  dst_floats(dst + 1, x + 1024);
  const DstKind kinds[2] = {sfpu_float_kind(dst), sfpu_float_kind(dst + 1)};
  constexpr int kRowWords = 16, kFaceRows = 16, kSteps = 9, kLanes = 32;
  for (int face = 0; face < 4; face++)
    for (int lane = 0; lane < kLanes; lane++) {
      float product = 1.0f;
      for (int step = 0; step < kSteps; step++) {
        const int addr = face * kFaceRows + 2 * step;
        const int word = ((addr & ~3) + lane / 8) * kRowWords + 2 * (lane % 8) + ((addr & 2) ? 1 : 0);
        product *= x[word];
        // a 16-bit bf16 DST keeps what SFPSTORE keeps: the truncated value
        x[word] = kinds[word / 1024] == DstKind::BF16 ? u2f(sfpi::impl_::store_bf16(f2u(product))) : product;
      }
    }
  for (int t = 0; t < 2; t++) {
    uint32_t* d = dst_tile(dst + t);
    for (int i = 0; i < 1024; i++) d[i] = f2u(x[t * 1024 + i]);
    dst_round(d, kinds[t]);
    mark(dst + t, kinds[t]);
  }
}

// exp_packthread_tile: exp on the DST tile the pack thread holds (p0: bit 16
// set when the input is scaled first by the bf16 in bits 0-15; p1: approx).
static void sfpu_exp_on_pack(uint32_t dst, uint32_t scale, uint32_t approx) {
  if (!on_pack()) return;  // the pack build's call
  SfpuScope sfpu;
  DstKind k;
  uint32_t* d = pack_dst_for_sfpu(dst, &k, "exp_packthread_tile");
  if (k == DstKind::Int) kernel_fail("exp_packthread_tile: DST[" + std::to_string(dst) + "] holds integers");
  const float s = u2f((scale & 0xffffu) << 16);
  uint64_t unused_rand = 0;
  for (int i = 0; i < 1024; i++) {
    float x = u2f(d[i]);
    if (scale & 0x10000u) x *= s;
    d[i] = f2u(sfpu_unary_f(approx ? ZYX_SU_EXP_APPROX : ZYX_SU_EXP, x, 0, 0, 0, &unused_rand));
  }
  dst_round(d, k);
  if (core().special_tracking) note_special_words(d, k);
}

void api_sfpu_unary(uint32_t op, uint32_t dst, uint32_t p0, uint32_t p1, uint32_t p2) {
  if (op == ZYX_SU_EXP_PACK) return sfpu_exp_on_pack(dst, p0, p1);
  if (!on_math()) return;  // SFPU: the math build
  SfpuScope sfpu;
  ComputeState& cs = cstate();
  if (op == ZYX_SU_RAND && dst == 0xffffffffu) {  // rand_tile_init / dropout_tile_init(seed)
    cs.rand_state = 0x9e3779b97f4a7c15ull ^ (uint64_t(p0) << 17) ^ (uint64_t(core().index) << 40);
    if (!cs.rand_state) cs.rand_state = 1;
    return;
  }
  if (op == ZYX_SU_EXP_APPROX && dst == 0xffffffffu) {  // exp_tile_init<true, scale>
    cs.exp_approx_scale = p0;
    return;
  }
  if (op == ZYX_SU_TILED_PROD) return sfpu_tiled_prod(dst);
  if (!sfpu_unary_known(op)) kernel_fail("unknown SFPU unary op " + std::to_string(op));
  uint32_t* d = dst_tile(dst);
  DstKind kind = core().dst_kind[dst];
  // Float ops applied to integer tiles use their integer forms where tt-metal has one.
  if (kind == DstKind::Int) {
    switch (op) {
      case ZYX_SU_ABS: op = ZYX_SU_ABS_INT32; break;
      case ZYX_SU_NEG: op = ZYX_SU_NEG_INT32; break;
      case ZYX_SU_RELU: op = ZYX_SU_RELU_INT32; break;
      case ZYX_SU_SIGNBIT: op = ZYX_SU_SIGNBIT_INT32; break;
      case ZYX_SU_LOGICAL_NOT: op = ZYX_SU_LOGICAL_NOT_INT32; break;
      case ZYX_SU_EQZ: op = ZYX_SU_EQZ_INT32; break;
      case ZYX_SU_NEZ: op = ZYX_SU_NEZ_INT32; break;
      case ZYX_SU_LTZ: op = ZYX_SU_LTZ_INT32; break;
      case ZYX_SU_GTZ: op = ZYX_SU_GTZ_INT32; break;
      case ZYX_SU_LEZ: op = ZYX_SU_LEZ_INT32; break;
      case ZYX_SU_GEZ: op = ZYX_SU_GEZ_INT32; break;
      default: break;
    }
  }
  if (sfpu_unary_is_int(op)) {
    if (kind != DstKind::Int)  // float bits reinterpreted as the SFPU does: convert to integers first
      for (int i = 0; i < 1024; i++) d[i] = static_cast<uint32_t>(static_cast<int32_t>(u2f(d[i])));
    if (op == ZYX_SU_RELU_MIN_INT32 && core().hw_numerics && hw_config().wormhole)
      relu_min_int32_wormhole(d, p0);
    else
      for (int i = 0; i < 1024; i++) d[i] = sfpu_unary_i(op, d[i], p0, p1);
    mark(dst, DstKind::Int);
    return;
  }
  float x[1024];
  dst_floats(dst, x);
  DstKind k = sfpu_float_kind(dst);
  // The card's algorithm where it is modelled (sfpu_card.hpp); an fp16 DST
  // keeps the exact function.
  SfpuCardMode mode;
  mode.fp32_dest = k == DstKind::F32;
  mode.blackhole = core().run->board->arch == "blackhole";
  mode.hw_numerics = core().hw_numerics;
  mode.p0 = p0, mode.p1 = p1, mode.p2 = p2;
  mode.exp_scale = cs.exp_approx_scale;
  const bool card = k != DstKind::F16 && sfpu_card_op(op, mode);
  if (op == ZYX_SU_ALT_COMPLEX_ROTATE90) {
    // (re, im) pairs along each row become (-im, re)
    for (int i = 0; i < 1024; i += 2) d[i] = f2u(-x[i + 1]), d[i + 1] = f2u(x[i]);
  } else if (card) {
    for (int i = 0; i < 1024; i++) d[i] = sfpu_card_word(op, f2u(x[i]), mode);
  } else {
    for (int i = 0; i < 1024; i++) d[i] = f2u(sfpu_unary_f(op, x[i], p0, p1, p2, &cs.rand_state));
  }
  // An op that runs as the card's SFPI code stores as SFPSTORE does: a
  // 16-bit DST truncates.
  const bool card_sfpi =
      card || op == ZYX_SU_TANH_APPROX || op == ZYX_SU_SIGMOID_APPROX || op == ZYX_SU_GELU_APPROX;
  if (card_sfpi && k == DstKind::BF16)
    for (int i = 0; i < 1024; i++) d[i] = sfpi::impl_::store_bf16(d[i]);
  dst_round(d, k);
  mark(dst, k);
}

// Spreads column 0 (ZYX_SB_BCAST_COL) or row 0 (ZYX_SB_BCAST_ROW) of a
// face-ordered tile over the whole tile.
static void broadcast_tile(float* t, uint32_t bcast) {
  float line[32];
  for (int i = 0; i < 32; i++) line[i] = t[bcast == ZYX_SB_BCAST_COL ? fidx(i, 0) : fidx(0, i)];
  for (int r = 0; r < 32; r++)
    for (int c = 0; c < 32; c++) t[fidx(r, c)] = line[bcast == ZYX_SB_BCAST_COL ? r : c];
}

void api_sfpu_binary(uint32_t op, uint32_t ia, uint32_t ib, uint32_t out, uint32_t bcast) {
  if (!on_math()) return;  // SFPU: the math build
  SfpuScope sfpu;
  if (!sfpu_binary_known(op)) kernel_fail("unknown SFPU binary op " + std::to_string(op));
  const bool float_bcast_op = op == ZYX_SB_ADD || op == ZYX_SB_SUB || op == ZYX_SB_MUL;
  if (bcast > ZYX_SB_BCAST_ROW || (bcast != ZYX_SB_BCAST_NONE && !float_bcast_op))
    kernel_fail("SFPU binary op " + std::to_string(op) + ": unsupported broadcast " + std::to_string(bcast));
  uint32_t *a = dst_tile(ia), *b = dst_tile(ib), *d = dst_tile(out);
  DstKind ka = core().dst_kind[ia], kb = core().dst_kind[ib];
  if (sfpu_binary_is_int(op) && op != ZYX_SB_DIV_INT32) {
    uint32_t ta[1024], tb[1024];
    for (int i = 0; i < 1024; i++) {
      ta[i] = ka == DstKind::Int ? a[i] : static_cast<uint32_t>(static_cast<int32_t>(u2f(a[i])));
      tb[i] = kb == DstKind::Int ? b[i] : static_cast<uint32_t>(static_cast<int32_t>(u2f(b[i])));
    }
    for (int i = 0; i < 1024; i++) d[i] = sfpu_binary_i(op, ta[i], tb[i]);
    mark(out, DstKind::Int);
    return;
  }
  // add/sub/mul of two integer tiles stay integers; the broadcast forms work
  // on FP32 DST data (tt-metal requires fp32_dest_acc_en), so take the float path.
  if (ka == DstKind::Int && kb == DstKind::Int && op <= ZYX_SB_MUL && bcast == ZYX_SB_BCAST_NONE) {
    for (int i = 0; i < 1024; i++) d[i] = op == ZYX_SB_ADD ? a[i] + b[i] : op == ZYX_SB_SUB ? a[i] - b[i] : a[i] * b[i];
    mark(out, DstKind::Int);
    return;
  }
  float x[1024], y[1024];
  dst_floats(ia, x);
  dst_floats(ib, y);
  if (bcast != ZYX_SB_BCAST_NONE) broadcast_tile(y, bcast);
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : (ka == DstKind::F16 ? DstKind::F16 : DstKind::BF16);
  for (int i = 0; i < 1024; i++) d[i] = f2u(sfpu_binary_f(op, x[i], y[i]));
  dst_round(d, k);
  mark(out, k);
}

void api_sfpu_ternary(uint32_t op, uint32_t ia, uint32_t ib, uint32_t ic, uint32_t out, uint32_t p0) {
  if (!on_math()) return;  // SFPU: the math build
  SfpuScope sfpu;
  if (op >= ZYX_ST_COUNT) kernel_fail("unknown SFPU ternary op " + std::to_string(op));
  float x[1024], y[1024], z[1024];
  dst_floats(ia, x);
  dst_floats(ib, y);
  dst_floats(ic, z);
  uint32_t* d = dst_tile(out);
  DstKind k = sfpu_float_kind(ib);
  for (int i = 0; i < 1024; i++) d[i] = f2u(sfpu_ternary_f(op, x[i], y[i], z[i], u2f(p0)));
  dst_round(d, k);
  mark(out, k);
}

// ---- the special-value flags (RISCV_DEBUG_REG_FPU_STICKY_BITS) ----

namespace compute {

// A float tile's NaN and infinite words (DST keeps every float kind as fp32
// bits) raise the SFPU's NaN and infinity flags in an SFPU op, else the
// FPU's infinity/overflow flag (the FPU has no NaN flag). Integer tiles and
// the denormal and integer overflow flags are not modelled: the emulator's
// arithmetic flushes denormals and wraps integers without recording it.
void note_special_words(const uint32_t* words, DstKind kind) {
  CoreState& c = core();
  if (kind == DstKind::Int) return;
  bool inf = false, nan = false;
  for (int i = 0; i < 1024; i++) {
    const uint32_t w = words[i];
    if ((w & 0x7f800000u) != 0x7f800000u) continue;
    ((w & 0x007fffffu) ? nan : inf) = true;
  }
  if (c.sfpu_scope)
    c.special_flags |= (nan ? uint32_t(ZYX_SPECIAL_SFPU_NAN) : 0u) | (inf ? uint32_t(ZYX_SPECIAL_SFPU_INF) : 0u);
  else if (nan || inf)
    c.special_flags |= ZYX_SPECIAL_FPU_INF;
}

void note_special_values(uint32_t i) { note_special_words(core().dst[i].data(), core().dst_kind[i]); }

}  // namespace compute

// The flags calls run in the math build only, as tt-metal's do (MATH). The
// core's tracking starts at its first call: flags of earlier ops are not
// recorded (a kernel clears them first, as the card's register keeps what
// earlier programs raised).
uint32_t api_special_flags(uint32_t op, uint32_t arg) {
  if (!on_math()) return 0;
  CoreState& c = core();
  if (!c.special_tracking) {
    c.special_tracking = true;
    c.sfpi_pending = 0;
  }
  scan_sfpi_stores();
  switch (op) {
    case ZYX_SPECIAL_READ: return c.special_flags;
    case ZYX_SPECIAL_CLEAR: c.special_flags = 0; return 0;
    case ZYX_SPECIAL_STORE: {
      void* word = api_l1_range(arg, 4, "store_compute_special_value_flags_to_l1");
      std::memcpy(word, &c.special_flags, 4);
      return 0;
    }
    default: kernel_fail("special value flags: unknown op " + std::to_string(op));
  }
}

namespace {

// A DST cell (16 bits) as the card stores a word of kind k, from ttsim's
// model of Wormhole's DST: a 16-bit DST holds bf16 as sign | mantissa << 8
// | exponent, fp16 as sign | mantissa << 5 | exponent, integers as their low
// 16 bits; a 32-bit DST splits a word into a high half (encoded as bf16 is)
// and a low half, int32 in sign-magnitude (the form SFPLOAD's INT32_2S_COMP
// converts from).
uint16_t dst_cell(uint32_t w, DstKind k, bool fp32, bool low) {
  auto bf16 = [](uint32_t h) { return uint16_t((h & 0x8000) | (h & 127) << 8 | ((h >> 7) & 255)); };
  if (fp32) {
    if (k == DstKind::Int && int32_t(w) < 0) w = 0x80000000u | (0u - w);
    return low ? uint16_t(w & 0xffff) : bf16(w >> 16);
  }
  if (k == DstKind::Int) return uint16_t(w & 0xffff);
  if (k == DstKind::F16) {
    uint32_t h = sfpi::impl_::fp16_bits(w);
    return uint16_t((h & 0x8000) | (h & 1023) << 5 | ((h >> 10) & 31));
  }
  return bf16(w >> 16);
}

}  // namespace

// dbg_read_dest_acc_row (math build only): row `row` of math's half of DST
// through the debug array, cells 2i and 2i + 1 in word i. A 32-bit DST's
// logical row r keeps its high halves in physical row ((r & ~7) << 1) | (r
// & 7) and its low halves 8 rows on. Rows of a tile not written since the
// acquire read 0, as rows the card never marked valid do.
void api_dst_row(uint32_t row, uint32_t* out) {
  if (!on_math()) return;
  CoreState& c = core();
  const bool fp32 = c.run->fp32_dest_acc, low = fp32 && (row & 8);
  const uint32_t logical = fp32 ? ((row >> 1) & ~7u) | (row & 7) : row, tile = logical / 64;
  if (tile >= dst_capacity())
    kernel_fail("dbg_read_dest_acc_row: row " + std::to_string(row) + " is outside the " +
                std::to_string(dst_capacity()) + " DST tiles math may use");
  const uint32_t* d = c.dst[tile].data() + (logical % 64) * 16;
  const bool written = c.dst_written & (1u << tile);
  for (int i = 0; i < 8; i++) {
    uint32_t lo = written ? dst_cell(d[2 * i], c.dst_kind[tile], fp32, low) : 0;
    uint32_t hi = written ? dst_cell(d[2 * i + 1], c.dst_kind[tile], fp32, low) : 0;
    out[i] = lo | hi << 16;
  }
}

}  // namespace zyx::emu
