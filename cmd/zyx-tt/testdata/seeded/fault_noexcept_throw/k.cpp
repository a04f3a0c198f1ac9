// Seeded bug: throws out of a noexcept function.
#include "api/dataflow/dataflow_api.h"
#include <stdexcept>
void step(int i) noexcept {
  if (i > 0) throw std::logic_error("inside noexcept");
}
void kernel_main() { step(1); }
