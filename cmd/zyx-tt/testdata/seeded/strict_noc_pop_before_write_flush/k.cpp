// Seeded bug: pops a CB page before the write sending it has been flushed (strict NOC mode).
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, x), get_write_ptr(0), 4096);
  noc_async_read_barrier();
  cb_push_back(0, 1);
  cb_wait_front(0, 1);
  noc_async_write(get_read_ptr(0), get_noc_addr_from_bank_id<true>(0, y), 4096);
  cb_pop_front(0, 1);
  noc_async_write_barrier();
}
