// Seeded bug: math uses DST tile 8 of the 8 a 16-bit DST gives it in half-sync mode.
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/exp.h"
void kernel_main() {
  exp_tile_init();
  tile_regs_acquire();
  exp_tile(8);
  tile_regs_commit();
}
