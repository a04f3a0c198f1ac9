// Seeded bug: writes an inline word to a DRAM bank.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t y = get_arg_val<uint32_t>(0);
  noc_inline_dw_write(get_noc_addr_from_bank_id<true>(0, y), 7);
}
