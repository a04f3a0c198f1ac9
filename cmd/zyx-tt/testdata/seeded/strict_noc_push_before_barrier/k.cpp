// Seeded bug: pushes a CB page before the read filling it has completed (strict NOC mode).
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, x), get_write_ptr(0), 4096);
  cb_push_back(0, 1);
  noc_async_read_barrier();
}
