// The SFPU's sorting calls: the bitonic top-k stages (topk_tile_init,
// topk_local_sort, topk_merge, topk_rebuild) and the max pool with indices
// (max_reduce_with_indices(_init)), as the card runs them. The LLK sorts
// with raw SFPU instructions whose lane layout decides which values meet and
// which of two equal values moves, so the emulator runs the same instruction
// sequences on a model of the state they use: LREG0-7 (32 lanes each), the
// SFPU's Dst counter and its carriage return, the math destination offset,
// and SFPSWAP's index tracking and reversed compare (the lane config).
// Top-k: the values are DST tiles idst and idst + 1 (64 rows a column, tile
// idst's 32 then the next's), their indices the two tiles 128 rows later;
// each of the 32 columns is sorted on its own. Written from the Tensix ISA's
// SFPSWAP, SFPTRANSP, SFPLOAD/SFPSTORE, INCRWC and SETRWC and tt-llk's
// sequences of them (ckernel_sfpu_topk.h, ckernel_sfpu_max_pool_indices.h).
#include <algorithm>
#include <string>
#include <utility>

#include "compute_api.hpp"
#include "kernel_api.hpp"
#include "zyx_emu/sfpi_arith.h"

namespace zyx::emu {

using namespace compute;

namespace {

using sfpi::impl_::lane_word;

// SFPSWAP's modes (its instr_mod1) and, as an entry of a sequence, SFPTRANSP.
enum Swap : uint8_t { kAlways = 0, kAllMax = 1, kRows01Max = 2, kRows02Max = 3, kTransp = 255 };
// One instruction of a compare sequence: SFPSWAP of LREGs c and d (c gets the
// larger value where the mode says max), or SFPTRANSP.
struct Step {
  uint8_t c, d, mode;
};
constexpr Step T{0, 0, kTransp};

// The compare blocks of tt-llk's sequences: phase 0 (step 1), 1 (steps 2-1),
// 2 (steps 3-1), half of phase 3 (run twice: steps 4-3, then 2-1 after the
// transposes), each as plain and stable sort have them (the stable forms
// repeat a swap, which undoes a swap of equal values).
constexpr Step kPh0[] = {T, {0, 1, kAllMax}, {3, 2, kAllMax}, T};
constexpr Step kPh0Stable[] = {T, {0, 1, kAllMax}, {3, 2, kAllMax}, {0, 1, kAllMax}, {3, 2, kAllMax}, T};
constexpr Step kPh1[] = {T, {0, 2, kRows02Max}, {1, 3, kRows02Max}, {0, 1, kRows02Max}, {2, 3, kRows02Max}, T};
constexpr Step kPh1Stable[] = {T,
                               {0, 2, kRows02Max},
                               {1, 3, kRows02Max},
                               {0, 2, kRows02Max},
                               {1, 3, kRows02Max},
                               {0, 1, kRows02Max},
                               {2, 3, kRows02Max},
                               {0, 1, kRows02Max},
                               {2, 3, kRows02Max},
                               T};
constexpr Step kPh2[] = {{0, 1, kAllMax},    {2, 3, kAllMax},    {2, 3, kAlways},    T, {0, 2, kRows01Max},
                         {1, 3, kRows01Max}, {0, 1, kRows01Max}, {2, 3, kRows01Max}, T};
constexpr Step kPh2Stable[] = {{0, 1, kAllMax},    {3, 2, kAllMax},    {0, 1, kAllMax},    {3, 2, kAllMax},
                               T,                  {0, 2, kRows01Max}, {1, 3, kRows01Max}, {0, 2, kRows01Max},
                               {1, 3, kRows01Max}, {0, 1, kRows01Max}, {2, 3, kRows01Max}, {0, 1, kRows01Max},
                               {2, 3, kRows01Max}, T};
constexpr Step kPh3Half[] = {{0, 2, kAllMax}, {1, 3, kAllMax}, {0, 1, kAllMax}, {2, 3, kAllMax}, T};
constexpr Step kPh3HalfStable[] = {{0, 2, kAllMax}, {1, 3, kAllMax}, {0, 2, kAllMax}, {1, 3, kAllMax},
                                   {2, 3, kAllMax}, {0, 1, kAllMax}, {2, 3, kAllMax}, {0, 1, kAllMax}, T};

// ComputeState::pool_layout once top-k recorded over the max pool's sequence.
constexpr uint32_t kPoolOverwritten = 3;
constexpr uint32_t kIndexRows = 128;  // the index tiles follow the two value tiles
constexpr uint32_t kAltIncr = 32;     // the Dst increment topk's init gives the SFPU's ADDR_MOD_2

// SFPU state and the instructions the top-k and max-pool sequences use.
class Sfpu {
 public:
  Sfpu(uint32_t idst, bool stable) : stable_(stable), offset_(idst * 64) {}

