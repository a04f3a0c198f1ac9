// Seeded bug: a compute kernel waits for tiles no reader pushes.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  cb_wait_front(0, 1);
  cb_pop_front(0, 1);
}
