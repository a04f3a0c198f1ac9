// Seeded bug: indexes the compile-time args with a run-time index past them.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t i = get_arg_val<uint32_t>(0);
  uint32_t v = get_compile_time_arg_val(i);
  DPRINT << v << ENDL();
}
