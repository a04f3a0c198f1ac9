// Compute API tests of the SFPU's sorting calls, the top-k stages
// (topk_tile_init, topk_local_sort, topk_merge, topk_rebuild) and the max
// pool with indices (max_reduce_with_indices(_init)): each column's 64
// values (DST tiles 0 and 1, rows top to bottom) and their indices (tiles 2
// and 3) after each call, checked against a sort or max done here in the
// SFPU's sign-magnitude order, against index tables worked out by hand from
// the instructions' definitions (which lanes meet, which ties move), and for
// the run errors of calls the emulator cannot run as the card would; and
// dbg_read_dest_acc_row's cells against hand-worked and encoded words.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include "compute_harness.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;

namespace {

// Values in cb 0 to DST 0-1, UInt16 indices in cb 1 to DST 2-3; INIT and
// BODY (runtime args a, b) run; DST tiles `out` and `out + 1` are packed.
const char* kTopkKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#ifndef INIT
#define INIT topk_tile_init()
#endif
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0);
  const int a = int(get_arg_val<uint32_t>(1)), b = int(get_arg_val<uint32_t>(2));
  (void)a;
  (void)b;
  init_sfpu(0, 16);
  cb_wait_front(0, 2);
  cb_wait_front(1, 2);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  copy_tile(0, 1, 1);
  copy_tile_to_dst_init_short(1);
  copy_tile(1, 0, 2);
  copy_tile(1, 1, 3);
  INIT;
  BODY;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 2);
  pack_tile(out, 16);
  pack_tile(out + 1, 16);
  cb_push_back(16, 2);
  tile_regs_release();
}
)";

constexpr int kCols = 32, kLen = 64;
using Cols = std::vector<std::vector<float>>;        // [column][position 0..63]
using Idx = std::vector<std::vector<uint32_t>>;      // the same for indices
const float kInf = std::numeric_limits<float>::infinity();

// Position j of column c: tile j / 32, row j % 32.
size_t word(int c, int j) { return size_t(j / 32) * 1024 + size_t(fi(j % 32, c)); }
// The index each value starts with: unique over both tiles.
uint32_t start_index(int c, int j) { return uint32_t(c * kLen + j); }

struct Sorted {
  Cols val;
  Idx idx;
};

// Runs the kernel on columns v (format vf; fp32: a 32-bit DST) and reads back
// the values and the indices (a run each: one output format per run).
Sorted run_topk(DeviceLayer& layer, const std::string& vf, bool fp32, const Cols& v, const std::string& body,
                uint32_t a = 0, uint32_t b = 0, const std::string& init = "") {
  std::vector<float> flat(2048);
  std::vector<uint8_t> ind(4096);
  for (int c = 0; c < kCols; c++)
    for (int j = 0; j < kLen; j++) {
      flat[word(c, j)] = v[c][j];
      uint16_t x = uint16_t(start_index(c, j));
      std::memcpy(&ind[word(c, j) * 2], &x, 2);
    }
  Run r;
  r.formats = {vf, "UInt16"};
  r.inputs = {vf == "Float32" ? f32_bytes(flat) : bf16_bytes(flat), ind};
  r.out_tiles = 2;
  r.compute = kTopkKernel;
  r.defines = {{"BODY", body}};
  if (!init.empty()) r.defines["INIT"] = init;
  r.fp32 = fp32;
  r.out_format = vf;
  r.args = {0, a, b};
  std::vector<uint8_t> vb = run(layer, r);
  std::vector<float> vals = vf == "Float32" ? bytes_f32(vb) : bytes_bf16(vb);
  r.out_format = "UInt16";
  r.args = {2, a, b};
  std::vector<uint8_t> ib = run(layer, r);
  Sorted s{Cols(kCols, std::vector<float>(kLen)), Idx(kCols, std::vector<uint32_t>(kLen))};
  for (int c = 0; c < kCols; c++)
    for (int j = 0; j < kLen; j++) {
      s.val[c][j] = vals[word(c, j)];
      uint16_t x;
      std::memcpy(&x, &ib[word(c, j) * 2], 2);
      s.idx[c][j] = x;
    }
  return s;
}

