// zyx-tt example eltwise_split: reader. This core's share of the work is
// the tiles start_id .. start_id + num_tiles - 1 (split_work_to_cores); it
// streams those tiles of a and b (interleaved DRAM pages of one bf16 tile)
// into circular buffers 0 and 1.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0);
  const uint32_t b_addr = get_arg_val<uint32_t>(1);
  const uint32_t start_id = get_arg_val<uint32_t>(2);
  const uint32_t num_tiles = get_arg_val<uint32_t>(3);

  constexpr uint32_t cb_a = tt::CBIndex::c_0;
  constexpr uint32_t cb_b = tt::CBIndex::c_1;
  const uint32_t tile_bytes = get_tile_size(cb_a);
  constexpr auto a_args = TensorAccessorArgs<0>();
  constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
  const auto a = TensorAccessor(a_args, a_addr, tile_bytes);
  const auto b = TensorAccessor(b_args, b_addr, tile_bytes);

  for (uint32_t t = start_id; t < start_id + num_tiles; t++) {
    cb_reserve_back(cb_a, 1);
    cb_reserve_back(cb_b, 1);
    noc_async_read_tile(t, a, get_write_ptr(cb_a));
    noc_async_read_tile(t, b, get_write_ptr(cb_b));
    noc_async_read_barrier();
    cb_push_back(cb_a, 1);
    cb_push_back(cb_b, 1);
  }
}
