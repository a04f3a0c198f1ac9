// Seeded bug: writes two pages out of a CB after waiting for one.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  cb_push_back(0, 1);
}
