// Seeded bug: lets a C++ exception leave the kernel.
#include "api/dataflow/dataflow_api.h"
#include <stdexcept>
void kernel_main() {
  throw std::runtime_error("boom");
}
