// Seeded bug: writes into another core's L1 outside anything allocated there.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  uint64_t dst = get_noc_addr(3, 3, 0x80000);
  noc_async_write(get_write_ptr(0), dst, 64);
  noc_async_write_barrier();
}
