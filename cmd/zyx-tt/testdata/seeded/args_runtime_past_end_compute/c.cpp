// Seeded bug: a compute kernel reads runtime arg 2 of the 2 set.
#include "api/compute/compute_kernel_api.h"
void kernel_main() {
  uint32_t a = get_arg_val<uint32_t>(0) + get_arg_val<uint32_t>(2);
  if (a == 12345) DPRINT << a << ENDL();
}
