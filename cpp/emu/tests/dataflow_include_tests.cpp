// Includes: a kernel's own headers sent as the program's include files, and
// the ttnn data-movement helper headers operation kernels include
// (generate_reduce_scaler, generate_bcast_scalar, generate_mm_scaler,
// moreh_common), under their include paths (the older ttnn/deprecated ones
// too), checked element by element against tiles built on the host; and
// the kernel library's chunk plan and byte spans at the edge of 32 bits.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

uint32_t face_index(uint32_t h, uint32_t w) { return ((h >> 4) * 2 + (w >> 4)) * 256 + (h & 15) * 16 + (w & 15); }
uint16_t bf16(float f) { return to_bf16(f); }

// Each helper fills one page of its own CB; the kernel then copies the
// pages (2048 bytes each, bf16 tiles) to the output.
const char* kHelpers = R"(
#include "ttnn/kernel/dataflow/generate_reduce_scaler.hpp"
#include "ttnn/cpp/ttnn/kernel/dataflow/generate_bcast_scalar.hpp"
#include "ttnn/deprecated/tt_dnn/kernels/dataflow/generate_bcast_scalar.hpp"
#include "ttnn/cpp/ttnn/deprecated/tt_dnn/kernels/dataflow/generate_reduce_scaler.hpp"
#include "ttnn/kernel/dataflow/generate_mm_scaler.hpp"
#include "ttnn/cpp/ttnn/kernel/dataflow/moreh_common.hpp"
#include "api/dataflow/dataflow_buffer.h"
#include "llk_defs.h"
#include "kernels/params.h"
void kernel_main() {
  ArgFetcher args;
  const uint32_t out = args.get_next_arg_val<uint32_t>();
  const uint32_t packed = args.get_next_arg_val<uint32_t>();  // a bf16 value twice
  // Pages that the helpers write only in part start as ones.
  for (uint32_t cb = 2; cb <= 4; cb++) {
    volatile uint16_t* p = reinterpret_cast<volatile uint16_t*>(get_write_ptr(cb));
    for (int i = 0; i < 1024; i++) p[i] = 0x3f80;
  }
  generate_reduce_scaler(0, packed);
  generate_reduce_scaler<true>(1, packed);
  generate_bcast_col_scalar(CircularBuffer(2), packed);
  generate_bcast_row_scalar(tt::CBIndex::c_3, packed);  // the CB as an index, as older kernels pass it
  generate_bcast_unary_scalar(uint32_t(4), packed);
  generate_mm_scaler(5, packed);
  generate_bcast_scaler<uint16_t>(6, packed);
  fill_cb_with_value(7, packed, 100);
  generate_mask_h_w(8, MASK_H, MASK_W);
  generate_mask_h<uint16_t>(9, MASK_H);
  wh_generate_reduce_scaler(10, packed);
  // mask_tile_hw on a tile of ones.
  DataflowBuffer dfb(11);
  dfb.reserve_back(1);
  volatile uint16_t* m = reinterpret_cast<volatile uint16_t*>(dfb.get_write_ptr());
  for (int i = 0; i < 1024; i++) m[i] = 0x3f80;
  mask_tile_if_need(dfb.get_write_ptr(), 32 + MASK_H, 64 + MASK_W);
  dfb.push_back(1);
  // get_tilized_idx and the bf16 conversions, into the last page.
  cb_reserve_back(12, 1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(12));
  w[0] = get_tilized_idx(3, 20, 32, 32);
  w[1] = get_tilized_idx(17, 5, 32, 32);
  w[2] = get_tilized_idx(31, 31, 32, 32);
  w[3] = float_to_bfloat16(bfloat16_to_float(0x4049));
  w[4] = NOC_MINIMUM_READ_SIZE;
  // llk_defs.h on the data-movement side.
  w[5] = uint32_t(MAX) | uint32_t(REDUCE_COL) << 8 | uint32_t(DstSync::SyncFull) << 16;
  w[6] = ReluConfig::from_packed(0x3fc00003u).packed();
  cb_push_back(12, 1);
  uint32_t page = 0;
  for (uint32_t cb = 0; cb <= 12; cb++) {
    uint32_t n = cb == 8 ? 2 : 1;
    cb_wait_front(cb, n);
    for (uint32_t t = 0; t < n; t++, page++)
      noc_async_write(get_read_ptr(cb) + t * 2048, get_noc_addr_from_bank_id<true>(0, out + page * 2048), 2048);
  }
  noc_async_write_barrier();
}
)";

