// Tile math of the emulated compute engine: unpacking circular-buffer tiles
// into the destination register file (DST), FPU and SFPU operations on DST,
// and packing DST back to a circular buffer in the target format.
//
// A tile is 32x32 elements stored as four 16x16 faces (face 0: rows 0-15,
// cols 0-15; face 1: rows 0-15, cols 16-31; face 2: rows 16-31, cols 0-15;
// face 3: rows 16-31, cols 16-31), each face row-major. DST keeps tiles in
// the same order. Each DST tile holds f32 or i32 bits and a kind: without
// fp32_dest_acc a float tile is rounded to its 16-bit format (bf16, or fp16
// for Float16 inputs) after every operation, as the 16-bit DST does.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include "formats.hpp"
#include "runner.hpp"

namespace zyx::emu {

Fiber* current_fiber();
[[noreturn]] void kernel_fail(const std::string& msg);

// ---- scalar conversions ----------------------------------------------------

static inline float round_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }
static inline float round_f16(float f) { return f16_to_f32(f32_to_f16(f)); }

// Converts a float to an integer with rounding to nearest even and saturation.
static inline int64_t to_int(float f, int64_t lo, int64_t hi) {
  if (std::isnan(f)) return 0;
  double r = std::nearbyint(static_cast<double>(f));
  if (r < static_cast<double>(lo)) return lo;
  if (r > static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

DstKind dst_kind_for(Format f, bool fp32) {
  if (format_is_int(f)) return DstKind::Int;
  if (fp32) return DstKind::F32;
  return f == Format::Float16 ? DstKind::F16 : DstKind::BF16;
}

// The hot loops get x86-64 clones for AVX-512 and AVX2 (picked at load time),
// so they vectorise wide without tying the build to the build machine.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZYX_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ZYX_HOT
#endif

// bf16 rounding of f32 bits, branch-free so that it vectorises: round to
// nearest even; NaNs stay NaN (quietened), as f32_to_bf16 does.
ZYX_HOT void round_bf16_tile(uint32_t* v) {
  for (int i = 0; i < 1024; i++) {
    uint32_t u = v[i];
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    uint32_t q = (u | 0x00400000u) & 0xffff0000u;
    v[i] = (u & 0x7fffffffu) > 0x7f800000u ? q : r;
  }
}

void dst_round(uint32_t* v, DstKind kind) {
  if (kind == DstKind::BF16) {
    round_bf16_tile(v);
  } else if (kind == DstKind::F16) {
    for (int i = 0; i < 1024; i++) v[i] = f2u(round_f16(u2f(v[i])));
  }
}

ZYX_HOT void tile_unpack(const uint8_t* src, Format f, uint32_t* out, DstKind kind) {
  switch (f) {
    case Format::Float32: std::memcpy(out, src, 4096); break;
    case Format::Float16_b: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = uint32_t(s[i]) << 16;
      return;  // exact in f32, bf16 and (for kind F16, rounded below) f16
    }
    case Format::Float16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = f2u(f16_to_f32(s[i]));
      break;
    }
    case Format::Int32:
    case Format::UInt32: std::memcpy(out, src, 4096); return;
    case Format::UInt16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = s[i];
      return;
    }
    case Format::UInt8:
      for (int i = 0; i < 1024; i++) out[i] = src[i];
      return;
    case Format::Int8:
      for (int i = 0; i < 1024; i++) out[i] = static_cast<uint32_t>(int32_t(static_cast<int8_t>(src[i])));
      return;
    case Format::Bfp8_b:
    case Format::Bfp4_b:
      // exact in bf16 (at most 8 significant bits), so no DST rounding needed
      bfp_unpack_tile(src, f, reinterpret_cast<float*>(out));
      return;
    default: kernel_fail("unpack: unsupported format");
  }
  dst_round(out, kind);
}

ZYX_HOT void tile_pack(const uint32_t* src, DstKind kind, uint8_t* dst, Format f) {
  bool is_int = kind == DstKind::Int;
  switch (f) {
    case Format::Float32: {
      float* d = reinterpret_cast<float*>(dst);
      if (is_int)
        for (int i = 0; i < 1024; i++) d[i] = static_cast<float>(static_cast<int32_t>(src[i]));
      else
        std::memcpy(dst, src, 4096);
      return;
    }
    case Format::Float16_b: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      if (is_int) {
        for (int i = 0; i < 1024; i++) d[i] = f32_to_bf16(static_cast<float>(static_cast<int32_t>(src[i])));
        return;
      }
      for (int i = 0; i < 1024; i++) {  // f32_to_bf16, branch-free
        uint32_t u = src[i];
        uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, q = (u >> 16) | 0x40u;
        d[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? q : r);
      }
      return;
    }
    case Format::Float16: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      for (int i = 0; i < 1024; i++)
        d[i] = f32_to_f16(is_int ? static_cast<float>(static_cast<int32_t>(src[i])) : u2f(src[i]));
      return;
    }
    case Format::Int32:
    case Format::UInt32: {
      if (is_int) {
        std::memcpy(dst, src, 4096);
        return;
      }
      uint32_t* d = reinterpret_cast<uint32_t*>(dst);
      bool u = f == Format::UInt32;
      for (int i = 0; i < 1024; i++)
        d[i] = static_cast<uint32_t>(u ? to_int(u2f(src[i]), 0, UINT32_MAX) : to_int(u2f(src[i]), INT32_MIN, INT32_MAX));
      return;
    }
    case Format::UInt16: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      for (int i = 0; i < 1024; i++)
        d[i] = static_cast<uint16_t>(is_int ? std::min<uint32_t>(src[i], 0xffff) : to_int(u2f(src[i]), 0, 0xffff));
      return;
    }
    case Format::UInt8:
      for (int i = 0; i < 1024; i++)
        dst[i] = static_cast<uint8_t>(is_int ? std::min<uint32_t>(src[i], 0xff) : to_int(u2f(src[i]), 0, 0xff));
      return;
    case Format::Int8:
      for (int i = 0; i < 1024; i++) {
        int64_t v = is_int ? int64_t(int32_t(src[i])) : to_int(u2f(src[i]), -128, 127);
        dst[i] = static_cast<uint8_t>(static_cast<int8_t>(std::min<int64_t>(127, std::max<int64_t>(-128, v))));
      }
      return;
    case Format::Bfp8_b:
    case Format::Bfp4_b: {
      float tmp[1024];
      for (int i = 0; i < 1024; i++) tmp[i] = is_int ? static_cast<float>(static_cast<int32_t>(src[i])) : u2f(src[i]);
      bfp_pack_tile(tmp, f, dst);
      return;
    }
    default: kernel_fail("pack: unsupported format");
  }
}

// Row-major index (r, c) to the face-ordered position in a tile.
static inline int fidx(int r, int c) { return ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15); }

// ---- compute API -----------------------------------------------------------

