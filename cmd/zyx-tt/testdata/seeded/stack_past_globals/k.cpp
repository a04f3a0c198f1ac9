// Seeded bug: a 3 KiB global table leaves a BRISC's 4 KiB local memory
// about 1 KiB of stack; the recursion needs about 2 KiB (fine without the table).
#include "api/dataflow/dataflow_api.h"
uint32_t table[768];
uint32_t down(uint32_t n) {
  volatile uint32_t pad[64];
  pad[n % 64] = table[n];
  if (n == 0) {
    cb_reserve_back(0, 1);
    return pad[0];
  }
  return down(n - 1) + pad[n % 64];
}
void kernel_main() {
  for (uint32_t i = 0; i < 768; i++) table[i] = i;
  DPRINT << down(6) << ENDL();
}
