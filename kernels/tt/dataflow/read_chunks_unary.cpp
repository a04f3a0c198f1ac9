// zyx-tt kernel library: read_chunks_unary (data movement). Streams one
// interleaved input buffer x chunk by chunk into circular buffer 0: chunk
// t = core, core + cores, ... holds the elements [1024 t, 1024 (t + 1)) of
// x, one page of CB 0; a partial last chunk is read as far as the buffer
// goes. x holds n elements of get_tile_size(0) / 1024 bytes, so CB 0's
// format has whole-byte elements (Float32, Float16_b, ...; zyx/chunks.h).
// Runtime args: x address, x page size, n, core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/chunks.h"
#include "zyx/row_major.h"

void kernel_main() {
  const uint32_t x_addr = get_arg_val<uint32_t>(0);
  const uint32_t page_size = get_arg_val<uint32_t>(1);
  const zyx::Chunks chunks = zyx::Chunks::from_args(2);

  constexpr uint32_t cb_x = tt::CBIndex::c_0;
  const InterleavedAddrGen<true> x = {.bank_base_address = x_addr, .page_size = page_size};
  const uint32_t elem = get_tile_size(cb_x) / 1024;
  chunks.for_each([&](uint32_t first, uint32_t count) {
    cb_reserve_back(cb_x, 1);
    zyx::read_span(x, page_size, uint64_t{first} * elem, get_write_ptr(cb_x), count * elem);
    noc_async_read_barrier();
    cb_push_back(cb_x, 1);
  });
}
