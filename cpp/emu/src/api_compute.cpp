// The compute API's core (api/compute/: reg_api.h, tile_move_copy.h,
// pack.h, eltwise_binary.h, bcast.h, transpose_wh.h, the older
// eltwise_unary calls, typecast, mask.h, the compute configuration of the
// *_init calls): DST tiles from circular-buffer tiles and back, and the
// FPU's binary operations. Matmul and reduce, SFPU, tilize and welford are
// in the api_compute_*.cpp files beside this one.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute_api.hpp"

namespace zyx::emu {

using namespace compute;

namespace compute {

CircularBuffer& cb_of(uint32_t id) {
  if (id >= kCircularBuffersPerCore)
    kernel_fail("circular buffer index " + std::to_string(id) + " is out of range (0-" +
                std::to_string(kCircularBuffersPerCore - 1) + ")");
  auto& cb = core().cbs[id];
  if (!cb.configured) kernel_fail("circular buffer " + std::to_string(id) + " is not configured by the program");
  return cb;
}

// Page `page` from the front of a circular buffer: in the math and pack
// builds, unpack's copy of it for the op being executed.
const uint8_t* front_page(uint32_t id, uint32_t page, const char* op) {
  if (trisc() != Trisc::Single && trisc() != Trisc::Unpack) return captured_tile(id, page, op);
  auto& cb = cb_of(id);
  if (page >= cb.available() && !(cb.on_buffer && page < cb.num_pages))
    kernel_fail(std::string(op) + ": tile " + std::to_string(page) + " of cb " + std::to_string(id) + " but only " +
                std::to_string(cb.available()) + " page(s) are at the front (missing cb_wait_front?)");
  uint32_t p = (cb.rd_page + page) % cb.num_pages;
  return core().l1 + cb.offset + uint64_t(p) * cb.page_size;
}

// The tile at position `tile` from the front of a circular buffer.
const uint8_t* front_tile(uint32_t id, uint32_t tile, const char* op) {
  auto& cb = cb_of(id);
  if (cb.page_size < format_tile_bytes(cb.format))
    kernel_fail(std::string(op) + ": cb " + std::to_string(id) + " pages of " + std::to_string(cb.page_size) +
                " bytes are smaller than a " + format_name(cb.format) + " tile");
  return front_page(id, tile, op);
}

// Unpacks a tile into floats (integers converted).
void unpack_floats(uint32_t cb, uint32_t tile, float* out, const char* op) {
  const uint8_t* src = front_tile(cb, tile, op);
  Format f = cb_of(cb).format;
  uint32_t* u = reinterpret_cast<uint32_t*>(out);
  tile_unpack(src, f, u, DstKind::F32);
  if (format_is_int(f))
    for (int i = 0; i < 1024; i++) out[i] = int_word_value(u[i], f);
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
  const ComputeState& cs = cstate();
  uint32_t tmp[1024];
  const uint32_t* src = d;
  uint32_t mode = cs.relu & 0xf;
  // The packer's own conversions, ReLU and L1 accumulation included, where
  // the model covers the format (hw_pack); otherwise f32 arithmetic.
  if (core().hw_numerics && hw_pack(d, kind, out, f)) return;
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
  } else if (kind == DstKind::Int) {
    // The packer's ReLU on an Int32/UInt32 intermediate (ttsim: mode 1
    // only) makes a word with bit 31 set 0. The other modes and the other
    // integer intermediates are not modelled and pack without ReLU.
    const bool relu = core().hw_numerics && mode == 1 && (f == Format::Int32 || f == Format::UInt32);
    if (relu || cs.l1_acc) {
      for (int i = 0; i < 1024; i++) tmp[i] = relu && (d[i] & 0x80000000u) ? 0 : d[i];
      if (cs.l1_acc) {
        uint32_t prev[1024];
        tile_unpack(out, f, prev, DstKind::Int);
        for (int i = 0; i < 1024; i++) tmp[i] += prev[i];
      }
      src = tmp;
    }
  }
  tile_pack(src, kind, out, f);
}

void check_fpu_operand(uint32_t cb, const char* op) {
  const Format f = cb_of(cb).format;
  if (!core().hw_numerics || (f != Format::Int32 && f != Format::UInt32)) return;
  kernel_fail(std::string(op) + ": cb " + std::to_string(cb) + " holds " + format_name(f) +
              " tiles, which the card's unpacker cannot load into the FPU's source registers (32-bit integers "
              "reach DST only through unpack_to_dest); compute on them with the SFPU's integer calls "
              "(add_int_tile, sub_int_tile, mul_int32_tile, ...)");
}

// Reads DST tile i as floats (integers converted).
void dst_floats(uint32_t i, float* out) {
  const uint32_t* d = dst_tile(i);
  if (core().dst_kind[i] == DstKind::Int)
    for (int j = 0; j < 1024; j++) out[j] = float(int32_t(d[j]));
  else
    std::memcpy(out, d, 4096);
}

}  // namespace compute

