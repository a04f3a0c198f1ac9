// Seeded bug: math writes DST without tile_regs_acquire.
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/exp.h"
void kernel_main() {
  exp_tile_init();
  exp_tile(0);
}
