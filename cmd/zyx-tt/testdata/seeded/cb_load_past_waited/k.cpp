// Seeded bug: reads a second pushed page after waiting for one.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 2);
  volatile uint32_t* page = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  for (uint32_t i = 0; i < 2048; i++) page[i] = i;
  cb_push_back(0, 2);
  cb_wait_front(0, 1);
  volatile uint32_t* in = reinterpret_cast<volatile uint32_t*>(get_read_ptr(0));
  uint32_t second = in[1024];
  cb_pop_front(0, 1);
  (void)second;
}
