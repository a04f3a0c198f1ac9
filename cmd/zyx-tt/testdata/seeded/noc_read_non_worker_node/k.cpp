// Seeded bug: reads from NOC node (30,30), which is no core of the grid.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr(30, 30, 0x20000), get_write_ptr(0), 64);
  noc_async_read_barrier();
}
