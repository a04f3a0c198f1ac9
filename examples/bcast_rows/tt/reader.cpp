// zyx-tt example: reader of bcast_rows. For each tile (tr, tc) of x this core
// owns (t = core, core + cores, ...), it pushes the tile of b holding
// b[32 tc .. 32 tc + 31] in its row 0 to cb 1 and the tile of x to cb 0. The
// matrices are row-major in DRAM; tiles are gathered face row by face row.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/row_major.h"

void kernel_main() {
  const uint32_t x_addr = get_arg_val<uint32_t>(0), b_addr = get_arg_val<uint32_t>(1);
  const uint32_t x_page = get_arg_val<uint32_t>(2), b_page = get_arg_val<uint32_t>(3);
  const uint32_t m = get_arg_val<uint32_t>(4), n = get_arg_val<uint32_t>(5);
  const uint32_t core = get_arg_val<uint32_t>(6), cores = get_arg_val<uint32_t>(7);
  constexpr auto x_args = TensorAccessorArgs<0>();
  constexpr auto b_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
  const auto x = TensorAccessor(x_args, x_addr, x_page);
  const auto b = TensorAccessor(b_args, b_addr, b_page);
  const uint32_t tiles_c = n / 32, tiles = (m / 32) * tiles_c;
  for (uint32_t t = core; t < tiles; t += cores) {
    const uint32_t tr = t / tiles_c, tc = t % tiles_c;
    cb_reserve_back(1, 1);
    const uint32_t bl1 = get_write_ptr(1);
    volatile tt_l1_ptr uint32_t* bt = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(bl1);
    for (uint32_t i = 0; i < 1024; i++) bt[i] = 0;
    zyx::read_span(b, b_page, tc * 32 * 4, bl1 + zyx::face_row_offset(0, 0), 64);
    zyx::read_span(b, b_page, (tc * 32 + 16) * 4, bl1 + zyx::face_row_offset(0, 1), 64);
    cb_reserve_back(0, 1);
    zyx::read_tile(x, x_page, n, tr, tc, get_write_ptr(0));
    noc_async_read_barrier();
    cb_push_back(1, 1);
    cb_push_back(0, 1);
  }
}
