// zyx-tt emulator: ttnn's "ttnn/kernel/dataflow/generate_mm_scaler.hpp":
// a zeroed 16-bit tile whose column 0 holds the low 16 bits of `scaler`
// (the name and arguments are ttnn's; the body is the emulator's own).
#pragma once

#include "zyx_emu/dataflow.h"

FORCE_INLINE void generate_mm_scaler(const uint32_t cb_id, const uint32_t scaler) {
  cb_reserve_back(cb_id, 1);
  CircularBuffer cb(cb_id);
  Noc noc;
  noc.async_write_zeros(cb, 2048);
  noc.write_zeros_l1_barrier();
  auto* h = static_cast<volatile uint16_t*>(ZYX_API.l1_range(cb.get_write_ptr(), 2048, "generate_mm_scaler"));
  for (uint32_t face : {0u, 2u})
    for (uint32_t r = 0; r < 16; r++) h[face * 256 + r * 16] = static_cast<uint16_t>(scaler & 0xFFFF);
  cb_push_back(cb_id, 1);
}
