// zyx-tt kernel library: zyx/matmul_plan.h, the output-tile plan that the
// library's matmul kernels (matmul/reader_rm, matmul/compute,
// matmul/writer_rm) share, so that the reader, the compute and the writer of
// one program visit the same tiles in the same order. c = a · b with a m x k
// and b k x n, all multiples of 32; c's (m/32) x (n/32) tiles are numbered in
// row-major order and the cores take them round robin: tile t = core,
// core + cores, ... The reader and the compute kernel end their runtime args
// with m, n, k, core index, core count; the writer, which needs no k, with
// m, n, core index, core count. For compute and data-movement kernels alike:
// include it after the kernel API header, which declares get_arg_val.
#pragma once

#include <cstdint>

namespace zyx {

struct MatmulPlan {
  uint32_t m, n, k, core, cores;

  // The plan from the runtime args first (m) to first + 4 (core count).
  static MatmulPlan from_args(uint32_t first) {
    return {get_arg_val<uint32_t>(first), get_arg_val<uint32_t>(first + 1), get_arg_val<uint32_t>(first + 2),
            get_arg_val<uint32_t>(first + 3), get_arg_val<uint32_t>(first + 4)};
  }

  // The plan of a kernel that only walks the output tiles (writer_rm):
  // runtime args first (m), first + 1 (n), first + 2 (core index) and
  // first + 3 (core count); k is 0.
  static MatmulPlan output_from_args(uint32_t first) {
    return {get_arg_val<uint32_t>(first), get_arg_val<uint32_t>(first + 1), 0, get_arg_val<uint32_t>(first + 2),
            get_arg_val<uint32_t>(first + 3)};
  }

  // The number of tiles along the inner dimension: the products summed into
  // one output tile.
  uint32_t kt_count() const { return k / 32; }

  // Calls f(mt, nt) for each output tile of this core, in order: its tile
  // row and tile column in c.
  template <typename F>
  void for_each_tile(F f) const {
    const uint32_t nt_count = n / 32, tiles = (m / 32) * nt_count;
    for (uint32_t t = core; t < tiles; t += cores) f(t / nt_count, t % nt_count);
  }
};

}  // namespace zyx
