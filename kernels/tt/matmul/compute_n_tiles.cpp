// zyx-tt kernel library: matmul compute_n_tiles. Computes num_tiles output
// tiles, each the sum of Kt tile products of CBs 0 and 1 accumulated in DST
// register 0, into CB 16 (zyx/matmul.h): the compute of a reader that
// streams each output tile's Kt tile pairs, in any tile order.
// Runtime args: Kt, num_tiles.
#include <cstdint>

#include "zyx/matmul.h"

void kernel_main() {
  const uint32_t Kt = get_arg_val<uint32_t>(0);
  const uint32_t num_tiles = get_arg_val<uint32_t>(1);
  constexpr uint32_t cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1, cb_c = tt::CBIndex::c_16;

  mm_init(cb_a, cb_b, cb_c);
  for (uint32_t t = 0; t < num_tiles; t++) zyx::matmul_tile(cb_a, cb_b, cb_c, Kt);
}
