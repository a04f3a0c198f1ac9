// zyx-tt kernel library: zyx/pack.h, for compute kernels that compute one
// output tile at a time in DST register 0 (zyx/eltwise_binary.h,
// zyx/matmul.h).
#pragma once

#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"

namespace zyx {

// Hands DST register 0, once its math is done, to the packer, packs it into
// a new tile at the back of cb and frees DST for the next tile.
inline void pack_dst0(uint32_t cb) {
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(cb, 1);
  pack_tile(0, cb);
  cb_push_back(cb, 1);
  tile_regs_release();
}

}  // namespace zyx
