// Multicast sender: waits until `receivers` cores have incremented its ready
// semaphore, multicasts the tile of cb 0 into cb 1 of the rectangle
// (x0, y0)-(x1, y1) (with itself when compile arg 0 is set), then sets the
// receivers' valid semaphore by multicast and writes its own cb 1 to page 0.
// Runtime args: out, x0, y0, x1, y1, receivers, ready_id, valid_id.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
#include "dataflow_api.h"
void kernel_main() {
  constexpr bool loopback = get_compile_time_arg_val(0) != 0;
  const uint32_t out = get_arg_val<uint32_t>(0);
  const uint32_t x0 = get_arg_val<uint32_t>(1), y0 = get_arg_val<uint32_t>(2);
  const uint32_t x1 = get_arg_val<uint32_t>(3), y1 = get_arg_val<uint32_t>(4);
  const uint32_t receivers = get_arg_val<uint32_t>(5);
  const uint32_t ready_id = get_arg_val<uint32_t>(6), valid_id = get_arg_val<uint32_t>(7);
  volatile tt_l1_ptr uint32_t* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(ready_id));
  volatile tt_l1_ptr uint32_t* valid = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(valid_id));
  volatile tt_l1_ptr uint32_t* data = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
  volatile tt_l1_ptr uint32_t* mine = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(1));
  for (uint32_t i = 0; i < 256; i++) data[i] = 7000 + i, mine[i] = 0xdead;
  noc_semaphore_wait(ready, receivers);
  noc_semaphore_set(ready, 0);
  const uint64_t dst = get_noc_multicast_addr(x0, y0, x1, y1, get_write_ptr(1));
  if (loopback)
    noc_async_write_multicast_loopback_src(get_write_ptr(0), dst, 1024, receivers + 1);
  else
    noc_async_write_multicast(get_write_ptr(0), dst, 1024, receivers);
  noc_async_write_barrier();
  *valid = 1;
  noc_semaphore_set_multicast(get_semaphore(valid_id), get_noc_multicast_addr(x0, y0, x1, y1, get_semaphore(valid_id)), receivers);
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 1024};
  noc_async_write(get_write_ptr(1), get_noc_addr(0, o), 1024);
  noc_async_write_barrier();
}
