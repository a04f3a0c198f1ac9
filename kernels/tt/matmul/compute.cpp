// zyx-tt kernel library: matmul compute. Each output tile of this core
// accumulates the k/32 tile products of CBs 0 and 1 in DST register 0 and
// goes to CB 16, in reader_rm's tile order (zyx/matmul.h).
// Runtime args: m, n, k, core index, core count.
#include <cstdint>

#include "zyx/matmul.h"

void kernel_main() {
  const uint32_t m = get_arg_val<uint32_t>(0);
  const uint32_t n = get_arg_val<uint32_t>(1);
  const uint32_t k = get_arg_val<uint32_t>(2);
  const uint32_t core = get_arg_val<uint32_t>(3);
  const uint32_t cores = get_arg_val<uint32_t>(4);
  constexpr uint32_t cb_a = tt::CBIndex::c_0;
  constexpr uint32_t cb_b = tt::CBIndex::c_1;
  constexpr uint32_t cb_c = tt::CBIndex::c_16;

  mm_init(cb_a, cb_b, cb_c);
  const uint32_t tiles = (m / 32) * (n / 32);
  for (uint32_t t = core; t < tiles; t += cores) zyx::matmul_tile(cb_a, cb_b, cb_c, k / 32);
}
