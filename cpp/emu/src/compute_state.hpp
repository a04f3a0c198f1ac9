// Per-core compute configuration set by the kernel's *_init calls (the state
// tt-metal keeps in the unpack/math/pack hardware), and the SFPU math
// (compute_sfpu.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>
#include <memory>

namespace zyx::emu {

struct ComputeState {
  uint32_t acc_to_dest = 0;     // add/sub accumulate into DST
  uint32_t copy_transpose = 0;  // 1: whole tile, 2: within faces
  uint32_t mm_transpose = 0;
  uint32_t relu = 0;  // packed ReLU config
  uint32_t l1_acc = 0;
  uint32_t pack_rows = 0;
  // Welford running mean and M2 per column (32 lanes), and saved groups.
  std::array<double, 32> wf_mean{}, wf_m2{};
  uint32_t wf_count = 0;
  uint64_t rand_state = 0x9e3779b97f4a7c15ull;
  // cumsum_tile's running column sums, carried to the next tile of a column.
  std::array<float, 32> cumsum_carry{};
  // Source registers filled by unpack_tilizeA_B_block for the math-only calls
  // (reduce_tile_math, matmul_tiles_math): (A, B) tile pairs, face order, in
  // unpack order.
  struct SrcPair {
    std::array<float, 1024> a, b;
    uint32_t fmt_a = 0, fmt_b = 0;  // the CBs' DataFormat values
  };
  std::vector<SrcPair> src;  // [src_head, size) wait to be consumed
  size_t src_head = 0;
  // The tile llk_unpack_A named for the next llk_math_eltwise_unary_datacopy
  // (a CB and a tile from its front); unpack_a_cb is ~0u when none waits.
  uint32_t unpack_a_cb = ~0u, unpack_a_tile = 0;
  // Resets the configuration for a run.
  void reset() { *this = ComputeState{}; }
};

// SFPU element functions. `x` is the element as f32 (float ops) or its 32 bits
// (integer ops); params are tt-metal's encoding. is_int_op says whether the
// op works on integer bits.
bool sfpu_unary_is_int(uint32_t op);
float sfpu_unary_f(uint32_t op, float x, uint32_t p0, uint32_t p1, uint32_t p2, uint64_t* rng);
uint32_t sfpu_unary_i(uint32_t op, uint32_t x, uint32_t p0, uint32_t p1);
bool sfpu_binary_is_int(uint32_t op);
float sfpu_binary_f(uint32_t op, float a, float b);
uint32_t sfpu_binary_i(uint32_t op, uint32_t a, uint32_t b);
float sfpu_ternary_f(uint32_t op, float a, float b, float c, float p);
bool sfpu_unary_known(uint32_t op);
bool sfpu_binary_known(uint32_t op);

}  // namespace zyx::emu
