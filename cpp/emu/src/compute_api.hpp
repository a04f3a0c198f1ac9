// What the compute API files (api_compute*.cpp) and the tile math
// (tile_math.cpp) share: the calling core's DST and circular buffers as the
// compute engine sees them, and scalar helpers of the tile loops.
//
// A tile is 32x32 elements stored as four 16x16 faces (face 0: rows 0-15,
// cols 0-15; face 1: rows 0-15, cols 16-31; face 2: rows 16-31, cols 0-15;
// face 3: rows 16-31, cols 16-31), each face row-major. DST keeps tiles in
// the same order. Each DST tile holds f32 or i32 bits and a kind: without
// fp32_dest_acc a float tile is rounded to its 16-bit format (bf16, or fp16
// for Float16 inputs) after every operation, as the 16-bit DST does.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "formats.hpp"
#include "kernel_api.hpp"
#include "numerics.hpp"
#include "runner.hpp"


// The hot loops get x86-64 clones for AVX-512 and AVX2 (picked at load time),
// so they vectorise wide without tying the build to the build machine.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZYX_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ZYX_HOT
#endif

namespace zyx::emu {

inline float round_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }
inline float round_f16(float f) { return f16_to_f32(f32_to_f16(f)); }

// Converts a float to an integer with rounding to nearest even and saturation.
inline int64_t to_int(float f, int64_t lo, int64_t hi) {
  if (std::isnan(f)) return 0;
  double r = std::nearbyint(static_cast<double>(f));
  if (r < static_cast<double>(lo)) return lo;
  if (r > static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

// Row-major index (r, c) to the face-ordered position in a tile.
inline int fidx(int r, int c) { return ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15); }

namespace compute {

inline CoreState& core() { return *current_fiber()->core; }
// Which build of the compute kernel is calling (compute_state.hpp).
inline Trisc trisc() { return current_fiber()->trisc; }
// Whether the calling build does the math of a call (single build or math).
inline bool on_math() { return trisc() == Trisc::Single || trisc() == Trisc::Math; }
// Whether the calling build packs (single build or pack).
inline bool on_pack() { return trisc() == Trisc::Single || trisc() == Trisc::Pack; }
// The calling build's compute configuration.
inline ComputeState& cstate() { return core().cstates[static_cast<int>(trisc())]; }

// The value of an integer word as tile_unpack leaves it for a tile of
// format f: Int32 and (exact mode) Int8 two's complement, Int8 with
// hardware numerics sign-magnitude, the unsigned formats unsigned.
inline float int_word_value(uint32_t w, Format f) {
  if (f == Format::Int8 && core().hw_numerics) return static_cast<float>(hw::dst_int_value(w));
  if (f == Format::Int32 || f == Format::Int8) return static_cast<float>(static_cast<int32_t>(w));
  return static_cast<float>(w);
}

// ---- api_compute_trisc.cpp: the TRISC builds' hand-over ----
// DST used by math outside an acquired section: a run error.
[[noreturn]] void dst_unheld_fail(uint32_t i);
// The DST call `op` (DstSyncOp) of the calling build; `site` is the
// kernel's return address, for the deadlock table.
void dst_sync(uint32_t op, void* site = __builtin_return_address(0));
// DST tile i as pack reads it (the committed section pack holds, in three
// builds), with its kind; a run error when pack holds none.
const uint32_t* pack_dst(uint32_t i, DstKind* kind, const char* call);
// The same tile for the pack thread's SFPU to rewrite in place; a run error
// when math did not write it.
uint32_t* pack_dst_for_sfpu(uint32_t i, DstKind* kind, const char* call);
// A tile of the operands unpack captured for the op math executes now.
const uint8_t* captured_tile(uint32_t cb, uint32_t tile, const char* op);

// The FPU ops that take operands from CBs, as the unpack and math builds
// hand them over (names in api_compute_trisc.cpp).
enum FpuOp : uint32_t {
  kFpuCopy,
  kFpuAdd, kFpuSub, kFpuMul,  // kFpuAdd + ZYX_BIN_*
  kFpuAddBcast, kFpuSubBcast, kFpuMulBcast,
  kFpuReuse, kFpuUnaryBcast, kFpuTranspose, kFpuMatmul, kFpuReduce,
  kFpuTilizeAB,
  // Through ops: from CB to CB (tilize, untilize); math passes the operands
  // on to pack, which executes them.
  kFpuTilize, kFpuUntilize,
  // llk_unpack_AB's operand pair: math's llk_math_eltwise_binary names the op.
  kFpuLlkAB,
};
// Math: the op unpack queued next (waiting for one), for an LLK math call
// that names no CB tile; a kFpuLlkAB pair becomes `as` (an add, sub or mul
// kind). `site` is the kernel's call, for the deadlock table.
const SrcOp& next_unpacked(FpuOp as, void* site);
// Unpack: queues `data`, one tile in cb's format, as a copy's operand from
// tile `tile` of `cb` (the rows llk_unpack_untilize gathers).
void capture_tile_data(uint32_t cb, uint32_t tile, const uint8_t* data, uint32_t size, void* site);

// `count` consecutive tiles of a CB from `tile` on.
struct TileRef {
  uint32_t cb, tile, count = 1;
};

// One FPU op in the calling build: the single build executes it; unpack
// captures its operand tiles into the core's queue; math takes them from the
// queue (checking the builds issue the same op) and executes it, its
// front_tile reading the copies, until the step ends; pack skips it.
class FpuStep {
 public:
  FpuStep(FpuOp op, std::initializer_list<TileRef> tiles, void* site = __builtin_return_address(0));
  ~FpuStep();
  FpuStep(const FpuStep&) = delete;
  FpuStep& operator=(const FpuStep&) = delete;
  // Whether this build computes the op.
  bool execute() const { return run_; }

 private:
  void capture(std::initializer_list<TileRef> tiles);
  void consume(std::initializer_list<TileRef> tiles);
  void pass_to_pack();
  void take_in_pack();
  FpuOp op_;
  bool run_ = false, consumed_ = false, packed_ = false;
};

// The DST tiles math may use, as on the card: 16 of 16 bits or 8 of 32 bits
// in full-sync mode, half that in the default half-sync mode (the other
// half belongs to the packer).
inline uint32_t dst_capacity() {
  return (core().run->fp32_dest_acc ? 8u : 16u) >> (core().dst_full_sync ? 0 : 1);
}

inline uint32_t* dst_tile(uint32_t i) {
  if (!core().trisc.math_held) dst_unheld_fail(i);
  if (i >= dst_capacity())
    kernel_fail("DST index " + std::to_string(i) + " is out of range: DST holds " + std::to_string(dst_capacity()) +
                (core().run->fp32_dest_acc ? " fp32 tiles" : " 16-bit tiles") +
                (core().dst_full_sync ? " in full-sync mode" : " in half-sync mode (compute_config.dst_full_sync doubles it)"));
  return core().dst[i].data();
}

// Sets the special-value flags that the values of DST tile i raise, as the
// FPU's or (in an SFPU op) the SFPU's output (api_compute_sfpu.cpp).
void note_special_values(uint32_t i);
// The same for `words` (a tile of kind `kind` outside math's DST).
void note_special_words(const uint32_t* words, DstKind kind);

// Marks DST tile i written, holding values of kind k.
inline void mark(uint32_t i, DstKind k) {
  core().dst_kind[i] = k;
  core().dst_written |= 1u << i;
  if (core().special_tracking) [[unlikely]]
    note_special_values(i);
}

// Scans the DST tiles SFPI code stored to since the last scan (api_sfpi.cpp).
void scan_sfpi_stores();
// The SFPU's sorting calls (sfpu_sort.cpp): a ZYX_CS_TOPK_* or
// ZYX_CS_MAX_POOL* compute_special.
void sort_special(uint32_t op, uint32_t a, uint32_t b, uint32_t c, uint32_t d);

// An SFPU op's extent: the DST tiles it marks raise the SFPU's flags.
class SfpuScope {
 public:
  SfpuScope() { ++core().sfpu_scope; }
  ~SfpuScope() { --core().sfpu_scope; }
  SfpuScope(const SfpuScope&) = delete;
  SfpuScope& operator=(const SfpuScope&) = delete;
};

// The DST kind of a float result from operands of formats a and b.
inline DstKind float_kind(Format a, Format b = Format::Float16_b) {
  if (core().run->fp32_dest_acc) return DstKind::F32;
  return (a == Format::Float16 || b == Format::Float16) ? DstKind::F16 : DstKind::BF16;
}

// The DST kind of an SFPU float result on DST tile i.
inline DstKind sfpu_float_kind(uint32_t i) {
  if (core().run->fp32_dest_acc) return DstKind::F32;
  DstKind k = core().dst_kind[i];
  return k == DstKind::F16 ? DstKind::F16 : DstKind::BF16;
}

// ---- api_compute.cpp ----
// Circular buffer `id` of the calling core (configured, index in range).
CircularBuffer& cb_of(uint32_t id);
// The tile at position `tile` from the front of a circular buffer, and a
// page of any size (in the math and pack builds: unpack's copies).
const uint8_t* front_tile(uint32_t id, uint32_t tile, const char* op);
const uint8_t* front_page(uint32_t id, uint32_t page, const char* op);
// Unpacks a tile into floats (integers converted).
void unpack_floats(uint32_t cb, uint32_t tile, float* out, const char* op);
// Reads DST tile i as floats (integers converted).
void dst_floats(uint32_t i, float* out);
// Transposes a face-ordered tile in place: the whole 32x32 tile, or (faces)
// each 16x16 face on its own.
void transpose_tile(uint32_t* d, bool within_faces);
// Pack with the packer's ReLU and L1 accumulation applied.
void pack_to(const uint32_t* d, DstKind kind, uint8_t* out, Format f);

// ---- api_compute_matmul.cpp ----
// DST[dst] += A * B for face-ordered A and B.
void mm_into(uint32_t dst, const float* A, const float* B, DstKind k);
// Reduces tile a with a scaler into DST[dst] as the FPU does.
void reduce_into(uint32_t op, uint32_t dim, const float* a, float scale, uint32_t dst, uint32_t num_faces, DstKind k);

// ---- tile_numerics.cpp: the FPU calls with the card's numerics ----
// Whether a call on tiles of these formats takes the card's numerics: the
// run is not exact and every operand is Float32, Float16_b, Bfp8_b or
// Bfp4_b, or every operand is Float16 (the 5-bit-exponent datapath; Float16
// mixed with the other formats and the integer formats keep the f32 path,
// and so do the Float16 calls the model does not cover: a copy into a
// 32-bit DST, dest reuse, reduce max, REDUCE_SCALAR into a 32-bit DST).
inline bool hw_format(Format f) {
  return f == Format::Float32 || f == Format::Float16_b || f == Format::Bfp8_b || f == Format::Bfp4_b;
}
inline bool hw_path(Format a, Format b) {
  if (!core().hw_numerics) return false;
  if (a == Format::Float16 || b == Format::Float16) return a == b;
  return hw_format(a) && hw_format(b);
}
inline bool hw_path(Format a) { return hw_path(a, a); }
// With the card's numerics, an FPU call (element-wise op, broadcast, dest
// reuse, matmul, reduce) on an Int32 or UInt32 tile fails the run: the
// unpacker cannot load 32-bit integers into SrcA/SrcB (the ISA's unpacker
// conversions: 32-bit integers reach DST only, with unpack_to_dest; tt-llk's
// is_unpacker_format_conversion_supported rejects them; ttsim calls it
// undefined), and tt-metal computes on them with the SFPU (add_int_tile,
// mul_int32_tile, ...). Exact mode computes on them in integers.
void check_fpu_operand(uint32_t cb, const char* op);
// The FPU configuration of the core; fp16 for Float16 operands.
hw::Config hw_config(bool fp16 = false);
// A CB tile as source-register values (face order), as the unpacker makes them.
void unpack_src(uint32_t cb, uint32_t tile, uint32_t* out, const char* op);
// Source values into a DST tile (MOVA2D). With fp16 (Float16 operands) the
// source values are 5-bit-exponent words and a DST tile of kind F16 keeps
// f32 values, here and in the calls below.
void hw_copy(const uint32_t* src, uint32_t* d, bool fp16);
// DST = a op b for source values; acc: DST + (a op b) (ELWMUL adds a
// product to the DST it finds; add and sub with acc_to_dest).
void hw_binary(uint32_t op, const uint32_t* a, const uint32_t* b, uint32_t* d, bool acc, bool fp16);
// DST[dst] += in0 * in1 (source values, face order).
void hw_matmul(uint32_t dst, const uint32_t* in0, const uint32_t* in1, bool fp16);
// Sum reduction of source values a with a scaler into DST[dst].
void hw_reduce(uint32_t dim, const uint32_t* a, uint32_t scaler, bool tf32_src, bool fp16, uint32_t dst,
               uint32_t num_faces);
// Max reduction (GMPOOL) of source values a, with the scaler tile's source
// values, into DST[dst]; tf32_src when SrcA holds TF32 (a Float32 tile with
// a 32-bit DST).
void hw_reduce_max(uint32_t dim, const uint32_t* a, const uint32_t* scaler, bool tf32_src, uint32_t dst);
// Packs a float DST tile to Float32, Float16_b, Bfp8_b or Bfp4_b as the
// packer does; false for other kinds and formats.
bool hw_pack(const uint32_t* d, DstKind kind, uint8_t* out, Format f);

// ---- api_compute_sfpu.cpp ----
// sfpu_reduce over the columns of a DST tile into row 0.
void sfpu_reduce_cols(uint32_t dst, uint32_t pool, uint32_t fmt);
// sfpu_add_top_row: row 0 of DST[out] = row 0 of DST[a] + row 0 of DST[b].
void sfpu_add_top_row_of(uint32_t a, uint32_t b, uint32_t out, uint32_t fmt);
void sfpu_cumsum(uint32_t dst, uint32_t first);

// ---- api_compute_custom.cpp: the specialised kernels' calls ----
// reduce_block_max_row over the block width the last runtime init set.
void reduce_max_row_runtime(uint32_t cb, uint32_t scaler_cb, uint32_t t0, uint32_t dst);
// reshuffle_rows_tile: DST[dst + 1] row map[i] += DST[dst] row i.
void reshuffle_rows(uint32_t dst, uint32_t idx_addr);
// The exponential moving average down the columns of DST[dst] into DST[dst + 1].
void ema_init(uint32_t alpha, uint32_t beta);
void ema_clear();
void ema_tile(uint32_t dst);
// Every element of DST tiles [0, n) summed, times scaler (f32 bits), into DST[0][0].
void sum_dst_scalar(uint32_t n, uint32_t scaler);

}  // namespace compute

}  // namespace zyx::emu
