// Compute API tests of the SFPU binary broadcasts (sfpu_binary_bcast.h):
// DST[data] op= column 0 or row 0 of DST[bcast], spread over the whole
// tile, by the named calls and by the templated sfpu_bcast; of the uint16
// compares of binary_comp.h; and of tiled_prod_tile. Every element is
// checked against a host
// reference (float64 for the float ops), and the second tile must come back
// unchanged.
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "compute_harness.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// The two tiles of cb 0 copied to DST 0 and 1, then BODY; DST 0 and 1 are
// packed to cb 16.
const char* kBcastKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/sfpu_binary_bcast.h"
void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 2);
  tile_regs_acquire();
  copy_tile_init(0);
  copy_tile(0, 0, 0);
  copy_tile(0, 1, 1);
  BODY;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 2);
  pack_tile(0, 16);
  pack_tile(1, 16);
  cb_push_back(16, 2);
  tile_regs_release();
}
)";

// kBcastKernel on two tiles of `format` with BODY `body` (run_two_tiles).
std::vector<uint8_t> run_pair(DeviceLayer& layer, const std::string& format, std::vector<uint8_t> in,
                              const std::string& body, const std::string& kernel = kBcastKernel) {
  return run_two_tiles(layer, format, std::move(in), body, 0, 1, false, kernel);
}

struct BcastCase {
  std::string body;
  char op;   // '+', '-', '*'
  bool col;  // column 0 spread across (else row 0 spread down)
};

void test_sfpu_bcast(DeviceLayer& layer) {
  const BcastCase cases[] = {
      {"sfpu_add_bcast_col_init(); sfpu_add_bcast_col(0, 1)", '+', true},
      {"sfpu_sub_bcast_col_init(); sfpu_sub_bcast_col(0, 1)", '-', true},
      {"sfpu_mul_bcast_col_init(); sfpu_mul_bcast_col(0, 1)", '*', true},
      {"sfpu_add_bcast_row_init(); sfpu_add_bcast_row(0, 1)", '+', false},
      {"sfpu_sub_bcast_row_init(); sfpu_sub_bcast_row(0, 1)", '-', false},
      {"sfpu_mul_bcast_row_init(); sfpu_mul_bcast_row(0, 1)", '*', false},
      {"sfpu_bcast_col_init(); sfpu_sub_bcast_col(0, 1)", '-', true},
      {"sfpu_bcast_row_init(); sfpu_mul_bcast_row(0, 1)", '*', false},
      {"sfpu_bcast_init<BroadcastType::COL>(); sfpu_bcast<BroadcastType::COL, EltwiseBinaryType::ELWMUL>(0, 1)", '*',
       true},
      {"sfpu_bcast_init<BroadcastType::ROW>(); sfpu_bcast<BroadcastType::ROW, EltwiseBinaryType::ELWADD>(0, 1)", '+',
       false},
      {"sfpu_bcast_init<BroadcastType::ROW>(); sfpu_bcast<BroadcastType::ROW, EltwiseBinaryType::ELWSUB>(0, 1)", '-',
       false},
  };
  // Tile 0: the data; tile 1: the broadcast source, distinct in every
  // element so that reading the wrong row or column shows.
  auto in = randf(2048, -4, 4, 29);
  for (const BcastCase& c : cases) {
    auto got = bytes_f32(run_pair(layer, "Float32", f32_bytes(in), c.body));
    std::vector<double> g(got.begin(), got.end()), want(2048);
    for (int r = 0; r < 32; r++)
      for (int col = 0; col < 32; col++) {
        double a = in[fi(r, col)], b = in[1024 + (c.col ? fi(r, 0) : fi(0, col))];
        want[fi(r, col)] = c.op == '+' ? a + b : c.op == '-' ? a - b : a * b;
      }
    for (int i = 0; i < 1024; i++) want[1024 + i] = in[1024 + i];
    // f32 results of f32 inputs: within one rounding of the float64 value
    check_close(g, want, 1e-6, 1e-6, c.body);
  }
}
ZYX_TEST(sfpu_bcast, test_sfpu_bcast);

