// Compute: adds N tile pairs of cbs 0 and 1 into cb 16; N is compile arg 0.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
#include "compute_kernel_api/eltwise_binary.h"
#include "compute_kernel_api/tile_move_copy.h"
namespace NAMESPACE {
void MAIN {
  constexpr uint32_t n = get_compile_time_arg_val(0);
  binary_op_init_common(0, 1, 16);
  add_tiles_init(0, 1);
  for (uint32_t t = 0; t < n; t++) {
    cb_wait_front(0, 1);
    cb_wait_front(1, 1);
    tile_regs_acquire();
    add_tiles(0, 1, 0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, 1);
    cb_pop_front(1, 1);
  }
}
}
