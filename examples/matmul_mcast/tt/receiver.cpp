// zyx-tt example matmul_mcast: a receiving core's side of one operand. For
// each block it makes room in the operand's circular buffer, tells the
// sender (semaphore increment) and waits until the sender has written the
// block and set this core's receiver semaphore. With WRITE_OUTPUT it then
// writes this core's block of c.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "mcast_matmul.h"

void kernel_main() {
  const uint32_t blocks = get_arg_val<uint32_t>(0);
  const uint32_t block_tiles = get_arg_val<uint32_t>(1);
  const uint32_t sender_x = get_arg_val<uint32_t>(2);
  const uint32_t sender_y = get_arg_val<uint32_t>(3);
  const uint32_t sender_sem_addr = get_semaphore(get_arg_val<uint32_t>(4));
  const uint32_t receiver_sem_addr = get_semaphore(get_arg_val<uint32_t>(5));
  const uint32_t cb = get_arg_val<uint32_t>(6);

  volatile tt_l1_ptr uint32_t* receiver_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(receiver_sem_addr);
  const uint64_t sender_sem_noc_addr = get_noc_addr(sender_x, sender_y, sender_sem_addr);
  for (uint32_t blk = 0; blk < blocks; blk++) {
    cb_reserve_back(cb, block_tiles);
    noc_semaphore_set(receiver_sem, kInvalid);
    noc_semaphore_inc(sender_sem_noc_addr, 1);
    noc_semaphore_wait(receiver_sem, kValid);
    cb_push_back(cb, block_tiles);
  }
#ifdef WRITE_OUTPUT
  const uint32_t c_addr = get_arg_val<uint32_t>(7);
  const uint32_t Nt = get_arg_val<uint32_t>(8);
  const uint32_t Mb = get_arg_val<uint32_t>(9);
  const uint32_t Nb = get_arg_val<uint32_t>(10);
  const uint32_t block_row = get_arg_val<uint32_t>(11);
  const uint32_t block_col = get_arg_val<uint32_t>(12);
  constexpr auto c_args = TensorAccessorArgs<0>();
  const auto c = TensorAccessor(c_args, c_addr, get_tile_size(tt::CBIndex::c_16));
  write_output_block(c, Nt, Mb, Nb, block_row, block_col);
#endif
}
