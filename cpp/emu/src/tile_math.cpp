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

void dst_round(uint32_t* v, DstKind kind) {
  if (kind == DstKind::BF16) {
    for (int i = 0; i < 1024; i++) v[i] = f2u(round_bf16(u2f(v[i])));
  } else if (kind == DstKind::F16) {
    for (int i = 0; i < 1024; i++) v[i] = f2u(round_f16(u2f(v[i])));
  }
}

void tile_unpack(const uint8_t* src, Format f, uint32_t* out, DstKind kind) {
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
    default: kernel_fail("unpack: unsupported format");
  }
  dst_round(out, kind);
}

void tile_pack(const uint32_t* src, DstKind kind, uint8_t* dst, Format f) {
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
      for (int i = 0; i < 1024; i++)
        d[i] = f32_to_bf16(is_int ? static_cast<float>(static_cast<int32_t>(src[i])) : u2f(src[i]));
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
  if (cb.page_size < 1024 * format_bytes(cb.format))
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
  mark(dst, k);
}

void api_pack_tile(uint32_t dst, uint32_t cbid, uint32_t out_tile, int out_of_order) {
  const uint32_t* d = dst_tile(dst);
  auto& cb = cb_of(cbid);
  if (cb.page_size < 1024 * format_bytes(cb.format))
    kernel_fail("pack_tile: cb " + std::to_string(cbid) + " pages of " + std::to_string(cb.page_size) +
                " bytes are smaller than a " + format_name(cb.format) + " tile");
  uint32_t pos = out_of_order ? out_tile : cb.pack_next++;
  if (pos >= cb.num_pages - cb.available())
    kernel_fail("pack_tile: position " + std::to_string(pos) + " of cb " + std::to_string(cbid) +
                " is beyond the free space (missing cb_reserve_back?)");
  uint32_t page = (cb.wr_page + pos) % cb.num_pages;
  tile_pack(d, core().dst_kind[dst], core().l1 + cb.offset + uint64_t(page) * cb.page_size, cb.format);
}

template <typename Op>
void elementwise(uint32_t* d, DstKind k, const float* a, const float* b, Op op) {
  for (int i = 0; i < 1024; i++) d[i] = f2u(op(a[i], b[i]));
  dst_round(d, k);
}

