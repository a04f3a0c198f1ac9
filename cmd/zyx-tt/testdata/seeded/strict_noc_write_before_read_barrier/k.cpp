// Seeded bug: writes L1 data out before the read filling it has completed (strict NOC mode).
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, x), l1, 4096);
  noc_async_write(l1, get_noc_addr_from_bank_id<true>(0, y), 4096);
  noc_async_write_barrier();
  noc_async_read_barrier();
}
