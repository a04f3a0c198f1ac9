// Seeded bug: calls abort().
#include "api/dataflow/dataflow_api.h"
#include <cstdlib>
void kernel_main() {
  std::abort();
}
