// Multicast receiver: tells the sender at (sx, sy) it is ready, waits for the
// valid semaphore, adds its index to the first 255 words of the tile, stores
// the initial value of its third semaphore in word 255 and writes page `index`.
// Runtime args: out, sx, sy, index, ready_id, valid_id, initial_id.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0), sx = get_arg_val<uint32_t>(1), sy = get_arg_val<uint32_t>(2);
  const uint32_t index = get_arg_val<uint32_t>(3);
  const uint32_t ready_id = get_arg_val<uint32_t>(4), valid_id = get_arg_val<uint32_t>(5), initial_id = get_arg_val<uint32_t>(6);
  volatile tt_l1_ptr uint32_t* valid = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(valid_id));
  volatile tt_l1_ptr uint32_t* initial = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(initial_id));
  const uint32_t seen = *initial;
  noc_semaphore_inc(get_noc_addr(sx, sy, get_semaphore(ready_id)), 1);
  noc_semaphore_wait(valid, 1);
  volatile tt_l1_ptr uint32_t* d = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(1));
  for (uint32_t i = 0; i < 255; i++) d[i] += index;
  d[255] = seen;
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 1024};
  noc_async_write(get_write_ptr(1), get_noc_addr(index, o), 1024);
  noc_async_write_barrier();
}
