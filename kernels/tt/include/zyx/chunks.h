// zyx-tt kernel library: zyx/chunks.h, the chunk plan that the library's
// element-wise kernels (read_chunks_unary, read_chunks_binary, write_chunks,
// add_tiles) share, so that a reader, a compute and a writer kernel of one
// program agree on it. A buffer of n elements is cut into chunks of one tile,
// 1024 elements (the last one partial), and the cores take them round robin:
// chunk t = core, core + cores, ... Each of those kernels ends its runtime
// args with n, core index, core count. For compute and data-movement kernels
// alike: include it after the kernel API header, which declares get_arg_val.
#pragma once

#include <cstdint>

namespace zyx {

struct Chunks {
  uint32_t n, core, cores;

  // The plan from the runtime args first (n), first + 1 (core index) and
  // first + 2 (core count).
  static Chunks from_args(uint32_t first) {
    return {get_arg_val<uint32_t>(first), get_arg_val<uint32_t>(first + 1), get_arg_val<uint32_t>(first + 2)};
  }

  // The number of chunks, n / 1024 rounded up. (n + 1023) / 1024 would wrap
  // in 32 bits for n past 2^32 - 1024 and give no chunks at all.
  uint32_t count() const { return n / 1024 + (n % 1024 != 0); }

  // Calls f(first, count) for each chunk of this core, in order: the index
  // of its first element and its number of elements. The byte offset of an
  // element may pass 32 bits (n elements of elem bytes): take it as
  // uint64_t(first) * elem.
  template <typename F>
  void for_each(F f) const {
    const uint32_t chunks = count();
    for (uint32_t t = core; t < chunks; t += cores) {
      const uint32_t first = t * 1024;
      f(first, n - first < 1024 ? n - first : 1024);
    }
  }
};

}  // namespace zyx
