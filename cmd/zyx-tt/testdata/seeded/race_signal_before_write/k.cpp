// Seeded bug: core (0,0) signals core (0,1) before its own write of the page
// they both write, so the handshake does not order the two writes.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t y = get_arg_val<uint32_t>(0);
  volatile tt_l1_ptr uint32_t* go = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_arg_val<uint32_t>(1)));
  bool first = my_x[0] == 1;
  cb_reserve_back(0, 1);
  if (first) noc_semaphore_inc(get_noc_addr(2, 1, get_semaphore(get_arg_val<uint32_t>(1))), 1);
  else noc_semaphore_wait(go, 1);
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, y), 4096);
  noc_async_write_barrier();
}
