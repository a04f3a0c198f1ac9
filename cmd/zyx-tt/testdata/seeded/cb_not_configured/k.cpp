// Seeded bug: reserves pages of circular buffer 5, which the program does not configure.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_reserve_back(5, 1);
}
