// Seeded bug: two cores write the same page of y.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t y = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  uint64_t dst = get_noc_addr_from_bank_id<true>(0, y);
  noc_async_write(get_write_ptr(0), dst, 4096);
  noc_async_write_barrier();
}
