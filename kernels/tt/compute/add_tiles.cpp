// zyx-tt kernel library: add_tiles (compute). One tile of CB 0 + CB 1 into
// CB 16 per step, through DST register 0, for the chunks of this core (the
// chunk plan of zyx/chunks.h, which read_chunks_binary and write_chunks
// follow). Runtime args: n, core index, core count.
#include <cstdint>

#include "api/compute/common.h"
#include "zyx/chunks.h"
#include "zyx/eltwise_binary.h"

void kernel_main() {
  const zyx::Chunks chunks = zyx::Chunks::from_args(0);

  constexpr auto cb_x = tt::CBIndex::c_0;
  constexpr auto cb_y = tt::CBIndex::c_1;
  constexpr auto cb_z = tt::CBIndex::c_16;
  binary_op_init_common(cb_x, cb_y, cb_z);
  add_tiles_init(cb_x, cb_y);
  chunks.for_each([&](uint32_t, uint32_t) { zyx::add_front_tiles(cb_x, cb_y, cb_z); });
}
