// zyx-tt example metal2_add: reader, a Metal 2.0 kernel. Everything it
// uses comes from the program's named resources through the generated
// bindings: its share of the tiles (args::start_id, args::num_tiles,
// runtime args), the tensor's length (args::total_tiles, a common arg), a
// shift of b's tile ids (the first common vararg, 0), the two input tensors
// (ta::a, ta::b), the two dataflow buffers it fills (dfb::in0, dfb::in1)
// and the semaphore that lets it start (sem::go).
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "experimental/dataflow_buffer.h"

void kernel_main() {
  const uint32_t start_id = get_arg(args::start_id);
  const uint32_t num_tiles = get_arg(args::num_tiles);
  const uint32_t total_tiles = get_arg(args::total_tiles);
  const uint32_t b_shift = get_common_vararg(0);

  // The program starts semaphore go at 1 and another one (idle) at 0: a
  // binding to the wrong id would wait here forever.
  noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem::go)), 1);

  const TensorAccessor a(ta::a);
  const TensorAccessor b(ta::b);
  experimental::DataflowBuffer in0(dfb::in0);
  experimental::DataflowBuffer in1(dfb::in1);
  for (uint32_t t = start_id; t < start_id + num_tiles && t < total_tiles; t++) {
    in0.reserve_back(1);
    in1.reserve_back(1);
    noc_async_read_tile(t, a, in0.get_write_ptr());
    noc_async_read_tile(t + b_shift, b, in1.get_write_ptr());
    noc_async_read_barrier();
    in0.push_back(1);
    in1.push_back(1);
  }
}
