// Seeded bug: writes to another core's semaphores 4 bytes off the source's 16-byte alignment.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  uint64_t dst = get_noc_addr(2, 1, get_semaphore(0) + 4);
  noc_async_write(get_write_ptr(0), dst, 8);
  noc_async_write_barrier();
}