  bool stable() const { return stable_; }
  // set_dst_write_addr: the math destination offset, in rows.
  void set_offset(uint32_t rows) { offset_ = rows; }
  // SETRWC SET_D: the Dst counter and its carriage return to 0.
  void clear_counter() { cstate().sfpu_rwc = cstate().sfpu_cr = 0; }
  // INCRWC by 8 rows, `rows` / 8 times; cr: through the carriage return.
  void step_counter(uint32_t rows, bool cr) {
    ComputeState& cs = cstate();
    for (uint32_t i = 0; i < rows / 8; i++) {
      if (cr) cs.sfpu_rwc = cs.sfpu_cr = cs.sfpu_cr + 8;
      else cs.sfpu_rwc += 8;
    }
  }
  // SFPCONFIG of the lane config's reversed compare (for an ascending block).
  void set_reversed(bool r) { reversed_ = r; }

  // SFPLOAD / SFPSTORE of LREG r at row `addr` (values with the DST format's
  // conversion, indices as raw words: LO16 or INT32), the counter moving by
  // `incr` after it.
  void load(int r, uint32_t addr, bool index) {
    uint32_t flags = 0;
    const uint32_t* p = api_sfpu_dst(ZYX_SFPU_LOAD, int32_t(offset_ + addr), &flags);
    for (int l = 0; l < 32; l++) {
      uint32_t w = p[lane_word(l, flags)];
      lreg_[r][l] = index ? w : sfpi::impl_::load_word(w, flags);
    }
  }
  void store(int r, uint32_t addr, bool index, uint32_t incr = 0) {
    uint32_t flags = 0;
    uint32_t* p = api_sfpu_dst(ZYX_SFPU_STORE, int32_t(offset_ + addr), &flags);
    for (int l = 0; l < 32; l++) p[lane_word(l, flags)] = index ? lreg_[r][l] : sfpi::impl_::store_word(lreg_[r][l], flags);
    cstate().sfpu_rwc += incr;
  }

  // Four value registers (rows 0, d0, d1, d1 + d0) and their indices.
  void load16(uint32_t d0, uint32_t d1) { quad(d0, d1, [&](int r, uint32_t a, bool i) { load(r, a, i); }); }
  // The same stored; alt: the last store moves the counter (ADDR_MOD_2).
  void store16(uint32_t d0, uint32_t d1, bool alt) {
    quad(d0, d1, [&](int r, uint32_t a, bool i) { store(r, a, i, alt && r == 7 ? kAltIncr : 0); });
  }
  // Two value registers `dist` rows apart from datum `offset` of the 64 (16
  // a face, the next 16 a face pair further), and their indices.
  void load8(uint32_t offset, uint32_t dist) { pair(offset, dist, [&](int r, uint32_t a, bool i) { load(r, a, i); }); }
  void store8(uint32_t offset, uint32_t dist) {
    pair(offset, dist, [&](int r, uint32_t a, bool i) { store(r, a, i); });
  }

