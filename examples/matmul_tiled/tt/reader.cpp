// zyx-tt example matmul_tiled: reader. a, b and c are in tile layout, one
// page per 32x32 tile in row-major tile order. For each output tile
// t = start_id .. start_id + num_tiles - 1 (row t / Nt, column t % Nt) it
// streams the pairs a(row, kt), b(kt, column) for kt = 0 .. Kt - 1.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0);
  const uint32_t b_addr = get_arg_val<uint32_t>(1);
  const uint32_t Nt = get_arg_val<uint32_t>(2);
  const uint32_t Kt = get_arg_val<uint32_t>(3);
  const uint32_t start_id = get_arg_val<uint32_t>(4);
  const uint32_t num_tiles = get_arg_val<uint32_t>(5);

  constexpr uint32_t cb_a = tt::CBIndex::c_0;
  constexpr uint32_t cb_b = tt::CBIndex::c_1;
  const uint32_t tile_bytes = get_tile_size(cb_a);
  constexpr auto a_args = TensorAccessorArgs<0>();
  constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
  const auto a = TensorAccessor(a_args, a_addr, tile_bytes);
  const auto b = TensorAccessor(b_args, b_addr, tile_bytes);

  for (uint32_t t = start_id; t < start_id + num_tiles; t++) {
    const uint32_t row = t / Nt, col = t % Nt;
    for (uint32_t kt = 0; kt < Kt; kt++) {
      cb_reserve_back(cb_a, 1);
      noc_async_read_tile(row * Kt + kt, a, get_write_ptr(cb_a));
      cb_reserve_back(cb_b, 1);
      noc_async_read_tile(kt * Nt + col, b, get_write_ptr(cb_b));
      noc_async_read_barrier();
      cb_push_back(cb_a, 1);
      cb_push_back(cb_b, 1);
    }
  }
}
