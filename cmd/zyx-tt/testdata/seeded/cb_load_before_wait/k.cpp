// Seeded bug: reads a pushed page through get_read_ptr before cb_wait_front.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  volatile uint32_t* page = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  for (uint32_t i = 0; i < 1024; i++) page[i] = i;
  cb_push_back(0, 1);
  volatile uint32_t* in = reinterpret_cast<volatile uint32_t*>(get_read_ptr(0));
  uint32_t first = in[0];
  cb_wait_front(0, 1);
  cb_pop_front(0, 1);
  (void)first;
}