  // SFPSWAP: lanes where VD gets the min swap when c < d, the others when
  // c >= d (sign-magnitude order), both the other way round reversed; mode
  // kAlways swaps every lane. Index tracking (both calls' inits turn it on)
  // swaps LREG c + 4 and d + 4 with them.
  void swap(int c, int d, uint8_t mode) {
    uint32_t vd_min = mode == kRows01Max ? 0x0000ffffu : mode == kRows02Max ? 0x00ff00ffu : 0xffffffffu;
    for (int l = 0; l < 32; l++) {
      bool s = true;
      if (mode != kAlways) {
        bool less = sfpi::impl_::smag_less(lreg_[c][l], lreg_[d][l]);
        s = (vd_min >> l & 1) ? less : !less;
        if (reversed_) s = !s;
      }
      if (!s) continue;
      std::swap(lreg_[c][l], lreg_[d][l]);
      std::swap(lreg_[c + 4][l], lreg_[d + 4][l]);
    }
  }
  // SFPTRANSP: LREG0-3 and LREG4-7 each transposed as 4 x 4 blocks of
  // 8-lane rows.
  void transpose() {
    for (int base = 0; base < 8; base += 4)
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
          for (int col = 0; col < 8; col++) std::swap(lreg_[base + i][j * 8 + col], lreg_[base + j][i * 8 + col]);
  }
  template <size_t N>
  void run(const Step (&steps)[N]) {
    for (const Step& s : steps) s.mode == kTransp ? transpose() : swap(s.c, s.d, s.mode);
  }

 private:
  template <class F>
  void quad(uint32_t d0, uint32_t d1, F f) {
    const uint32_t at[4] = {0, d0, d1, d1 + d0};
    for (int r = 0; r < 4; r++) f(r, at[r], false);
    for (int r = 0; r < 4; r++) f(r + 4, kIndexRows + at[r], true);
  }
  template <class F>
  void pair(uint32_t offset, uint32_t dist, F f) {
    uint32_t row = (offset & 15) + (offset >> 4) * 32;
    f(0, row, false);
    f(1, row + dist, false);
    f(4, kIndexRows + row, true);
    f(5, kIndexRows + row + dist, true);
  }

