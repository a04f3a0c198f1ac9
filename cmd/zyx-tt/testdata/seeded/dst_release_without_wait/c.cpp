// Seeded bug: pack releases a DST section it never waited for.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  tile_regs_acquire();
  tile_regs_commit();
  tile_regs_release();
}