namespace {

CoreState& core() { return *current_fiber()->core; }

uint32_t dst_capacity() { return core().run->fp32_dest_acc ? 8 : 16; }

uint32_t* dst_tile(uint32_t i) {
  if (i >= dst_capacity())
    kernel_fail("DST index " + std::to_string(i) + " is out of range: DST holds " + std::to_string(dst_capacity()) +
                (core().run->fp32_dest_acc ? " fp32 tiles" : " 16-bit tiles"));
  return core().dst[i].data();
}

CircularBuffer& cb_of(uint32_t id) {
  if (id >= 32) kernel_fail("circular buffer index " + std::to_string(id) + " is out of range (0-31)");
  auto& cb = core().cbs[id];
  if (!cb.configured) kernel_fail("circular buffer " + std::to_string(id) + " is not configured by the program");
  return cb;
}

// The tile at position `tile` from the front of a circular buffer.
const uint8_t* front_tile(uint32_t id, uint32_t tile, const char* op) {
  auto& cb = cb_of(id);
  if (cb.page_size < format_tile_bytes(cb.format))
    kernel_fail(std::string(op) + ": cb " + std::to_string(id) + " pages of " + std::to_string(cb.page_size) +
                " bytes are smaller than a " + format_name(cb.format) + " tile");
  if (tile >= cb.available() && !(cb.on_buffer && tile < cb.num_pages))
    kernel_fail(std::string(op) + ": tile " + std::to_string(tile) + " of cb " + std::to_string(id) + " but only " +
                std::to_string(cb.available()) + " page(s) are at the front (missing cb_wait_front?)");
  uint32_t page = (cb.rd_page + tile) % cb.num_pages;
  return core().l1 + cb.offset + uint64_t(page) * cb.page_size;
}

// Unpacks a tile into floats (integers converted).
void unpack_floats(uint32_t cb, uint32_t tile, float* out, const char* op) {
  const uint8_t* src = front_tile(cb, tile, op);
  Format f = cb_of(cb).format;
  uint32_t* u = reinterpret_cast<uint32_t*>(out);
  tile_unpack(src, f, u, DstKind::F32);
  if (format_is_int(f)) {
    bool sign = f == Format::Int32;
    for (int i = 0; i < 1024; i++)
      out[i] = sign ? static_cast<float>(static_cast<int32_t>(u[i])) : static_cast<float>(u[i]);
  }
}

void mark(uint32_t i, DstKind k) {
  core().dst_kind[i] = k;
  core().dst_written |= 1u << i;
}

DstKind float_kind(Format a, Format b = Format::Float16_b) {
  if (core().run->fp32_dest_acc) return DstKind::F32;
  return (a == Format::Float16 || b == Format::Float16) ? DstKind::F16 : DstKind::BF16;
}

// Transposes a face-ordered tile in place: the whole 32x32 tile, or (faces)
// each 16x16 face on its own.
void transpose_tile(uint32_t* d, bool within_faces) {
  uint32_t tmp[1024];
  std::memcpy(tmp, d, sizeof tmp);
  for (int r = 0; r < 32; r++)
    for (int c = 0; c < 32; c++) {
      if (within_faces)
        d[fidx(r, c)] = tmp[fidx((r & 16) | (c & 15), (c & 16) | (r & 15))];
      else
        d[fidx(c, r)] = tmp[fidx(r, c)];
    }
}

// Pack with the packer's ReLU and L1 accumulation applied.
void pack_to(const uint32_t* d, DstKind kind, uint8_t* out, Format f) {
  const ComputeState& cs = core().cstate;
  uint32_t tmp[1024];
  const uint32_t* src = d;
  uint32_t mode = cs.relu & 0xf;
  if ((mode || cs.l1_acc) && kind != DstKind::Int) {
    float thr = bf16_to_f32(static_cast<uint16_t>(cs.relu >> 16));
    for (int i = 0; i < 1024; i++) {
      float x = u2f(d[i]);
      if (mode == 1) x = x > 0 ? x : 0.0f;
      else if (mode == 2) x = x > thr ? x : 0.0f;
      else if (mode == 3) x = x < 0 ? 0.0f : (x > thr ? thr : x);
      tmp[i] = f2u(x);
    }
    if (cs.l1_acc) {
      uint32_t prev[1024];
      tile_unpack(out, f, prev, DstKind::F32);
      for (int i = 0; i < 1024; i++) tmp[i] = f2u(u2f(tmp[i]) + u2f(prev[i]));
    }
    src = tmp;
  } else if (cs.l1_acc && kind == DstKind::Int) {
    uint32_t prev[1024];
    tile_unpack(out, f, prev, DstKind::Int);
    for (int i = 0; i < 1024; i++) tmp[i] = d[i] + prev[i];
    src = tmp;
  }
  tile_pack(src, kind, out, f);
}

void api_dst_acquire() {
  auto& c = core();
  for (int i = 0; i < 16; i++)
    if (c.dst_written & (1u << i)) c.dst[i].fill(0);
  c.dst_written = 0;
  c.dst_acquired = true;
}

void api_dst_release() { core().dst_acquired = false; }

void api_copy_tile(uint32_t cb, uint32_t tile, uint32_t dst) {
  uint32_t* d = dst_tile(dst);
  const uint8_t* src = front_tile(cb, tile, "copy_tile");
  Format f = cb_of(cb).format;
  DstKind k = dst_kind_for(f, core().run->fp32_dest_acc);
  tile_unpack(src, f, d, k);
  uint32_t tr = core().cstate.copy_transpose;
  if (tr) transpose_tile(d, tr == 2);
  mark(dst, k);
}

void api_pack_tile(uint32_t dst, uint32_t cbid, uint32_t out_tile, int out_of_order) {
  const uint32_t* d = dst_tile(dst);
  auto& cb = cb_of(cbid);
  if (cb.page_size < format_tile_bytes(cb.format))
    kernel_fail("pack_tile: cb " + std::to_string(cbid) + " pages of " + std::to_string(cb.page_size) +
                " bytes are smaller than a " + format_name(cb.format) + " tile");
  uint32_t pos = out_of_order ? out_tile : cb.pack_next++;
  if (pos >= cb.num_pages - cb.available())
    kernel_fail("pack_tile: position " + std::to_string(pos) + " of cb " + std::to_string(cbid) +
                " is beyond the free space (missing cb_reserve_back?)");
  uint32_t page = (cb.wr_page + pos) % cb.num_pages;
  pack_to(d, core().dst_kind[dst], core().l1 + cb.offset + uint64_t(page) * cb.page_size, cb.format);
}

template <typename Op>
void elementwise(uint32_t* d, DstKind k, const float* a, const float* b, Op op) {
  for (int i = 0; i < 1024; i++) d[i] = f2u(op(a[i], b[i]));
  dst_round(d, k);
}

// out = a op b (acc: out += a op b), vectorised.
ZYX_HOT void eltwise(uint32_t op, const float* __restrict a, const float* __restrict b, float* __restrict out,
                     bool acc) {
  if (acc) {
    if (op == ZYX_BIN_ADD)
      for (int i = 0; i < 1024; i++) out[i] += a[i] + b[i];
    else if (op == ZYX_BIN_SUB)
      for (int i = 0; i < 1024; i++) out[i] += a[i] - b[i];
    else
      for (int i = 0; i < 1024; i++) out[i] += a[i] * b[i];
  } else if (op == ZYX_BIN_ADD) {
    for (int i = 0; i < 1024; i++) out[i] = a[i] + b[i];
  } else if (op == ZYX_BIN_SUB) {
    for (int i = 0; i < 1024; i++) out[i] = a[i] - b[i];
  } else {
    for (int i = 0; i < 1024; i++) out[i] = a[i] * b[i];
  }
}

// B's element for output position i under a broadcast.
inline int bcast_src(uint32_t bcast, int i, uint32_t row) {
  if (bcast == ZYX_BC_NONE) return i;
  int f = i >> 8, r = ((f >> 1) << 4) | ((i >> 4) & 15), c = ((f & 1) << 4) | (i & 15);
  if (bcast == ZYX_BC_COL) return fidx(r, 0);
  if (bcast == ZYX_BC_ROW) return fidx(static_cast<int>(row & 31), c);
  return 0;
}

void api_binary_bcast(uint32_t op, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst,
                      uint32_t row) {
  if (op > ZYX_BIN_MUL) kernel_fail("unknown binary op " + std::to_string(op));
  if (bcast > ZYX_BC_SCALAR) kernel_fail("unknown broadcast " + std::to_string(bcast));
  uint32_t* d = dst_tile(dst);
  Format f0 = cb_of(cb0).format, f1 = cb_of(cb1).format;
  bool acc = core().cstate.acc_to_dest && op != ZYX_BIN_MUL;
  bool had = (core().dst_written >> dst) & 1;
  if (format_is_int(f0) && format_is_int(f1)) {
    uint32_t a[1024], b[1024];
    tile_unpack(front_tile(cb0, t0, "binary op"), f0, a, DstKind::Int);
    tile_unpack(front_tile(cb1, t1, "binary op"), f1, b, DstKind::Int);
    bool was_int = core().dst_kind[dst] == DstKind::Int;
    for (int i = 0; i < 1024; i++) {
      uint32_t y = b[bcast_src(bcast, i, row)];
      uint32_t v = op == ZYX_BIN_ADD ? a[i] + y : op == ZYX_BIN_SUB ? a[i] - y : a[i] * y;
      if (acc && had) v += was_int ? d[i] : static_cast<uint32_t>(static_cast<int32_t>(u2f(d[i])));
      d[i] = v;
    }
    mark(dst, DstKind::Int);
    return;
  }
  alignas(64) float a[1024], b[1024];
  unpack_floats(cb0, t0, a, "binary op");
  unpack_floats(cb1, t1, b, "binary op");
  DstKind k = float_kind(f0, f1);
  // Without fp32 DST the FPU sees 16-bit operands (only wider inputs change).
  if (k != DstKind::F32) {
    if (format_bytes(f0) == 4 || format_is_int(f0)) dst_round(reinterpret_cast<uint32_t*>(a), k);
    if (format_bytes(f1) == 4 || format_is_int(f1)) dst_round(reinterpret_cast<uint32_t*>(b), k);
  }
  if (bcast != ZYX_BC_NONE) {
    float bb[1024];
    for (int i = 0; i < 1024; i++) bb[i] = b[bcast_src(bcast, i, row)];
    std::memcpy(b, bb, sizeof bb);
  }
  DstKind prev = core().dst_kind[dst];
  float* out = reinterpret_cast<float*>(d);
  if (acc && had && prev == DstKind::Int)
    for (int i = 0; i < 1024; i++) out[i] = float(int32_t(d[i]));
  eltwise(op, a, b, out, acc && had);
  dst_round(d, k);
  mark(dst, k);
}

void api_binary(uint32_t op, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst) {
  api_binary_bcast(op, ZYX_BC_NONE, cb0, cb1, t0, t1, dst, 0);
}

void api_binary_dst(uint32_t op, uint32_t i0, uint32_t i1, uint32_t out) {
  uint32_t *a = dst_tile(i0), *b = dst_tile(i1), *d = dst_tile(out);
  DstKind ka = core().dst_kind[i0], kb = core().dst_kind[i1];
  if (ka == DstKind::Int && kb == DstKind::Int) {
    for (int i = 0; i < 1024; i++) d[i] = op == ZYX_BIN_ADD ? a[i] + b[i] : op == ZYX_BIN_SUB ? a[i] - b[i] : a[i] * b[i];
    mark(out, DstKind::Int);
    return;
  }
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : (ka == DstKind::F16 ? DstKind::F16 : DstKind::BF16);
  for (int i = 0; i < 1024; i++) {
    float x = ka == DstKind::Int ? float(int32_t(a[i])) : u2f(a[i]);
    float y = kb == DstKind::Int ? float(int32_t(b[i])) : u2f(b[i]);
    d[i] = f2u(op == ZYX_BIN_ADD ? x + y : op == ZYX_BIN_SUB ? x - y : x * y);
  }
  dst_round(d, k);
  mark(out, k);
}

float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

void api_unary(uint32_t op, uint32_t dst, uint32_t param) {
  uint32_t* d = dst_tile(dst);
  DstKind k = core().dst_kind[dst];
  if (k == DstKind::Int && (op == ZYX_UN_RELU || op == ZYX_UN_ABS || op == ZYX_UN_NEG)) {
    for (int i = 0; i < 1024; i++) {
      int32_t v = static_cast<int32_t>(d[i]);
      v = op == ZYX_UN_RELU ? (v < 0 ? 0 : v) : op == ZYX_UN_ABS ? (v < 0 ? -v : v) : -v;
      d[i] = static_cast<uint32_t>(v);
    }
    mark(dst, k);
    return;
  }
  if (k == DstKind::Int) {
    for (int i = 0; i < 1024; i++) d[i] = f2u(static_cast<float>(static_cast<int32_t>(d[i])));
    k = core().run->fp32_dest_acc ? DstKind::F32 : DstKind::BF16;
  }
  float p = u2f(param);
  for (int i = 0; i < 1024; i++) {
    float x = u2f(d[i]), y = x;
    switch (op) {
      case ZYX_UN_EXP: y = std::exp(x); break;
      case ZYX_UN_LOG: y = std::log(x); break;
      case ZYX_UN_SQRT: y = std::sqrt(x); break;
      case ZYX_UN_RECIP: y = 1.0f / x; break;
      case ZYX_UN_RELU: y = x > 0 ? x : 0.0f; break;
      case ZYX_UN_SIGMOID: y = 1.0f / (1.0f + std::exp(-x)); break;
      case ZYX_UN_GELU: y = gelu(x); break;
      case ZYX_UN_ABS: y = std::fabs(x); break;
      case ZYX_UN_NEG: y = -x; break;
      case ZYX_UN_SQUARE: y = x * x; break;
      case ZYX_UN_RSQRT: y = 1.0f / std::sqrt(x); break;
      case ZYX_UN_TANH: y = std::tanh(x); break;
      case ZYX_UN_SIN: y = std::sin(x); break;
      case ZYX_UN_COS: y = std::cos(x); break;
      case ZYX_UN_FILL: y = p; break;
      case ZYX_UN_ADD_SCALAR: y = x + p; break;
      case ZYX_UN_MUL_SCALAR: y = x * p; break;
      case ZYX_UN_RELU_MAX: y = x > p ? p : (x < 0 ? 0.0f : x); break;
      case ZYX_UN_RELU_MIN: y = x < p ? 0.0f : x; break;
      case ZYX_UN_SILU: y = x / (1.0f + std::exp(-x)); break;
      case ZYX_UN_EXP2: y = std::exp2(x); break;
      case ZYX_UN_LOG_WITH_BASE: y = std::log(x) * p; break;
      case ZYX_UN_SIGN: y = x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); break;
      default: kernel_fail("unknown unary op " + std::to_string(op));
    }
    d[i] = f2u(y);
  }
  dst_round(d, k);
  mark(dst, k);
}

