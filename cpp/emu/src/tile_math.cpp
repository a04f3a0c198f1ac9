// Tile math of the emulated compute engine: unpacking a tile of any data
// format into the destination register file (DST), the rounding of DST to
// its 16-bit formats, and packing DST back to a tile in the target format.
// The compute API that uses it is in the api_compute*.cpp files; the tile
// layout and DST kinds are described in compute_api.hpp.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include "compute_api.hpp"

namespace zyx::emu {

DstKind dst_kind_for(Format f, bool fp32) {
  if (format_is_int(f)) return DstKind::Int;
  if (fp32) return DstKind::F32;
  return f == Format::Float16 ? DstKind::F16 : DstKind::BF16;
}

// bf16 rounding of f32 bits, branch-free so that it vectorises: round to
// nearest even; NaNs stay NaN (quietened), as f32_to_bf16 does.
ZYX_HOT void round_bf16_tile(uint32_t* v) {
  for (int i = 0; i < 1024; i++) {
    uint32_t u = v[i];
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    uint32_t q = (u | 0x00400000u) & 0xffff0000u;
    v[i] = (u & 0x7fffffffu) > 0x7f800000u ? q : r;
  }
}

void dst_round(uint32_t* v, DstKind kind) {
  if (kind == DstKind::BF16) {
    round_bf16_tile(v);
  } else if (kind == DstKind::F16) {
    for (int i = 0; i < 1024; i++) v[i] = f2u(round_f16(u2f(v[i])));
  }
}

ZYX_HOT void tile_unpack(const uint8_t* src, Format f, uint32_t* out, DstKind kind) {
  switch (f) {
    case Format::Float32: std::memcpy(out, src, 4096); break;
    case Format::Float16_b: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = uint32_t(s[i]) << 16;
      return;  // exact in f32, bf16 and (for kind F16, rounded below) f16
    }
    case Format::Float16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = f2u(f16_to_f32(s[i]));
      break;
    }
    case Format::Int32:
    case Format::UInt32: std::memcpy(out, src, 4096); return;
    case Format::UInt16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = s[i];
      return;
    }
    case Format::UInt8:
      for (int i = 0; i < 1024; i++) out[i] = src[i];
      return;
    case Format::Int8:
      // The card's Int8 is sign-magnitude (numerics.hpp); exact mode reads
      // two's complement.
      if (compute::core().hw_numerics)
        for (int i = 0; i < 1024; i++) out[i] = hw::int8_to_dst(src[i], false);
      else
        for (int i = 0; i < 1024; i++) out[i] = static_cast<uint32_t>(int32_t(static_cast<int8_t>(src[i])));
      return;
    case Format::Bfp8_b:
    case Format::Bfp4_b:
      // exact in bf16 (at most 8 significant bits), so no DST rounding needed
      bfp_unpack_tile(src, f, reinterpret_cast<float*>(out));
      return;
    default: kernel_fail("unpack: unsupported format");
  }
  dst_round(out, kind);
}

// An integer DST tile packed as the card's packer converts it: to Int8 and
// UInt8 the word's sign bit and clamped magnitude, to UInt16 from a 16-bit
// DST the 16 bits the register holds (numerics.hpp). Returns false for the
// other formats.
static bool pack_int_as_card(const uint32_t* src, uint8_t* dst, Format f) {
  if (f == Format::Int8 || f == Format::UInt8) {
    const bool is_unsigned = f == Format::UInt8;
    for (int i = 0; i < 1024; i++) dst[i] = hw::pack_int8(src[i], is_unsigned);
    return true;
  }
  if (f == Format::UInt16 && !compute::core().run->fp32_dest_acc) {
    uint16_t* d = reinterpret_cast<uint16_t*>(dst);
    for (int i = 0; i < 1024; i++) d[i] = hw::pack_uint16_16b(src[i]);
    return true;
  }
  return false;
}

ZYX_HOT void tile_pack(const uint32_t* src, DstKind kind, uint8_t* dst, Format f) {
  bool is_int = kind == DstKind::Int;
  if (is_int && compute::core().hw_numerics && pack_int_as_card(src, dst, f)) return;
  switch (f) {
    case Format::Float32: {
      float* d = reinterpret_cast<float*>(dst);
      if (is_int)
        for (int i = 0; i < 1024; i++) d[i] = static_cast<float>(static_cast<int32_t>(src[i]));
      else
        std::memcpy(dst, src, 4096);
      return;
    }
    case Format::Float16_b: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      if (is_int) {
        for (int i = 0; i < 1024; i++) d[i] = f32_to_bf16(static_cast<float>(static_cast<int32_t>(src[i])));
        return;
      }
      for (int i = 0; i < 1024; i++) {  // f32_to_bf16, branch-free
        uint32_t u = src[i];
        uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, q = (u >> 16) | 0x40u;
        d[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? q : r);
      }
      return;
    }
    case Format::Float16: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      for (int i = 0; i < 1024; i++)
        d[i] = f32_to_f16(is_int ? static_cast<float>(static_cast<int32_t>(src[i])) : u2f(src[i]));
      return;
    }
    case Format::Int32:
    case Format::UInt32: {
      if (is_int) {
        std::memcpy(dst, src, 4096);
        return;
      }
      uint32_t* d = reinterpret_cast<uint32_t*>(dst);
      bool u = f == Format::UInt32;
      for (int i = 0; i < 1024; i++)
        d[i] = static_cast<uint32_t>(u ? to_int(u2f(src[i]), 0, UINT32_MAX) : to_int(u2f(src[i]), INT32_MIN, INT32_MAX));
      return;
    }
    case Format::UInt16: {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      for (int i = 0; i < 1024; i++)
        d[i] = static_cast<uint16_t>(is_int ? std::min<uint32_t>(src[i], 0xffff) : to_int(u2f(src[i]), 0, 0xffff));
      return;
    }
    case Format::UInt8:
      for (int i = 0; i < 1024; i++)
        dst[i] = static_cast<uint8_t>(is_int ? std::min<uint32_t>(src[i], 0xff) : to_int(u2f(src[i]), 0, 0xff));
      return;
    case Format::Int8:
      for (int i = 0; i < 1024; i++) {
        int64_t v = is_int ? int64_t(int32_t(src[i])) : to_int(u2f(src[i]), -128, 127);
        dst[i] = static_cast<uint8_t>(static_cast<int8_t>(std::min<int64_t>(127, std::max<int64_t>(-128, v))));
      }
      return;
    case Format::Bfp8_b:
    case Format::Bfp4_b: {
      float tmp[1024];
      for (int i = 0; i < 1024; i++) tmp[i] = is_int ? static_cast<float>(static_cast<int32_t>(src[i])) : u2f(src[i]);
      bfp_pack_tile(tmp, f, dst);
      return;
    }
    default: kernel_fail("pack: unsupported format");
  }
}

}  // namespace zyx::emu
