// Pushes two pages (whatever they hold) for the compute kernel.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 2);
  cb_push_back(0, 2);
}
