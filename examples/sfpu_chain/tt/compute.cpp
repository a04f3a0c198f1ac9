// zyx-tt example: compute of sfpu_chain: each tile goes through three SFPU
// ops in DST before it is packed: exp, multiply by the scalar 0.5 (passed as
// f32 bits, as tt-metal encodes scalar params), sigmoid. The tiles are the
// chunks of the library's reader and writer (zyx/chunks.h).
#include <cstdint>

#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/tile_move_copy.h"
#include "zyx/chunks.h"

void kernel_main() {
  const zyx::Chunks chunks = zyx::Chunks::from_args(0);  // n, core index, core count
  constexpr uint32_t cb_x = tt::CBIndex::c_0;
  constexpr uint32_t cb_y = tt::CBIndex::c_16;
  constexpr uint32_t half = 0x3f000000u;  // 0.5f

  init_sfpu(cb_x, cb_y);
  chunks.for_each([&](uint32_t, uint32_t) {
    cb_wait_front(cb_x, 1);
    tile_regs_acquire();
    copy_tile(cb_x, 0, 0);
    exp_tile_init();
    exp_tile(0);
    binop_with_scalar_tile_init();
    mul_unary_tile(0, half);
    sigmoid_tile_init();
    sigmoid_tile(0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb_y, 1);
    pack_tile(0, cb_y);
    cb_push_back(cb_y, 1);
    tile_regs_release();
    cb_pop_front(cb_x, 1);
  });
}
