// Seeded bug: reads common arg 2 where the host set 2.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t a = get_common_arg_val<uint32_t>(0) + get_common_arg_val<uint32_t>(1);
  a += get_common_arg_val<uint32_t>(2);
  DPRINT << a << ENDL();
}
