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
  const Mcast mcast = Mcast::from_args(9);

  constexpr uint32_t cb = tt::CBIndex::c_1;
  constexpr auto b_args = TensorAccessorArgs<0>();
  constexpr auto c_args = TensorAccessorArgs<b_args.next_compile_time_args_offset()>();
  const auto b = TensorAccessor(b_args, b_addr, get_tile_size(cb));
  const auto c = TensorAccessor(c_args, c_addr, get_tile_size(tt::CBIndex::c_16));
  // Block blk: the Kb x Nb tiles of b at tile (blk * Kb, block_col * Nb).
  for (uint32_t blk = 0; blk < Kt / Kb; blk++) mcast.send_block(cb, b, Nt, blk * Kb, block_col * Nb, Kb, Nb);
  write_output_block(c, Nt, Mb, Nb, block_row, block_col);
}
