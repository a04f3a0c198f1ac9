// SFPI's view of DST (zyx_emu_api::sfpu_dst): the SFPU's Dst counter, and
// the row groups that SFPLOAD/SFPSTORE address. The lane arithmetic runs in
// the kernel (cpp/emu/include/sfpi.h); the runtime only owns the per-core
// state that a kernel object shared by several cores cannot keep.
#include <string>

#include "compute_api.hpp"

namespace zyx::emu {

using namespace compute;

namespace {

// The row group of DST row `row` (of the tiles math may use), marking its
// tile written for a store.
uint32_t* sfpu_rows(int64_t row, bool store, uint32_t* flags) {
  int64_t rows = int64_t(dst_capacity()) * 64;
  if (row < 0 || row >= rows)
    kernel_fail("SFPI: DST row " + std::to_string(row) + " (tile " + std::to_string(row / 64) +
                ") is outside the " + std::to_string(dst_capacity()) + " DST tiles math may use");
  uint32_t tile = uint32_t(row / 64);
  uint32_t* d = dst_tile(tile);
  auto& c = core();
  bool written = c.dst_written & (1u << tile);
  DstKind k = written ? c.dst_kind[tile] : (c.run->fp32_dest_acc ? DstKind::F32 : DstKind::BF16);
  if (store && !(written && k == DstKind::Int)) {
    k = written ? sfpu_float_kind(tile) : (c.run->fp32_dest_acc ? DstKind::F32 : DstKind::BF16);
    c.dst_kind[tile] = k;  // the words come after this call: scanned for special values later
    c.dst_written |= 1u << tile;
  }
  if (store) c.sfpi_pending |= 1u << tile;
  uint32_t kind = k == DstKind::F32 ? ZYX_SFPU_KIND_F32
                  : k == DstKind::BF16 ? ZYX_SFPU_KIND_BF16
                  : k == DstKind::F16 ? ZYX_SFPU_KIND_F16
                                      : ZYX_SFPU_KIND_INT;
  if (flags)
    *flags = (c.run->fp32_dest_acc ? uint32_t(ZYX_SFPU_FP32) : 0u) | ((row & 2) ? uint32_t(ZYX_SFPU_ODD) : 0u) | (kind << 4);
  return d + (row % 64 & ~int64_t(3)) * 16;
}

// SFPI code is about to store words of kind k (an integer or fp32 result)
// to tile `tile`, whatever the tile held: the card's DST has no kinds, only
// the packer's format, so the stores keep the words as they are.
void mark_words(uint32_t tile, DstKind k) {
  if (tile >= dst_capacity())
    kernel_fail("SFPI: DST tile " + std::to_string(tile) + " is outside the " + std::to_string(dst_capacity()) +
                " DST tiles math may use");
  if (!core().run->fp32_dest_acc)
    kernel_fail("SFPI: 32-bit integer and fp32 results need a 32-bit DST (fp32_dest_acc_en)");
  core().dst_kind[tile] = k;  // before the SFPI code stores: its stores keep the words as they are
  core().dst_written |= 1u << tile;
}

}  // namespace

namespace compute {

// The special values in the tiles SFPI code stored to since the last scan
// (the SFPU's output), once its call has ended.
void scan_sfpi_stores() {
  CoreState& c = core();
  uint32_t pending = c.sfpi_pending;
  c.sfpi_pending = 0;
  if (!c.special_tracking) return;
  SfpuScope sfpu;
  for (uint32_t t = 0; pending; t++, pending >>= 1)
    if (pending & 1) note_special_values(t);
}

}  // namespace compute

uint32_t* api_sfpu_dst(uint32_t op, int32_t arg, uint32_t* flags) {
  ComputeState& cs = cstate();
  switch (op) {
    case ZYX_SFPU_LOAD:
    case ZYX_SFPU_STORE:
      return sfpu_rows(int64_t(cs.sfpu_rwc) + arg, op == ZYX_SFPU_STORE, flags);
    case ZYX_SFPU_INCR:
      cs.sfpu_rwc += uint32_t(arg);
      return nullptr;
    case ZYX_SFPU_SET_TILE:  // an SFPU call starts or ends: what it stored is its output
      scan_sfpi_stores();
      cs.sfpu_rwc = cs.sfpu_cr = uint32_t(arg) * 64;
      return nullptr;
    case ZYX_SFPU_CR_ADD:
      cs.sfpu_rwc = cs.sfpu_cr = cs.sfpu_cr + uint32_t(arg);
      return nullptr;
    case ZYX_SFPU_MARK_INT:
    case ZYX_SFPU_MARK_F32:
      mark_words(uint32_t(arg), op == ZYX_SFPU_MARK_INT ? DstKind::Int : DstKind::F32);
      return nullptr;
    default:
      kernel_fail("SFPI: unknown DST operation " + std::to_string(op));
  }
}

}  // namespace zyx::emu
