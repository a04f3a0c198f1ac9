// zyx-tt emulator: the compute helpers that ttnn's moreh operation kernels
// include as "ttnn/kernel/compute/moreh_common.hpp": one-tile steps of the
// form "wait for the inputs, compute in DST, pack one tile to ocb, pop the
// inputs", written against the emulator's compute API. The names and
// arguments are those of ttnn's header; the bodies are the emulator's own.
// Formats need no reconfiguration here (every unpack and pack uses its CB's
// format), so the *_with_dt forms are their plain forms.
#pragma once

#include <cstdint>

#include "zyx_emu/arg_fetcher.h"
#include "zyx_emu/compute.h"

ALWI void ACQ() { ckernel::acquire_dst(); }
ALWI void REL() { ckernel::release_dst(); }

namespace ckernel {

namespace zyx_moreh {
// Runs `body` with DST acquired and packs DST[dst] as one tile of ocb.
template <typename Body>
ALWI void to_cb(uint32_t ocb, uint32_t dst, Body body) {
  cb_reserve_back(ocb, 1);
  tile_regs_acquire();
  body();
  tile_regs_commit();
  tile_regs_wait();
  pack_tile(dst, ocb);
  tile_regs_release();
  cb_push_back(ocb, 1);
}
// copy_tile after a plain copy init (no transpose), as ttnn's helpers re-init.
ALWI void load(uint32_t icb, uint32_t itile, uint32_t dst) {
  copy_tile_to_dst_init_short(icb);
  copy_tile(icb, itile, dst);
}
ALWI void pop(uint32_t cb, uint32_t n) {
  if (n) cb_pop_front(cb, n);
}
}  // namespace zyx_moreh

ALWI void pack_tile_with_dt(uint32_t ifrom_dst, uint32_t icb) { pack_tile(ifrom_dst, icb); }
ALWI void copy_tile_init_with_dt(uint32_t icb, uint32_t transpose = 0) { copy_tile_to_dst_init_short(icb, transpose); }
ALWI void add_tiles_init_with_dt(uint32_t icb0 = 0, uint32_t icb1 = 1) { add_tiles_init(icb0, icb1); }
ALWI void sub_tiles_init_with_dt(uint32_t icb0 = 0, uint32_t icb1 = 1) { sub_tiles_init(icb0, icb1); }
ALWI void mul_tiles_init_with_dt(uint32_t icb0 = 0, uint32_t icb1 = 1) { mul_tiles_init(icb0, icb1); }
ALWI void add_bcast_rows_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) { add_bcast_rows_init_short(a, b); }
ALWI void add_bcast_cols_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) { add_bcast_cols_init_short(a, b); }
ALWI void add_bcast_scalar_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) { add_bcast_scalar_init_short(a, b); }
ALWI void sub_bcast_rows_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) { sub_bcast_rows_init_short(a, b); }
ALWI void sub_bcast_cols_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) { sub_bcast_cols_init_short(a, b); }
ALWI void sub_tiles_bcast_scalar_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) {
  sub_tiles_bcast_scalar_init_short(a, b);
}
ALWI void mul_bcast_rows_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) { mul_bcast_rows_init_short(a, b); }
ALWI void mul_bcast_cols_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) { mul_bcast_cols_init_short(a, b); }
ALWI void mul_tiles_bcast_scalar_init_short_with_dt(uint32_t a = 0, uint32_t b = 1) {
  mul_tiles_bcast_scalar_init_short(a, b);
}

// Hands out a kernel's runtime args in order.
using ArgFetcher = zyx_emu_args::ArgFetcher;

// Two inputs, one FPU op (optionally followed by SFPU ops on DST 0).
#define ZYX_MOREH_BINARY(name, CALL, AFTER)                                                                  \
  ALWI void name(uint32_t icb0, uint32_t icb1, uint32_t ocb, uint32_t itile0 = 0, uint32_t itile1 = 0,     \
                 uint32_t pop0 = 1, uint32_t pop1 = 1) {                                                   \
    cb_wait_front(icb0, itile0 + 1);                                                                       \
    cb_wait_front(icb1, itile1 + 1);                                                                       \
    zyx_moreh::to_cb(ocb, 0, [&] {                                                                         \
      CALL(icb0, icb1, itile0, itile1, 0);                                                                 \
      AFTER;                                                                                               \
    });                                                                                                    \
    zyx_moreh::pop(icb0, pop0);                                                                            \
    zyx_moreh::pop(icb1, pop1);                                                                            \
  }