void test_helpers(DeviceLayer& layer) {
  const uint32_t mask_h = 13, mask_w = 21;
  GroupProgram p;
  p.name = "helpers";
  p.params = {P("out", "global_mut", "u32"), P("packed", "variable", "u32")};
  p.include_files = {IncludeFile{"kernels/params.h", "#pragma once\n#define MASK_H " + std::to_string(mask_h) +
                                                          "\n#define MASK_W " + std::to_string(mask_w) + "\n"}};
  p.reader.source = kHelpers;
  p.reader.runtime_args = {L("buffer_addr", 0), L("param", 1)};
  for (uint32_t cb = 0; cb <= 12; cb++) p.cbs.push_back(CB(cb, "Float16_b", 2048, cb == 8 ? 2 : 1));
  const uint16_t v = bf16(0.25f);
  const uint32_t packed = (uint32_t(v) << 16) | v;
  const uint32_t pages = 14;
  uint64_t out = layer.alloc(pages * 2048, dram_spec(pages * 2048), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(out), Val(packed)}, false);
  auto got = download<uint16_t>(layer, out, pages * 1024);
  auto page = [&](uint32_t k) { return &got[k * 1024]; };
  const uint16_t one = 0x3f80, bone = bf16(1.0f);
  // Reduce scaler: zeros, first row of every face (two faces for half).
  for (uint32_t h = 0; h < 32; h++)
    for (uint32_t w = 0; w < 32; w++) {
      uint32_t i = face_index(h, w);
      CHECK_EQ(page(0)[i], (h % 16 == 0 ? v : uint16_t(0)));
      CHECK_EQ(page(11)[i], (h % 16 == 0 ? v : uint16_t(0)));
      if (i < 512) CHECK_EQ(page(1)[i], ((i % 256) < 16 ? v : uint16_t(0)));
    }
  // Broadcast scalars: column 0, row 0, element 0; the rest untouched.
  for (uint32_t h = 0; h < 32; h++)
    for (uint32_t w = 0; w < 32; w++) {
      uint32_t i = face_index(h, w);
      CHECK_EQ(page(2)[i], (w == 0 ? v : one));
      CHECK_EQ(page(3)[i], (h == 0 ? v : one));
      CHECK_EQ(page(4)[i], (i == 0 ? v : i == 1 ? uint16_t(0) : one));
      CHECK_EQ(page(5)[i], (w == 0 ? v : uint16_t(0)));
      CHECK_EQ(page(6)[i], (h % 16 == 0 ? v : uint16_t(0)));
    }
  // fill_cb_with_value: the first 100 elements.
  for (uint32_t i = 0; i < 100; i++) CHECK_EQ(page(7)[i], v);
  // Mask tiles: rows < mask_h, then columns < mask_w; generate_mask_h alone;
  // a tile of ones masked to rows < mask_h and columns < mask_w.
  for (uint32_t h = 0; h < 32; h++)
    for (uint32_t w = 0; w < 32; w++) {
      uint32_t i = face_index(h, w);
      CHECK_EQ(page(8)[i], (h < mask_h ? bone : uint16_t(0)));
      CHECK_EQ(page(9)[i], (w < mask_w ? bone : uint16_t(0)));
      CHECK_EQ(page(10)[i], (h < mask_h ? bone : uint16_t(0)));
      CHECK_EQ(page(12)[i], (h < mask_h && w < mask_w ? one : uint16_t(0)));
    }
  const uint32_t* w = reinterpret_cast<const uint32_t*>(page(13));
  CHECK_EQ(w[0], 256u + 3 * 16 + 4);
  CHECK_EQ(w[1], 512u + 1 * 16 + 5);
  CHECK_EQ(w[2], 1023u);
  CHECK_EQ(w[3], 0x4049u);
  CHECK_EQ(w[4], 32u);
  CHECK_EQ(w[5], 2u | 1u << 8 | 1u << 16);
  CHECK_EQ(w[6], 0x3fc00003u);
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(includes, test_helpers);

// The kernel library's chunk plan (zyx/chunks.h) and byte spans
// (zyx/row_major.h) at the edge of 32 bits: the kernel walks the chunks of
// n elements for its core and records what it saw, and reads and writes
// spans past 4 GiB through an accessor that records the pages asked for.
const char* kLibraryEdges = R"(
#include "api/dataflow/dataflow_api.h"
#include "zyx/chunks.h"
#include "zyx/row_major.h"

// An accessor that records each (page, within) asked for and points the NOC
// at a scratch page of this core's L1.
struct Recorder {
  volatile uint32_t* log;
  mutable uint32_t* at;
  uint64_t scratch;
  uint64_t get_noc_addr(uint32_t page, uint32_t within) const {
    log[(*at)++] = page;
    log[(*at)++] = within;
    return scratch;
  }
};

