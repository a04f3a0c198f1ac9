// Matmul and reduce (api/compute/matmul.h, reduce.h): tiles from two
// circular buffers into DST through the FPU's tile product and reductions.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute_api.hpp"

namespace zyx::emu {

using namespace compute;

namespace {

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

}  // namespace

namespace compute {

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

}  // namespace compute

void api_matmul(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst, uint32_t transpose) {
  FpuStep step(kFpuMatmul, {{cb0, t0}, {cb1, t1}});
  if (!step.execute()) return;
  check_fpu_operand(cb0, "matmul_tiles");
  check_fpu_operand(cb1, "matmul_tiles");
  auto& c = core();
  if (dst >= dst_capacity()) dst_tile(dst);  // reports the bad index
  if (hw_path(cb_of(cb0).format, cb_of(cb1).format) &&
      !((c.dst_written >> dst & 1) && c.dst_kind[dst] == DstKind::Int)) {
    alignas(64) uint32_t a[1024], b[1024];
    unpack_src(cb0, t0, a, "matmul_tiles");
    unpack_src(cb1, t1, b, "matmul_tiles");
    if (transpose == 1 || (transpose == 2 && cstate().mm_transpose)) transpose_tile(b, false);
    hw_matmul(dst, a, b, cb_of(cb0).format == Format::Float16);
    return;
  }
  alignas(64) float ta[1024], tb[1024];
  const float* A = mm_operand(cb0, t0, ta, "matmul_tiles");
  const float* B = mm_operand(cb1, t1, tb, "matmul_tiles");
  // transpose 1: the call asks for it; 2: as the last matmul init said.
  bool tr = transpose == 1 || (transpose == 2 && cstate().mm_transpose);
  DstKind k = float_kind(cb_of(cb0).format, cb_of(cb1).format);
  if (tr) {
    if (B != tb) std::memcpy(tb, B, sizeof tb);
    transpose_tile(reinterpret_cast<uint32_t*>(tb), false);
    B = tb;
  }
  mm_into(dst, A, B, k);
}

namespace {

void reduce(uint32_t op, uint32_t dim, uint32_t cb, uint32_t scb, uint32_t t, uint32_t ts, uint32_t dst, void* site) {
  FpuStep step(kFpuReduce, {{cb, t}, {scb, ts}}, site);
  if (!step.execute()) return;
  check_fpu_operand(cb, "reduce_tile");
  check_fpu_operand(scb, "reduce_tile (scaler)");
  auto& c = core();
  // Not modelled for Float16: GMPOOL, and MOVD2B of fp16 from a 32-bit DST.
  const bool fp16 = cb_of(cb).format == Format::Float16;
  const bool fp16_open = fp16 && (op == ZYX_RED_MAX || (dim == ZYX_RED_SCALAR && c.fp32_dest_acc));
  if (dim <= ZYX_RED_SCALAR && hw_path(cb_of(cb).format, cb_of(scb).format) && !fp16_open &&
      !((c.dst_written >> dst & 1) && c.dst_kind[dst] == DstKind::Int)) {
    if (op > ZYX_RED_MAX) kernel_fail("reduce: unknown pool type " + std::to_string(op));
    alignas(64) uint32_t a[1024], s[1024];
    unpack_src(cb, t, a, "reduce_tile");
    unpack_src(scb, ts, s, "reduce_tile (scaler)");
    const bool tf32_src = cb_of(cb).format == Format::Float32 && c.fp32_dest_acc;
    if (op == ZYX_RED_MAX) hw_reduce_max(dim, a, s, tf32_src, dst);
    else hw_reduce(dim, a, s[0], tf32_src, fp16, dst, 4);
    return;
  }
  alignas(64) float a[1024], s[1024];
  unpack_floats(cb, t, a, "reduce_tile");
  unpack_floats(scb, ts, s, "reduce_tile (scaler)");
  reduce_into(op, dim, a, s[0], dst, 4, float_kind(cb_of(cb).format));
}

}  // namespace

void api_reduce(uint32_t op, uint32_t dim, uint32_t cb, uint32_t scb, uint32_t t, uint32_t ts, uint32_t dst) {
  reduce(op, dim, cb, scb, t, ts, dst, __builtin_return_address(0));
}

// One reduce step per tile, as the unpack and math builds hand them over.
void api_reduce_max_row_block(uint32_t cb, uint32_t scb, uint32_t t0, uint32_t block, uint32_t dst) {
  for (uint32_t t = 0; t < block; t++) reduce(ZYX_RED_MAX, ZYX_RED_ROW, cb, scb, t0 + t, 0, dst, __builtin_return_address(0));
}

}  // namespace zyx::emu
