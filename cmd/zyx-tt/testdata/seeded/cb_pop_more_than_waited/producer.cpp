// Seeded bug: pops two pages after waiting for one.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 2);
  cb_push_back(0, 2);
}
