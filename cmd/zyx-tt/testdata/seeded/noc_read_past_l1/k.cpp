// Seeded bug: reads 64 bytes from the last 16 bytes of another core's L1.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr(2, 1, 1464 * 1024 - 16), get_write_ptr(0), 64);
  noc_async_read_barrier();
}