// The SFPU's order (sign-magnitude words): -0 below +0, infinities at the ends.
int64_t order_key(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  int64_t mag = u & 0x7fffffffu;
  return (u >> 31) ? -mag - 1 : mag;
}
bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

// Column c's inputs sorted (descending unless ascending).
std::vector<float> sorted_column(const Cols& v, int c, bool ascending) {
  std::vector<float> s = v[c];
  std::stable_sort(s.begin(), s.end(), [&](float x, float y) {
    return ascending ? order_key(x) < order_key(y) : order_key(x) > order_key(y);
  });
  return s;
}

// Each output index names an input position of its column holding the value
// next to it, and the indices of a column are a permutation of its inputs'.
void check_pairs(const Cols& in, const Sorted& out, int first, int count, const std::string& what) {
  for (int c = 0; c < kCols; c++) {
    std::vector<int> seen(kLen, 0);
    for (int j = first; j < first + count; j++) {
      uint32_t i = out.idx[c][j];
      bool ok = i >= uint32_t(c * kLen) && i < uint32_t((c + 1) * kLen);
      if (!ok) fprintf(stderr, "  %s: column %d position %d index %u\n", what.c_str(), c, j, i);
      CHECK(ok);
      int p = int(i) - c * kLen;
      seen[p]++;
      if (!same_bits(out.val[c][j], in[c][p]))
        fprintf(stderr, "  %s: column %d position %d: value %g, index %u holds %g\n", what.c_str(), c, j,
                out.val[c][j], i, in[c][p]);
      CHECK(same_bits(out.val[c][j], in[c][p]));
    }
    for (int p = 0; p < kLen; p++) CHECK(seen[p] <= 1);
  }
}

// Positions [first, first + count) of every column hold `want(c)`'s first
// `count` values, bit for bit.
template <class Want>
void check_values(const Sorted& out, int first, int count, Want want, const std::string& what) {
  for (int c = 0; c < kCols; c++) {
    std::vector<float> w = want(c);
    for (int j = 0; j < count; j++) {
      if (!same_bits(out.val[c][first + j], w[j])) {
        fprintf(stderr, "  %s: column %d position %d: %g, want %g\n  got", what.c_str(), c, first + j,
                out.val[c][first + j], w[j]);
        for (int p = 0; p < kLen; p++) fprintf(stderr, " %g", out.val[c][p]);
        fprintf(stderr, "\n");
      }
      CHECK(same_bits(out.val[c][first + j], w[j]));
    }
  }
}

// Distinct values per column in a shuffled order: -inf, +inf, -0, +0,
// negatives and positives (all exact in bf16).
Cols distinct_columns(uint32_t seed) {
  std::mt19937 rng(seed);
  Cols v(kCols, std::vector<float>(kLen));
  for (int c = 0; c < kCols; c++) {
    for (int j = 0; j < kLen; j++) v[c][j] = float(j - 30) * 0.75f;
    v[c][0] = -kInf;
    v[c][1] = kInf;
    v[c][2] = -0.0f;  // j = 30 gives +0
    std::shuffle(v[c].begin(), v[c].end(), rng);
  }
  return v;
}

// Values distinct over both tiles (the ROW_MAJOR max pool reduces across
// tile columns), -inf and +inf among them, shuffled.
Cols distinct_all(uint32_t seed) {
  std::vector<float> all(kCols * kLen);
  for (size_t k = 0; k < all.size(); k++) all[k] = float(k) * 0.25f - 300.0f;
  all[0] = -kInf;
  all[1] = kInf;
  std::mt19937 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  Cols v(kCols, std::vector<float>(kLen));
  for (int c = 0; c < kCols; c++)
    for (int j = 0; j < kLen; j++) v[c][j] = all[size_t(c) * kLen + j];
  return v;
}

// Four values only, so every column is full of ties.
Cols tied_columns(uint32_t seed) {
  std::mt19937 rng(seed);
  const float pick[4] = {-kInf, -2.0f, 0.5f, 3.0f};
  Cols v(kCols, std::vector<float>(kLen));
  for (auto& col : v)
    for (auto& x : col) x = pick[rng() % 4];
  return v;
}

