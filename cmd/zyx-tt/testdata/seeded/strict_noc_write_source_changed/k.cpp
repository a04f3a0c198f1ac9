// Seeded bug: changes the source of a NOC write before its barrier (strict NOC mode).
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, x), l1, 4096);
  noc_async_read_barrier();
  noc_async_write(l1, get_noc_addr_from_bank_id<true>(0, y), 4096);
  reinterpret_cast<volatile uint32_t*>(l1)[3] = ~reinterpret_cast<volatile uint32_t*>(l1)[3];
  noc_async_write_barrier();
  cb_push_back(0, 1);
}