ZYX_MOREH_BINARY(mul_tiles_to_cb, mul_tiles, (void)0)
ZYX_MOREH_BINARY(mul_tiles_and_negative_to_cb, mul_tiles, negative_tile(0))
ZYX_MOREH_BINARY(mul_tiles_log_to_cb, mul_tiles, log_tile(0))
ZYX_MOREH_BINARY(mul_tiles_bcast_rows_to_cb, mul_tiles_bcast_rows, (void)0)
ZYX_MOREH_BINARY(mul_tiles_bcast_rows_log_to_cb, mul_tiles_bcast_rows, log_tile(0))
ZYX_MOREH_BINARY(mul_tiles_bcast_cols_to_cb, mul_tiles_bcast_cols, (void)0)
ZYX_MOREH_BINARY(mul_tiles_bcast_cols_log_to_cb, mul_tiles_bcast_cols, log_tile(0))
ZYX_MOREH_BINARY(add_tiles_to_cb, add_tiles, (void)0)
ZYX_MOREH_BINARY(sub_tiles_to_cb, sub_tiles, (void)0)
ZYX_MOREH_BINARY(sub_tiles_bcast_cols_to_cb, sub_tiles_bcast_cols, (void)0)
ZYX_MOREH_BINARY(sub_tiles_bcast_rows_to_cb, sub_tiles_bcast_rows, (void)0)
#undef ZYX_MOREH_BINARY

ALWI void mul_tiles_and_mask_tile_to_cb(uint32_t icb0, uint32_t icb1, uint32_t maskcb, uint32_t ocb,
                                        uint32_t itile0 = 0, uint32_t itile1 = 0, uint32_t mtile = 0,
                                        uint32_t pop0 = 1, uint32_t pop1 = 1, uint32_t popm = 1) {
  cb_wait_front(icb0, itile0 + 1);
  cb_wait_front(icb1, itile1 + 1);
  cb_wait_front(maskcb, mtile + 1);
  zyx_moreh::to_cb(ocb, 0, [&] {
    mul_tiles(icb0, icb1, itile0, itile1, 0);
    zyx_moreh::load(maskcb, mtile, 1);
    mask_tile(0, 1);
  });
  zyx_moreh::pop(icb0, pop0);
  zyx_moreh::pop(icb1, pop1);
  zyx_moreh::pop(maskcb, popm);
}

// One input copied to DST 0 (or `dst`), then SFPU ops.
#define ZYX_MOREH_UNARY(name, AFTER)                                                          \
  ALWI void name(uint32_t icb, uint32_t ocb, uint32_t itile = 0, uint32_t pop = 1) {          \
    cb_wait_front(icb, itile + 1);                                                            \
    zyx_moreh::to_cb(ocb, 0, [&] {                                                            \
      zyx_moreh::load(icb, itile, 0);                                                               \
      AFTER;                                                                                  \
    });                                                                                       \
    zyx_moreh::pop(icb, pop);                                                                 \
  }
ZYX_MOREH_UNARY(copy_tile_to_cb, (void)0)
ZYX_MOREH_UNARY(sign_tile_to_cb, sign_tile(0))
ZYX_MOREH_UNARY(recip_tile_to_cb, recip_tile(0))
ZYX_MOREH_UNARY(log_tile_to_cb, log_tile(0))
#undef ZYX_MOREH_UNARY

ALWI void exp_tile_to_cb(uint32_t icb, uint32_t ocb, uint32_t itile = 0, uint32_t dst = 0, uint32_t pop = 1) {
  cb_wait_front(icb, itile + 1);
  zyx_moreh::to_cb(ocb, dst, [&] {
    zyx_moreh::load(icb, itile, dst);
    exp_tile(dst);
  });
  zyx_moreh::pop(icb, pop);
}
ALWI void rexp_tile_to_cb(uint32_t icb, uint32_t ocb, uint32_t itile = 0, uint32_t dst = 0, uint32_t pop = 1) {
  cb_wait_front(icb, itile + 1);
  zyx_moreh::to_cb(ocb, dst, [&] {
    zyx_moreh::load(icb, itile, dst);
    negative_tile(dst);
    exp_tile(dst);
  });
  zyx_moreh::pop(icb, pop);
}

ALWI void mask_tile_to_cb(uint32_t icb, uint32_t maskcb, uint32_t ocb, uint32_t itile = 0, uint32_t mtile = 0,
                          uint32_t pop = 1, uint32_t popm = 1) {
  cb_wait_front(icb, itile + 1);
  cb_wait_front(maskcb, mtile + 1);
  zyx_moreh::to_cb(ocb, 0, [&] {
    zyx_moreh::load(icb, itile, 0);
    zyx_moreh::load(maskcb, mtile, 1);
    mask_tile(0, 1);
  });
  zyx_moreh::pop(icb, pop);
  zyx_moreh::pop(maskcb, popm);
}

