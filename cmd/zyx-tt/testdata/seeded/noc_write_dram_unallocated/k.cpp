// Seeded bug: writes DRAM far past every buffer.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t y = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(1, y + (64u << 20)), 64);
  noc_async_write_barrier();
}
