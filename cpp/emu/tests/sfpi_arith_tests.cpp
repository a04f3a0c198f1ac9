// The SFPU lane arithmetic on its own (zyx_emu/sfpi_arith.h, no kernels):
// mad_fast, the host-fp32 shortcut SFPI's add, subtract and multiply take,
// agrees with the SFPMAD model on random operands, across the exponent
// range's ends, zeros, denormals, infinities and NaN and close exponents
// (cancellation), and products at the bottom of the normal range.
#include <cstdio>
#include <random>

#include "zyx_emu/sfpi_arith.h"

namespace {

using sfpi::impl_::mad;
using sfpi::impl_::mad_fast;

// A random fp32 word, a quarter of them with an exponent field at either
// end of the range (0-5: zero, denormals, the smallest normals; 250-255:
// the largest, infinity, NaN) or near 1.
uint32_t random_word(std::mt19937_64& g) {
  uint32_t w = uint32_t(g());
  switch (g() % 8) {
    case 0: return (w & 0x807fffffu) | (uint32_t(g() % 6) << 23);
    case 1: return (w & 0x807fffffu) | (uint32_t(250 + g() % 6) << 23);
    case 2: return (w & 0x80ffffffu) | 0x3f000000u;
    default: return w;
  }
}

int failures = 0;

void check_same(uint32_t x, uint32_t y, uint32_t z) {
  uint32_t fast = mad_fast(x, y, z), model = mad(x, y, z);
  if (fast != model && failures++ < 5)
    std::fprintf(stderr, "mad(0x%08x, 0x%08x, 0x%08x): fast 0x%08x, model 0x%08x\n", x, y, z, fast, model);
}

void mad_fast_matches_model() {
  std::mt19937_64 g(24);
  for (int i = 0; i < 2000000; i++) {
    uint32_t x = random_word(g), z = random_word(g);
    check_same(x, 0x3f800000u, z);  // x + z
    check_same(x, 0xbf800000u, z);  // z - x
    check_same(x, z, 0);            // x * z
    // same exponent as z: the sum cancels
    uint32_t near = (z & 0xff800000u) | (uint32_t(g()) & 0x7fffffu);
    check_same(near, 0xbf800000u, z);
  }
  // Products at the bottom of the normal range, where the card flushes some
  // that IEEE rounding would lift to the smallest normal.
  for (int i = 0; i < 200000; i++) {
    uint32_t x = (uint32_t(g()) & 0x7fffffu) | (64u << 23);  // [1, 2) * 2^-63
    float y = 1.17549435e-38f / __builtin_bit_cast(float, x);
    uint32_t yb = __builtin_bit_cast(uint32_t, y) + uint32_t(g() % 5) - 2u;
    check_same(x, yb, 0);
  }
}

}  // namespace

int main() {
  mad_fast_matches_model();
  if (failures) {
    std::fprintf(stderr, "%d mismatch(es)\n", failures);
    return 1;
  }
  std::printf("sfpi arith: mad_fast agrees with the model\n");
  return 0;
}
