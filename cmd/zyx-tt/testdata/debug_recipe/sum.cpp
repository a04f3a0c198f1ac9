// The kernel of the gdb recipe (docs/emulator.md, "Stepping through a kernel with gdb").
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t n = get_arg_val<uint32_t>(0);
  uint32_t sum = 0;
  for (uint32_t i = 1; i <= n; i++) sum += i;
  DPRINT << "sum " << sum << ENDL();
}
