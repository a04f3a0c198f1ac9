// Seeded bug: two cores each wait for the other's semaphore.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t id = get_arg_val<uint32_t>(0);
  DPRINT << "waiting" << ENDL();
  noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(id)), 1);
  noc_semaphore_inc(get_noc_addr(my_x[0] == 1 ? 2 : 1, 1, get_semaphore(id)), 1);
}
