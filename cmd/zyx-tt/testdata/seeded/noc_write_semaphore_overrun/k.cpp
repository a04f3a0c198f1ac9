// Seeded bug: writes 64 bytes onto the last semaphore of another core, past the semaphores.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  uint64_t dst = get_noc_addr(2, 1, get_semaphore(15));
  noc_async_write(get_write_ptr(0), dst, 64);
  noc_async_write_barrier();
}
