// Seeded bug: reads from NOC node (0,20): column 0 holds only 12 DRAM banks.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr(0, 20, 0x20000), get_write_ptr(0), 64);
  noc_async_read_barrier();
}
