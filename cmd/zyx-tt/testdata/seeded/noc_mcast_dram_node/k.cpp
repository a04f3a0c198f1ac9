// Seeded bug: multicasts to a rectangle that includes the DRAM column.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  uint64_t dst = get_noc_multicast_addr(0, 1, 2, 2, get_write_ptr(0));
  noc_async_write_multicast(get_write_ptr(0), dst, 64, 4);
  noc_async_write_barrier();
}
