// Seeded bug: divides an integer by zero.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  volatile uint32_t d = get_arg_val<uint32_t>(0);
  volatile uint32_t q = 100 / d;
  (void)q;
}
