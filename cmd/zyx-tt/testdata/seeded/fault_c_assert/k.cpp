// Seeded bug: fails a C assert.
#include "api/dataflow/dataflow_api.h"
#include <cassert>
void kernel_main() {
  uint32_t n = get_arg_val<uint32_t>(0);
  assert(n == 1);
}
