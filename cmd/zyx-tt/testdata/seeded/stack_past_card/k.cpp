// Seeded bug: recursion deeper than the card gives a kernel stack (the host has room).
#include "api/dataflow/dataflow_api.h"
uint32_t down(uint32_t n) {
  volatile uint32_t pad[64];
  pad[n % 64] = n;
  if (n == 0) {
    cb_reserve_back(0, 1);
    return pad[0];
  }
  return down(n - 1) + pad[n % 64];
}
void kernel_main() { DPRINT << down(48) << ENDL(); }