// topk_local_sort over phases 0-5 sorts each column's 64 values, descending
// (idir 0) or ascending (1), indices following their values; on a 32-bit
// DST with Float32 values and on a 16-bit one with bf16 values.
void test_local_sort_full(DeviceLayer& layer) {
  const Cols v = distinct_columns(7);
  for (std::string vf : {"Float32", "Float16_b"})
    for (int dir = 0; dir < 2; dir++) {
      const std::string what = "local sort " + vf + (dir ? " ascending" : " descending");
      Sorted s = run_topk(layer, vf, vf == "Float32", v, "topk_local_sort(0, a, 5)", dir);
      check_values(s, 0, kLen, [&](int c) { return sorted_column(v, c, dir); }, what);
      check_pairs(v, s, 0, kLen, what);
      // the order key is total: the sorted values fix every index
      for (int c = 0; c < kCols; c++)
        for (int j = 0; j + 1 < kLen; j++)
          CHECK(dir ? order_key(s.val[c][j]) < order_key(s.val[c][j + 1])
                    : order_key(s.val[c][j]) > order_key(s.val[c][j + 1]));
    }
}
ZYX_TEST(local_sort, test_local_sort_full);

// With ties the values still come out sorted and each index stays with its
// value, plain and stable, both directions.
void test_local_sort_ties(DeviceLayer& layer) {
  const Cols v = tied_columns(11);
  for (int stable = 0; stable < 2; stable++)
    for (int dir = 0; dir < 2; dir++) {
      const std::string what = std::string("tied local sort") + (stable ? " stable" : "") + (dir ? " ascending" : "");
      Sorted s = run_topk(layer, "Float32", true, v,
                          stable ? "topk_local_sort<true>(0, a, 5)" : "topk_local_sort(0, a, 5)", dir);
      check_values(s, 0, kLen, [&](int c) { return sorted_column(v, c, dir); }, what);
      check_pairs(v, s, 0, kLen, what);
    }
}
ZYX_TEST(local_sort, test_local_sort_ties);

// Phase 0 alone, worked by hand: after SFPTRANSP, LREG0-3 hold positions
// 4i, 4i+1, 4i+2, 4i+3 of a 16-row group; SFPSWAP(LREG0, LREG1) puts the
// larger first and SFPSWAP(LREG3, LREG2) the larger last, so the pairs
// (0, 1), (4, 5), ... come out descending, (2, 3), (6, 7), ... ascending,
// and equal values never swap.
void test_phase0_by_hand(DeviceLayer& layer) {
  Cols v(kCols, std::vector<float>(kLen, 1.0f));
  const float head[8] = {1.0f, 5.0f, 5.0f, 2.0f, 7.0f, 7.0f, -kInf, -1.0f};
  const float want_v[8] = {5.0f, 1.0f, 2.0f, 5.0f, 7.0f, 7.0f, -kInf, -1.0f};
  const uint32_t want_i[8] = {1, 0, 3, 2, 4, 5, 6, 7};
  for (int c = 0; c < kCols; c++) {
    for (int j = 0; j < 8; j++) v[c][j] = head[j];
    for (int j = 8; j < kLen; j++) v[c][j] = float((j * 7 + c) % 13) - 6.0f;
  }
  for (int stable = 0; stable < 2; stable++) {
    Sorted s = run_topk(layer, "Float32", true, v, stable ? "topk_local_sort<true>(0, 0, 0)" : "topk_local_sort(0, 0, 0)");
    for (int c = 0; c < kCols; c++) {
      for (int j = 0; j < 8; j++) {
        CHECK(same_bits(s.val[c][j], want_v[j]));
        CHECK_EQ(s.idx[c][j], start_index(c, int(want_i[j])));
      }
      // every pair of the rest: descending where p % 4 == 0, else ascending
      for (int p = 8; p < kLen; p += 2) {
        float x = v[c][p], y = v[c][p + 1];
        bool desc = p % 4 == 0, swap = desc ? order_key(x) < order_key(y) : order_key(x) > order_key(y);
        CHECK(same_bits(s.val[c][p], swap ? y : x));
        CHECK_EQ(s.idx[c][p], start_index(c, swap ? p + 1 : p));
      }
    }
  }
}
ZYX_TEST(local_sort, test_phase0_by_hand);

