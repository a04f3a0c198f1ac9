// Seeded bug: waits on circular buffer 40 of a core that has 32.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_wait_front(40, 1);
}
