// zyx-tt example: compute kernel of the unary example, in the older
// compute_kernel_api style. SFPU_OP_INIT (a statement) and SFPU_OP (the tile
// function's name) are defines that pick the operation; the default is exp.
// The tiles are the chunks of the library's reader and writer
// (zyx/chunks.h).
#include <cstdint>

#include "compute_kernel_api/common.h"
#include "compute_kernel_api/eltwise_unary/eltwise_unary.h"
#include "compute_kernel_api/eltwise_unary/exp.h"
#include "compute_kernel_api/tile_move_copy.h"
#include "zyx/chunks.h"

#ifndef SFPU_OP_INIT
#define SFPU_OP_INIT exp_tile_init()
#define SFPU_OP(dst) exp_tile(dst)
#endif

namespace NAMESPACE {
void MAIN {
  const zyx::Chunks chunks = zyx::Chunks::from_args(0);  // n, core index, core count
  constexpr uint32_t cb_x = tt::CBIndex::c_0;
  constexpr uint32_t cb_y = tt::CBIndex::c_16;

  init_sfpu(cb_x, cb_y);
  SFPU_OP_INIT;
  chunks.for_each([&](uint32_t, uint32_t) {
    cb_wait_front(cb_x, 1);
    acquire_dst();
    copy_tile(cb_x, 0, 0);
    SFPU_OP(0);
    cb_reserve_back(cb_y, 1);
    pack_tile(0, cb_y);
    cb_push_back(cb_y, 1);
    release_dst();
    cb_pop_front(cb_x, 1);
  });
}
}  // namespace NAMESPACE
