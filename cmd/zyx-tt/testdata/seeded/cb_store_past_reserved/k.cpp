// Seeded bug: writes the page after the one it reserved, through get_write_ptr.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  volatile uint32_t* page = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  for (uint32_t i = 0; i < 1024; i++) page[i] = i;
  page[1024] = 1;
  cb_push_back(0, 1);
}
