// Seeded bug: loads the data of a NOC read before its barrier (strict NOC
// mode with its read guard, the kernel define ZYX_EMU_STRICT_NOC_LOADS).
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
  noc_async_read(get_noc_addr_from_bank_id<true>(0, x), get_write_ptr(0), 4096);
  uint32_t first = p[0];
  noc_async_read_barrier();
  DPRINT << first << ENDL();
  cb_push_back(0, 1);
}
