// Seeded bug: fills a CB that nobody pops and reserves again.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 2);
  cb_push_back(0, 2);
  WAYPOINT("FULL");
  cb_reserve_back(0, 1);
}
