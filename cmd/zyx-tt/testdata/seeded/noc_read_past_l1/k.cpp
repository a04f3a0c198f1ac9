// Seeded bug: reads 128 KiB from the last 64 KiB of another core's L1.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr(2, 1, 1464 * 1024 - 65536), get_write_ptr(0), 131072);
  noc_async_read_barrier();
}