void api_binary(uint32_t op, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst) {
  uint32_t* d = dst_tile(dst);
  Format f0 = cb_of(cb0).format, f1 = cb_of(cb1).format;
  if (format_is_int(f0) && format_is_int(f1)) {
    uint32_t a[1024], b[1024];
    tile_unpack(front_tile(cb0, t0, "binary op"), f0, a, DstKind::Int);
    tile_unpack(front_tile(cb1, t1, "binary op"), f1, b, DstKind::Int);
    for (int i = 0; i < 1024; i++) d[i] = op == ZYX_BIN_ADD ? a[i] + b[i] : op == ZYX_BIN_SUB ? a[i] - b[i] : a[i] * b[i];
    mark(dst, DstKind::Int);
    return;
  }
  alignas(64) float a[1024], b[1024];
  unpack_floats(cb0, t0, a, "binary op");
  unpack_floats(cb1, t1, b, "binary op");
  DstKind k = float_kind(f0, f1);
  // Without fp32 DST the FPU sees 16-bit operands (only wider inputs change).
  if (k != DstKind::F32) {
    if (f0 == Format::Float32 || format_is_int(f0)) dst_round(reinterpret_cast<uint32_t*>(a), k);
    if (f1 == Format::Float32 || format_is_int(f1)) dst_round(reinterpret_cast<uint32_t*>(b), k);
  }
  switch (op) {
    case ZYX_BIN_ADD: elementwise(d, k, a, b, [](float x, float y) { return x + y; }); break;
    case ZYX_BIN_SUB: elementwise(d, k, a, b, [](float x, float y) { return x - y; }); break;
    case ZYX_BIN_MUL: elementwise(d, k, a, b, [](float x, float y) { return x * y; }); break;
    default: kernel_fail("unknown binary op " + std::to_string(op));
  }
  mark(dst, k);
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

void api_matmul(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst, uint32_t transpose) {
  uint32_t* d = dst_tile(dst);
  alignas(64) float a[1024], b[1024], A[32][32], B[32][32];
  unpack_floats(cb0, t0, a, "matmul_tiles");
  unpack_floats(cb1, t1, b, "matmul_tiles");
  DstKind k = float_kind(cb_of(cb0).format, cb_of(cb1).format);
  for (int r = 0; r < 32; r++)
    for (int c = 0; c < 32; c++) {
      A[r][c] = a[fidx(r, c)];
      B[r][c] = transpose ? b[fidx(c, r)] : b[fidx(r, c)];
    }
  bool fresh = !(core().dst_written & (1u << dst));
  DstKind prev = core().dst_kind[dst];
  for (int r = 0; r < 32; r++) {
    float acc[32] = {};
    for (int kk = 0; kk < 32; kk++) {
      float x = A[r][kk];
      for (int c = 0; c < 32; c++) acc[c] += x * B[kk][c];
    }
    for (int c = 0; c < 32; c++) {
      int i = fidx(r, c);
      float base = fresh ? 0.0f : (prev == DstKind::Int ? float(int32_t(d[i])) : u2f(d[i]));
      d[i] = f2u(base + acc[c]);
    }
  }
  dst_round(d, k);
  mark(dst, k);
}

void api_reduce(uint32_t op, uint32_t dim, uint32_t cb, uint32_t scb, uint32_t t, uint32_t ts, uint32_t dst) {
  uint32_t* d = dst_tile(dst);
  alignas(64) float a[1024], s[1024];
  unpack_floats(cb, t, a, "reduce_tile");
  unpack_floats(scb, ts, s, "reduce_tile (scaler)");
  float scale = s[0];
  bool fresh = !(core().dst_written & (1u << dst));
  DstKind k = float_kind(cb_of(cb).format);
  bool is_max = op == ZYX_RED_MAX;
  auto combine = [&](int i, float v) {
    float cur = fresh ? (is_max ? -INFINITY : 0.0f) : u2f(d[i]);
    d[i] = f2u(is_max ? std::max(cur, v) : cur + v);
  };
  auto fold = [&](float acc, float x) { return is_max ? std::max(acc, x) : acc + x; };
  float init = is_max ? -INFINITY : 0.0f;
  if (dim == ZYX_RED_ROW) {
    for (int r = 0; r < 32; r++) {
      float acc = init;
      for (int c = 0; c < 32; c++) acc = fold(acc, a[fidx(r, c)]);
      combine(fidx(r, 0), acc * scale);
    }
  } else if (dim == ZYX_RED_COL) {
    for (int c = 0; c < 32; c++) {
      float acc = init;
      for (int r = 0; r < 32; r++) acc = fold(acc, a[fidx(r, c)]);
      combine(fidx(0, c), acc * scale);
    }
  } else {
    float acc = init;
    for (int i = 0; i < 1024; i++) acc = fold(acc, a[i]);
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
  if (format_bytes(in) == 0 || format_bytes(out) == 0)
    kernel_fail("typecast_tile: unsupported formats " + std::to_string(in_fmt) + " -> " + std::to_string(out_fmt));
  DstKind cur = core().dst_kind[dst];
  // Bring the tile to f32 or i32 per the input format, then convert.
  std::array<float, 1024> f;
  for (int i = 0; i < 1024; i++) {
    if (cur == DstKind::Int)
      f[i] = in == Format::Int32 ? float(int32_t(d[i])) : float(d[i]);
    else
      f[i] = u2f(d[i]);
  }
  if (format_is_int(out)) {
    int64_t lo = out == Format::Int32 ? INT32_MIN : 0;
    int64_t hi = out == Format::Int32 ? INT32_MAX : out == Format::UInt32 ? UINT32_MAX : out == Format::UInt16 ? 0xffff : 0xff;
    for (int i = 0; i < 1024; i++) {
      if (cur == DstKind::Int && format_is_int(in)) {
        int64_t v = in == Format::Int32 ? int64_t(int32_t(d[i])) : int64_t(d[i]);
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
}

}  // namespace zyx::emu
