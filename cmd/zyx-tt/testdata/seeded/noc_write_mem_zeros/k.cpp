// Seeded bug: writes into MEM_ZEROS of another core.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  noc_async_write(get_write_ptr(0), get_noc_addr(2, 1, MEM_ZEROS_BASE), 64);
  noc_async_write_barrier();
}