void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0);
  const zyx::Chunks chunks = zyx::Chunks::from_args(1);  // n, core index, core count
  uint32_t visits = 0, last_first = 0, last_count = 0;
  uint64_t total = 0;
  chunks.for_each([&](uint32_t first, uint32_t count) {
    visits++;
    last_first = first, last_count = count;
    total += count;
  });
  cb_reserve_back(0, 1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  w[0] = visits, w[1] = last_first, w[2] = last_count, w[3] = uint32_t(total), w[4] = uint32_t(total >> 32);
  uint32_t at = 5;
  const Recorder rec{w, &at, get_noc_addr(get_write_ptr(1))};
  zyx::read_span(rec, 2048, (uint64_t{5} << 30) + 100, get_write_ptr(1) + 2048, 4096);
  noc_async_read_barrier();
  zyx::write_span(rec, 2048, (uint64_t{1} << 32) + 2047, get_write_ptr(1) + 2048, 10);
  noc_async_write_barrier();
  w[at] = 0xE0Du;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 64);
  noc_async_write_barrier();
}
)";

void test_library_edges(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "library_edges";
  p.params = {P("out", "global_mut", "u32"), P("n", "variable", "u32"), P("core", "variable", "u32"),
              P("cores", "variable", "u32")};
  p.include_files = library_includes();
  p.reader.source = kLibraryEdges;
  p.reader.runtime_args = {L("buffer_addr", 0), L("param", 1), L("param", 2), L("param", 3)};
  p.cbs = {CB(0, "Float32", 4096, 1), CB(1, "Float32", 8192, 1)};
  uint64_t out = layer.alloc(2048, dram_spec(2048), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  // The recording accessor points every piece at one scratch address,
  // whatever its offset in the page: not a transfer a card could make (the
  // NOC's alignment rule), so the watcher's NOC check is off here.
  setenv("ZYX_EMU_WATCHER", "no-noc", 1);
  struct WatcherOn {
    ~WatcherOn() { unsetenv("ZYX_EMU_WATCHER"); }
  } watcher_on;
  struct Plan {
    uint64_t n, core, cores;
  };
  const uint64_t top = 0xFFFFFFFFu;
  for (const Plan& c : {Plan{top, 0, 1}, Plan{top, 5, 7}, Plan{top - 1022, 0, 64}, Plan{top - 1023, 3, 4},
                        Plan{top - 1024, 0, 1}, Plan{0, 0, 1}, Plan{1, 0, 1}, Plan{3000, 2, 3}, Plan{3000, 3, 3}}) {
    layer.run(prog, {Buf(out), Val(c.n), Val(c.core), Val(c.cores)}, false);
    auto got = download<uint32_t>(layer, out, 16);
    // The plan in 64 bits: chunks of 1024, the last one partial, round robin.
    uint64_t chunks = (c.n + 1023) / 1024, visits = 0, last_first = 0, last_count = 0, total = 0;
    for (uint64_t t = c.core; t < chunks; t += c.cores) {
      visits++;
      last_first = t * 1024, last_count = std::min<uint64_t>(1024, c.n - t * 1024);
      total += last_count;
    }
    auto plan = [&](uint64_t v, uint64_t f, uint64_t k, uint64_t sum) {
      return "n " + std::to_string(c.n) + ", core " + std::to_string(c.core) + " of " + std::to_string(c.cores) +
             ": " + std::to_string(v) + " chunks, the last at " + std::to_string(f) + " of " + std::to_string(k) +
             " elements, " + std::to_string(sum) + " in all";
    };
    CHECK_EQ(plan(got[0], got[1], got[2], got[3] | uint64_t{got[4]} << 32), plan(visits, last_first, last_count, total));
    if (c.core == 0 && c.cores == 1) CHECK_EQ(total, c.n);
  }
  // The spans: 5 GiB + 100 for 4096 bytes in pages of 2048 is page 2621440
  // from byte 100, then 2621441 and 2621442 from byte 0; 4 GiB + 2047 for
  // 10 bytes is the last byte of page 2097152, then page 2097153.
  auto got = download<uint32_t>(layer, out, 16);
  const std::vector<uint32_t> pages = {2621440, 100, 2621441, 0, 2621442, 0, 2097152, 2047, 2097153, 0, 0xE0D};
  CHECK((std::vector<uint32_t>(got.begin() + 5, got.begin() + 16) == pages));
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(includes, test_library_edges);

}  // namespace