// lt/gt_uint16_tile: 1 where the compare holds, else 0, on unsigned 16-bit
// values (those at or above 0x8000 must not compare as negative).
void test_uint16_compare(DeviceLayer& layer) {
  std::mt19937 rng(26);
  std::vector<uint16_t> in(2048);
  for (auto& x : in) x = static_cast<uint16_t>(rng());
  for (int i = 0; i < 64; i++) in[1024 + i] = in[i];  // some equal pairs
  std::vector<uint8_t> bytes(in.size() * 2);
  std::memcpy(bytes.data(), in.data(), bytes.size());
  for (bool lt : {true, false}) {
    std::string name = lt ? "lt_uint16_tile" : "gt_uint16_tile";
    auto out = run_pair(layer, "UInt16", bytes, name + "_init(); " + name + "(0, 1, 0)");
    std::vector<uint16_t> got(2048);
    std::memcpy(got.data(), out.data(), out.size());
    for (int i = 0; i < 2048; i++) {
      uint16_t want = i >= 1024 ? in[i] : lt ? in[i] < in[1024 + i] : in[i] > in[1024 + i];
      if (got[i] != want)
        throw Failure(name + ": element " + std::to_string(i) + " = " + std::to_string(got[i]) + ", want " +
                      std::to_string(want));
    }
  }
}
ZYX_TEST(uint16_compare, test_uint16_compare);

// tiled_prod_tile(0) against the SFPU's lane walk, modelled here in float64
// on the two tiles' DST rows (16 values each, face-ordered, 64 rows a tile):
// the SFPU row at address A covers rows A&~3 .. +3, the even columns when
// A&2 is 0, else the odd ones; per face of tile 0 a lane multiplies its
// running product into nine such rows from the face's first, in place (the
// ninth is the next face's; after face 3, tile 1's).
void test_tiled_prod(DeviceLayer& layer) {
  auto in = randf(2048, 0.8, 1.25, 41);
  std::vector<double> want(in.begin(), in.end());
  for (int face = 0; face < 4; face++)
    for (int lane = 0; lane < 32; lane++) {
      double product = 1.0;
      for (int step = 0; step < 9; step++) {
        int addr = 16 * face + 2 * step;
        int row = (addr & ~3) + lane / 8, col = 2 * (lane % 8) + ((addr >> 1) & 1);
        product *= want[row * 16 + col];
        want[row * 16 + col] = product;
      }
    }
  auto got = bytes_f32(run_pair(layer, "Float32", f32_bytes(in), "tiled_prod_tile_init(); tiled_prod_tile(0)"));
  std::vector<double> g(got.begin(), got.end());
  // f32 products of up to 17 factors: within 2e-6 relative of float64
  check_close(g, want, 0, 2e-6, "tiled_prod_tile");
  // The same walk written as SFPI code on the emulator's SFPU model (its own
  // lane layout, in the math build): word for word the same f32 results.
  // BODY under TRISC_MATH: the kernel runs as its three TRISC builds.
  std::string math_kernel = kBcastKernel;
  math_kernel.replace(math_kernel.find("  BODY;"), 7, "#ifdef TRISC_MATH\n  BODY;\n#endif");
  auto sfpi = bytes_f32(run_pair(layer, "Float32", f32_bytes(in),
                                 "_llk_math_eltwise_unary_sfpu_params_([] { vFloat p = 1.0f; "
                                 "for (int s = 0; s < 9; s++) { p = p * dst_reg[0]; dst_reg[0] = p; dst_reg++; } }, 0)",
                                 math_kernel));
  for (int i = 0; i < 2048; i++)
    if (std::memcmp(&got[i], &sfpi[i], 4) != 0)
      throw Failure("tiled_prod_tile: element " + std::to_string(i) + " = " + std::to_string(got[i]) +
                    ", the SFPI walk gives " + std::to_string(sfpi[i]));
}
ZYX_TEST(tiled_prod, test_tiled_prod);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "compute_api_bcast_"); }
