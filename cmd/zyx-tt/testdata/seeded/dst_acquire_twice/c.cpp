// Seeded bug: math acquires DST twice without committing.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  tile_regs_acquire();
  tile_regs_acquire();
}
