// zyx-tt kernel library: add_n_tiles (compute). Adds the first num_tiles
// tiles of CB 0 and CB 1 into CB 16, one per step through DST register 0.
// The count is a compile-time arg, so core groups with different counts (a
// split_work_to_cores split, shards of different sizes) run their own build.
// Compile args: num_tiles.
#include <cstdint>

#include "zyx/eltwise_binary.h"

void kernel_main() {
  constexpr uint32_t num_tiles = get_compile_time_arg_val(0);

  constexpr auto cb_a = tt::CBIndex::c_0;
  constexpr auto cb_b = tt::CBIndex::c_1;
  constexpr auto cb_c = tt::CBIndex::c_16;
  binary_op_init_common(cb_a, cb_b, cb_c);
  add_tiles_init(cb_a, cb_b);
  for (uint32_t t = 0; t < num_tiles; t++) zyx::add_front_tiles(cb_a, cb_b, cb_c);
}
