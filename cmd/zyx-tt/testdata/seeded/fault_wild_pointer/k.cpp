// Seeded bug: writes through a pointer to nowhere.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(uintptr_t(0x10));
  *p = 1;
}
