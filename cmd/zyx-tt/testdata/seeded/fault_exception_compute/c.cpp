// Seeded bug: lets a C++ exception leave a compute kernel.
#include "api/compute/compute_kernel_api.h"
#include <stdexcept>
void kernel_main() {
  throw std::out_of_range("tile 9");
}
