// zyx-tt emulator: the scaler-tile helpers ttnn's reduce kernels include as
// "ttnn/kernel/dataflow/generate_reduce_scaler.hpp". Names and arguments
// are ttnn's; the bodies are the emulator's own.
//
// A scaler tile holds 16-bit elements; `scaler` is a 16-bit value packed
// twice into a 32-bit word. The tile is zeroed and the first row of each of
// its four faces (two with half_tile) is set to the scaler.
#pragma once

#include "zyx_emu/dataflow.h"

namespace zyx_emu_ttnn {
// Words of a 16-bit 32x32 tile: 512; a face is 128 words, a face row 8.
inline void scaler_rows(uint32_t l1, uint32_t faces, uint32_t packed) {
  auto* w = static_cast<volatile uint32_t*>(ZYX_API.l1_range(l1, faces * 128 * 4, "generate_reduce_scaler"));
  for (uint32_t f = 0; f < faces; f++)
    for (uint32_t j = 0; j < 8; j++) w[f * 128 + j] = packed;
}
// Zeroes `bytes` at l1 from MEM_ZEROS, as the NOC would.
inline void zero_from_mem_zeros(uint32_t l1, uint32_t bytes) {
  noc_async_read_one_packet_set_state(get_noc_addr(MEM_ZEROS_BASE), MEM_ZEROS_SIZE);
  for (uint32_t done = 0; done < bytes; done += MEM_ZEROS_SIZE)
    noc_async_read_one_packet_with_state(MEM_ZEROS_BASE, l1 + done);
  noc_async_read_barrier();
}
}  // namespace zyx_emu_ttnn

template <bool half_tile = false>
FORCE_INLINE void generate_reduce_scaler(const uint32_t cb_id, const uint32_t scaler) {
  cb_reserve_back(cb_id, 1);
  uint32_t l1 = get_write_ptr(cb_id);
  zyx_emu_ttnn::zero_from_mem_zeros(l1, half_tile ? 1024 : 2048);
  if (scaler != 0) zyx_emu_ttnn::scaler_rows(l1, half_tile ? 2 : 4, scaler);
  cb_push_back(cb_id, 1);
}

// The same tile (Wormhole's faster path in ttnn); without needs_zeroing the
// tile is not cleared first.
template <bool needs_zeroing = true>
FORCE_INLINE void wh_generate_reduce_scaler(const uint32_t cb_id, const uint32_t scaler) {
  cb_reserve_back(cb_id, 1);
  uint32_t l1 = get_write_ptr(cb_id);
  if constexpr (needs_zeroing) zyx_emu_ttnn::zero_from_mem_zeros(l1, 2048);
  if (scaler != 0 || !needs_zeroing) zyx_emu_ttnn::scaler_rows(l1, 4, scaler);
  cb_push_back(cb_id, 1);
}
