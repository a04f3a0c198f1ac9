// Seeded bug: waits for a DPRINT signal no processor raises.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  DPRINT << "before" << ENDL();
  DPRINT << WAIT{3};
}
