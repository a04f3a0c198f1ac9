// Seeded bug: writes two pages from the last page of y in DRAM bank 0.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t y = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 2);
  uint64_t dst = get_noc_addr_from_bank_id<true>(0, y + 10 * 4096);
  noc_async_write(get_write_ptr(0), dst, 8192);
  noc_async_write_barrier();
}
