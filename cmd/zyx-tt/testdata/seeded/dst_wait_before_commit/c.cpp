// Seeded bug: pack waits for DST before math commits it.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  tile_regs_acquire();
  tile_regs_wait();
  tile_regs_commit();
}
