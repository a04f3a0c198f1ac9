// Seeded bug: reads tile 100000 of a 128-tile buffer.
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t x = get_arg_val<uint32_t>(0);
  const InterleavedAddrGenFast<true> gen = {.bank_base_address = x, .page_size = 4096, .data_format = DataFormat::Float32};
  cb_reserve_back(0, 1);
  noc_async_read_tile(100000, gen, get_write_ptr(0));
  noc_async_read_barrier();
  cb_push_back(0, 1);
}
