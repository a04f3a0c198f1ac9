// Seeded bug: the math build issues copy_tile that the unpack build never unpacks.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  cb_wait_front(0, 2);
  tile_regs_acquire();
  MATH(copy_tile(0, 0, 0));
  tile_regs_commit();
  cb_pop_front(0, 2);
}
