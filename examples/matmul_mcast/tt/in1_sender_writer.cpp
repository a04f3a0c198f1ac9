// zyx-tt example matmul_mcast: the b side on the cores of row 0. For each
// block of Kb tiles of the inner dimension it reads its column's Kb x Nb
// tiles of b into circular buffer 1 and multicasts them down its column;
// then it writes this core's block of c.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "mcast_matmul.h"

void kernel_main() {
  const uint32_t b_addr = get_arg_val<uint32_t>(0);
  const uint32_t c_addr = get_arg_val<uint32_t>(1);
  const uint32_t Kt = get_arg_val<uint32_t>(2);
  const uint32_t Nt = get_arg_val<uint32_t>(3);
  const uint32_t Mb = get_arg_val<uint32_t>(4);
  const uint32_t Nb = get_arg_val<uint32_t>(5);
  const uint32_t Kb = get_arg_val<uint32_t>(6);
  const uint32_t block_row = get_arg_val<uint32_t>(7);
  const uint32_t block_col = get_arg_val<uint32_t>(8);
  const uint32_t start_x = get_arg_val<uint32_t>(9);
  const uint32_t start_y = get_arg_val<uint32_t>(10);
  const uint32_t end_x = get_arg_val<uint32_t>(11);
  const uint32_t end_y = get_arg_val<uint32_t>(12);
  const uint32_t num_dests = get_arg_val<uint32_t>(13);
  const uint32_t sender_sem_addr = get_semaphore(get_arg_val<uint32_t>(14));
  const uint32_t receiver_sem_addr = get_semaphore(get_arg_val<uint32_t>(15));

  constexpr uint32_t cb = tt::CBIndex::c_1;
  const uint32_t tile_bytes = get_tile_size(cb);
  constexpr auto b_args = TensorAccessorArgs<0>();
  constexpr auto c_args = TensorAccessorArgs<b_args.next_compile_time_args_offset()>();
  const auto b = TensorAccessor(b_args, b_addr, tile_bytes);
  const auto c = TensorAccessor(c_args, c_addr, get_tile_size(tt::CBIndex::c_16));
  const uint32_t block_tiles = Kb * Nb;

  for (uint32_t blk = 0; blk < Kt / Kb; blk++) {
    cb_reserve_back(cb, block_tiles);
    const uint32_t start = get_write_ptr(cb);
    uint32_t l1 = start;
    for (uint32_t kk = 0; kk < Kb; kk++) {
      for (uint32_t j = 0; j < Nb; j++) {
        noc_async_read_tile((blk * Kb + kk) * Nt + block_col * Nb + j, b, l1);
        l1 += tile_bytes;
      }
    }
    noc_async_read_barrier();
    mcast_block(start, block_tiles * tile_bytes, start_x, start_y, end_x, end_y, num_dests, sender_sem_addr,
                receiver_sem_addr);
    cb_push_back(cb, block_tiles);
  }
  write_output_block(c, Nt, Mb, Nb, block_row, block_col);
}