// Phase 3 alone (i_start_phase == i_end_phase == 3, after a phase-0 call
// recorded the load and store it replays) on columns of one value: the
// 16-row groups alternate direction from idir, and an ascending group runs
// with SFPSWAP's compare reversed, which swaps equal values. Worked by hand
// through the two halves (steps 4, 3, SFPTRANSP, steps 4, 3, SFPTRANSP), an
// ascending group's indices come out reversed and a descending group's stay;
// stable sort's repeated swap puts every tie back.
void test_phase3_ties_by_hand(DeviceLayer& layer) {
  Cols v(kCols, std::vector<float>(kLen));
  for (int c = 0; c < kCols; c++)
    for (int j = 0; j < kLen; j++) v[c][j] = c % 2 ? -2.5f : 4.0f;
  for (int stable = 0; stable < 2; stable++)
    for (int dir = 0; dir < 2; dir++) {
      std::string body = stable ? "topk_local_sort<true>(0, 0, 0); topk_local_sort<true>(0, a, 3, 3)"
                                : "topk_local_sort(0, 0, 0); topk_local_sort(0, a, 3, 3)";
      Sorted s = run_topk(layer, "Float32", true, v, body, dir);
      for (int c = 0; c < kCols; c++)
        for (int j = 0; j < kLen; j++) {
          bool ascending = ((j / 16) % 2 == 0) == (dir == 1);
          int from = (ascending && !stable) ? (j / 16) * 16 + 15 - j % 16 : j;
          CHECK_EQ(s.idx[c][j], start_index(c, from));
          CHECK(same_bits(s.val[c][j], v[c][j]));
        }
    }
}
ZYX_TEST(local_sort, test_phase3_ties_by_hand);

// ttnn's top-k sequence on one pair of tiles (topk_local.cpp with Wt = 2):
// local sort into runs of K (phases to log K - 1), then for each level a
// merge (the larger K of two runs into the first, topk_merge<idir>) and a
// rebuild (the runs sorted again): the first K positions of each column
// end up as its K largest (idir 0) or smallest (idir 1) values in order. K
// 4 to 32 walk every rebuild path (phases 1-4, both phase-1 forms). Phases
// 0-2 take no direction (their SFPSWAP modes fix it: the first run of 4 or
// 8 descending), so for K 4 and 8 the K smallest come out descending.
void test_topk_sequence(DeviceLayer& layer) {
  const std::string body =
      "int logk = 0; while ((1 << logk) < b) logk++;"
      "topk_local_sort(0, a, logk - 1);"
      "for (int m = 0; (b << m) < 64; m++) {"
      "  if (a) topk_merge<true>(0, m, b); else topk_merge<false>(0, m, b);"
      "  topk_rebuild(0, a != 0, m, b, logk, 0);"
      "}";
  const Cols v = distinct_columns(23), t = tied_columns(29);
  for (int k : {4, 8, 16, 32})
    for (int dir = 0; dir < 2; dir++)
      for (const Cols* in : {&v, &t}) {
        const std::string what = "top-" + std::to_string(k) + (dir ? " smallest" : " largest") +
                                 (in == &t ? " (ties)" : "");
        Sorted s = run_topk(layer, "Float16_b", false, *in, body, dir, k);
        check_values(s, 0, k, [&](int c) {
          std::vector<float> w = sorted_column(*in, c, dir);
          if (dir && k <= 8) std::reverse(w.begin(), w.begin() + k);
          return w;
        }, what);
        check_pairs(*in, s, 0, kLen, what);
      }
}
ZYX_TEST(merge_rebuild, test_topk_sequence);

