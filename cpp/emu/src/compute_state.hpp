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
  // exp_tile_init<true, scale>'s scale (fp32 bits), which the card's init
  // folds into the constants exp_tile<true> uses.
  uint32_t exp_approx_scale = 0x3f800000u;
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
  // The SFPU's Dst read/write counter and its carriage return, in DST rows
  // (SFPI's dst_reg addresses are relative to the counter).
  uint32_t sfpu_rwc = 0, sfpu_cr = 0;
  // The tile llk_unpack_A named for the next llk_math_eltwise_unary_datacopy
  // (a CB and a tile from its front); unpack_a_cb is ~0u when none waits.
  uint32_t unpack_a_cb = ~0u, unpack_a_tile = 0;
  // The pair llk_unpack_AB named for the next llk_math_eltwise_binary in the
  // single build (CBs and tiles from their fronts); unpack_ab_cb0 is ~0u when
  // none waits.
  uint32_t unpack_ab_cb0 = ~0u, unpack_ab_cb1 = 0, unpack_ab_t0 = 0, unpack_ab_t1 = 0;
  // The block width of the runtime reduce_block_max_row calls (0: no
  // runtime init yet).
  uint32_t block_ct_dim = 0;
  // ema_tile: alpha, beta (f32 bits) and each column's last average (the
  // SFPU register the LLK carries it in, f32 bits).
  uint32_t ema_alpha = 0, ema_beta = 0;
  std::array<uint32_t, 32> ema_prev{};
  // The SFPU top-k stages (sfpu_sort.cpp): topk_tile_init has run (index
  // tracking on, the Dst increment set); the LLK's replay-buffer state
  // (topk_replay_init: 0 after init, -1 after a local sort, m_iter + 1 after
  // a rebuild); whether the buffer holds the local sort's load and store,
  // and which rebuild sequence it holds (0: none).
  bool topk_ready = false;
  int topk_replay = 0;
  bool topk_sort_io_recorded = false;
  uint32_t topk_rebuild_key = 0;
  // max_reduce_with_indices_init's layout + 1 (0: none; 3: top-k recorded
  // over its sequence in the replay buffer).
  uint32_t pool_layout = 0;
  // Resets the configuration for a run.
  void reset() { *this = ComputeState{}; }
};

// Which build of a compute kernel a fiber runs: the single build that does
// unpack, math and pack in one (Single), or one of the three TRISC builds
// (tt-metal's TRISC_UNPACK, TRISC_MATH, TRISC_PACK).
enum class Trisc : uint8_t { Single = 0, Unpack = 1, Math = 2, Pack = 3 };
const char* trisc_name(Trisc t);

// The DST hand-over calls (reg_api.h), as compute.h passes them in
// compute_config(ZYX_CK_DST_SYNC, op).
enum DstSyncOp : uint32_t {
  kDstAcquire = 0,     // tile_regs_acquire: math takes a free DST section
  kDstCommit = 1,      // tile_regs_commit: math hands it to pack
  kDstWait = 2,        // tile_regs_wait: pack waits for a committed section
  kDstRelease = 3,     // tile_regs_release: pack frees it
  kDstAcquireOld = 4,  // acquire_dst: math's acquire and pack's wait
  kDstReleaseOld = 5,  // release_dst: math's commit and pack's release
};

// One FPU operation as the unpack build issued it: what the op was (checked
// when the math build issues its own), and each CB tile it unpacked with a
// copy of its bytes (what SrcA/SrcB hold on the card until math uses them).
struct SrcOp {
  struct Tile {
    uint32_t cb = 0, tile = 0;
    size_t offset = 0;  // in data
    uint32_t size = 0;
  };
  uint32_t op = 0;  // FpuOp (api_compute_trisc.cpp)
  std::vector<Tile> tiles;
  uint32_t next = 0;  // the operand a positional read takes next
  std::vector<uint8_t> data;
};

// A DST section math committed and pack has not released: the tiles math
// wrote (the others read as zero, as the packer leaves a released section).
struct DstSection {
  std::vector<std::array<uint32_t, 1024>> tiles;  // 16, allocated on first use
  std::array<uint8_t, 16> kind{};                 // DstKind
  uint32_t written = 0;
};

// What the three builds of one core's compute kernel hand each other
// (api_compute_trisc.cpp), and the order of the DST calls (both modes).
struct TriscHandover {
  // Operands unpacked and not yet consumed by math, oldest first: a ring of
  // kSrcDepth ops (a full ring blocks unpack). Ops that go on to pack (tilize,
  // untilize) move to the pack ring when math has passed them.
  static constexpr uint32_t kSrcDepth = 4;
  std::array<SrcOp, kSrcDepth> src, to_pack;
  uint32_t src_head = 0, src_count = 0, pack_head = 0, pack_count = 0;
  // The op math (and pack, for a through op) executes now: front_tile reads
  // its copies.
  SrcOp* current = nullptr;
  SrcOp* pack_current = nullptr;
  // DST sections committed by math and not released by pack, oldest first
  // (two in half-sync mode, one in full-sync).
  std::array<DstSection, 2> sections;
  uint32_t sec_head = 0, sec_count = 0;
  // The order of the DST calls, per processor: math holds a section between
  // acquire and commit (acquired with acquire_dst: old_style), pack between
  // wait and release. Single build: sections committed and not yet waited.
  bool math_held = false, old_style = false, pack_held = false;
  uint32_t pending = 0;
  void reset() {
    src_head = src_count = pack_head = pack_count = 0;
    current = pack_current = nullptr;
    sec_head = sec_count = 0;
    math_held = old_style = pack_held = false;
    pending = 0;
  }
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
