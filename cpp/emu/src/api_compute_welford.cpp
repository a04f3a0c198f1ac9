// Welford's running mean and variance (api/compute/welford.h) over the
// columns of DST tiles, with tt-metal's raw layout of the saved state.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute_api.hpp"

namespace zyx::emu {

using namespace compute;

namespace {

// 1/n for the n-th sample: from the lookup table (f32 bits) when one is given.
double wf_recip(uint32_t idx, const uint32_t* lut, uint32_t n) {
  if (n == 0 || !lut) return 1.0 / (double(idx) + 1.0);
  if (idx >= n) kernel_fail("welford: index " + std::to_string(idx) + " is beyond the reciprocal table of " +
                            std::to_string(n));
  return u2f(lut[idx]);
}

// The SFPU's raw layout of a 32-lane register stored at tile row 4 * group
// (welford_save_state, welford_finalize_to_face): lane l holds column c's
// value, l = 16 * (c / 16) + 8 * (c % 2) + (c % 16) / 2 after the SFPU's
// transpose of a block of rows, and a store writes lanes 8k..8k+7 to the even
// columns 0, 2, .., 14 of face-major row 4 * group + k. So column c lands on
// face-major row 4g + 2 (c / 16) + c % 2, column (c % 16) & ~1.
inline int wf_raw_index(uint32_t group, int c) {
  int row = static_cast<int>(4 * group) + 2 * (c >> 4) + (c & 1);
  return row * 16 + ((c & 15) & ~1);
}

uint32_t wf_value(double v, DstKind k) {
  float f = static_cast<float>(v);
  return f2u(k == DstKind::BF16 ? round_bf16(f) : f);
}

}  // namespace

void api_welford(uint32_t op, uint32_t dst, uint32_t a, uint32_t b, const uint32_t* lut, uint32_t n) {
  if (!on_math()) return;  // SFPU: the math build
  SfpuScope sfpu;
  ComputeState& cs = cstate();
  // The SFPU stores to DST in its mode's width: f32, or bf16 without fp32_dest_acc.
  DstKind k = core().run->fp32_dest_acc ? DstKind::F32 : DstKind::BF16;
  switch (op) {
    case ZYX_WF_CLEAR:
      cs.wf_mean.fill(0), cs.wf_m2.fill(0), cs.wf_count = 0;
      return;
    case ZYX_WF_UPDATE: {
      uint32_t start_row = b >> 16, rows = b & 0xffff;
      if (start_row + rows > 32) kernel_fail("welford_update_rows: rows beyond the tile");
      float x[1024];
      dst_floats(dst, x);
      for (uint32_t r = start_row; r < start_row + rows; r++) {
        double rc = wf_recip(a + (r - start_row), lut, n);
        for (int c = 0; c < 32; c++) {
          double v = x[fidx(static_cast<int>(r), c)], m = cs.wf_mean[c];
          double m1 = m + (v - m) * rc;
          cs.wf_m2[c] += (v - m) * (v - m1);
          cs.wf_mean[c] = m1;
        }
      }
      return;
    }
    case ZYX_WF_SAVE:      // a: group
    case ZYX_WF_RESTORE:   // a: group
    case ZYX_WF_TO_FACE: {  // a: scale index, b: group
      uint32_t group = op == ZYX_WF_TO_FACE ? b : a;
      if (group > 15) kernel_fail("welford: group " + std::to_string(group) + " is beyond the 16 groups of a tile");
      if (dst + 1 >= dst_capacity()) dst_tile(dst + 1);  // reports the bad index
      uint32_t* mt = dst_tile(dst);
      uint32_t* vt = dst_tile(dst + 1);
      if (op == ZYX_WF_RESTORE) {
        bool mi = core().dst_kind[dst] == DstKind::Int, vi = core().dst_kind[dst + 1] == DstKind::Int;
        for (int c = 0; c < 32; c++) {
          int i = wf_raw_index(group, c);
          cs.wf_mean[c] = mi ? double(int32_t(mt[i])) : u2f(mt[i]);
          cs.wf_m2[c] = vi ? double(int32_t(vt[i])) : u2f(vt[i]);
        }
        return;
      }
      double scale = op == ZYX_WF_TO_FACE ? wf_recip(a, lut, n) : 1.0;
      for (uint32_t t = dst; t <= dst + 1; t++)
        if (core().dst_kind[t] == DstKind::Int) {  // the tile becomes a float tile
          uint32_t* d = dst_tile(t);
          for (int i = 0; i < 1024; i++) d[i] = f2u(static_cast<float>(static_cast<int32_t>(d[i])));
        }
      for (int c = 0; c < 32; c++) {
        int i = wf_raw_index(group, c);
        mt[i] = wf_value(cs.wf_mean[c], k);
        vt[i] = wf_value(cs.wf_m2[c] * scale, k);
      }
      mark(dst, k);
      mark(dst + 1, k);
      return;
    }
    case ZYX_WF_TO_ROW: {
      if (dst + 1 >= dst_capacity()) dst_tile(dst + 1);
      uint32_t* mt = dst_tile(dst);
      uint32_t* vt = dst_tile(dst + 1);
      double scale = wf_recip(a, lut, n);
      // Row 0 gets the values; rows 1-3 (all 32 columns) are zeroed, as the
      // SFPU's transpose-and-store of the four registers leaves them.
      for (int c = 0; c < 32; c++) {
        mt[fidx(0, c)] = wf_value(cs.wf_mean[c], k);
        vt[fidx(0, c)] = wf_value(cs.wf_m2[c] * scale, k);
        for (int r = 1; r < 4; r++) mt[fidx(r, c)] = 0, vt[fidx(r, c)] = 0;
      }
      mark(dst, k);
      mark(dst + 1, k);
      return;
    }
    default: kernel_fail("welford: operation " + std::to_string(op) + " is not emulated");
  }
}

}  // namespace zyx::emu