// topk_merge alone, worked by hand for k = 4, m_iter 0: position p of each
// 8-group meets p + 4, the larger (topk_merge<false>) or the smaller
// (<true>) going first; equal values stay.
void test_merge_by_hand(DeviceLayer& layer) {
  const Cols v = tied_columns(31);
  for (int top_min = 0; top_min < 2; top_min++) {
    Sorted s = run_topk(layer, "Float32", true, v, "if (a) topk_merge<true>(0, 0, 4); else topk_merge<false>(0, 0, 4)",
                        top_min);
    for (int c = 0; c < kCols; c++)
      for (int p = 0; p < kLen; p++) {
        if (p % 8 >= 4) continue;
        float x = v[c][p], y = v[c][p + 4];
        bool swap = top_min ? order_key(x) > order_key(y) : order_key(x) < order_key(y);
        CHECK(same_bits(s.val[c][p], swap ? y : x));
        CHECK(same_bits(s.val[c][p + 4], swap ? x : y));
        CHECK_EQ(s.idx[c][p], start_index(c, swap ? p + 4 : p));
        CHECK_EQ(s.idx[c][p + 4], start_index(c, swap ? p : p + 4));
      }
  }
}
ZYX_TEST(merge_rebuild, test_merge_by_hand);

// Calls the card would run on a state the emulator cannot reproduce stop
// with an error naming them: no topk_tile_init, a later phase replaying a
// load and store no phase-0 call recorded, arguments outside the LLK's.
void test_topk_run_errors(DeviceLayer& layer) {
  const Cols v = distinct_columns(3);
  struct Bad {
    std::string init, body, message;
  };
  const Bad bad[] = {
      {"(void)0", "topk_local_sort(0, 0, 5)", "topk_local_sort: topk_tile_init has not run"},
      {"", "topk_local_sort(0, 0, 4, 4, 4, 5)", "topk_local_sort: phase 4 replays the load and store"},
      {"", "topk_merge<false>(0, 0, 3)", "topk_merge: m_iter 0 and k 3 are outside"},
      {"", "topk_rebuild(0, false, 0, 32, 7, 0)", "topk_rebuild: m_iter 0, k 32 and logk 7 are outside"},
      {"", "topk_local_sort(0, 0, 6)", "topk_local_sort: phases 0..6"},
  };
  for (const Bad& b : bad) {
    std::string msg = expect_error("run_error", [&] { run_topk(layer, "Float32", true, v, b.body, 0, 0, b.init); });
    bool named = msg.find(b.message) != std::string::npos;
    if (!named) fprintf(stderr, "  %s: %s\n", b.body.c_str(), msg.c_str());
    CHECK(named);
  }
}
ZYX_TEST(errors, test_topk_run_errors);

// ---- max_reduce_with_indices ----

// A DST row address of a tile (16 words a row, 64 rows) as a place of the
// Cols view: tile t (0, 1) holds positions 32 t .. 32 t + 31 of a column.
struct Place {
  int c, j;
};
Place dst_place(int tile, int row, int word) {
  int face = row / 16;
  return {(face % 2) * 16 + word, tile * 32 + (face / 2) * 16 + row % 16};
}

// The max of the values at `at` (in order) and the first place holding it.
std::pair<float, Place> first_max(const Cols& v, const std::vector<Place>& at) {
  Place best = at[0];
  for (Place p : at)
    if (order_key(v[p.c][p.j]) > order_key(v[best.c][best.j])) best = p;
  return {v[best.c][best.j], best};
}

// TILE layout, 9 rows: each face's first row gets the max of its rows 0-8 and
// the index beside it, the first such row winning a tie (SFPSWAP keeps VC on
// equal values, and the sequence meets lower rows in VC). Rows 4-15 of each
// face keep their values. The binary SFPU wrapper runs the sequence once a
// face, on that face and the one 16 rows on, so worked by hand: faces 1-3
// are reduced twice, and the first pass leaves max(., row 9 + q) in row
// 1 + q (q < 3), so their first row ends with the max of rows 0-11; the last
// run reduces face 0 of the next tiles (DST 1 and 3) once, as tt-metal's
// pool kernel notes; face 1 of DST 1 stays as it was.
void test_max_pool_tile(DeviceLayer& layer) {
  for (const Cols& v : {distinct_columns(41), tied_columns(43)}) {
    Sorted s = run_topk(layer, "Float32", true, v, "max_reduce_with_indices(0, 2)", 0, 0,
                        "max_reduce_with_indices_init()");
    for (int c = 0; c < kCols; c++)
      for (int top : {0, 16, 32}) {  // face rows 0 and 16 of DST 0, face row 0 of DST 1
        if (top == 32 && c >= 16) {  // DST 1's face 1: untouched
          for (int j = 32; j < 48; j++) CHECK(same_bits(s.val[c][j], v[c][j]));
          continue;
        }
        const int once = (top == 0 && c < 16) || top == 32;
        std::vector<Place> rows;
        for (int r = 0; r < (once ? 9 : 12); r++) rows.push_back({c, top + r});
        auto [m, at] = first_max(v, rows);
        CHECK(same_bits(s.val[c][top], m));
        CHECK_EQ(s.idx[c][top], start_index(c, at.j));
        for (int r = 4; r < 16; r++) {
          CHECK(same_bits(s.val[c][top + r], v[c][top + r]));
          CHECK_EQ(s.idx[c][top + r], start_index(c, top + r));
        }
      }
  }
}
ZYX_TEST(max_pool, test_max_pool_tile);