// exp (or exp of the negation) of a tile, then masked by the tile of maskcb.
#define ZYX_MOREH_EXP_MASK(name, NEG)                                                                          \
  ALWI void name(uint32_t icb, uint32_t maskcb, uint32_t ocb, uint32_t itile = 0, uint32_t mtile = 0,         \
                 uint32_t pop = 1, uint32_t popm = 1, uint32_t dst = 0, uint32_t dst_mask = 1) {              \
    cb_wait_front(icb, itile + 1);                                                                             \
    cb_wait_front(maskcb, mtile + 1);                                                                          \
    zyx_moreh::to_cb(ocb, dst, [&] {                                                                           \
      zyx_moreh::load(icb, itile, dst);                                                                              \
      if (NEG) negative_tile(dst);                                                                             \
      exp_tile(dst);                                                                                           \
      zyx_moreh::load(maskcb, mtile, dst_mask);                                                                      \
      if (dst_mask != dst + 1) ZYX_API.fail("mask_tile: the emulator takes the mask from DST[data + 1]");     \
      mask_tile(dst, dst_mask);                                                                                \
    });                                                                                                        \
    zyx_moreh::pop(icb, pop);                                                                                  \
    zyx_moreh::pop(maskcb, popm);                                                                              \
  }
ZYX_MOREH_EXP_MASK(exp_tile_and_mask_tile_to_cb, false)
ZYX_MOREH_EXP_MASK(rexp_tile_and_mask_tile_to_cb, true)
#undef ZYX_MOREH_EXP_MASK

// (x + d)^p as x^p * exp(log(x) * d), through the intermediate CBs, as
// ttnn's moreh kernels compute a power with an integer part p and a
// fractional part d (a tile in cb_decimal); abs: of |x|; recip: 1 / result.
namespace zyx_moreh {
ALWI void power(uint8_t cb_x, uint8_t cb_xpow, uint8_t cb_logx, uint8_t cb_decimal, uint8_t cb_exp_lxmd,
                uint8_t cb_out, uint32_t p, bool p_is_negative, bool abs, bool recip) {
  cb_wait_front(cb_x, 1);
  to_cb(cb_xpow, 0, [&] {
    zyx_moreh::load(cb_x, 0, 0);
    if (abs) abs_tile(0);
    power_iterative_tile(0, p);
    if (p_is_negative) recip_tile(0);
  });
  to_cb(cb_logx, 0, [&] {
    zyx_moreh::load(cb_x, 0, 0);
    if (abs) abs_tile(0);
    log_tile(0);
  });
  cb_pop_front(cb_x, 1);
  cb_wait_front(cb_logx, 1);
  to_cb(cb_exp_lxmd, 0, [&] {
    mul_tiles(cb_logx, cb_decimal, 0, 0, 0);
    exp_tile(0);
  });
  cb_pop_front(cb_logx, 1);
  cb_wait_front(cb_xpow, 1);
  cb_wait_front(cb_exp_lxmd, 1);
  to_cb(cb_out, 0, [&] {
    mul_tiles(cb_xpow, cb_exp_lxmd, 0, 0, 0);
    if (recip) recip_tile(0);
  });
  cb_pop_front(cb_xpow, 1);
  cb_pop_front(cb_exp_lxmd, 1);
}
}  // namespace zyx_moreh
ALWI void power_tile_to_cb(uint8_t cb_x, uint8_t cb_xpow, uint8_t cb_logx, uint8_t cb_decimal, uint8_t cb_exp_lxmd,
                           uint8_t cb_correct_xpow, uint32_t p, bool p_is_negative) {
  zyx_moreh::power(cb_x, cb_xpow, cb_logx, cb_decimal, cb_exp_lxmd, cb_correct_xpow, p, p_is_negative, false, false);
}
ALWI void power_tile_with_abs_x_to_cb(uint8_t cb_x, uint8_t cb_xpow, uint8_t cb_logx, uint8_t cb_decimal,
                                      uint8_t cb_exp_lxmd, uint8_t cb_correct_xpow, uint32_t p, bool p_is_negative) {
  zyx_moreh::power(cb_x, cb_xpow, cb_logx, cb_decimal, cb_exp_lxmd, cb_correct_xpow, p, p_is_negative, true, false);
}
ALWI void power_and_recip_tile_to_cb(uint8_t cb_x, uint8_t cb_xpow, uint8_t cb_logx, uint8_t cb_decimal,
                                     uint8_t cb_exp_lxmd, uint8_t cb_recip_xpow, uint32_t p, bool p_is_negative) {
  zyx_moreh::power(cb_x, cb_xpow, cb_logx, cb_decimal, cb_exp_lxmd, cb_recip_xpow, p, p_is_negative, false, true);
}

// DST-level steps: load a tile into DST (waiting and popping it), pack DST to a CB.
ALWI void copy_tile_to_dst(uint32_t icb, uint32_t itile = 0, uint32_t dst = 0, bool cb_wait_and_pop = true) {
  if (cb_wait_and_pop) cb_wait_front(icb, 1);
  zyx_moreh::load(icb, itile, dst);
  if (cb_wait_and_pop) cb_pop_front(icb, 1);
}
ALWI void pack_tile_from_dst(uint32_t ocb, uint32_t dst = 0) {
  cb_reserve_back(ocb, 1);
  pack_tile(dst, ocb);
  cb_push_back(ocb, 1);
}

}  // namespace ckernel
