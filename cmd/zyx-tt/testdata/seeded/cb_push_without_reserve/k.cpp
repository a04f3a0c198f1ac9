// Seeded bug: pushes a page it never reserved.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_push_back(0, 1);
}
