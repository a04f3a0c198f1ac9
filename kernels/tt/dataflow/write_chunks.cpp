// zyx-tt kernel library: write_chunks (data movement). Drains circular
// buffer 16 into an interleaved output buffer, one page of CB 16 per chunk:
// chunk t = core, core + cores, ... holds the elements [1024 t, 1024 (t + 1))
// of the output, and a partial last chunk writes only the bytes inside the
// buffer. The buffer holds n elements of get_tile_size(16) / 1024 bytes, so
// CB 16's format has whole-byte elements (Float32, Float16_b, ...;
// zyx/chunks.h).
// Runtime args: out address, out page size, n, core index, core count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "zyx/chunks.h"
#include "zyx/row_major.h"

void kernel_main() {
  const uint32_t z_addr = get_arg_val<uint32_t>(0);
  const uint32_t page_size = get_arg_val<uint32_t>(1);
  const zyx::Chunks chunks = zyx::Chunks::from_args(2);

  constexpr uint32_t cb_z = tt::CBIndex::c_16;
  const InterleavedAddrGen<true> z = {.bank_base_address = z_addr, .page_size = page_size};
  const uint32_t elem = get_tile_size(cb_z) / 1024;
  chunks.for_each([&](uint32_t first, uint32_t count) {
    cb_wait_front(cb_z, 1);
    zyx::write_span(z, page_size, uint64_t{first} * elem, get_read_ptr(cb_z), count * elem);
    noc_async_write_barrier();
    cb_pop_front(cb_z, 1);
  });
}