// ROW_MAJOR layout, DST row 2L + f holding logical row L's face f (16
// columns). 9 rows: logical row 0 gets the max of rows 0-8 with its index.
// Worked by hand, ties: the first swaps meet DST rows {0, 4, 8, 12} (logical
// rows 0, 2, 4, 6) in VC against {2, 6, 10, 14} (rows 1, 3, 5, 7), so an
// even logical row wins a tie against an odd one before row order counts,
// and row 8 comes last: rows 1 and 2 tied, row 2's index wins; rows 0 and 8
// tied, row 0's. 32 rows (the generic form): the max of all 32.
void test_max_pool_row_major(DeviceLayer& layer) {
  const Cols v = distinct_all(47);
  for (int rows : {9, 32}) {
    const std::string n = std::to_string(rows);
    Sorted s = run_topk(layer, "Float32", true, v,
                        "max_reduce_with_indices<" + n + ", ckernel::DataLayout::ROW_MAJOR>(0, 2)", 0, 0,
                        "max_reduce_with_indices_init<ckernel::DataLayout::ROW_MAJOR>()");
    for (int f = 0; f < 2; f++)
      for (int w = 0; w < 16; w++) {
        Place out = dst_place(0, f, w);
        std::vector<Place> from;
        for (int l = 0; l < rows; l++) from.push_back(dst_place(0, 2 * l + f, w));
        auto [m, at] = first_max(v, from);
        CHECK(same_bits(s.val[out.c][out.j], m));
        CHECK_EQ(s.idx[out.c][out.j], start_index(at.c, at.j));
      }
  }
  // the hand-worked ties, in the even (f = 0) columns of face 0
  Cols t = distinct_all(53);
  auto set = [&](int row, int w, float x) {
    Place p = dst_place(0, row, w);
    t[p.c][p.j] = x;
  };
  for (int w = 0; w < 16; w++) {
    for (int l = 0; l < 9; l++) set(2 * l, w, -float(l + 1));
    const int tied[2] = {w % 2 == 0 ? 2 : 0, w % 2 == 0 ? 4 : 16};  // rows 1 and 2, or 0 and 8
    for (int row : tied) set(row, w, 9.0f);
  }
  Sorted s = run_topk(layer, "Float32", true, t, "max_reduce_with_indices<9, ckernel::DataLayout::ROW_MAJOR>(0, 2)", 0,
                      0, "max_reduce_with_indices_init<ckernel::DataLayout::ROW_MAJOR>()");
  for (int w = 0; w < 16; w++) {
    Place p0 = dst_place(0, 0, w), win = dst_place(0, w % 2 == 0 ? 4 : 0, w);
    CHECK(same_bits(s.val[p0.c][p0.j], 9.0f));
    CHECK_EQ(s.idx[p0.c][p0.j], start_index(win.c, win.j));
  }
}
ZYX_TEST(max_pool, test_max_pool_row_major);

