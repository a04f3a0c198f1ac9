// Writer: tiles [start, start + n) of cb 16 to the output.
// Runtime args: c (buffer address), start, n; compile arg 0: the accessor.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t c = get_arg_val<uint32_t>(0), start = get_arg_val<uint32_t>(1), n = get_arg_val<uint32_t>(2);
  constexpr auto ca = TensorAccessorArgs<0>();
  const auto sc = TensorAccessor(ca, c, get_tile_size(16));
  for (uint32_t i = start; i < start + n; i++) {
    cb_wait_front(16, 1);
    noc_async_write_tile(i, sc, get_read_ptr(16));
    noc_async_write_barrier();
    cb_pop_front(16, 1);
  }
}
