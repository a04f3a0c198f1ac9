// Seeded bug: waits for 4 pages of a 2-page CB.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 2);
  cb_push_back(0, 2);
}
