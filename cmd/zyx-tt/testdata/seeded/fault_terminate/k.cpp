// Seeded bug: calls std::terminate.
#include "api/dataflow/dataflow_api.h"
#include <exception>
void kernel_main() {
  std::terminate();
}