// accumulate: chunk 0 on tile 0 starts the running max in DST 1 and 3; chunk
// 1 on tile 1 (copied into DST 0 and 2) keeps the larger, the current chunk
// winning a tie (it is VC): tile 1 a copy of tile 0 ties every max.
void test_max_pool_accumulate(DeviceLayer& layer) {
  const std::string body =
      "max_reduce_with_indices<32, ckernel::DataLayout::ROW_MAJOR, true>(0, 2, 0);"
      "copy_tile_to_dst_init_short(0); copy_tile(0, 1, 0);"
      "copy_tile_to_dst_init_short(1); copy_tile(1, 1, 2);"
      "max_reduce_with_indices<32, ckernel::DataLayout::ROW_MAJOR, true>(0, 2, 1)";
  Cols same = distinct_all(61);
  for (auto& col : same)
    for (int j = 32; j < kLen; j++) col[j] = col[j - 32];
  for (const Cols& v : {distinct_all(59), same}) {
    Sorted s = run_topk(layer, "Float32", true, v, body, 0, 0,
                        "max_reduce_with_indices_init<ckernel::DataLayout::ROW_MAJOR>()");
    for (int f = 0; f < 2; f++)
      for (int w = 0; w < 16; w++) {
        Place out = dst_place(0, f, w);
        std::vector<Place> a, b;
        for (int l = 0; l < 32; l++) {
          a.push_back(dst_place(0, 2 * l + f, w));
          b.push_back(dst_place(1, 2 * l + f, w));
        }
        auto ma = first_max(v, a), mb = first_max(v, b);
        auto want = order_key(mb.first) >= order_key(ma.first) ? mb : ma;
        CHECK(same_bits(s.val[out.c][out.j], want.first));
        CHECK_EQ(s.idx[out.c][out.j], start_index(want.second.c, want.second.j));
      }
  }
}
ZYX_TEST(max_pool, test_max_pool_accumulate);

// The max pool's run errors: no init, an init of the other layout, and a
// top-k local sort that recorded over the sequence the init recorded.
void test_max_pool_run_errors(DeviceLayer& layer) {
  const Cols v = distinct_columns(5);
  const std::string tile_init = "max_reduce_with_indices_init()";
  struct Bad {
    std::string init, body, message;
  };
  const Bad bad[] = {
      {"(void)0", "max_reduce_with_indices(0, 2)", "max_reduce_with_indices_init has not run"},
      {tile_init, "max_reduce_with_indices<9, ckernel::DataLayout::ROW_MAJOR>(0, 2)", "holds another sequence"},
      {tile_init, "topk_tile_init(); topk_local_sort(0, 0, 1); max_reduce_with_indices(0, 2)",
       "holds another sequence"},
  };
  for (const Bad& b : bad) {
    std::string msg = expect_error("run_error", [&] { run_topk(layer, "Float32", true, v, b.body, 0, 0, b.init); });
    bool named = msg.find(b.message) != std::string::npos;
    if (!named) fprintf(stderr, "  %s: %s\n", b.body.c_str(), msg.c_str());
    CHECK(named);
  }
}
ZYX_TEST(max_pool, test_max_pool_run_errors);

// ---- dbg_read_dest_acc_row ----

// Copies the two tiles of cb 0 to DST 0 and 1, reads the DST rows ROWS
// (NROWS of them) through dbg_read_dest_acc_row and writes their words to
// cb 16's page.
const char* kDestRowKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 2);
  tile_regs_acquire();
  copy_tile_to_dst_init_short(0);
  copy_tile(0, 0, 0);
  copy_tile(0, 1, 1);
  const int rows[NROWS] = {ROWS};
  uint32_t words[NROWS][8];
  for (int r = 0; r < NROWS; r++) dbg_read_dest_acc_row(rows[r], words[r]);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  volatile uint32_t* out = reinterpret_cast<volatile uint32_t*>(get_write_ptr(16));
  for (int r = 0; r < NROWS; r++)
    for (int i = 0; i < 8; i++) out[r * 8 + i] = words[r][i];
  cb_push_back(16, 1);
  tile_regs_release();
}
)";