  uint32_t lreg_[8][32] = {};
  bool stable_, reversed_ = false;
  uint32_t offset_;
};

// The compare block of one phase (0-2) on the four loaded registers, or
// phase 3's steps 4 to 1 (its two halves) in direction dir (true: ascending,
// SFPSWAP's compare reversed).
void phase_block(Sfpu& s, int ph, bool dir) {
  switch (ph) {
    case 0: s.stable() ? s.run(kPh0Stable) : s.run(kPh0); return;
    case 1: s.stable() ? s.run(kPh1Stable) : s.run(kPh1); return;
    case 2: s.stable() ? s.run(kPh2Stable) : s.run(kPh2); return;
    default:
      s.set_reversed(dir);
      for (int half = 0; half < 2; half++) s.stable() ? s.run(kPh3HalfStable) : s.run(kPh3Half);
      s.set_reversed(false);
  }
}

// A step above 4: LREG0/1 against LREG2/3, the larger to LREG0/1
// (descending) or to LREG2/3 (ascending); stable sort compares twice.
void step_n(Sfpu& s, bool dir) {
  for (int i = 0; i < (s.stable() ? 2 : 1); i++) {
    s.swap(dir ? 2 : 0, dir ? 0 : 2, kAllMax);
    s.swap(dir ? 3 : 1, dir ? 1 : 3, kAllMax);
  }
}

// Steps `start` down to `end` + 1 of a phase whose sorted runs are seq_len
// long: 16-row groups compared 2 * dist rows apart, the counter walking the
// column's 64 values as the LLK walks it.
void steps_above_4(Sfpu& s, bool idir, uint32_t start, uint32_t end, uint32_t seq_len) {
  for (uint32_t ss = start; ss > end; ss--) {
    s.clear_counter();
    bool dir = idir;
    const uint32_t dist = ss == 5 ? 16 : 32, inner = dist >> 3;
    uint32_t done = 0, offset = 0;
    while (done < 64) {
      for (uint32_t ii = 0; ii < inner; ii++) {
        s.load16(4, 2 * dist);
        step_n(s, dir);
        s.store16(4, 2 * dist, false);
        uint32_t inc = 8;
        bool cr = false;
        offset += 8;
        if (ii == inner - 1) {
          cr = true;
          inc = 4 * dist;
          offset = 2 * dist;
        } else if (offset == 16) {
          cr = true;
          inc = 32;
        }
        s.step_counter(inc, cr);
        done += 16;
      }
      if (done == seq_len) dir = !dir;
    }
  }
}

// Steps 4 to 1 over the column's 64 values, 16 at a time, the direction
// turning once seq_len values are done.
void steps_4_to_1(Sfpu& s, bool idir, uint32_t seq_len) {
  s.clear_counter();
  bool dir = idir;
  for (uint32_t done = 0; done < 64;) {
    s.load16(4, 8);
    phase_block(s, 3, dir);
    s.store16(4, 8, true);
    done += 16;
    if (done == seq_len) dir = !dir;
  }
}

// The LLK runs each sequence four times, on 8 columns each: the even then
// the odd columns of faces 0/2, then of faces 1/3 (math offsets 2, 16, 18
// set absolutely; the first pass uses tile idst's offset).
template <class F>
void for_each_column_group(Sfpu& s, F f) {
  const uint32_t offsets[4] = {0, 2, 16, 18};
  for (int g = 0; g < 4; g++) {
    if (g) s.set_offset(offsets[g]);
    f();
  }
}

void check_init(const char* call) {
  if (!cstate().topk_ready)
    kernel_fail(std::string(call) +
                ": topk_tile_init has not run (it turns on SFPSWAP's index tracking and sets the Dst increment "
                "the sequence uses)");
}

void local_sort(uint32_t idst, bool idir, bool stable, int end_ph, int start_ph, int end_step, int start_step) {
  const char* call = "topk_local_sort";
  check_init(call);
  if (start_ph < 0 || end_ph > 5 || end_step < 0 || end_step > 6 || start_step < 0 || start_step > 6)
    kernel_fail(std::string(call) + ": phases " + std::to_string(start_ph) + ".." + std::to_string(end_ph) +
                " and steps " + std::to_string(start_step) + ".." + std::to_string(end_step) +
                " are outside 0..5 and 0..6");
  ComputeState& cs = cstate();
  // Phase 0 records the 16-value load and store in the replay buffer when
  // the LLK's replay state asks for it; every other phase replays them.
  const bool runs = start_ph <= end_ph, records = runs && start_ph == 0 && cs.topk_replay >= 0;
  if (runs && !records && !cs.topk_sort_io_recorded)
    kernel_fail(std::string(call) + ": phase " + std::to_string(start_ph) +
                " replays the load and store a phase-0 local sort records, and none is recorded (a rebuild or "
                "nothing overwrote it)");
  Sfpu s(idst, stable);
  for_each_column_group(s, [&] {
    bool dir = idir;
    for (int ph = start_ph; ph <= end_ph; ph++) {
      s.clear_counter();
      if (ph <= 3) {
        for (int d = 0; d < 4; d++) {
          s.load16(4, 8);
          phase_block(s, ph, dir);
          s.store16(4, 8, true);
          if (ph == 3) dir = !dir;
        }
        continue;
      }
      const bool one = start_ph == end_ph;
      const uint32_t steps = uint32_t(ph) + 1;
      steps_above_4(s, idir, one ? uint32_t(start_step) : steps, one ? uint32_t(end_step) : 4, 1u << steps);
      steps_4_to_1(s, idir, 1u << steps);
    }
  });
  if (records) {
    if (cs.pool_layout) cs.pool_layout = kPoolOverwritten;
    cs.topk_sort_io_recorded = true;
    cs.topk_rebuild_key = 0;
  }
  cs.topk_replay = -1;
}

void merge(uint32_t idst, bool top_min, bool stable, uint32_t m_iter, uint32_t k) {
  check_init("topk_merge");
  if (m_iter > 9 || k < 4 || k > 64 || (k & (k - 1)))
    kernel_fail("topk_merge: m_iter " + std::to_string(m_iter) + " and k " + std::to_string(k) +
                " are outside 0..9 and {4, 8, 16, 32, 64}");
  Sfpu s(idst, stable);
  for_each_column_group(s, [&] {
    s.clear_counter();
    const uint32_t kmax = std::min<uint32_t>(k, 32), inner = kmax >> 2;
    const uint32_t total = std::max<uint32_t>(2 * kmax, 64 >> m_iter);
    const uint32_t dist = std::min<uint32_t>(32, kmax << m_iter), ld_dist = dist < 16 ? dist : 2 * dist;
    uint32_t done = 0, offset = 0, cr = 0;
    while (done < total) {
      for (uint32_t ii = 0; ii < inner; ii++) {
        s.load8(offset, ld_dist);
        for (int i = 0; i < (stable ? 2 : 1); i++) s.swap(top_min ? 1 : 0, top_min ? 0 : 1, kAllMax);
        s.store8(offset, ld_dist);
        done += 8;
        if (ii == inner - 1) {
          cr += 2 * dist;
          offset = cr;
        } else {
          offset += 4;
        }
      }
    }
  });
}

// The rebuild sequence of one column group: runs of length k, 2^(m_iter+1)
// runs apart, sorted again in alternating directions (phases logk - 1 and
// below).
void rebuild_group(Sfpu& s, bool idir, uint32_t m_iter, uint32_t k, uint32_t logk, bool skip_second) {
  s.clear_counter();
  const uint32_t rm = m_iter + 1;
  const uint32_t total = std::max<uint32_t>(2 * k, 64 >> rm) >> (skip_second ? 1 : 0);
  const uint32_t dist = std::min<uint32_t>(32, k << rm), ld_offset = (dist >> 4) * 32 + (dist & 15);
  const int ph = int(logk) - 1;
  bool dir = idir;
  if (ph >= 4) {
    steps_above_4(s, idir, uint32_t(ph) + 1, 4, 1u << (ph + 1));
    steps_4_to_1(s, idir, 1u << (ph + 1));
    return;
  }
  for (uint32_t done = 0; ph > 0 && done < total; done += 16) {
    if (ph == 1 && m_iter >= 2) {  // runs of 2 a group apart: two registers
      s.load8(0, ld_offset);
      phase_block(s, 1, dir);
      s.store8(0, ld_offset);
      s.step_counter(64, false);
      continue;
    }
    const uint32_t d0 = ph == 1 ? ld_offset : 4;
    const uint32_t d1 = ph == 1 ? (ld_offset < 16 ? 4 * ld_offset : 2 * ld_offset) : ph == 2 ? ld_offset : 8;
    s.load16(d0, d1);
    phase_block(s, ph, dir);
    s.store16(d0, d1, true);
    s.step_counter(32, false);
    if (ph == 3) dir = !dir;
  }
}

void rebuild(uint32_t idst, bool idir, bool stable, uint32_t m_iter, uint32_t k, uint32_t logk, bool skip_second) {
  const char* call = "topk_rebuild";
  check_init(call);
  if (m_iter > 9 || k < 4 || k > 64 || (k & (k - 1)) || logk < 1 || logk > 6)
    kernel_fail(std::string(call) + ": m_iter " + std::to_string(m_iter) + ", k " + std::to_string(k) + " and logk " +
                std::to_string(logk) + " are outside 0..9, {4, 8, 16, 32, 64} and 1..6");
  // The LLK records a rebuild's sequence in the replay buffer when the last
  // recorded one was for another m_iter, else replays it: a replay of a
  // sequence recorded for other arguments (k, logk, stable) is not what
  // this call asks for, so it is a run error rather than a guess.
  ComputeState& cs = cstate();
  const int ph = int(logk) - 1;
  const uint32_t dist = std::min<uint32_t>(32, k << (m_iter + 1)), ld_offset = (dist >> 4) * 32 + (dist & 15);
  const uint32_t variant = ph == 0 ? 0 : ph == 1 ? (m_iter >= 2 ? 1 : 2) : ph == 2 ? 3 : ph == 3 ? 4 : 5;
  const bool replayed = variant >= 4 || (variant != 0 && !stable);
  const uint32_t key = replayed ? (variant | (variant <= 3 ? ld_offset : 0) << 8 | (stable ? 1u << 16 : 0u) | 1u << 31) : 0;
  const bool records = cs.topk_replay != int(m_iter + 1);
  if (replayed && !records && cs.topk_rebuild_key != key)
    kernel_fail(std::string(call) + "(m_iter " + std::to_string(m_iter) +
                ") would replay a sequence the last rebuild of that m_iter recorded for other k, logk or stable_sort");
  Sfpu s(idst, stable);
  for_each_column_group(s, [&] { rebuild_group(s, idir, m_iter, k, logk, skip_second); });
  if (replayed && records) {
    if (cs.pool_layout) cs.pool_layout = kPoolOverwritten;
    cs.topk_rebuild_key = key;
    cs.topk_sort_io_recorded = false;
  }
  cs.topk_replay = int(m_iter + 1);
}

// The max pool's 7-instruction sequences its init records in the replay
// buffer: the TILE layout's (a transposed sort of 4 rows, then the max of
// the two halves) and the ROW_MAJOR layout's (8 rows to their max in LREG0's
// first row).
constexpr Step kPoolTile[] = {T, {0, 1, kAllMax}, {2, 3, kAllMax}, {0, 2, kAllMax}, T, {0, 1, kAllMax}, {2, 3, kAllMax}};
constexpr Step kPoolRowMajor[] = {{0, 1, kAllMax}, {2, 3, kAllMax}, {0, 2, kAllMax}, T,
                                  {0, 2, kAllMax}, {1, 3, kAllMax}, T};

// TILE layout, up to 9 rows: rows 0-8 of the face at the counter and of the
// face 16 rows on, even and odd columns at once, to their max in row 0.
void pool_tile(Sfpu& s, uint32_t v, uint32_t i) {
  const uint32_t at[4] = {0, 4, 2, 6};  // even rows 0-3, 4-7, odd rows 0-3, 4-7
  for (uint32_t face : {0u, 16u}) {
    for (int r = 0; r < 4; r++) s.load(r, v + face + at[r], false);
    for (int r = 0; r < 4; r++) s.load(r + 4, i + face + at[r], true);
    s.run(kPoolTile);
    s.load(1, v + face + 8, false);
    s.load(3, v + face + 10, false);
    s.load(5, i + face + 8, true);
    s.load(7, i + face + 10, true);
    s.swap(0, 1, kAllMax);
    s.swap(2, 3, kAllMax);
    s.store(0, v + face, false);
    s.store(2, v + face + 2, false);
    s.store(4, i + face, true);
    s.store(6, i + face + 2, true);
  }
}

// ROW_MAJOR layout, up to 9 rows (DST rows 0-15 and 16 on, at the counter).
void pool_row_major(Sfpu& s, uint32_t v, uint32_t i) {
  for (uint32_t col : {0u, 2u}) {
    for (int r = 0; r < 4; r++) s.load(r, v + 4 * r + col, false);
    for (int r = 0; r < 4; r++) s.load(r + 4, i + 4 * r + col, true);
    s.run(kPoolRowMajor);
    s.load(1, v + 16 + col, false);
    s.load(5, i + 16 + col, true);
    s.swap(0, 1, kAllMax);
    s.store(4, i + col, true);
    s.store(0, v + col, false);
  }
}

// The generic form's steps: 8 rows (16 DST rows) to their max in LREG0, and
// 16 rows as two of those.
void pool_8_rows(Sfpu& s, uint32_t vb, uint32_t ib, bool store) {
  for (int r = 0; r < 4; r++) s.load(r, vb + 4 * r, false);
  for (int r = 0; r < 4; r++) s.load(r + 4, ib + 4 * r, true);
  s.run(kPoolRowMajor);
  if (!store) return;
  s.store(0, vb, false);
  s.store(4, ib, true);
}
void pool_16_rows(Sfpu& s, uint32_t vb, uint32_t ib, bool store) {
  pool_8_rows(s, vb, ib, true);
  pool_8_rows(s, vb + 16, ib + 16, false);
  s.load(1, vb, false);
  s.load(5, ib, true);
  s.swap(0, 1, kAllMax);
  if (!store) return;
  s.store(4, ib, true);
  s.store(0, vb, false);
}

// ROW_MAJOR layout, up to 32 rows; accumulate keeps a running max in the
// tiles after the values and indices (chunk 0 starts it).
void pool_generic(Sfpu& s, uint32_t v, uint32_t i, bool accumulate, uint32_t chunk) {
  for (uint32_t col : {0u, 2u}) {
    pool_16_rows(s, v + col, i + col, true);
    pool_16_rows(s, v + 32 + col, i + 32 + col, false);
    s.load(1, v + col, false);
    s.load(5, i + col, true);
    s.swap(0, 1, kAllMax);
    if (accumulate) {
      if (chunk > 0) {
        s.load(1, v + 64 + col, false);
        s.load(5, i + 64 + col, true);
        s.swap(0, 1, kAllMax);
      }
      s.store(4, i + 64 + col, true);
      s.store(0, v + 64 + col, false);
    }
    s.store(4, i + col, true);
    s.store(0, v + col, false);
  }
}

// max_reduce_with_indices: the binary SFPU wrapper runs the sequence once a
// face, the counter 16 rows further each time (so the last face's second
// half reads and writes rows 0-3 of the next tiles, as on the card).
void max_pool(uint32_t values, uint32_t indices, uint32_t num_rows, uint32_t layout, bool accumulate, uint32_t chunk) {
  ComputeState& cs = cstate();
  if (cs.pool_layout != layout + 1)
    kernel_fail(std::string("max_reduce_with_indices: ") +
                (cs.pool_layout ? "the replay buffer holds another sequence (another layout's init, or top-k recorded over it)"
                                : "max_reduce_with_indices_init has not run") +
                "; call max_reduce_with_indices_init<layout> first");
  Sfpu s(0, false);
  const uint32_t v = values * 64, i = indices * 64;
  for (uint32_t face = 0; face < 4; face++) {
    cs.sfpu_rwc = cs.sfpu_cr = face * 16;
    if (num_rows > 9) pool_generic(s, v, i, accumulate, chunk);
    else if (layout == 0) pool_tile(s, v, i);
    else pool_row_major(s, v, i);
  }
}

}  // namespace

namespace compute {

void sort_special(uint32_t op, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  SfpuScope sfpu;
  ComputeState& cs = cstate();
  const bool dir = b & 1, stable = b & 2;
  switch (op) {
    case ZYX_CS_TOPK_INIT:
      cs.topk_ready = true;
      cs.topk_replay = 0;
      return;
    case ZYX_CS_TOPK_LOCAL_SORT:
      local_sort(a, dir, stable, int(c & 0xffff), int(c >> 16), int(d & 0xffff), int(d >> 16));
      break;
    case ZYX_CS_TOPK_MERGE: merge(a, dir, stable, c, d); break;
    case ZYX_CS_TOPK_REBUILD: rebuild(a, dir, stable, c & 0xffff, d, c >> 16, b & 4); break;
    case ZYX_CS_MAX_POOL_INIT:
      // it records its sequence over the replay buffer and turns on index tracking
      cs.pool_layout = a + 1;
      cs.topk_sort_io_recorded = false;
      cs.topk_rebuild_key = 0;
      return;
    case ZYX_CS_MAX_POOL: max_pool(a, b, c & 0xff, (c >> 8) & 1, c & 0x200, d); break;
    default: kernel_fail("compute: special operation " + std::to_string(op) + " is not emulated");
  }
  cs.sfpu_rwc = cs.sfpu_cr = 0;  // clear_dst_reg_addr
  scan_sfpi_stores();
}

}  // namespace compute

}  // namespace zyx::emu
