// Seeded bug: waits for 4 pages of a 2-page CB.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_wait_front(0, 4);
  cb_pop_front(0, 4);
}
