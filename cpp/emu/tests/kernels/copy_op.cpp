// Compute: copies the front tile of cbs 0 .. NIN-1 into DST 0 .. NIN-1, runs
// OP on DST, packs DST 0 into cb 16 and pops the inputs. The tests of single
// tile ops (SFPU tables, typecasts, packer formats, core coordinates, the
// FPU calls) share it.
// Defines: OP, statements on DST that may read the runtime args op (the case
// to run where OP is a switch over a table of ops, compute_harness.hpp's
// op_switch) and p0 .. p2; NIN, the number of inputs (default 1); INIT, run
// once after init_sfpu (default nothing); COPY, 0 to leave DST to OP (FPU
// calls such as add_tiles, matmul_tiles or reduce_tile that read the CBs
// themselves; default 1).
// Runtime args: op, p0, p1, p2.
#include "api/compute/common_globals.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/transpose_wh.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/bcast.h"
#include "api/compute/matmul.h"
#include "api/compute/reduce.h"
#include "api/compute/reduce_custom.h"
#include "api/compute/pack.h"
#include "api/compute/eltwise_unary/sfpu_split_includes.h"
#include "api/compute/eltwise_unary/typecast.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/binary_fmod.h"
#include "api/compute/binary_remainder.h"
#include "api/compute/logsigmoid.h"
#include "api/compute/sub_int_sfpu.h"
#ifndef NIN
#define NIN 1
#endif
#ifndef INIT
#define INIT (void)0
#endif
#ifndef COPY
#define COPY 1
#endif
void kernel_main() {
  const uint32_t op = get_arg_val<uint32_t>(0);
  const uint32_t p0 = get_arg_val<uint32_t>(1), p1 = get_arg_val<uint32_t>(2), p2 = get_arg_val<uint32_t>(3);
  (void)op, (void)p0, (void)p1, (void)p2;
  init_sfpu(0, 16);
  INIT;
  for (uint32_t i = 0; i < NIN; i++) cb_wait_front(i, 1);
  tile_regs_acquire();
  if (COPY)
    for (uint32_t i = 0; i < NIN; i++) copy_tile(i, 0, i);
  OP;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
  for (uint32_t i = 0; i < NIN; i++) cb_pop_front(i, 1);
}
