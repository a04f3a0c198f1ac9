// Seeded bug: reads runtime arg 3 where the host set 1.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0);
  uint32_t tiles = get_arg_val<uint32_t>(3);
  DPRINT << x << tiles << ENDL();
}