// C += A * B for 32x32 f32 tiles in face order (the layout of CB tiles and
// DST, so no tile is rearranged): four rows at a time in eight 16-float
// vectors (GCC vector extensions: one zmm register each with AVX-512, two ymm
// with AVX2), so each row of B is loaded once per four rows. Row r of a tile
// is face row r % 16 of faces 2 (r / 16) (columns 0-15) and 2 (r / 16) + 1
// (columns 16-31). Each element sums its 32 products in k order onto C.
typedef float vf16 __attribute__((vector_size(64)));
// Unaligned 16-float loads and stores (macros: no vector-typed function
// signatures, whose ABI differs between the clones).
#define ld16(p) __extension__({ vf16 v_; std::memcpy(&v_, (p), 64); v_; })
#define st16(p, v) do { vf16 w_ = (v); std::memcpy((p), &w_, 64); } while (0)

// The 16 columns [16 h, 16 h + 16) of row r: 16 contiguous floats.
static inline int frow(int r, int h) { return ((r >> 4) * 2 + h) * 256 + (r & 15) * 16; }

ZYX_HOT void mm_tile(const float* __restrict A, const float* __restrict B, float* __restrict C) {
  for (int r = 0; r < 32; r += 4) {
    vf16 c00 = ld16(C + frow(r, 0)), c01 = ld16(C + frow(r, 1));
    vf16 c10 = ld16(C + frow(r + 1, 0)), c11 = ld16(C + frow(r + 1, 1));
    vf16 c20 = ld16(C + frow(r + 2, 0)), c21 = ld16(C + frow(r + 2, 1));
    vf16 c30 = ld16(C + frow(r + 3, 0)), c31 = ld16(C + frow(r + 3, 1));
    for (int kh = 0; kh < 2; kh++) {
      // A's columns [16 kh, 16 kh + 16) of the four rows, and B's rows of those k
      const float* a0p = A + frow(r, kh);
      const float* bp = B + kh * 512;
      for (int kk = 0; kk < 16; kk++) {
        const vf16 b0 = ld16(bp + kk * 16), b1 = ld16(bp + 256 + kk * 16);
        const float a0 = a0p[kk], a1 = a0p[16 + kk], a2 = a0p[32 + kk], a3 = a0p[48 + kk];
        c00 += a0 * b0, c01 += a0 * b1;
        c10 += a1 * b0, c11 += a1 * b1;
        c20 += a2 * b0, c21 += a2 * b1;
        c30 += a3 * b0, c31 += a3 * b1;
      }
    }
    st16(C + frow(r, 0), c00);
    st16(C + frow(r, 1), c01);
    st16(C + frow(r + 1, 0), c10);
    st16(C + frow(r + 1, 1), c11);
    st16(C + frow(r + 2, 0), c20);
    st16(C + frow(r + 2, 1), c21);
    st16(C + frow(r + 3, 0), c30);
    st16(C + frow(r + 3, 1), c31);
  }
}
#undef ld16
#undef st16

