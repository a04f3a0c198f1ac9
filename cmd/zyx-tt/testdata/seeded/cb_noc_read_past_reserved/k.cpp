// Seeded bug: reads two pages into a CB after reserving one.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  uint64_t src = get_noc_addr_from_bank_id<true>(0, x);
  noc_async_read(src, get_write_ptr(0), 8192);
  noc_async_read_barrier();
  cb_push_back(0, 1);
}
