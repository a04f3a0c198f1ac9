// The compute calls of tt-metal's specialised kernels that compute_special
// carries: the runtime-width reduce_block_max_row (reduce_custom.h),
// reshuffle_rows_tile (reshuffle.h), the exponential moving average
// (ema.h) and the scalar sum of mul_reduce_scalar_tile
// (experimental/mul_reduce_scalar.h). The SFPU ones follow the LLK's order of
// operations on the emulator's SFPMAD model (zyx_emu/sfpi_arith.h).
#include <cstring>
#include <string>

#include "compute_api.hpp"
#include "zyx_emu/sfpi_arith.h"

namespace zyx::emu {

using namespace compute;

namespace compute {

namespace {

constexpr uint32_t kOne = 0x3f800000u;  // 1.0f, the SFPU's LCONST_1

// What an SFPSTORE of an f32 lane leaves in DST of kind k: a 16-bit bf16 DST
// keeps the truncated value, an f16 one the rounded one, f32 all of it.
uint32_t sfpu_store(uint32_t v, DstKind k) {
  if (k == DstKind::BF16) return sfpi::impl_::store_bf16(v);
  if (k == DstKind::F16) return f2u(round_f16(u2f(v)));
  return v;
}

// DST tile i as the f32 lanes an SFPLOAD gives; integer tiles are refused.
void sfpu_load_floats(uint32_t i, uint32_t* out, const char* op) {
  if (core().dst_kind[i] == DstKind::Int)
    kernel_fail(std::string(op) + ": DST tile " + std::to_string(i) + " holds integers; only float tiles are emulated");
  std::memcpy(out, dst_tile(i), 4096);
}

}  // namespace

// reduce_block_max_row_runtime: the block width comes from the last runtime init.
void reduce_max_row_runtime(uint32_t cb, uint32_t scaler_cb, uint32_t t0, uint32_t dst) {
  uint32_t block = cstate().block_ct_dim;
  if (block == 0)
    kernel_fail("reduce_block_max_row_runtime: no reduce_block_max_row_init_runtime (or reinit) set the block width");
  api_reduce_max_row_block(cb, scaler_cb, t0, block, dst);
}

// reshuffle_rows_tile: for each row i of DST[dst] in order, when the byte
// map[i] (32 bytes from L1 idx_addr + 16, past a 16-byte header) is below 32,
// row map[i] of DST[dst + 1] += row i, one SFPADD per element, stored back
// before the next row (so rows mapped to the same target add up in order).
void reshuffle_rows(uint32_t dst, uint32_t idx_addr) {
  if (dst + 1 >= dst_capacity())
    kernel_fail("reshuffle_rows_tile(" + std::to_string(dst) + "): its output, DST tile " + std::to_string(dst + 1) +
                ", is past DST");
  const auto* map = static_cast<const uint8_t*>(api_l1_range(idx_addr + 16, 32, "reshuffle_rows_tile (row map)"));
  uint32_t in[1024], out[1024];
  sfpu_load_floats(dst, in, "reshuffle_rows_tile");
  sfpu_load_floats(dst + 1, out, "reshuffle_rows_tile");
  DstKind k = sfpu_float_kind(dst + 1);
  for (int row = 0; row < 32; row++) {
    int target = map[row];
    if (target >= 32) continue;  // 255: the row takes no part
    for (int c = 0; c < 32; c++) {
      uint32_t& o = out[fidx(target, c)];
      o = sfpu_store(sfpi::impl_::mad(in[fidx(row, c)], kOne, o), k);
    }
  }
  std::memcpy(dst_tile(dst + 1), out, sizeof out);
  mark(dst + 1, k);
}

void ema_init(uint32_t alpha, uint32_t beta) {
  ComputeState& cs = cstate();
  cs.ema_alpha = alpha;
  cs.ema_beta = beta;
}

void ema_clear() { cstate().ema_prev.fill(0); }

// ema_tile: each column of DST[dst], top row first, continues its running
// average: prev = alpha * prev, then prev = beta * x + prev (two SFPMADs, as
// the LLK); row r of DST[dst + 1] gets the average after row r. The last
// average of each column carries to the next ema_tile.
void ema_tile(uint32_t dst) {
  if (dst + 1 >= dst_capacity())
    kernel_fail("ema_tile(" + std::to_string(dst) + "): its output, DST tile " + std::to_string(dst + 1) + ", is past DST");
  ComputeState& cs = cstate();
  uint32_t in[1024];
  sfpu_load_floats(dst, in, "ema_tile");
  uint32_t* out = dst_tile(dst + 1);
  DstKind k = sfpu_float_kind(dst);
  for (int c = 0; c < 32; c++) {
    uint32_t prev = cs.ema_prev[c];
    for (int r = 0; r < 32; r++) {
      uint32_t scaled = sfpi::impl_::mad(cs.ema_alpha, prev, 0);
      prev = sfpi::impl_::mad(cs.ema_beta, in[fidx(r, c)], scaled);
      out[fidx(r, c)] = sfpu_store(prev, k);
    }
    cs.ema_prev[c] = prev;
  }
  mark(dst + 1, k);
}

// mul_reduce_scalar_tile's reduction: the sum of every element of DST tiles
// [0, n) (the products), times the scaler, into element 0 of DST[0]; the
// rest of DST[0] becomes 0. The sum is formed in double and rounded once to
// DST's format (the card's pooling order is not modelled).
void sum_dst_scalar(uint32_t n, uint32_t scaler) {
  if (n == 0 || n > dst_capacity())
    kernel_fail("mul_reduce_scalar_tile: " + std::to_string(n) + " tiles do not fit DST (1 to " +
                std::to_string(dst_capacity()) + ")");
  double sum = 0;
  float x[1024];
  for (uint32_t t = 0; t < n; t++) {
    dst_floats(t, x);
    for (float v : x) sum += v;
  }
  uint32_t* d = dst_tile(0);
  std::memset(d, 0, 4096);
  d[0] = f2u(static_cast<float>(sum * double(u2f(scaler))));
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : DstKind::BF16;
  dst_round(d, k);
  mark(0, k);
}

}  // namespace compute

}  // namespace zyx::emu
