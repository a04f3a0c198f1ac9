// Seeded bug: writes through a pointer past the end of the core's L1.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0) + 1800 * 1024);
  *p = 1;
}