namespace {

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

float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

// Tile t of cb in the form DST holds it, into out: through the source
// registers on the hardware path, else unpacked exactly. Returns the DST
// kind of the CB's format. `op` names the call in errors.
DstKind unpack_to_dst(uint32_t cb, uint32_t t, uint32_t* out, const char* op) {
  Format f = cb_of(cb).format;
  DstKind k = dst_kind_for(f, core().run->fp32_dest_acc);
  if (hw_path(f) && f == Format::Float32 && k == DstKind::F32 && core().unpack_to_dest_fp32[cb]) {
    // UnpackToDestFp32: the unpacker writes the words into DST whole,
    // bypassing the source registers' TF32.
    std::memcpy(out, front_tile(cb, t, op), 4096);
  } else if (hw_path(f) && !(f == Format::Float16 && k == DstKind::F32)) {  // fp16 MOVA2D to 32-bit: not modelled
    alignas(64) uint32_t s[1024];
    unpack_src(cb, t, s, op);
    hw_copy(s, out, f == Format::Float16);
  } else {
    tile_unpack(front_tile(cb, t, op), f, out, k);
  }
  return k;
}

}  // namespace

void api_dst_acquire() { dst_sync(kDstAcquire); }

void api_dst_release() { dst_sync(kDstRelease); }

void api_copy_tile(uint32_t cb, uint32_t tile, uint32_t dst) {
  FpuStep step(kFpuCopy, {{cb, tile}});
  if (!step.execute()) return;
  uint32_t* d = dst_tile(dst);
  DstKind k = unpack_to_dst(cb, tile, d, "copy_tile");
  uint32_t tr = cstate().copy_transpose;
  if (tr) transpose_tile(d, tr == 2);
  mark(dst, k);
}

void api_pack_tile(uint32_t dst, uint32_t cbid, uint32_t out_tile, int out_of_order) {
  if (!on_pack()) return;
  DstKind kind;
  const uint32_t* d = pack_dst(dst, &kind, "pack_tile");
  auto& cb = cb_of(cbid);
  if (cb.page_size < format_tile_bytes(cb.format))
    kernel_fail("pack_tile: cb " + std::to_string(cbid) + " pages of " + std::to_string(cb.page_size) +
                " bytes are smaller than a " + format_name(cb.format) + " tile");
  uint32_t pos = out_of_order ? out_tile : cb.pack_next++;
  if (pos >= cb.num_pages - cb.available())
    kernel_fail("pack_tile: position " + std::to_string(pos) + " of cb " + std::to_string(cbid) +
                " is beyond the free space (missing cb_reserve_back?)");
  uint32_t page = (cb.wr_page + pos) % cb.num_pages;
  pack_to(d, kind, core().l1 + cb.offset + uint64_t(page) * cb.page_size, cb.format);
}

