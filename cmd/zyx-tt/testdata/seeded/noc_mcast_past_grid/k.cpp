// Seeded bug: multicasts to a rectangle one column past the 8 worker columns.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  uint64_t dst = get_noc_multicast_addr(1, 1, 9, 1, get_semaphore(0));
  noc_async_write_multicast(get_write_ptr(0), dst, 16, 8);
  noc_async_write_barrier();
}
