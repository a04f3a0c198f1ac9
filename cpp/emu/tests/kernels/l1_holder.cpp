// L1 holder: reads 4 pages of src into its L1 buffer, changes every word
// through the buffer's pointer (w * 3 + 1), writes the pages to dst and
// increments semaphore `sem` of the peer core at (peer_x, peer_y).
// Runtime args: src, l1, dst, peer_x, peer_y, sem.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t src = get_arg_val<uint32_t>(0), l1 = get_arg_val<uint32_t>(1), dst = get_arg_val<uint32_t>(2);
  const uint32_t peer_x = get_arg_val<uint32_t>(3), peer_y = get_arg_val<uint32_t>(4), sem = get_arg_val<uint32_t>(5);
  const InterleavedAddrGen<true> s = {.bank_base_address = src, .page_size = 1024};
  const InterleavedAddrGen<true> d = {.bank_base_address = dst, .page_size = 1024};
  for (uint32_t p = 0; p < 4; p++) noc_async_read(get_noc_addr(p, s), l1 + p * 1024, 1024);
  noc_async_read_barrier();
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(l1);
  for (uint32_t i = 0; i < 1024; i++) w[i] = w[i] * 3 + 1;
  for (uint32_t p = 0; p < 4; p++) noc_async_write(l1 + p * 1024, get_noc_addr(p, d), 1024);
  noc_async_write_barrier();
  noc_semaphore_inc(get_noc_addr(peer_x, peer_y, get_semaphore(sem)), 1);
}
