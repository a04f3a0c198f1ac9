// More of what the kernel sweep over tt-metal's own kernels needed
// (docs/emulator.md, "The kernel sweep"): each form run on the emulator and
// checked for the value it has on a card. The kernels here are our own,
// written in the forms tt-metal's kernels use.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "compute_harness.hpp"
#include "emu.hpp"
#include "harness.hpp"
#include "test_util.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// VectorMode as tt-llk declares it: unscoped, in ckernel. sdpa's
// compute_common.hpp compares an int template parameter with it, mixes it
// with an int in `?:`, and passes `(int)VectorMode::C` where an int is
// taken; ttnn writes sigmoid_tile's mode as a number. Tiles 0-2 get a fill
// over the faces each mode covers, tiles 3 and 4 the sigmoid by both forms.
const char* kVectorModeKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "sfpi.h"
#include "llk_math_eltwise_unary_sfpu_params.h"
using namespace sfpi;

static_assert(ckernel::VectorMode::RC == RC && int(VectorMode::C) == 2 && ckernel::R == 1);

inline void fill(float v) {
  for (int i = 0; i < 8; i++) {
    dst_reg[0] = v;
    dst_reg++;
  }
}

// The walk a mode selects, as sdpa picks it: RC stays RC, any other mode
// is passed on as the int it is.
template <int vector_mode = (int)VectorMode::RC>
void fill_tile(uint32_t idst, float v) {
  constexpr int walk = (vector_mode == VectorMode::RC) ? VectorMode::RC : vector_mode;
  _llk_math_eltwise_unary_sfpu_params_(fill, idst, walk, v);
}

void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 1);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  for (uint32_t t = 0; t < 5; t++) copy_tile(0, 0, t);
  fill_tile<(int)VectorMode::C>(0, 7.0f);
  int mode = ckernel::VectorMode::R;
  if (mode == VectorMode::R) _llk_math_eltwise_unary_sfpu_params_(fill, 1, mode, 5.0f);
  fill_tile<>(2, 3.0f);
  sigmoid_tile_init();
  sigmoid_tile<4, false>(3);
  sigmoid_tile(4);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 5);
  for (uint32_t t = 0; t < 5; t++) pack_tile(t, 16);
  cb_push_back(16, 5);
  tile_regs_release();
}
)";

void test_vector_mode(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  std::vector<float> x = randf(1024, -6, 6, 31);
  x[0] = 0.0f;
  Run r;
  r.formats = {"Float32"};
  r.inputs = {f32_bytes(x)};
  r.unpack_to_dest_fp32 = {0};
  r.out_format = "Float32";
  r.out_tiles = 5;
  r.fp32 = true;
  r.dst_full_sync = true;
  r.compute = kVectorModeKernel;
  std::vector<float> out = bytes_f32(run(*layer, r));
  CHECK_EQ(out.size(), size_t(5 * 1024));
  for (int e = 0; e < 1024; e++) {
    int face = e / 256;
    // C: faces 0 and 2; R: faces 0 and 1; RC: all four. The others keep x.
    float c = (face == 0 || face == 2) ? 7.0f : x[e];
    float rr = (face == 0 || face == 1) ? 5.0f : x[e];
    CHECK_EQ(float_bits(out[e]), float_bits(c));
    CHECK_EQ(float_bits(out[1024 + e]), float_bits(rr));
    CHECK_EQ(float_bits(out[2048 + e]), float_bits(3.0f));
    // sigmoid_tile<4, false> is the default form, word for word, and the
    // function (the exact mode is within a few fp32 ulp).
    CHECK_EQ(float_bits(out[3072 + e]), float_bits(out[4096 + e]));
    double want = 1.0 / (1.0 + std::exp(-double(x[e])));
    CHECK(std::fabs(out[3072 + e] - want) <= 1e-6 * want + 1e-30);
  }
}
ZYX_TEST(names, test_vector_mode);

// ckernel::BroadcastType and ckernel::EltwiseBinaryType, as tt-metal's
// sfpu_binary_bcast test kernel names them (unscoped, in ckernel, as tt-llk
// declares them): tile 0 plus column 0 of tile 1, spread over the tile.
const char* kBcastTypesKernel = R"(
#include "api/compute/common.h"
#include "api/compute/sfpu_binary_bcast.h"
#include "api/compute/tile_move_copy.h"
static_assert(NONE == 0 && COL == 1 && ROW == 2 && SCALAR == 3 && ckernel::ELWADD == 2);
constexpr ckernel::BroadcastType kDim = ckernel::BroadcastType::COL;
constexpr ckernel::EltwiseBinaryType kOp = ckernel::EltwiseBinaryType::ELWADD;
void kernel_main() {
  init_sfpu(0, 16);
  sfpu_bcast_init<kDim>();
  cb_wait_front(0, 1);
  cb_wait_front(1, 1);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  copy_tile_to_dst_init_short(1);
  copy_tile(1, 0, 1);
  sfpu_bcast<kDim, kOp>(0, 1);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
}
)";