// A CB tile as face-ordered f32 for matmul: Float32 tiles straight from L1
// (no copy), Float16_b widened into tmp, other formats through unpack_floats.
ZYX_HOT void widen_bf16_tile(const uint16_t* s, uint32_t* u) {
  for (int i = 0; i < 1024; i++) u[i] = uint32_t(s[i]) << 16;
}
const float* mm_operand(uint32_t cb, uint32_t tile, float* tmp, const char* op) {
  Format f = cb_of(cb).format;
  const uint8_t* src = front_tile(cb, tile, op);
  if (f == Format::Float32) return reinterpret_cast<const float*>(src);
  if (f == Format::Float16_b) {
    widen_bf16_tile(reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint32_t*>(tmp));
    return tmp;
  }
  unpack_floats(cb, tile, tmp, op);
  return tmp;
}

void mm_into(uint32_t dst, const float* A, const float* B, DstKind k);

void api_matmul(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst, uint32_t transpose) {
  auto& c = core();
  if (dst >= dst_capacity()) dst_tile(dst);  // reports the bad index
  alignas(64) float ta[1024], tb[1024];
  const float* A = mm_operand(cb0, t0, ta, "matmul_tiles");
  const float* B = mm_operand(cb1, t1, tb, "matmul_tiles");
  // transpose 1: the call asks for it; 2: as the last matmul init said.
  bool tr = transpose == 1 || (transpose == 2 && c.cstate.mm_transpose);
  DstKind k = float_kind(cb_of(cb0).format, cb_of(cb1).format);
  if (tr) {
    if (B != tb) std::memcpy(tb, B, sizeof tb);
    transpose_tile(reinterpret_cast<uint32_t*>(tb), false);
    B = tb;
  }
  mm_into(dst, A, B, k);
}

// DST[dst] += A * B for face-ordered A and B; an integer DST tile turns to
// floats first.
void mm_into(uint32_t dst, const float* A, const float* B, DstKind k) {
  auto& c = core();
  uint32_t* d = dst_tile(dst);
  if (!(c.dst_written & (1u << dst))) {
    std::memset(d, 0, 4096);
  } else if (c.dst_kind[dst] == DstKind::Int) {
    for (int i = 0; i < 1024; i++) d[i] = f2u(float(int32_t(d[i])));
  }
  mm_tile(A, B, reinterpret_cast<float*>(d));
  dst_round(d, k);
  mark(dst, k);
}

// Reduces tile a (face order) with the scaler's first element into DST[dst]
// as the FPU does: row sums (or maxes) into column 0, column ones into row 0,
// the scalar into [0][0]; only faces [0, num_faces) take part.
void reduce_into(uint32_t op, uint32_t dim, const float* a, float scale, uint32_t dst, uint32_t num_faces, DstKind k) {
  if (op > ZYX_RED_MAX) kernel_fail("reduce: unknown pool type " + std::to_string(op));
  if (dim > ZYX_RED_SCALAR) kernel_fail("reduce: unknown reduce dim " + std::to_string(dim));
  if (num_faces < 1 || num_faces > 4) kernel_fail("reduce: num_faces " + std::to_string(num_faces) + " is not 1 to 4");
  uint32_t* d = dst_tile(dst);
  bool fresh = !(core().dst_written & (1u << dst));
  bool is_max = op == ZYX_RED_MAX;
  auto in = [&](int r, int c) { return uint32_t(((r >> 4) * 2 + (c >> 4))) < num_faces; };
  auto combine = [&](int i, float v) {
    float cur = fresh ? (is_max ? -INFINITY : 0.0f) : u2f(d[i]);
    d[i] = f2u(is_max ? std::max(cur, v) : cur + v);
  };
  auto fold = [&](float acc, float x) { return is_max ? std::max(acc, x) : acc + x; };
  float init = is_max ? -INFINITY : 0.0f;
  if (dim == ZYX_RED_ROW) {
    for (int r = 0; r < 32; r++) {
      if (!in(r, 0)) continue;
      float acc = init;
      for (int c = 0; c < 32; c++)
        if (in(r, c)) acc = fold(acc, a[fidx(r, c)]);
      combine(fidx(r, 0), acc * scale);
    }
  } else if (dim == ZYX_RED_COL) {
    for (int c = 0; c < 32; c++) {
      if (!in(0, c)) continue;
      float acc = init;
      for (int r = 0; r < 32; r++)
        if (in(r, c)) acc = fold(acc, a[fidx(r, c)]);
      combine(fidx(0, c), acc * scale);
    }
  } else {
    float acc = init;
    for (int i = 0; i < 256 * int(num_faces); i++) acc = fold(acc, a[i]);
    combine(0, acc * scale);
  }
  // Max reduction leaves -inf only where nothing was combined; those
  // positions hold zero as a cleared DST would.
  if (fresh && is_max)
    for (int i = 0; i < 1024; i++)
      if (std::isinf(u2f(d[i])) && u2f(d[i]) < 0) d[i] = 0;
  dst_round(d, k);
  mark(dst, k);
}

