// Seeded bug: pack_tile reads DST before tile_regs_wait.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  tile_regs_acquire();
  tile_regs_commit();
  cb_reserve_back(0, 1);
  pack_tile(0, 0);
  cb_push_back(0, 1);
}
