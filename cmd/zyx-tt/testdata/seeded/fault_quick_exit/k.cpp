// Seeded bug: calls quick_exit.
#include "api/dataflow/dataflow_api.h"
#include <cstdlib>
void kernel_main() {
  std::quick_exit(2);
}
