// Seeded bug: pops two pages after waiting for one.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_wait_front(0, 1);
  cb_pop_front(0, 2);
}
