// Seeded bug: recursion in a compute kernel deeper than a TRISC gives its stack.
#include "api/compute/compute_kernel_api.h"
uint32_t down(uint32_t n) {
  volatile uint32_t pad[64];
  pad[n % 64] = n;
  if (n == 0) {
    cb_reserve_back(0, 1);
    return pad[0];
  }
  return down(n - 1) + pad[n % 64];
}
void kernel_main() { (void)down(24); }
