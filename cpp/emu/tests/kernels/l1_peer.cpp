// L1 peer: waits on semaphore `sem`, reads the holder's L1 buffer remotely
// through its NOC coordinates into cb 0 and writes it to dst.
// Runtime args: l1, dst, holder_x, holder_y, sem.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t l1 = get_arg_val<uint32_t>(0), dst = get_arg_val<uint32_t>(1);
  const uint32_t holder_x = get_arg_val<uint32_t>(2), holder_y = get_arg_val<uint32_t>(3), sem = get_arg_val<uint32_t>(4);
  noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem)), 1);
  cb_reserve_back(0, 1);
  const InterleavedAddrGen<true> d = {.bank_base_address = dst, .page_size = 4096};
  noc_async_read(get_noc_addr(holder_x, holder_y, l1), get_write_ptr(0), 4096);
  noc_async_read_barrier();
  noc_async_write(get_write_ptr(0), get_noc_addr(0, d), 4096);
  noc_async_write_barrier();
}
