// Seeded bug: calls exit(3).
#include "api/dataflow/dataflow_api.h"
#include <cstdlib>
void kernel_main() {
  exit(3);
}
