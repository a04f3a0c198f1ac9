// Seeded bug: raises SIGABRT itself.
#include "api/dataflow/dataflow_api.h"
#include <csignal>
void kernel_main() {
  std::raise(SIGABRT);
}
