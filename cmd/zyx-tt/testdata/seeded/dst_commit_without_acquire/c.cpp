// Seeded bug: math commits DST it never acquired.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  tile_regs_commit();
}