std::vector<uint32_t> read_dest_rows(DeviceLayer& layer, const std::string& vf, bool fp32, const std::vector<float>& tiles,
                                     const std::vector<int>& rows) {
  std::string list;
  for (int r : rows) list += (list.empty() ? "" : ", ") + std::to_string(r);
  Run r;
  r.formats = {vf};
  r.inputs = {vf == "Float32" ? f32_bytes(tiles) : bf16_bytes(tiles)};
  r.out_format = "Float32";
  r.compute = kDestRowKernel;
  r.defines = {{"ROWS", list}, {"NROWS", std::to_string(rows.size())}};
  r.fp32 = fp32;
  return from_bytes<uint32_t>(run(layer, r));
}

uint32_t f32_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
// ttsim's DST cell of a bf16 (the top half of an fp32): sign, then the 7
// mantissa bits, then the 8 exponent bits.
uint32_t bf16_cell(uint32_t top) { return (top & 0x8000) | (top & 0x7f) << 8 | ((top >> 7) & 0xff); }

// A 16-bit DST: row A of tile t is DST row 64 t + A, its 16 bf16 values in
// cells, two a word. Hand-worked: 1.0 (bf16 0x3f80) is cell 0x007f, -2.5
// (0xc020) is 0xa080. A 32-bit DST: logical row r's high halves sit in
// physical row ((r & ~7) << 1) | (r & 7), its low halves 8 rows on: row 16
// holds row 8's high halves, 24 its low ones, 0 and 8 row 0's, 131 and 139
// row 67's.
void test_dest_row(DeviceLayer& layer) {
  std::vector<float> t(2048);
  for (size_t k = 0; k < t.size(); k++) t[k] = float(int(k % 61) - 30) * 0.375f;  // exact in bf16
  auto word_at = [&](int tile, int a, int j) { return t[size_t(tile) * 1024 + size_t(a) * 16 + size_t(j)]; };
  t[5 * 16 + 0] = 1.0f;  // DST row 5, cells 0 and 1
  t[5 * 16 + 1] = -2.5f;
  {
    std::vector<uint32_t> got = read_dest_rows(layer, "Float16_b", false, t, {5, 64 + 17});
    CHECK_EQ(got[0], 0xa080007fu);
    for (int i = 0; i < 8; i++) {
      CHECK_EQ(got[i], bf16_cell(f32_bits(word_at(0, 5, 2 * i)) >> 16) |
                           bf16_cell(f32_bits(word_at(0, 5, 2 * i + 1)) >> 16) << 16);
      CHECK_EQ(got[8 + i], bf16_cell(f32_bits(word_at(1, 17, 2 * i)) >> 16) |
                               bf16_cell(f32_bits(word_at(1, 17, 2 * i + 1)) >> 16) << 16);
    }
  }
  t[8 * 16 + 0] = 1.5f + 1.0f / 8192;  // 0x3fc00400: low half 0x0400
  {
    std::vector<uint32_t> got = read_dest_rows(layer, "Float32", true, t, {16, 24, 0, 8, 131, 139});
    CHECK_EQ(got[0] & 0xffff, bf16_cell(0x3fc0));
    CHECK_EQ(got[8] & 0xffff, 0x0400u);
    const int logical[6] = {8, 8, 0, 0, 64 + 3, 64 + 3};
    for (int k = 0; k < 6; k++)
      for (int i = 0; i < 8; i++) {
        int tile = logical[k] / 64, a = logical[k] % 64;
        uint32_t w0 = f32_bits(word_at(tile, a, 2 * i)), w1 = f32_bits(word_at(tile, a, 2 * i + 1));
        bool low = k % 2 == 1;
        uint32_t c0 = low ? w0 & 0xffff : bf16_cell(w0 >> 16), c1 = low ? w1 & 0xffff : bf16_cell(w1 >> 16);
        CHECK_EQ(got[size_t(k) * 8 + size_t(i)], c0 | c1 << 16);
      }
  }
  // past math's half of DST (8 16-bit tiles, 4 32-bit ones)
  for (bool fp32 : {false, true}) {
    std::string msg = expect_error("run_error", [&] {
      read_dest_rows(layer, fp32 ? "Float32" : "Float16_b", fp32, t, {512});
    });
    CHECK(msg.find("dbg_read_dest_acc_row: row 512 is outside") != std::string::npos);
  }
}
ZYX_TEST(dest_row, test_dest_row);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "compute_api_topk_"); }
