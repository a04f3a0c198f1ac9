// Seeded bug: an ASSERT that does not hold.
#include "api/dataflow/dataflow_api.h"
#include "api/debug/assert.h"
void kernel_main() {
  uint32_t n = get_arg_val<uint32_t>(0);
  ASSERT(n == 1);
}
