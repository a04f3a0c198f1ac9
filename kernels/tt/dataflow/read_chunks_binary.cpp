// zyx-tt kernel library: read_chunks_binary (data movement). Streams two
// interleaved input buffers x and y chunk by chunk into circular buffers 0
// and 1: chunk t = core, core + cores, ... holds the elements
// [1024 t, 1024 (t + 1)) of each input, one page of each CB; a partial last
// chunk is read as far as the buffers go. Each buffer holds n elements of
// get_tile_size(0) / 1024 bytes, so the CBs' format has whole-byte elements
// (Float32, Float16_b, ...; zyx/chunks.h).
// Compile args: x's accessor args, then y's. Runtime args: x address,
// y address, page size (both), n, core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/chunks.h"
#include "zyx/row_major.h"

void kernel_main() {
  const uint32_t x_addr = get_arg_val<uint32_t>(0);
  const uint32_t y_addr = get_arg_val<uint32_t>(1);
  const uint32_t page_size = get_arg_val<uint32_t>(2);
  const zyx::Chunks chunks = zyx::Chunks::from_args(3);

  constexpr uint32_t cb_x = tt::CBIndex::c_0;
  constexpr uint32_t cb_y = tt::CBIndex::c_1;
  constexpr auto x_args = TensorAccessorArgs<0>();
  constexpr auto y_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
  const auto x = TensorAccessor(x_args, x_addr, page_size);
  const auto y = TensorAccessor(y_args, y_addr, page_size);

  const uint32_t elem = get_tile_size(cb_x) / 1024;
  chunks.for_each([&](uint32_t first, uint32_t count) {
    cb_reserve_back(cb_x, 1);
    cb_reserve_back(cb_y, 1);
    zyx::read_span(x, page_size, uint64_t{first} * elem, get_write_ptr(cb_x), count * elem);
    zyx::read_span(y, page_size, uint64_t{first} * elem, get_write_ptr(cb_y), count * elem);
    noc_async_read_barrier();
    cb_push_back(cb_x, 1);
    cb_push_back(cb_y, 1);
  });
}
