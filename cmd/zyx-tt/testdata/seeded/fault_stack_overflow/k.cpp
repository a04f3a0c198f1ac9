// Seeded bug: recurses until its stack runs out.
#include "api/dataflow/dataflow_api.h"
uint32_t deep(volatile uint32_t* p, uint32_t n) {
  volatile uint32_t local[1024];
  local[n % 1024] = n;
  return deep(local, n + 1) + p[0];
}
void kernel_main() { DPRINT << deep(nullptr, 0) << ENDL(); }