void api_reduce(uint32_t op, uint32_t dim, uint32_t cb, uint32_t scb, uint32_t t, uint32_t ts, uint32_t dst) {
  alignas(64) float a[1024], s[1024];
  unpack_floats(cb, t, a, "reduce_tile");
  unpack_floats(scb, ts, s, "reduce_tile (scaler)");
  reduce_into(op, dim, a, s[0], dst, 4, float_kind(cb_of(cb).format));
}

void api_transpose(uint32_t cb, uint32_t t, uint32_t dst) {
  uint32_t* d = dst_tile(dst);
  Format f = cb_of(cb).format;
  DstKind k = dst_kind_for(f, core().run->fp32_dest_acc);
  uint32_t tmp[1024];
  tile_unpack(front_tile(cb, t, "transpose_wh_tile"), f, tmp, k);
  for (int r = 0; r < 32; r++)
    for (int c = 0; c < 32; c++) d[fidx(c, r)] = tmp[fidx(r, c)];
  mark(dst, k);
}

void api_typecast(uint32_t dst, uint32_t in_fmt, uint32_t out_fmt) {
  uint32_t* d = dst_tile(dst);
  Format in = static_cast<Format>(in_fmt), out = static_cast<Format>(out_fmt);
  if (format_tile_bytes(in) == 0 || format_tile_bytes(out) == 0)
    kernel_fail("typecast_tile: unsupported formats " + std::to_string(in_fmt) + " -> " + std::to_string(out_fmt));
  DstKind cur = core().dst_kind[dst];
  // Bring the tile to f32 or i32 per the input format, then convert.
  std::array<float, 1024> f;
  for (int i = 0; i < 1024; i++) {
    if (cur == DstKind::Int)
      f[i] = (in == Format::Int32 || in == Format::Int8) ? float(int32_t(d[i])) : float(d[i]);
    else
      f[i] = u2f(d[i]);
  }
  if (format_is_int(out)) {
    int64_t lo = out == Format::Int32 ? INT32_MIN : out == Format::Int8 ? -128 : 0;
    int64_t hi = out == Format::Int32 ? INT32_MAX : out == Format::UInt32 ? UINT32_MAX : out == Format::UInt16 ? 0xffff
                 : out == Format::Int8 ? 127 : 0xff;
    for (int i = 0; i < 1024; i++) {
      if (cur == DstKind::Int && format_is_int(in)) {
        int64_t v = (in == Format::Int32 || in == Format::Int8) ? int64_t(int32_t(d[i])) : int64_t(d[i]);
        d[i] = static_cast<uint32_t>(std::min(hi, std::max(lo, v)));
      } else {
        d[i] = static_cast<uint32_t>(to_int(f[i], lo, hi));
      }
    }
    mark(dst, DstKind::Int);
  } else {
    DstKind k = out == Format::Float32 ? DstKind::F32 : out == Format::Float16 ? DstKind::F16 : DstKind::BF16;
    if (core().run->fp32_dest_acc && out == Format::Float32) k = DstKind::F32;
    for (int i = 0; i < 1024; i++) d[i] = f2u(f[i]);
    dst_round(d, k);
    mark(dst, k);
  }
}


// ---- ABI 5: the rest of the compute API ----------------------------------

void api_compute_config(uint32_t key, uint32_t value) {
  ComputeState& cs = core().cstate;
  switch (key) {
    case ZYX_CK_ACC_TO_DEST: cs.acc_to_dest = value; break;
    case ZYX_CK_COPY_TRANSPOSE: cs.copy_transpose = value; break;
    case ZYX_CK_MM_TRANSPOSE: cs.mm_transpose = value; break;
    case ZYX_CK_RELU: cs.relu = value; break;
    case ZYX_CK_L1_ACC: cs.l1_acc = value; break;
    case ZYX_CK_PACK_ROWS: cs.pack_rows = value; break;
    default: kernel_fail("unknown compute config key " + std::to_string(key));
  }
}

// Reads DST tile i as floats (integers converted).
void dst_floats(uint32_t i, float* out) {
  const uint32_t* d = dst_tile(i);
  if (core().dst_kind[i] == DstKind::Int)
    for (int j = 0; j < 1024; j++) out[j] = float(int32_t(d[j]));
  else
    std::memcpy(out, d, 4096);
}

DstKind sfpu_float_kind(uint32_t i) {
  if (core().run->fp32_dest_acc) return DstKind::F32;
  DstKind k = core().dst_kind[i];
  return k == DstKind::F16 ? DstKind::F16 : DstKind::BF16;
}

void api_binary_reuse(uint32_t op, uint32_t reuse, uint32_t cb, uint32_t t, uint32_t dst) {
  if (op > ZYX_BIN_MUL) kernel_fail("unknown binary op " + std::to_string(op));
  uint32_t* d = dst_tile(dst);
  alignas(64) float x[1024], c[1024];
  dst_floats(dst, x);
  unpack_floats(cb, t, c, "binary_dest_reuse_tiles");
  DstKind k = float_kind(cb_of(cb).format);
  for (int i = 0; i < 1024; i++) {
    float a = reuse == 2 ? c[i] : x[i], b = reuse == 2 ? x[i] : c[i];
    d[i] = f2u(op == ZYX_BIN_ADD ? a + b : op == ZYX_BIN_SUB ? a - b : a * b);
  }
  dst_round(d, k);
  mark(dst, k);
}

void api_unary_bcast(uint32_t bcast, uint32_t cb, uint32_t t, uint32_t dst) {
  if (bcast > ZYX_BC_SCALAR) kernel_fail("unknown broadcast " + std::to_string(bcast));
  uint32_t* d = dst_tile(dst);
  Format f = cb_of(cb).format;
  DstKind k = dst_kind_for(f, core().run->fp32_dest_acc);
  uint32_t tmp[1024];
  tile_unpack(front_tile(cb, t, "unary_bcast"), f, tmp, k);
  for (int i = 0; i < 1024; i++) d[i] = tmp[bcast_src(bcast, i, 0)];
  mark(dst, k);
}

void api_sfpu_unary(uint32_t op, uint32_t dst, uint32_t p0, uint32_t p1, uint32_t p2) {
  ComputeState& cs = core().cstate;
  if (op == ZYX_SU_RAND && dst == 0xffffffffu) {  // rand_tile_init / dropout_tile_init(seed)
    cs.rand_state = 0x9e3779b97f4a7c15ull ^ (uint64_t(p0) << 17) ^ (uint64_t(core().index) << 40);
    if (!cs.rand_state) cs.rand_state = 1;
    return;
  }
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
    for (int i = 0; i < 1024; i++) d[i] = sfpu_unary_i(op, d[i], p0, p1);
    mark(dst, DstKind::Int);
    return;
  }
  float x[1024];
  dst_floats(dst, x);
  DstKind k = sfpu_float_kind(dst);
  if (op == ZYX_SU_ALT_COMPLEX_ROTATE90) {
    // (re, im) pairs along each row become (-im, re)
    for (int i = 0; i < 1024; i += 2) d[i] = f2u(-x[i + 1]), d[i + 1] = f2u(x[i]);
  } else {
    for (int i = 0; i < 1024; i++) d[i] = f2u(sfpu_unary_f(op, x[i], p0, p1, p2, &cs.rand_state));
  }
  dst_round(d, k);
  mark(dst, k);
}

