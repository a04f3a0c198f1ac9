// zyx-tt example matmul_mcast: the a side on the cores of column 0. For
// each block of Kb tiles of the inner dimension it reads its row's Mb x Kb
// tiles of a into circular buffer 0 and multicasts them to the other cores
// of its row, at the same address of their circular buffer 0.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "mcast_matmul.h"

void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0);
  const uint32_t Kt = get_arg_val<uint32_t>(1);
  const uint32_t Mb = get_arg_val<uint32_t>(2);
  const uint32_t Kb = get_arg_val<uint32_t>(3);
  const uint32_t block_row = get_arg_val<uint32_t>(4);
  const uint32_t start_x = get_arg_val<uint32_t>(5);
  const uint32_t start_y = get_arg_val<uint32_t>(6);
  const uint32_t end_x = get_arg_val<uint32_t>(7);
  const uint32_t end_y = get_arg_val<uint32_t>(8);
  const uint32_t num_dests = get_arg_val<uint32_t>(9);
  const uint32_t sender_sem_addr = get_semaphore(get_arg_val<uint32_t>(10));
  const uint32_t receiver_sem_addr = get_semaphore(get_arg_val<uint32_t>(11));

  constexpr uint32_t cb = tt::CBIndex::c_0;
  const uint32_t tile_bytes = get_tile_size(cb);
  constexpr auto a_args = TensorAccessorArgs<0>();
  const auto a = TensorAccessor(a_args, a_addr, tile_bytes);
  const uint32_t block_tiles = Mb * Kb;

  for (uint32_t blk = 0; blk < Kt / Kb; blk++) {
    cb_reserve_back(cb, block_tiles);
    const uint32_t start = get_write_ptr(cb);
    uint32_t l1 = start;
    for (uint32_t i = 0; i < Mb; i++) {
      for (uint32_t kk = 0; kk < Kb; kk++) {
        noc_async_read_tile((block_row * Mb + i) * Kt + blk * Kb + kk, a, l1);
        l1 += tile_bytes;
      }
    }
    noc_async_read_barrier();
    mcast_block(start, block_tiles * tile_bytes, start_x, start_y, end_x, end_y, num_dests, sender_sem_addr,
                receiver_sem_addr);
    cb_push_back(cb, block_tiles);
  }
}
