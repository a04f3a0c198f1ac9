// Seeded bug: reads into the CB page after the one it reserved.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  uint32_t next = get_write_ptr(0) + 4096;
  noc_async_read(get_noc_addr_from_bank_id<true>(0, x), next, 4096);
  noc_async_read_barrier();
  cb_push_back(0, 1);
}