namespace {

bool is_int8(Format f) { return f == Format::Int8 || f == Format::UInt8; }

// The FPU's int8 datapath (numerics.hpp) for add/sub/mul of Int8/UInt8
// tiles: DST[dst] (sign-magnitude integers) = A op B, added to DST's value
// where the op accumulates (ELWMUL always; add/sub with acc_to_dest) and
// the tile holds values (its 32 bits read as sign and magnitude, whatever
// wrote them).
void int8_binary(uint32_t op, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst,
                 uint32_t row, bool accumulate) {
  const Format f0 = cb_of(cb0).format, f1 = cb_of(cb1).format;
  const uint8_t *a = front_tile(cb0, t0, "binary op"), *b = front_tile(cb1, t1, "binary op");
  uint32_t* d = dst_tile(dst);
  const bool from_dst = accumulate && ((core().dst_written >> dst) & 1);
  const int phases = hw::phases(static_cast<hw::Fidelity>(core().math_fidelity));
  for (int i = 0; i < 1024; i++) {
    const int32_t x = hw::dst_int_value(hw::int8_to_dst(a[i], f0 == Format::UInt8));
    const int32_t y = hw::dst_int_value(hw::int8_to_dst(b[bcast_src(bcast, i, row)], f1 == Format::UInt8));
    int32_t v = 0;
    if (from_dst) v = hw::dst_int_value(d[i]);  // the card reads any DST word as sign and magnitude here
    if (op == ZYX_BIN_MUL)
      for (int p = 0; p < phases; p++) v = hw::saturating_add_int32(v, hw::int8_mul_phase(x, y, p));
    else
      v = hw::saturating_add_int32(v, op == ZYX_BIN_ADD ? x + y : x - y);
    d[i] = hw::dst_int_word(v);
  }
  mark(dst, DstKind::Int);
}

// DST[dst] = A op B (B broadcast), the FPU op of api_binary and
// api_binary_bcast; site is the kernel's call.
void binary_bcast(uint32_t op, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst,
                  uint32_t row, void* site) {
  if (op > ZYX_BIN_MUL) kernel_fail("unknown binary op " + std::to_string(op));
  if (bcast > ZYX_BC_SCALAR) kernel_fail("unknown broadcast " + std::to_string(bcast));
  FpuStep step(FpuOp((bcast == ZYX_BC_NONE ? kFpuAdd : kFpuAddBcast) + op), {{cb0, t0}, {cb1, t1}}, site);
  if (!step.execute()) return;
  check_fpu_operand(cb0, "binary op");
  check_fpu_operand(cb1, "binary op");
  uint32_t* d = dst_tile(dst);
  Format f0 = cb_of(cb0).format, f1 = cb_of(cb1).format;
  bool acc = cstate().acc_to_dest && op != ZYX_BIN_MUL;
  bool had = (core().dst_written >> dst) & 1;
  if (core().hw_numerics && is_int8(f0) && is_int8(f1)) {
    int8_binary(op, bcast, cb0, cb1, t0, t1, dst, row, acc || op == ZYX_BIN_MUL);
    return;
  }
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
  // With the card's numerics a multiply adds to a DST tile that holds values
  // (ELWMUL accumulates; only a cleared DST reads as zero).
  const bool hw_acc = (acc || op == ZYX_BIN_MUL) && had;
  if (hw_path(f0, f1) && !(hw_acc && core().dst_kind[dst] == DstKind::Int)) {
    alignas(64) uint32_t a[1024], b[1024], bb[1024];
    unpack_src(cb0, t0, a, "binary op");
    unpack_src(cb1, t1, b, "binary op");
    const uint32_t* bsrc = b;
    if (bcast != ZYX_BC_NONE) {
      for (int i = 0; i < 1024; i++) bb[i] = b[bcast_src(bcast, i, row)];
      bsrc = bb;
    }
    const bool fp16 = f0 == Format::Float16;
    hw_binary(op, a, bsrc, d, hw_acc, fp16);
    mark(dst, core().fp32_dest_acc ? DstKind::F32 : fp16 ? DstKind::F16 : DstKind::BF16);
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

}  // namespace

void api_binary_bcast(uint32_t op, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst,
                      uint32_t row) {
  binary_bcast(op, bcast, cb0, cb1, t0, t1, dst, row, __builtin_return_address(0));
}

void api_binary(uint32_t op, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst) {
  binary_bcast(op, ZYX_BC_NONE, cb0, cb1, t0, t1, dst, 0, __builtin_return_address(0));
}

void api_binary_dst(uint32_t op, uint32_t i0, uint32_t i1, uint32_t out) {
  if (!on_math()) return;
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

void api_unary(uint32_t op, uint32_t dst, uint32_t param) {
  if (!on_math()) return;
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

void api_transpose(uint32_t cb, uint32_t t, uint32_t dst) {
  FpuStep step(kFpuTranspose, {{cb, t}});
  if (!step.execute()) return;
  uint32_t* d = dst_tile(dst);
  uint32_t tmp[1024];
  DstKind k = unpack_to_dst(cb, t, tmp, "transpose_wh_tile");
  for (int r = 0; r < 32; r++)
    for (int c = 0; c < 32; c++) d[fidx(c, r)] = tmp[fidx(r, c)];
  mark(dst, k);
}

// typecast_tile between integer formats as tt-metal's Wormhole programs
// compute it: UInt16 to UInt32/Int32 widens the 16 bits; UInt32 and UInt8
// to UInt16 clamp at 65535; Int32 to UInt16 makes negative values 0 and
// clamps at 65535 (SFPCAST, SFPSWAP with 0, SFP_STOCH_RND to uint16); Int32,
// UInt32 and UInt16 to UInt8 keep the low byte ((v + 256) & 0xff, so -1
// gives 255 and 300 gives 44). The other pairs (Int32 and UInt32 either
// way, UInt8 to Int32/UInt32, any pair with Int8) have no program: DST
// keeps its words.
static void int_typecast(uint32_t* d, Format in, Format out) {
  const bool from_uint = in == Format::Int32 || in == Format::UInt32 || in == Format::UInt16;
  if (in == Format::UInt16 && (out == Format::UInt32 || out == Format::Int32))
    for (int i = 0; i < 1024; i++) d[i] &= 0xffffu;
  else if ((in == Format::UInt32 || in == Format::UInt8) && out == Format::UInt16)
    for (int i = 0; i < 1024; i++) d[i] = std::min(d[i], 0xffffu);
  else if (in == Format::Int32 && out == Format::UInt16)
    for (int i = 0; i < 1024; i++) d[i] = static_cast<int32_t>(d[i]) < 0 ? 0 : std::min(d[i], 0xffffu);
  else if (from_uint && out == Format::UInt8)
    for (int i = 0; i < 1024; i++) d[i] = ((in == Format::UInt16 ? d[i] & 0xffffu : d[i]) + 256u) & 0xffu;
}

// typecast_tile as tt-llk's SFPU programs compute it (numerics.hpp), for
// the conversions the model covers: float to Int32, UInt32 and UInt16,
// Int32, UInt32 and UInt16 to Float32 (32-bit DST) and to Float16_b or
// Bfp8_b, and between integer formats (int_typecast). Returns false for the
// others, which keep the exact conversion.
static bool hw_typecast(uint32_t dst, DstKind cur, Format in, Format out) {
  uint32_t* d = dst_tile(dst);
  const bool fp32 = core().run->fp32_dest_acc;
  if (cur != DstKind::Int && !format_is_int(in)) {
    if (out == Format::Int32) for (int i = 0; i < 1024; i++) d[i] = hw::sfpu_f32_to_int32(d[i]);
    else if (out == Format::UInt32) for (int i = 0; i < 1024; i++) d[i] = hw::sfpu_f32_to_uint32(d[i]);
    else if (out == Format::UInt16) for (int i = 0; i < 1024; i++) d[i] = hw::sfpu_f32_to_uint16(d[i]);
    else return false;
    mark(dst, DstKind::Int);
    return true;
  }
  if (cur != DstKind::Int) return false;
  if (format_is_int(in) && format_is_int(out)) {
    int_typecast(d, in, out);
    mark(dst, DstKind::Int);
    return true;
  }
  uint32_t (*to_f32)(uint32_t) = in == Format::Int32    ? hw::sfpu_int32_to_f32
                                 : in == Format::UInt32 ? hw::sfpu_uint32_to_f32
                                 : in == Format::UInt16 ? hw::sfpu_uint16_to_f32
                                                        : nullptr;
  if (!to_f32) return false;
  if (out == Format::Float32 && fp32) {
    for (int i = 0; i < 1024; i++) d[i] = to_f32(d[i]);
    mark(dst, DstKind::F32);
    return true;
  }
  if (out != Format::Float16_b && out != Format::Bfp8_b) return false;
  for (int i = 0; i < 1024; i++) d[i] = hw::sfpu_f32_to_bf16(to_f32(d[i]));
  mark(dst, fp32 ? DstKind::F32 : DstKind::BF16);
  return true;
}

void api_typecast(uint32_t dst, uint32_t in_fmt, uint32_t out_fmt) {
  if (!on_math()) return;
  SfpuScope sfpu;  // typecast_tile is an SFPU op
  uint32_t* d = dst_tile(dst);
  Format in = static_cast<Format>(in_fmt), out = static_cast<Format>(out_fmt);
  if (format_tile_bytes(in) == 0 || format_tile_bytes(out) == 0)
    kernel_fail("typecast_tile: unsupported formats " + std::to_string(in_fmt) + " -> " + std::to_string(out_fmt));
  DstKind cur = core().dst_kind[dst];
  if (core().hw_numerics && hw_typecast(dst, cur, in, out)) return;
  if (core().hw_numerics && cur == DstKind::Int && in == Format::Int8)  // DST holds Int8 in sign-magnitude
    for (int i = 0; i < 1024; i++) d[i] = static_cast<uint32_t>(hw::dst_int_value(d[i]));
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

void api_compute_config(uint32_t key, uint32_t value) {
  ComputeState& cs = cstate();
  switch (key) {
    case ZYX_CK_ACC_TO_DEST: cs.acc_to_dest = value; break;
    case ZYX_CK_COPY_TRANSPOSE: cs.copy_transpose = value; break;
    case ZYX_CK_MM_TRANSPOSE: cs.mm_transpose = value; break;
    case ZYX_CK_RELU: cs.relu = value; break;
    case ZYX_CK_L1_ACC: cs.l1_acc = value; break;
    case ZYX_CK_PACK_ROWS: cs.pack_rows = value; break;
    case ZYX_CK_DST_SYNC: dst_sync(value, __builtin_return_address(0)); break;
    case ZYX_CK_FP32_DEST_ACC:
      // DST's width is the core's, set by math (the single build or TRISC1);
      // pack reads each tile in the kind math wrote it.
      if (on_math()) core().fp32_dest_acc = value != 0;
      break;
    case ZYX_CK_BLOCK_CT_DIM: cs.block_ct_dim = value; break;
    default: kernel_fail("unknown compute config key " + std::to_string(key));
  }
}

void api_binary_reuse(uint32_t op, uint32_t reuse, uint32_t cb, uint32_t t, uint32_t dst) {
  if (op > ZYX_BIN_MUL) kernel_fail("unknown binary op " + std::to_string(op));
  FpuStep step(kFpuReuse, {{cb, t}});
  if (!step.execute()) return;
  check_fpu_operand(cb, "binary_dest_reuse_tiles");
  uint32_t* d = dst_tile(dst);
  DstKind dk = core().dst_kind[dst];
  const bool fp16 = cb_of(cb).format == Format::Float16, fp32 = core().fp32_dest_acc;
  // A Float16 tile takes a 16-bit fp16 DST (MOVD2A/MOVD2B pass fp16
  // through whole); fp16 from a 32-bit DST is not modelled.
  const bool dst_fits = fp16 ? dk == DstKind::F16 && !fp32 : dk == DstKind::F32 || dk == DstKind::BF16;
  if (hw_path(cb_of(cb).format) && dst_fits) {
    // DST moves to SrcA (DEST_TO_SRCA) or SrcB, the CB tile to the other;
    // both registers hold the CB tile's format.
    alignas(64) uint32_t x[1024], c[1024];
    const bool tf32 = cb_of(cb).format == Format::Float32 && fp32;
    for (int i = 0; i < 1024; i++) x[i] = fp16 ? hw::f32_to_f16_word(d[i]) : hw::dst_to_src(d[i], tf32);
    unpack_src(cb, t, c, "binary_dest_reuse_tiles");
    if (reuse == 2) hw_binary(op, c, x, d, false, fp16);
    else hw_binary(op, x, c, d, false, fp16);
    mark(dst, fp32 ? DstKind::F32 : fp16 ? DstKind::F16 : DstKind::BF16);
    return;
  }
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
  FpuStep step(kFpuUnaryBcast, {{cb, t}});
  if (!step.execute()) return;
  uint32_t* d = dst_tile(dst);
  uint32_t tmp[1024];
  DstKind k = unpack_to_dst(cb, t, tmp, "unary_bcast");
  for (int i = 0; i < 1024; i++) d[i] = tmp[bcast_src(bcast, i, 0)];
  mark(dst, k);
}

void api_transpose_dst(uint32_t dst) {
  if (!on_math()) return;
  transpose_tile(dst_tile(dst), false);
  core().dst_written |= 1u << dst;
}

void api_copy_dst(uint32_t from, uint32_t to) {
  if (!on_math()) return;
  const uint32_t* s = dst_tile(from);
  uint32_t* d = dst_tile(to);
  std::memmove(d, s, 4096);
  mark(to, core().dst_kind[from]);
}

void api_mask(uint32_t data, uint32_t posinf) {
  if (!on_math()) return;
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

void api_tile_shape(uint32_t cb, uint32_t* rows, uint32_t* cols, uint32_t* faces) {
  const CircularBuffer& c = cb_of(cb);
  *rows = c.tile_rows, *cols = c.tile_cols;
  // 16x16 faces; a tile of fewer than 16 rows has faces of that many rows
  *faces = (c.tile_rows > 16 ? 2 : 1) * (c.tile_cols / 16);
}

int api_fp32_dest_acc() { return core().run->fp32_dest_acc ? 1 : 0; }

}  // namespace zyx::emu
