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
  const Mcast mcast = Mcast::from_args(5);

  constexpr uint32_t cb = tt::CBIndex::c_0;
  constexpr auto a_args = TensorAccessorArgs<0>();
  const auto a = TensorAccessor(a_args, a_addr, get_tile_size(cb));
  // Block blk: the Mb x Kb tiles of a at tile (block_row * Mb, blk * Kb).
  for (uint32_t blk = 0; blk < Kt / Kb; blk++) mcast.send_block(cb, a, Kt, block_row * Mb, blk * Kb, Mb, Kb);
}
