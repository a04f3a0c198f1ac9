// Seeded bug: increments a word of DRAM as if it were a semaphore.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t y = get_arg_val<uint32_t>(0);
  noc_semaphore_inc(get_noc_addr_from_bank_id<true>(0, y), 1);
}