void test_bcast_types(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  std::vector<float> a = randf(1024, -4, 4, 41), b = randf(1024, -4, 4, 42);
  Run r;
  r.formats = {"Float32", "Float32"};
  r.inputs = {f32_bytes(a), f32_bytes(b)};
  r.unpack_to_dest_fp32 = {0, 1};
  r.out_format = "Float32";
  r.fp32 = true;
  r.compute = kBcastTypesKernel;
  std::vector<float> out = bytes_f32(run(*layer, r));
  CHECK_EQ(out.size(), size_t(1024));
  // Tile element (row, col) in faces: face (row / 16) * 2 + col / 16.
  auto at = [](int row, int col) { return (row / 16 * 2 + col / 16) * 256 + row % 16 * 16 + col % 16; };
  for (int row = 0; row < 32; row++)
    for (int col = 0; col < 32; col++) {
      float want = a[at(row, col)] + b[at(row, 0)];
      CHECK(std::fabs(out[at(row, col)] - want) <= 1e-6f * std::fabs(want) + 1e-6f);
    }
}
ZYX_TEST(names, test_bcast_types);

// set_l1_data_cache<enable>() (tt-metal's poll tests): the card's L1 data
// cache switch; L1 reads see the latest write with it on or off. And
// get_arg_val<T*> (tt-metal's CB wrapping test): the pointer the 32-bit word
// holds.
const char* kL1CacheKernel = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
  set_l1_data_cache<true>();
  w[0] = 11;
  w[1] = w[0] + 1;
  set_l1_data_cache<false>();
  w[2] = w[1] + 1;
  set_l1_data_cache();
  invalidate_l1_cache();
  w[3] = w[2] + 1;
  uint32_t* p = get_arg_val<uint32_t*>(0);
  w[4] = reinterpret_cast<uintptr_t>(p) == out;
  w[5] = reinterpret_cast<uintptr_t>(get_arg_val<volatile uint16_t*>(0)) == get_arg_val<uint32_t>(0);
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 24);
  noc_async_write_barrier();
}
)";

void test_l1_data_cache(const std::string& cache) {
  auto layer = make_emu_layer("p150a", 0, cache);
  auto v = run_reader_words(*layer, kL1CacheKernel, 6, {CB(0, "UInt32", 64, 1)});
  CHECK_EQ(v.size(), size_t(6));
  for (uint32_t i = 0; i < 4; i++) CHECK_EQ(v[i], 11u + i);
  CHECK_EQ(v[4], 1u);  // the runtime arg's word as a pointer
  CHECK_EQ(v[5], 1u);  // as a pointer of another type
}
ZYX_TEST(names, test_l1_data_cache);

// zyx-emu-kernel-check's Metal 2.0 block (--metal2, --dfb): a kernel that
// names args:: and dfb:: builds with the runtime's own generated bindings,
// and gets the values asked for (checked by static_assert in the kernel).
const char* kMetal2Kernel = R"(
#include "api/dataflow/dataflow_api.h"
#include "experimental/kernel_args.h"
void kernel_main() {
  constexpr uint32_t n = get_arg(args::n);
  static_assert(n == 7, "args::n is the named compile arg");
  static_assert(uint32_t(dfb::out_buf) == 3, "dfb::out_buf is CB 3");
  experimental::DataflowBuffer buf(dfb::out_buf);
  buf.reserve_back(1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(buf.get_write_ptr());
  w[0] = n + get_vararg(0) + get_common_vararg(0);
  buf.push_back(1);
}
)";

int run_tool(const std::string& args) {
  std::string cmd = std::string(ZYX_EMU_KERNEL_CHECK) + " " + args + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// ckernel::init_prng_seed, as tt-metal's stochastic-rounding test calls it:
// it seeds the generator rand_tile_init seeds. Tiles 0 and 1 round the
// same input after the same seed by the two calls, tile 2 after another
// seed. Args: the seed.
const char* kPrngSeedKernel = R"(
#include "api/compute/common.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/rounding.h"

void kernel_main() {
  const uint32_t seed = get_arg_val<uint32_t>(0);
  init_sfpu(0, 16);
  cb_wait_front(0, 1);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  for (uint32_t t = 0; t < 3; t++) copy_tile(0, 0, t);
  init_prng_seed(seed);
  stochastic_round_tile(0);
  rand_tile_init(seed);
  stochastic_round_tile(1);
  init_prng_seed(seed + 1);
  stochastic_round_tile(2);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 3);
  for (uint32_t t = 0; t < 3; t++) pack_tile(t, 16);
  cb_push_back(16, 3);
  tile_regs_release();
}
)";

