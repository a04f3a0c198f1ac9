// Seeded bug: increments a word of another core's L1 outside anything allocated.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  noc_semaphore_inc(get_noc_addr(2, 2, 0x90000), 1);
}