void api_sfpu_binary(uint32_t op, uint32_t ia, uint32_t ib, uint32_t out, uint32_t) {
  if (!sfpu_binary_known(op)) kernel_fail("unknown SFPU binary op " + std::to_string(op));
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
  // add/sub/mul of two integer tiles stay integers
  if (ka == DstKind::Int && kb == DstKind::Int && op <= ZYX_SB_MUL) {
    for (int i = 0; i < 1024; i++) d[i] = op == ZYX_SB_ADD ? a[i] + b[i] : op == ZYX_SB_SUB ? a[i] - b[i] : a[i] * b[i];
    mark(out, DstKind::Int);
    return;
  }
  float x[1024], y[1024];
  dst_floats(ia, x);
  dst_floats(ib, y);
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : (ka == DstKind::F16 ? DstKind::F16 : DstKind::BF16);
  for (int i = 0; i < 1024; i++) d[i] = f2u(sfpu_binary_f(op, x[i], y[i]));
  dst_round(d, k);
  mark(out, k);
}

void api_sfpu_ternary(uint32_t op, uint32_t ia, uint32_t ib, uint32_t ic, uint32_t out, uint32_t p0) {
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

// The byte address of element `e` of a row-major strip held in consecutive
// pages of a circular buffer, starting at page `first` of the ring.
uint8_t* strip_elem(CircularBuffer& cb, uint32_t first, uint64_t e, uint32_t esize) {
  uint64_t off = e * esize;
  uint64_t page = (first + off / cb.page_size) % cb.num_pages;
  return core().l1 + cb.offset + page * cb.page_size + off % cb.page_size;
}

void api_tilize(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_tile, uint32_t out_tile) {
  auto& in = cb_of(icb);
  auto& out = cb_of(ocb);
  uint32_t es = format_bytes(in.format);
  if (es == 0 || format_is_block(in.format))
    kernel_fail(std::string("tilize_block: cb ") + std::to_string(icb) + " holds " + format_name(in.format) +
                ", which has no row-major form");
  if (in_tile + block > in.available())
    kernel_fail("tilize_block: " + std::to_string(block) + " tiles from " + std::to_string(in_tile) + " of cb " +
                std::to_string(icb) + " but only " + std::to_string(in.available()) + " page(s) are at the front");
  if (out_tile + block > out.num_pages - out.available())
    kernel_fail("tilize_block: output tiles beyond the free space of cb " + std::to_string(ocb) +
                " (missing cb_reserve_back?)");
  uint32_t first = (in.rd_page + in_tile) % in.num_pages;
  uint64_t width = uint64_t(block) * 32;
  DstKind k = format_is_int(in.format) ? DstKind::Int : DstKind::F32;
  std::vector<uint8_t> face(1024 * es);
  uint32_t tile[1024];
  for (uint32_t t = 0; t < block; t++) {
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        std::memcpy(&face[size_t(fidx(r, c)) * es], strip_elem(in, first, r * width + t * 32 + c, es), es);
    tile_unpack(face.data(), in.format, tile, k);
    uint32_t page = (out.wr_page + out_tile + t) % out.num_pages;
    pack_to(tile, k, core().l1 + out.offset + uint64_t(page) * out.page_size, out.format);
  }
}

void api_untilize(uint32_t icb, uint32_t ntiles, uint32_t ocb) {
  auto& out = cb_of(ocb);
  uint32_t es = format_bytes(out.format);
  if (es == 0 || format_is_block(out.format))
    kernel_fail(std::string("untilize: cb ") + std::to_string(ocb) + " holds " + format_name(out.format) +
                ", which has no row-major form");
  if (out.pack_next + ntiles > out.num_pages - out.available())
    kernel_fail("untilize: output beyond the free space of cb " + std::to_string(ocb) + " (missing cb_reserve_back?)");
  uint32_t first = (out.wr_page + out.pack_next) % out.num_pages;
  out.pack_next += ntiles;
  Format fi = cb_of(icb).format;
  DstKind k = format_is_int(fi) ? DstKind::Int : dst_kind_for(fi, core().run->fp32_dest_acc);
  uint64_t width = uint64_t(ntiles) * 32;
  uint32_t tile[1024];
  std::vector<uint8_t> face(1024 * es);
  for (uint32_t t = 0; t < ntiles; t++) {
    tile_unpack(front_tile(icb, t, "untilize_block"), fi, tile, k);
    tile_pack(tile, k, face.data(), out.format);
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        std::memcpy(strip_elem(out, first, r * width + t * 32 + c, es), &face[size_t(fidx(r, c)) * es], es);
  }
}

void api_pack_untilize(uint32_t dst0, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct, uint32_t block_c,
                       uint32_t ocb) {
  auto& out = cb_of(ocb);
  uint32_t es = format_bytes(out.format);
  if (es == 0 || format_is_block(out.format))
    kernel_fail(std::string("pack_untilize: cb ") + std::to_string(ocb) + " holds " + format_name(out.format) +
                ", which has no row-major form");
  uint32_t row0 = block_c >> 16;
  block_c &= 0xffff;
  if (block_ct == 0 || full_ct < block_ct || (block_c + 1) * block_ct > full_ct)
    kernel_fail("pack_untilize: block " + std::to_string(block_c) + " of " + std::to_string(block_ct) +
                " tiles does not fit a row of " + std::to_string(full_ct) + " tiles");
  if ((row0 + block_rt) * full_ct > out.num_pages - out.available())
    kernel_fail("pack_untilize: output beyond the free space of cb " + std::to_string(ocb) +
                " (missing cb_reserve_back?)");
  uint64_t width = uint64_t(full_ct) * 32;
  std::vector<uint8_t> face(1024 * es);
  for (uint32_t r = 0; r < block_rt; r++) {
    uint32_t first = (out.wr_page + (row0 + r) * full_ct) % out.num_pages;
    for (uint32_t c = 0; c < block_ct; c++) {
      uint32_t di = dst0 + r * block_ct + c;
      const uint32_t* d = dst_tile(di);
      pack_to(d, core().dst_kind[di], face.data(), out.format);
      uint64_t col0 = uint64_t(block_c * block_ct + c) * 32;
      for (int rr = 0; rr < 32; rr++)
        for (int cc = 0; cc < 32; cc++)
          std::memcpy(strip_elem(out, first, rr * width + col0 + cc, es), &face[size_t(fidx(rr, cc)) * es], es);
    }
  }
}

void api_pack_rows(uint32_t dst, uint32_t ocb, uint32_t out_index) {
  auto& out = cb_of(ocb);
  uint32_t rows = core().cstate.pack_rows;
  uint32_t es = format_bytes(out.format);
  if (rows == 0 || rows > 64) kernel_fail("pack_rows: call pack_rows_init with 1 to 64 rows first");
  if (es == 0 || format_is_block(out.format)) kernel_fail("pack_rows: the output format has no row form");
  if (out_index >= out.num_pages - out.available()) kernel_fail("pack_rows: beyond the free space of the cb");
  std::vector<uint8_t> face(1024 * es);
  pack_to(dst_tile(dst), core().dst_kind[dst], face.data(), out.format);
  uint32_t page = (out.wr_page + out_index) % out.num_pages;
  uint64_t bytes = std::min<uint64_t>(uint64_t(rows) * 16 * es, out.page_size);
  std::memcpy(core().l1 + out.offset + uint64_t(page) * out.page_size, face.data(), bytes);
}

void api_transpose_dst(uint32_t dst) {
  transpose_tile(dst_tile(dst), false);
  core().dst_written |= 1u << dst;
}

void api_copy_dst(uint32_t from, uint32_t to) {
  const uint32_t* s = dst_tile(from);
  uint32_t* d = dst_tile(to);
  std::memmove(d, s, 4096);
  mark(to, core().dst_kind[from]);
}

void api_mask(uint32_t data, uint32_t posinf) {
  uint32_t* d = dst_tile(data);
  const uint32_t* m = dst_tile(data + 1);
  bool mint = core().dst_kind[data + 1] == DstKind::Int;
  bool dint = core().dst_kind[data] == DstKind::Int;
  for (int i = 0; i < 1024; i++) {
    bool zero = mint ? m[i] == 0 : u2f(m[i]) == 0.0f;
    if (zero) d[i] = posinf ? (dint ? 0x7fffffffu : 0x7f800000u) : 0u;
  }
  core().dst_written |= 1u << data;
}

// 1/n for the n-th sample: from the lookup table (f32 bits) when one is given.
double wf_recip(uint32_t idx, const uint32_t* lut, uint32_t n) {
  if (n == 0 || !lut) return 1.0 / (double(idx) + 1.0);
  if (idx >= n) kernel_fail("welford: index " + std::to_string(idx) + " is beyond the reciprocal table of " +
                            std::to_string(n));
  return u2f(lut[idx]);
}

// The SFPU's raw layout of a 32-lane register stored at tile row 4 * group
// (welford_save_state, welford_finalize_to_face): lane l holds column c's
// value, l = 16 * (c / 16) + 8 * (c % 2) + (c % 16) / 2 after the SFPU's
// transpose of a block of rows, and a store writes lanes 8k..8k+7 to the even
// columns 0, 2, .., 14 of face-major row 4 * group + k. So column c lands on
// face-major row 4g + 2 (c / 16) + c % 2, column (c % 16) & ~1.
inline int wf_raw_index(uint32_t group, int c) {
  int row = static_cast<int>(4 * group) + 2 * (c >> 4) + (c & 1);
  return row * 16 + ((c & 15) & ~1);
}

uint32_t wf_value(double v, DstKind k) {
  float f = static_cast<float>(v);
  return f2u(k == DstKind::BF16 ? round_bf16(f) : f);
}

void api_welford(uint32_t op, uint32_t dst, uint32_t a, uint32_t b, const uint32_t* lut, uint32_t n) {
  ComputeState& cs = core().cstate;
  // The SFPU stores to DST in its mode's width: f32, or bf16 without fp32_dest_acc.
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : DstKind::BF16;
  switch (op) {
    case ZYX_WF_CLEAR:
      cs.wf_mean.fill(0), cs.wf_m2.fill(0), cs.wf_count = 0;
      return;
    case ZYX_WF_UPDATE: {
      uint32_t start_row = b >> 16, rows = b & 0xffff;
      if (start_row + rows > 32) kernel_fail("welford_update_rows: rows beyond the tile");
      float x[1024];
      dst_floats(dst, x);
      for (uint32_t r = start_row; r < start_row + rows; r++) {
        double rc = wf_recip(a + (r - start_row), lut, n);
        for (int c = 0; c < 32; c++) {
          double v = x[fidx(static_cast<int>(r), c)], m = cs.wf_mean[c];
          double m1 = m + (v - m) * rc;
          cs.wf_m2[c] += (v - m) * (v - m1);
          cs.wf_mean[c] = m1;
        }
      }
      return;
    }
    case ZYX_WF_SAVE:      // a: group
    case ZYX_WF_RESTORE:   // a: group
    case ZYX_WF_TO_FACE: {  // a: scale index, b: group
      uint32_t group = op == ZYX_WF_TO_FACE ? b : a;
      if (group > 15) kernel_fail("welford: group " + std::to_string(group) + " is beyond the 16 groups of a tile");
      if (dst + 1 >= dst_capacity()) dst_tile(dst + 1);  // reports the bad index
      uint32_t* mt = dst_tile(dst);
      uint32_t* vt = dst_tile(dst + 1);
      if (op == ZYX_WF_RESTORE) {
        bool mi = core().dst_kind[dst] == DstKind::Int, vi = core().dst_kind[dst + 1] == DstKind::Int;
        for (int c = 0; c < 32; c++) {
          int i = wf_raw_index(group, c);
          cs.wf_mean[c] = mi ? double(int32_t(mt[i])) : u2f(mt[i]);
          cs.wf_m2[c] = vi ? double(int32_t(vt[i])) : u2f(vt[i]);
        }
        return;
      }
      double scale = op == ZYX_WF_TO_FACE ? wf_recip(a, lut, n) : 1.0;
      for (uint32_t t = dst; t <= dst + 1; t++)
        if (core().dst_kind[t] == DstKind::Int) {  // the tile becomes a float tile
          uint32_t* d = dst_tile(t);
          for (int i = 0; i < 1024; i++) d[i] = f2u(static_cast<float>(static_cast<int32_t>(d[i])));
        }
      for (int c = 0; c < 32; c++) {
        int i = wf_raw_index(group, c);
        mt[i] = wf_value(cs.wf_mean[c], k);
        vt[i] = wf_value(cs.wf_m2[c] * scale, k);
      }
      mark(dst, k);
      mark(dst + 1, k);
      return;
    }
    case ZYX_WF_TO_ROW: {
      if (dst + 1 >= dst_capacity()) dst_tile(dst + 1);
      uint32_t* mt = dst_tile(dst);
      uint32_t* vt = dst_tile(dst + 1);
      double scale = wf_recip(a, lut, n);
      // Row 0 gets the values; rows 1-3 (all 32 columns) are zeroed, as the
      // SFPU's transpose-and-store of the four registers leaves them.
      for (int c = 0; c < 32; c++) {
        mt[fidx(0, c)] = wf_value(cs.wf_mean[c], k);
        vt[fidx(0, c)] = wf_value(cs.wf_m2[c] * scale, k);
        for (int r = 1; r < 4; r++) mt[fidx(r, c)] = 0, vt[fidx(r, c)] = 0;
      }
      mark(dst, k);
      mark(dst + 1, k);
      return;
    }
    default: kernel_fail("welford: operation " + std::to_string(op) + " is not emulated");
  }
}

// ---- the tilize-A-B source registers and the math-only calls ----

constexpr size_t kMaxSrcPairs = 64;

void api_unpack_tilize_ab(uint32_t icb0, uint32_t icb1, uint32_t block, uint32_t tile_b, uint32_t num_faces,
                          uint32_t face_r_dim, uint32_t flags) {
  const char* op = "unpack_tilizeA_B_block";
  auto& in = cb_of(icb0);
  uint32_t es = format_bytes(in.format);
  if (es == 0 || format_is_block(in.format))
    kernel_fail(std::string(op) + ": cb " + std::to_string(icb0) + " holds " + format_name(in.format) +
                ", which has no row-major form");
  if (num_faces != 1 && num_faces != 2 && num_faces != 4)
    kernel_fail(std::string(op) + ": num_faces " + std::to_string(num_faces) + " is not 1, 2 or 4");
  if (face_r_dim < 1 || face_r_dim > 16)
    kernel_fail(std::string(op) + ": srca_face_r_dim " + std::to_string(face_r_dim) + " is not 1 to 16");
  auto& cs = core().cstate;
  if (block > kMaxSrcPairs || cs.src.size() - cs.src_head + block > kMaxSrcPairs)
    kernel_fail(std::string(op) + ": more than " + std::to_string(kMaxSrcPairs) +
                " unpacked tiles wait for reduce_tile_math/matmul_tiles_math");
  if (block == 0) return;
  // The strip: rows of block * tile-width elements, face_r_dim rows for the
  // top faces and (num_faces 4) as many again for the bottom ones.
  uint32_t tw = num_faces == 1 ? 16 : 32;
  uint32_t rows = (num_faces > 2 ? 2 : 1) * face_r_dim;
  uint64_t width = uint64_t(block) * tw;
  uint64_t need = uint64_t(rows) * width * es;
  uint64_t have = uint64_t(in.available()) * in.page_size;
  if (need > have)
    kernel_fail(std::string(op) + ": " + std::to_string(rows) + " rows of " + std::to_string(width) +
                " elements need " + std::to_string(need) + " bytes at the front of cb " + std::to_string(icb0) +
                " but " + std::to_string(in.available()) + " page(s) hold " + std::to_string(have) +
                " (missing cb_wait_front?)");
  alignas(64) float b[1024];
  unpack_floats(icb1, tile_b, b, "unpack_tilizeA_B_block (B)");
  const float fill = (flags & 1) ? -INFINITY : 0.0f;
  std::vector<uint8_t> face(1024 * es);
  for (uint32_t t = 0; t < block; t++) {
    std::fill(face.begin(), face.end(), 0);
    auto present = [&](int r, int c) {
      return uint32_t((r >> 4) * 2 + (c >> 4)) < num_faces && uint32_t(r & 15) < face_r_dim;
    };
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        if (present(r, c)) {
          uint64_t sr = uint64_t(r >> 4) * face_r_dim + (r & 15);
          std::memcpy(&face[size_t(fidx(r, c)) * es], strip_elem(in, in.rd_page, sr * width + t * tw + c, es), es);
        }
    ComputeState::SrcPair p;
    uint32_t* u = reinterpret_cast<uint32_t*>(p.a.data());
    tile_unpack(face.data(), in.format, u, DstKind::F32);
    if (format_is_int(in.format)) {
      bool sign = in.format == Format::Int32;
      for (int i = 0; i < 1024; i++)
        p.a[i] = sign ? static_cast<float>(static_cast<int32_t>(u[i])) : static_cast<float>(u[i]);
    }
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        if (!present(r, c)) p.a[fidx(r, c)] = fill;
    std::memcpy(p.b.data(), b, sizeof b);
    p.fmt_a = static_cast<uint32_t>(in.format);
    p.fmt_b = static_cast<uint32_t>(cb_of(icb1).format);
    cs.src.push_back(p);
  }
}

ComputeState::SrcPair pop_src(const char* op) {
  auto& cs = core().cstate;
  if (cs.src_head == cs.src.size())
    kernel_fail(std::string(op) + ": the source registers hold no tile (call unpack_tilizeA_B_block first)");
  ComputeState::SrcPair p = cs.src[cs.src_head++];
  if (cs.src_head == cs.src.size()) cs.src.clear(), cs.src_head = 0;
  return p;
}

bool int_format(uint32_t f) {
  return f == uint32_t(Format::Int32) || f == uint32_t(Format::UInt32) || f == uint32_t(Format::UInt16) ||
         f == uint32_t(Format::UInt8) || f == uint32_t(Format::Int8);
}

// sfpu_reduce over the columns of a DST tile into row 0.
void sfpu_reduce_cols(uint32_t dst, uint32_t pool, uint32_t fmt) {
  if (pool > 3) kernel_fail("sfpu_reduce: unknown pool type " + std::to_string(pool));
  uint32_t* d = dst_tile(dst);
  bool was_int = core().dst_kind[dst] == DstKind::Int;
  if (int_format(fmt)) {
    if (pool == 1) kernel_fail("sfpu_reduce: AVG of an integer format is not emulated");
    bool sign = fmt == uint32_t(Format::Int32) || fmt == uint32_t(Format::Int8);
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

void api_compute_special(uint32_t op, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  switch (op) {
    case ZYX_CS_MATMUL_MATH: {
      if (b != 4)
        kernel_fail("matmul_tiles_math: num_faces " + std::to_string(b) + " is not emulated (32x32 tiles only)");
      if (a >= dst_capacity()) dst_tile(a);  // reports the bad index
      ComputeState::SrcPair p = pop_src("matmul_tiles_math");
      mm_into(a, p.a.data(), p.b.data(), float_kind(Format(p.fmt_a), Format(p.fmt_b)));
      return;
    }
    case ZYX_CS_REDUCE_MATH: {
      if (a >= dst_capacity()) dst_tile(a);
      ComputeState::SrcPair p = pop_src("reduce_tile_math");
      reduce_into(b, c, p.a.data(), p.b[0], a, d, float_kind(Format(p.fmt_a)));
      return;
    }
    case ZYX_CS_TRANSPOSE_FACES_DST:
      transpose_tile(dst_tile(a), true);
      core().dst_written |= 1u << a;
      return;
    case ZYX_CS_SFPU_REDUCE: sfpu_reduce_cols(a, b, c); return;
    case ZYX_CS_ADD_TOP_ROW: sfpu_add_top_row_of(a, b, c, d); return;
    default: kernel_fail("compute: special operation " + std::to_string(op) + " is not emulated");
  }
}

void api_tile_shape(uint32_t cb, uint32_t* rows, uint32_t* cols, uint32_t* faces) {
  const CircularBuffer& c = cb_of(cb);
  *rows = c.tile_rows, *cols = c.tile_cols;
  // 16x16 faces; a tile of fewer than 16 rows has faces of that many rows
  *faces = (c.tile_rows > 16 ? 2 : 1) * (c.tile_cols / 16);
}

void api_reduce_max_row_block(uint32_t cb, uint32_t scb, uint32_t t0, uint32_t block, uint32_t dst) {
  for (uint32_t t = 0; t < block; t++) api_reduce(ZYX_RED_MAX, ZYX_RED_ROW, cb, scb, t0 + t, 0, dst);
}

int api_fp32_dest_acc() { return core().run->fp32_dest_acc ? 1 : 0; }

}  // namespace

void fill_compute_api(zyx_emu_api& a) {
  a.dst_acquire = api_dst_acquire;
  a.dst_release = api_dst_release;
  a.copy_tile = api_copy_tile;
  a.pack_tile = api_pack_tile;
  a.binary = api_binary;
  a.binary_dst = api_binary_dst;
  a.unary = api_unary;
  a.matmul = api_matmul;
  a.reduce = api_reduce;
  a.transpose = api_transpose;
  a.typecast = api_typecast;
  a.fp32_dest_acc = api_fp32_dest_acc;
  a.compute_config = api_compute_config;
  a.binary_bcast = api_binary_bcast;
  a.binary_reuse = api_binary_reuse;
  a.unary_bcast = api_unary_bcast;
  a.sfpu_unary = api_sfpu_unary;
  a.sfpu_binary = api_sfpu_binary;
  a.sfpu_ternary = api_sfpu_ternary;
  a.tilize = api_tilize;
  a.untilize = api_untilize;
  a.pack_untilize = api_pack_untilize;
  a.pack_rows = api_pack_rows;
  a.transpose_dst = api_transpose_dst;
  a.copy_dst = api_copy_dst;
  a.mask = api_mask;
  a.welford = api_welford;
  a.tile_shape = api_tile_shape;
  a.reduce_max_row_block = api_reduce_max_row_block;
  a.unpack_tilize_ab = api_unpack_tilize_ab;
  a.compute_special = api_compute_special;
}

}  // namespace zyx::emu
