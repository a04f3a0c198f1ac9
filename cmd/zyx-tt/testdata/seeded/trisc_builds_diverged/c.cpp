// Seeded bug: the math build issues add_tiles where the unpack build issues copy_tile.
#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_binary.h"
void kernel_main() {
  cb_wait_front(0, 2);
  tile_regs_acquire();
#ifdef TRISC_MATH
  add_tiles(0, 0, 0, 1, 0);
#else
  copy_tile(0, 0, 0);
#endif
  tile_regs_commit();
  cb_pop_front(0, 2);
}