void test_init_prng_seed(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  std::vector<float> x = randf(1024, -4, 4, 57);
  Run r;
  r.formats = {"Float32"};
  r.inputs = {f32_bytes(x)};
  r.unpack_to_dest_fp32 = {0};
  r.out_format = "Float32";
  r.out_tiles = 3;
  r.fp32 = true;
  r.dst_full_sync = true;
  r.args = {1234};
  r.compute = kPrngSeedKernel;
  std::vector<float> out = bytes_f32(run(*layer, r));
  CHECK_EQ(out.size(), size_t(3 * 1024));
  int other_seed_differs = 0;
  for (int e = 0; e < 1024 && out.size() == 3 * 1024; e++) {
    // Each result is x rounded to bf16, down or up (toward zero or away from it).
    uint32_t down = float_bits(x[e]) & 0xffff0000u, got = float_bits(out[e]);
    CHECK(got == down || got == down + 0x10000u);
    CHECK_EQ(got, float_bits(out[1024 + e]));  // the same seed, by either call
    other_seed_differs += got != float_bits(out[2048 + e]);
  }
  CHECK(other_seed_differs > 0);
}
ZYX_TEST(names, test_init_prng_seed);

// ckernel_sfpu.h (sfpi.h here) and ckernel::tensix_sync, as ttnn's moe
// kernel names them: tile 0 is x, doubled on the SFPU after a sync in each
// form (in UNPACK(...), and plain). The kernel names UNPACK/MATH, so it
// runs as its three TRISC builds, the SFPU call in the math build's.
const char* kSfpuHeaderKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "ckernel_sfpu.h"
#include "llk_math_eltwise_unary_sfpu_params.h"
using namespace sfpi;

inline void twice() {
  for (int i = 0; i < 8; i++) {
    dst_reg[0] = dst_reg[0] * 2.0f;
    dst_reg++;
  }
}

void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 1);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  UNPACK(tensix_sync());
  ckernel::tensix_sync();
  MATH(_llk_math_eltwise_unary_sfpu_params_(twice, 0, (int)VectorMode::RC));
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
}
)";

void test_sfpu_header_and_sync(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  std::vector<float> x = randf(1024, -6, 6, 43);
  Run r;
  r.formats = {"Float32"};
  r.inputs = {f32_bytes(x)};
  r.unpack_to_dest_fp32 = {0};
  r.out_format = "Float32";
  r.fp32 = true;
  r.compute = kSfpuHeaderKernel;
  std::vector<float> out = bytes_f32(run(*layer, r));
  CHECK_EQ(out.size(), size_t(1024));
  for (size_t e = 0; e < out.size(); e++) CHECK_EQ(float_bits(out[e]), float_bits(2.0f * x[e]));
}
ZYX_TEST(names, test_sfpu_header_and_sync);

void test_kernel_check_metal2(const std::string& cache) {
  std::string dir = cache + "/sweep-metal2";
  mkdir(dir.c_str(), 0700);
  std::string file = dir + "/m2.cpp";
  std::ofstream(file) << kMetal2Kernel;
  CHECK_EQ(run_tool("--brisc --named n=7 --metal2 --dfb out_buf=3 " + file), 0);
  CHECK_EQ(run_tool("--brisc --named n=7 --dfb out_buf=3 " + file), 0);  // --dfb implies --metal2
  CHECK_EQ(run_tool("--brisc --named n=6 --metal2 --dfb out_buf=3 " + file), 1);
  CHECK_EQ(run_tool("--brisc --named n=7 --metal2 --dfb out_buf=2 " + file), 1);
  CHECK_EQ(run_tool("--brisc --named n=7 " + file), 1);  // no block: no args::, no dfb::
  CHECK_EQ(run_tool("--brisc --dfb out_buf " + file), 2);
  CHECK_EQ(run_tool("--brisc --named n=7 --dfb 1bad=3 " + file), 2);  // not a C identifier
  std::remove(file.c_str());
  rmdir(dir.c_str());
}
ZYX_TEST(names, test_kernel_check_metal2);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "sweep_compat2_"); }
