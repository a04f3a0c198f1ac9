// Reader: tiles [start, start + n) of two interleaved inputs into cbs 0 and 1.
// Runtime args: a, b (buffer addresses), start, n; compile args: the two accessors.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t a = get_arg_val<uint32_t>(0), b = get_arg_val<uint32_t>(1);
  const uint32_t start = get_arg_val<uint32_t>(2), n = get_arg_val<uint32_t>(3);
  constexpr auto aa = TensorAccessorArgs<0>();
  constexpr auto ba = TensorAccessorArgs<aa.next_compile_time_args_offset()>();
  const auto sa = TensorAccessor(aa, a, get_tile_size(0));
  const auto sb = TensorAccessor(ba, b, get_tile_size(1));
  for (uint32_t i = start; i < start + n; i++) {
    cb_reserve_back(0, 1);
    noc_async_read_tile(i, sa, get_write_ptr(0));
    cb_reserve_back(1, 1);
    noc_async_read_tile(i, sb, get_write_ptr(1));
    noc_async_read_barrier();
    cb_push_back(0, 1);
    cb_push_back(1, 1);
  }
}
