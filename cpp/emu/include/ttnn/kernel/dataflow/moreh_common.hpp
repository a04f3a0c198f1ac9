// zyx-tt emulator: the data-movement helpers ttnn's moreh operation kernels
// include as "ttnn/kernel/dataflow/moreh_common.hpp". The names and
// arguments are ttnn's; the bodies are the emulator's own. Provided: the
// bf16 conversions, Scalar, ArgFetcher, the one-tile read/write helpers,
// generate_bcast_scaler, fill_cb_with_value, get_tilized_idx, get_noc_offset,
// get_gamma_beta_tile_idx, get_tilized_gamma_beta_idx_in_tile,
// read_tile, read_value, read_line, the mask
// tiles (generate_mask_h / _w / _h_w / _h_w_if_needed, generate_mask_tiles) and mask_tile_hw /
// mask_tile_if_need. Tiles are 32x32 in four 16x16 faces.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "zyx_emu/arg_fetcher.h"
#include "zyx_emu/dataflow.h"

constexpr std::uint32_t NOC_MINIMUM_READ_SIZE = 32;

static inline float bfloat16_to_float(uint16_t v) {
  uint32_t u = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// Truncates, as ttnn's helper does.
static inline uint16_t float_to_bfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

#if defined(FP32_DEST_ACC_EN)
using FP32_DEST_ACC_FTYPE = float;
FORCE_INLINE FP32_DEST_ACC_FTYPE fp32_dest_acc_cast(uint16_t v) { return bfloat16_to_float(v); }
FORCE_INLINE FP32_DEST_ACC_FTYPE fp32_dest_acc_cast(float v) { return v; }
#else
using FP32_DEST_ACC_FTYPE = uint16_t;
FORCE_INLINE FP32_DEST_ACC_FTYPE fp32_dest_acc_cast(uint16_t v) { return v; }
FORCE_INLINE FP32_DEST_ACC_FTYPE fp32_dest_acc_cast(float v) { return float_to_bfloat16(v); }
#endif

union Scalar {
  float f;
  uint32_t u;
};

// Runtime args in order.
using ArgFetcher = zyx_emu_args::ArgFetcher;

namespace zyx_emu_moreh {
// Element (h, w) of a 32x32 tile in face order.
constexpr uint32_t face_index(uint32_t h, uint32_t w) {
  return ((h >> 4) * 2 + (w >> 4)) * 256 + (h & 15) * 16 + (w & 15);
}
template <typename T>
T* tile(uint32_t l1, uint32_t tiles = 1) {
  return static_cast<T*>(ZYX_API.l1_range(l1, 1024 * sizeof(T) * tiles, "moreh_common"));
}
template <typename T>
T value_of(const Scalar& s) {
  if constexpr (std::is_same_v<T, uint16_t>)
    return T(s.u >> 16);
  else
    return T(s.u);
}
// A mask tile: element (h, w) is one where keep(h, w), else zero.
template <typename T, typename Keep>
void fill_mask(T* t, Keep keep) {
  Scalar one{}, zero{};
  if constexpr (std::is_same_v<T, int32_t>)
    one.u = 1, zero.u = 0;
  else
    one.f = 1.0f, zero.f = 0.0f;
  for (uint32_t h = 0; h < 32; h++)
    for (uint32_t w = 0; w < 32; w++) t[face_index(h, w)] = keep(h, w) ? value_of<T>(one) : value_of<T>(zero);
}
}  // namespace zyx_emu_moreh

template <typename AddrGen>
FORCE_INLINE void noc_async_read_tile_helper(tt::CBIndex cb, uint32_t num_tiles, uint32_t tile_idx, AddrGen addr_gen) {
  cb_reserve_back(cb, num_tiles);
  noc_async_read_page(tile_idx, addr_gen, get_write_ptr(cb));
  noc_async_read_barrier();
  cb_push_back(cb, num_tiles);
}

template <typename AddrGen>
FORCE_INLINE void noc_async_write_tile_helper(tt::CBIndex cb, uint32_t num_tiles, uint32_t tile_idx,
                                              AddrGen addr_gen) {
  cb_wait_front(cb, num_tiles);
  noc_async_write_page(tile_idx, addr_gen, get_read_ptr(cb));
  noc_async_write_barrier();
  cb_pop_front(cb, num_tiles);
}

// A tile of zeros whose first row of every face holds the scaler (16-bit
// elements take its high half, 32-bit ones the whole word).
template <typename T = uint16_t>
FORCE_INLINE void generate_bcast_scaler(uint32_t cb_scaler, uint32_t scaler) {
  cb_reserve_back(cb_scaler, 1);
  T* t = zyx_emu_moreh::tile<T>(get_write_ptr(cb_scaler));
  for (uint32_t i = 0; i < 1024; i++) t[i] = T(0);
  Scalar s{};
  s.u = scaler;
  for (uint32_t face = 0; face < 4; face++)
    for (uint32_t j = 0; j < 16; j++) t[face * 256 + j] = zyx_emu_moreh::value_of<T>(s);
  cb_push_back(cb_scaler, 1);
}

// The first num_of_elems elements of one page of cb_id set to value (its
// high 16 bits for 16-bit formats), then pushed.
FORCE_INLINE void fill_cb_with_value(uint32_t cb_id, uint32_t value, int32_t num_of_elems = 1024) {
  cb_reserve_back(cb_id, 1);
  DataFormat f = get_dataformat(cb_id);
  bool wide = f == DataFormat::Float32 || f == DataFormat::Int32 || f == DataFormat::UInt32;
  uint32_t n = num_of_elems > 0 ? static_cast<uint32_t>(num_of_elems) : 0;
  void* p = ZYX_API.l1_range(get_write_ptr(cb_id), n * (wide ? 4 : 2), "fill_cb_with_value");
  for (uint32_t j = 0; j < n; j++) {
    if (wide)
      static_cast<uint32_t*>(p)[j] = value;
    else
      static_cast<uint16_t*>(p)[j] = static_cast<uint16_t>(value >> 16);
  }
  cb_push_back(cb_id, 1);
}

// The face-order index of element (h_idx, w_idx) of a tile_height x tile_width tile.
FORCE_INLINE uint32_t get_tilized_idx(uint32_t h_idx, uint32_t w_idx, uint32_t tile_height, uint32_t tile_width) {
  uint32_t fh = tile_height / 2, fw = tile_width / 2;
  uint32_t face = (h_idx >= fh ? 2 : 0) + (w_idx >= fw ? 1 : 0);
  return face * fh * fw + (h_idx % fh) * fw + (w_idx % fw);
}

// The two-argument form for 32 x 32 tiles: h and w are taken within their
// tile (modulo 32).
FORCE_INLINE uint32_t get_tilized_idx(uint32_t h, uint32_t w) { return get_tilized_idx(h % 32, w % 32, 32, 32); }

// Group norm's per-channel gamma and beta, laid out along a row of tiles: for
// input tile input_tile_idx of an N x C x (Ht x Wt) tensor, its channel's
// tile among them, and the face-order index of that channel in row 0.
FORCE_INLINE uint32_t get_gamma_beta_tile_idx(uint32_t input_tile_idx, uint32_t HtWt, uint32_t C, uint32_t tile_width) {
  return (input_tile_idx / HtWt) % C / tile_width;
}
FORCE_INLINE uint32_t get_tilized_gamma_beta_idx_in_tile(uint32_t input_tile_idx, uint32_t HtWt, uint32_t C,
                                                         uint32_t tile_height, uint32_t tile_width) {
  return get_tilized_idx(0, (input_tile_idx / HtWt) % C % tile_width, tile_height, tile_width);
}

// The byte offset, within its 32 x 32 tile, of element (h, w) of
// element_size bytes, rounded down to NOC_MINIMUM_READ_SIZE.
FORCE_INLINE void get_noc_offset(uint32_t h, uint32_t w, uint32_t element_size, uint32_t& noc_offset) {
  noc_offset = get_tilized_idx(h, w) * element_size / NOC_MINIMUM_READ_SIZE * NOC_MINIMUM_READ_SIZE;
}

// Reads size bytes (0: a tile of cb_id) of page noc_id of addrgen, from
// byte offset within it, to cb_id's write pointer; reserves and pushes one
// page of cb_id unless told not to.
template <typename AddrGen>
void read_tile(uint32_t cb_id, AddrGen addrgen, uint32_t noc_id, uint32_t size = 0, uint32_t offset = 0,
               bool do_reserve = true, bool do_push_back = true) {
  if (do_reserve) cb_reserve_back(cb_id, 1);
  if (size == 0) size = get_tile_size(cb_id);
  noc_async_read(get_noc_addr(noc_id, addrgen, offset), get_write_ptr(cb_id), size);
  noc_async_read_barrier();
  if (do_push_back) cb_push_back(cb_id, 1);
}

// Reads the one element at face-order index tilized_idx of page noc_id into
// the same place of cb_id's page (the element size is cb_id's tile size /
// 1024); reserves and pushes one page unless told not to.
template <typename AddrGen>
void read_value(uint32_t cb_id, AddrGen addrgen, uint32_t noc_id, uint32_t tilized_idx = 0, bool do_reserve = true,
                bool do_push_back = true) {
  if (do_reserve) cb_reserve_back(cb_id, 1);
  uint32_t size = get_tile_size(cb_id) / 1024;
  noc_async_read(get_noc_addr(noc_id, addrgen) + tilized_idx * size, get_write_ptr(cb_id) + tilized_idx * size, size);
  noc_async_read_barrier();
  if (do_push_back) cb_push_back(cb_id, 1);
}

// Mask tiles: ones in rows < mask_h (generate_mask_h), columns < mask_w
// (generate_mask_w), zeros elsewhere.
template <typename T = uint16_t>
FORCE_INLINE void generate_mask_h(uint32_t cb_mask, uint32_t mask_h) {
  cb_reserve_back(cb_mask, 1);
  zyx_emu_moreh::fill_mask(zyx_emu_moreh::tile<T>(get_write_ptr(cb_mask)),
                           [&](uint32_t h, uint32_t) { return h < mask_h; });
  cb_push_back(cb_mask, 1);
}
template <typename T = uint16_t>
FORCE_INLINE void generate_mask_w(uint32_t cb_mask, uint32_t mask_w) {
  cb_reserve_back(cb_mask, 1);
  zyx_emu_moreh::fill_mask(zyx_emu_moreh::tile<T>(get_write_ptr(cb_mask)),
                           [&](uint32_t, uint32_t w) { return w < mask_w; });
  cb_push_back(cb_mask, 1);
}
// Two bf16 tiles in one push: the row mask, then (single_tile_size bytes on)
// the column mask.
FORCE_INLINE void generate_mask_h_w(uint32_t cb_mask_h_w, uint32_t mask_h, uint32_t mask_w,
                                    uint32_t single_tile_size = 2048) {
  cb_reserve_back(cb_mask_h_w, 2);
  uint32_t base = get_write_ptr(cb_mask_h_w);
  zyx_emu_moreh::fill_mask(zyx_emu_moreh::tile<uint16_t>(base), [&](uint32_t h, uint32_t) { return h < mask_h; });
  zyx_emu_moreh::fill_mask(zyx_emu_moreh::tile<uint16_t>(base + single_tile_size),
                           [&](uint32_t, uint32_t w) { return w < mask_w; });
  cb_push_back(cb_mask_h_w, 2);
}
// Three bf16 tiles in one push: the row mask, the column mask and their
// product (ones where both keep the element), each single_tile_size bytes
// after the last.
FORCE_INLINE void generate_mask_tiles(uint32_t cb_mask, uint32_t mask_h, uint32_t mask_w,
                                      uint32_t single_tile_size = 2048) {
  cb_reserve_back(cb_mask, 3);
  uint32_t base = get_write_ptr(cb_mask);
  zyx_emu_moreh::fill_mask(zyx_emu_moreh::tile<uint16_t>(base), [&](uint32_t h, uint32_t) { return h < mask_h; });
  zyx_emu_moreh::fill_mask(zyx_emu_moreh::tile<uint16_t>(base + single_tile_size),
                           [&](uint32_t, uint32_t w) { return w < mask_w; });
  zyx_emu_moreh::fill_mask(zyx_emu_moreh::tile<uint16_t>(base + 2 * single_tile_size),
                           [&](uint32_t h, uint32_t w) { return h < mask_h && w < mask_w; });
  cb_push_back(cb_mask, 3);
}

// The first row of each of num_tiles pages (noc ids 0 ..): of each page the
// 16 elements of row 0 of face 0, then of face 1, packed one after another
// into cb_id (element size: cb_id's tile size / 1024). A card whose DRAM
// reads are wider than a face row stages each read in cb_scratch_id; the
// emulator reads any size, so it reads into cb_id directly and leaves the
// scratch CB as it was (the data in cb_id is the same).
template <typename AddrGen>
void read_line(uint32_t cb_id, uint32_t cb_scratch_id, AddrGen addrgen, uint32_t num_tiles, bool do_reserve = true,
               bool do_push_back = true) {
  (void)cb_scratch_id;
  if (do_reserve) cb_reserve_back(cb_id, num_tiles);
  uint32_t element_bytes = get_tile_size(cb_id) / 1024, row_bytes = 16 * element_bytes;
  uint32_t dst = get_write_ptr(cb_id);
  for (uint32_t t = 0; t < num_tiles; t++)
    for (uint32_t face = 0; face < 2; face++, dst += row_bytes) {
      noc_async_read(get_noc_addr(t, addrgen, face * 256 * element_bytes), dst, row_bytes);
      noc_async_read_barrier();
    }
  if (do_push_back) cb_push_back(cb_id, num_tiles);
}

// The masks when the original height or width is not a multiple of 32.
FORCE_INLINE void generate_mask_h_w_if_needed(uint32_t cb_mask_h_w, uint32_t origin_h, uint32_t origin_w) {
  bool mh = origin_h % 32 != 0, mw = origin_w % 32 != 0;
  if (mh || mw)
    generate_mask_h_w(cb_mask_h_w, mh ? origin_h % 32 : 32, mw ? origin_w % 32 : 32, get_tile_size(cb_mask_h_w));
}

// Zeroes the elements of a bf16 tile in L1 outside rows < mask_h and
// columns < mask_w.
FORCE_INLINE void mask_tile_hw(uint32_t l1_addr, uint32_t mask_h = 32, uint32_t mask_w = 32) {
  uint16_t* t = zyx_emu_moreh::tile<uint16_t>(l1_addr);
  for (uint32_t h = 0; h < 32; h++)
    for (uint32_t w = 0; w < 32; w++)
      if (h >= mask_h || w >= mask_w) t[zyx_emu_moreh::face_index(h, w)] = 0;
}
FORCE_INLINE void mask_tile_if_need(uint32_t l1_addr, uint32_t origin_h, uint32_t origin_w) {
  bool mh = origin_h % 32 != 0, mw = origin_w % 32 != 0;
  if (mh || mw) mask_tile_hw(l1_addr, mh ? origin_h % 32 : 32, mw ? origin_w % 32 : 32);
}
