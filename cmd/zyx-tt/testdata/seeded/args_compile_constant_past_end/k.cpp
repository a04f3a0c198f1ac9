// Seeded bug: reads compile-time arg 3 of the 1 set, with a constant index.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  constexpr uint32_t n = get_compile_time_arg_val(3);
  DPRINT << n << ENDL();
}
