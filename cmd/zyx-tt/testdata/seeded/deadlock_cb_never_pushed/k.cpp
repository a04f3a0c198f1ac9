// Seeded bug: waits on a CB nobody fills.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  WAYPOINT("WCB0");
  cb_wait_front(0, 1);
}
