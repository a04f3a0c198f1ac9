// Seeded bug: writes two pages out of a CB after waiting for one.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t y = get_arg_val<uint32_t>(0);
  cb_wait_front(0, 1);
  noc_async_write(get_read_ptr(0), get_noc_addr_from_bank_id<true>(0, y), 8192);
  noc_async_write_barrier();
  cb_pop_front(0, 1);
}
