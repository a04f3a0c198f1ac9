// Block-float packing and unpacking (formats.hpp): the rounding and layout of
// tt-metal's host-side packers, so tiles packed here, by tt-metal's host
// library and by the Go driver (tt/blockfloat.go) agree byte for byte.
#include "formats.hpp"

#include <bit>
#include <cstring>

namespace zyx::emu {

namespace {

// One element: sign and a `width`-bit magnitude aligned to shared_exp.
uint8_t encode(uint32_t in, uint32_t shared_exp, uint32_t width) {
  if ((in & 0x7fffffffu) == 0) return 0;
  uint32_t mant = (in & 0x007fffffu) | (1u << 23);
  uint32_t exp = (in >> 23) & 0xff, sign = in >> 31;
  if (shared_exp > exp) {
    uint32_t diff = shared_exp - exp;
    mant = diff >= 32 ? 0 : mant >> diff;
  }
  const uint32_t shift = 24 - width, max = (1u << width) - 1;
  uint32_t round = mant & ((1u << shift) - 1), tie = 1u << (shift - 1);
  mant >>= shift;
  if (round > tie || (round == tie && (mant & 1))) mant += 1;
  if (mant > max) mant = max;
  if (mant == 0) sign = 0;
  return static_cast<uint8_t>((sign << width) | mant);
}

// The f32 bits of one element: normalise the magnitude, the exponent drops
// by the shift (modulo 2^32, as the reference decoder computes it).
uint32_t decode(uint32_t data, uint32_t shared_exp, uint32_t width) {
  uint32_t sign = data >> width, mant = data & ((1u << width) - 1), exp = shared_exp;
  if (mant == 0) return sign << 31;
  uint32_t top = 1u << (width - 1), shift = 0;
  while ((mant & top) == 0) mant <<= 1, shift++;
  mant = (mant << 1) & ((1u << width) - 1);
  exp -= shift;
  return (sign << 31) | (exp << 23) | (mant << (23 - width));
}

}  // namespace

void bfp_pack_tile(const float* v, Format f, uint8_t* out) {
  const uint32_t width = f == Format::Bfp4_b ? 3 : 7;
  for (int g = 0; g < 64; g++) {
    uint32_t e = 0;
    for (int i = 0; i < 16; i++) {
      uint32_t x = (std::bit_cast<uint32_t>(v[g * 16 + i]) >> 23) & 0xff;
      if (x > e) e = x;
    }
    out[g] = static_cast<uint8_t>(e);
    for (int i = 0; i < 16; i++) {
      uint8_t m = encode(std::bit_cast<uint32_t>(v[g * 16 + i]), e, width);
      int k = g * 16 + i;
      if (width == 7) {
        out[64 + k] = m;
      } else if (k & 1) {
        out[64 + k / 2] = static_cast<uint8_t>(out[64 + k / 2] | (m << 4));
      } else {
        out[64 + k / 2] = m & 0xf;
      }
    }
  }
}

void bfp_unpack_tile(const uint8_t* in, Format f, float* out) {
  const uint32_t width = f == Format::Bfp4_b ? 3 : 7;
  for (int k = 0; k < 1024; k++) {
    uint32_t e = in[k / 16];
    uint32_t m = width == 7 ? in[64 + k] : (k & 1 ? in[64 + k / 2] >> 4 : in[64 + k / 2] & 0xf);
    out[k] = std::bit_cast<float>(decode(m, e, width));
  }
}

}  // namespace zyx::emu
