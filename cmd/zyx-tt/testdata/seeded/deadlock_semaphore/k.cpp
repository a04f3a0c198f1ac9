// Seeded bug: waits on a semaphore nobody sets.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  volatile tt_l1_ptr uint32_t* s = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_arg_val<uint32_t>(0)));
  noc_semaphore_wait(s, 1);
}
