// Seeded bug: dereferences an L1 offset as if it were a pointer.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(uintptr_t(0x19000));
  *p = 1;
}
