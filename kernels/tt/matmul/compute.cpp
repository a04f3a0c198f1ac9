// zyx-tt kernel library: matmul compute. Each output tile of this core
// accumulates the k/32 tile products of CBs 0 and 1 in DST register 0 and
// goes to CB 16, in reader_rm's tile order (zyx/matmul.h,
// zyx/matmul_plan.h).
// Runtime args: m, n, k, core index, core count.
#include <cstdint>

#include "zyx/matmul.h"
#include "zyx/matmul_plan.h"

void kernel_main() {
  const zyx::MatmulPlan plan = zyx::MatmulPlan::from_args(0);
  constexpr uint32_t cb_a = tt::CBIndex::c_0;
  constexpr uint32_t cb_b = tt::CBIndex::c_1;
  constexpr uint32_t cb_c = tt::CBIndex::c_16;

  mm_init(cb_a, cb_b, cb_c);
  plan.for_each_tile([&](uint32_t, uint32_t) { zyx::matmul_tile(cb_a, cb_b, cb_c, plan.kt_count()); });
}
