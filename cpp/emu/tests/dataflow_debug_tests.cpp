// Debug API tests: DPRINT lines on stderr tagged with the core and the
// processor, filtered by processor (DPRINT_DATA0 only on riscv_0,
// DPRINT_DATA1 only on riscv_1, DPRINT_UNPACK/MATH/PACK only in compute,
// tagged trisc0/1/2), the stream manipulators, the format form and
// DEVICE_PRINT, TileSlice and whole-tile printing, RAISE/WAIT ordering,
// output only with ZYX_EMU_DPRINT; ASSERT as a run error naming the core,
// the processor and the source line; WAYPOINT in deadlock reports.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

size_t index_of(const std::vector<std::string>& lines, const std::string& line) {
  for (size_t i = 0; i < lines.size(); i++)
    if (lines[i] == line) return i;
  std::string all;
  for (auto& l : lines) all += "\n  " + l;
  throw Failure("no DPRINT line \"" + line + "\" in:" + all);
}

// The lines that start with prefix (one core's, or one processor's: cores
// print concurrently, so only their own lines are consecutive).
std::vector<std::string> lines_with(const std::vector<std::string>& lines, const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& l : lines)
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  return out;
}

void expect_absent(const std::vector<std::string>& lines, const std::string& needle) {
  for (auto& l : lines)
    if (l.find(needle) != std::string::npos) throw Failure("unexpected DPRINT line: " + l);
}

const char* kReader = R"(
#include "dataflow_api.h"
#include "debug/dprint.h"
void kernel_main() {
  DPRINT << "reader " << 1 << ENDL();
  DPRINT_DATA0(DPRINT << "data0 on riscv_0" << ENDL());
  DPRINT_DATA1(DPRINT << "data1 wrongly on riscv_0" << ENDL());
  DPRINT_MATH(DPRINT << "math wrongly on riscv_0" << ENDL());
  DPRINT << HEX() << 255 << " " << DEC() << 255 << " " << OCT() << 8 << ENDL();
  DPRINT << SETW(5) << 42 << "|" << 7 << ENDL();
  DPRINT << SETPRECISION(3) << 3.14159f << " " << FIXED() << SETPRECISION(2) << 2.5f << " " << DEFAULTFLOAT() << 2.5f << ENDL();
  DPRINT << BF16(0x3fc0) << " " << F32(0.25f) << " " << U32(7u) << " " << -12 << " " << 'c' << ENDL();
  DPRINT("fmt {} {:#x} {:>4}|{:.2f}\n", 42, 255, 7, 1.5f);
  DEVICE_PRINT("{} {:x} {:08b} {:<3}|{:^5}|{:+d} {}\n", -3, 48879, 5, 1, "ab", 4, true);
  DPRINT_DATA0("data0 format {}\n", 9);
  DPRINT << "two\nlines" << ENDL();
  DPRINT << "par";
  DPRINT << "tial" << ENDL();
  // A tile: element (r, c) = r * 32 + c in cb 0 (Float32, four faces).
  cb_reserve_back(0, 1);
  volatile float* t = reinterpret_cast<volatile float*>(get_write_ptr(0));
  for (int r = 0; r < 32; r++)
    for (int c = 0; c < 32; c++) t[((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15)] = r * 32 + c;
  DPRINT << TSLICE(0, 0, SliceRange::h0_w0_32(), TSLICE_INPUT_CB, TSLICE_WR_PTR) << ENDL();
  DPRINT << TSLICE(0, 0, SliceRange{1, 4, 2, 16, 20, 3}, TSLICE_INPUT_CB, TSLICE_WR_PTR);
  DEVICE_PRINT("slice {}end\n", TileSlice(0, 0, SliceRange{5, 6, 1, 16, 20, 3}, TSLICE_INPUT_CB, TSLICE_WR_PTR, false));
  cb_push_back(0, 1);
  DPRINT << "before wait" << ENDL() << RAISE{3};
}
)";

const char* kWriter = R"(
#include "dataflow_api.h"
#include "debug/dprint.h"
void kernel_main() {
  DPRINT << WAIT{3} << "after wait" << ENDL();
  DPRINT_DATA1(DPRINT << "data1 on riscv_1" << ENDL());
  DPRINT_DATA0(DPRINT << "data0 wrongly on riscv_1" << ENDL());
  DEVICE_PRINT_DATA1("noc1 {}\n", 1);
  DEVICE_PRINT_DATA0("noc0 wrongly {}\n", 1);
}
)";

const char* kCompute = R"(
#include "compute_kernel_api/tile_move_copy.h"
#include "debug/dprint.h"
#include "debug/dprint_pages.h"
#include "debug/dprint_tensix.h"
namespace NAMESPACE {
void MAIN {
  DPRINT_UNPACK(DPRINT << "unpack" << ENDL());
  DPRINT_MATH(DPRINT << "math" << ENDL());
  DPRINT_PACK(DPRINT << "pack" << ENDL());
  DPRINT_PACK("pack format {}\n", 3);
  DPRINT << "compute" << ENDL();
  DPRINT_DATA0(DPRINT << "data0 wrongly in compute" << ENDL());
  cb_wait_front(0, 1);
  print_full_tile(0, 0, true);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  copy_tile(0, 0, 2);
  dprint_tensix_dest_reg(2);
  tile_regs_commit();
  tile_regs_wait();
  tile_regs_release();
  cb_pop_front(0, 1);
}
}
)";

GroupProgram print_program() {
  GroupProgram p;
  p.name = "dprint";
  p.reader.source = kReader;
  p.writer.source = kWriter;
  p.compute.source = kCompute;
  p.cbs = {CB(0, "Float32", 4096, 1)};
  p.fp32_dest_acc = true;
  return p;
}

void test_dprint(DeviceLayer& layer) {
  uint64_t prog = layer.compile(one_group_program(print_program(), 1, 2));
  setenv("ZYX_EMU_DPRINT", "1", 1);
  auto lines = dprint_lines(capture_stderr([&] { layer.run(prog, {}, false); }));
  unsetenv("ZYX_EMU_DPRINT");
  for (const char* core : {"core (0,0)", "core (0,1)"}) {
    std::string r = std::string("dprint: ") + core + " riscv_0: ", w = std::string("dprint: ") + core + " riscv_1: ";
    std::string c = std::string("dprint: ") + core + " compute: ";
    index_of(lines, r + "reader 1");
    index_of(lines, r + "data0 on riscv_0");
    index_of(lines, r + "ff 255 10");
    index_of(lines, r + "   42|7");
    index_of(lines, r + "3.14 2.50 2.5");
    index_of(lines, r + "1.5 0.25 7 -12 c");
    index_of(lines, r + "fmt 42 0xff    7|1.50");
    index_of(lines, r + "-3 beef 00000101 1  | ab  |+4 true");
    index_of(lines, r + "data0 format 9");
    auto rl = lines_with(lines, r), cl = lines_with(lines, c);
    size_t two = index_of(rl, r + "two");
    CHECK_EQ(rl[two + 1], r + "lines");
    index_of(lines, r + "partial");
    std::string row0;
    for (int i = 0; i < 32; i++) row0 += (i ? " " : "") + std::to_string(i);
    index_of(lines, r + row0);
    index_of(lines, r + "48 51");    // row 1, columns 16 and 19
    index_of(lines, r + "112 115");  // row 3
    index_of(lines, r + "slice 176 179end");  // the format form: row 5, no row ends
    CHECK(index_of(lines, r + "before wait") < index_of(lines, w + "after wait"));
    index_of(lines, w + "data1 on riscv_1");
    index_of(lines, w + "noc1 1");
    index_of(lines, std::string("dprint: ") + core + " trisc0: unpack");
    index_of(lines, std::string("dprint: ") + core + " trisc1: math");
    index_of(lines, std::string("dprint: ") + core + " trisc2: pack");
    index_of(lines, std::string("dprint: ") + core + " trisc2: pack format 3");
    index_of(lines, c + "compute");
    // print_full_tile (untilized): "======", then "r : " and row r's 32
    // values for each row, then "++++++".
    size_t start = index_of(lines, c + "======");
    for (int r = 0; r < 32; r++) {
      std::string row = std::to_string(r) + " :";
      for (int i = 0; i < 32; i++) row += " " + std::to_string(r * 32 + i);
      CHECK(index_of(lines, c + row) > start);
    }
    CHECK(index_of(lines, c + "++++++") > start);
    // dprint_tensix_dest_reg(2) of the same tile copied to DST: "Tile ID =
    // 2", then the 64 face rows of 16 values in fixed notation (width 8,
    // precision 4), face 0 first.
    size_t tid = index_of(cl, c + "Tile ID = 2");
    for (int face = 0; face < 4; face++)
      for (int fr = 0; fr < 16; fr++) {
        std::string row;
        for (int i = 0; i < 16; i++) {
          int v = ((face >> 1) * 16 + fr) * 32 + (face & 1) * 16 + i;
          char b[32];
          std::snprintf(b, sizeof b, "%8.4f", double(v));
          row += (i ? " " : "") + std::string(b);
        }
        CHECK_EQ(cl[tid + 1 + face * 16 + fr], c + row);
      }
  }
  for (const char* bad : {"wrongly"}) expect_absent(lines, bad);
  // Without ZYX_EMU_DPRINT nothing is printed.
  auto quiet = dprint_lines(capture_stderr([&] { layer.run(prog, {}, false); }));
  CHECK_EQ(quiet.size(), size_t(0));
  layer.release(prog);
}
ZYX_TEST(debug, test_dprint);

// The later debug calls: U32 arrays, the page printers and CB details of
// dprint_pages.h, PAUSE and the ring buffer (no-ops without the watcher),
// print_tile_rows, the by-face DST dump and the dprint_tensix helpers.
const char* kMoreReader = R"(
#include "dataflow_api.h"
#include "debug/dprint.h"
#include "debug/dprint_pages.h"
#include "api/debug/pause.h"
#include "api/debug/ring_buffer.h"
void kernel_main() {
  uint32_t arr[5] = {7, 8, 9, 0, 0};
  DPRINT << "u32 " << U32_ARRAY(arr, 3) << ENDL();
  DPRINT << "typed " << TYPED_U32_ARRAY(5, 6, arr, 3) << " tail " << arr[3] << ENDL();
  PAUSE();
  WATCHER_RING_BUFFER_PUSH(123);
  cb_reserve_back(0, 1);
  const uint32_t base = get_write_ptr(0);
  volatile uint16_t* h = reinterpret_cast<volatile uint16_t*>(base);
  // a bf16 tile: element (r, c) at its face position holds 4 r + c
  for (uint32_t r = 0; r < 32; r++)
    for (uint32_t c = 0; c < 32; c++) {
      float f = static_cast<float>(4 * r + c);
      uint32_t u;
      __builtin_memcpy(&u, &f, 4);
      h[((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15)] = static_cast<uint16_t>(u >> 16);
    }
  // scratch page: bf16 -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, then words 3, 10, 4000
  volatile uint16_t* s = reinterpret_cast<volatile uint16_t*>(get_write_ptr(1));
  const uint16_t bits[8] = {0xBF80, 0xBF00, 0x0000, 0x3F00, 0x3F80, 0x3FC0, 0x4000, 0x4020};
  for (int i = 0; i < 8; i++) s[i] = bits[i];
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(1) + 16);
  w[0] = 3, w[1] = 10, w[2] = 4000;
  tt::data_movement::common::print_bf16_pages(get_write_ptr(1), 4, 2);
  tt::data_movement::common::print_u16_pages(get_write_ptr(1), 4, 1, 1);
  tt::data_movement::common::print_u8_pages(get_write_ptr(1), 4, 1);
  tt::data_movement::common::print_f32_pages(get_write_ptr(1) + 16, 3, 1);
  print_cb_details(0);
  LocalCBInterface& cb = get_local_cb_interface(0);
  DPRINT << "fields " << cb.fifo_size << " " << cb.fifo_limit << " " << cb.fifo_page_size << " " << cb.fifo_num_pages
         << " " << cb.fifo_rd_ptr << " " << cb.fifo_wr_ptr << " " << cb.fifo_wr_tile_ptr << ENDL();
  cb_push_back(0, 1);
}
)";

const char* kMoreCompute = R"(
#include "compute_kernel_api/tile_move_copy.h"
#include "debug/dprint.h"
#include "debug/dprint_pages.h"
#include "debug/dprint_tensix.h"
namespace NAMESPACE {
void MAIN {
  cb_wait_front(0, 1);
  tt::compute::common::print_tile_rows(0, 0, true, 1, 3, 2, 6);
  copy_tile_to_dst_init_short(0);
  tile_regs_acquire();
  copy_tile(0, 0, 0);
  dprint_tensix_dest_reg<true>(0);
  tile_regs_commit();
  tile_regs_wait();
  tile_regs_release();
  dprint_data_format(5);
  DPRINT << " ";
  dprint_data_format(99);
  DPRINT << ENDL();
  dprint_tensix_struct_field(0xabcdu, 0xff0u, 4, "hexfield");
  dprint_tensix_struct_field(0xabcdu, 0xff0u, 4, "decfield", true);
  cb_pop_front(0, 1);
}
}
)";

void test_dprint_more(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "dprint_more";
  p.reader.source = kMoreReader;
  p.compute.source = kMoreCompute;
  p.cbs = {CB(0, "Float16_b", 2048, 1), CB(1, "UInt32", 64, 1)};
  p.fp32_dest_acc = false;
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  setenv("ZYX_EMU_DPRINT", "1", 1);
  auto lines = dprint_lines(capture_stderr([&] { layer.run(prog, {}, false); }));
  unsetenv("ZYX_EMU_DPRINT");
  layer.release(prog);
  const std::string r = "dprint: core (0,0) riscv_0: ", c = "dprint: core (0,0) compute: ";
  index_of(lines, r + "u32 7 8 9");
  index_of(lines, r + "typed 7 8 9 tail 327686");  // (5 << 16) + 6 stored after the data
  index_of(lines, r + "0: -1 -0.5 0 0.5 ");
  index_of(lines, r + "1: 1 1.5 2 2.5 ");
  index_of(lines, r + "1: 16256 16320 16384 16416 ");
  index_of(lines, r + "0: 0x80 0xbf 0x0 0xbf ");
  index_of(lines, r + "0: 3 10 4000 ");
  // print_cb_details shows the interface the kernel reads field by field.
  size_t f = 0;
  for (; f < lines.size(); f++)
    if (lines[f].rfind(r + "fields ", 0) == 0) break;
  CHECK(f < lines.size());
  std::istringstream in(lines[f].substr(r.size() + 7));
  uint32_t v[7];
  for (auto& x : v) in >> x;
  CHECK_EQ(v[0], 2048u);
  CHECK_EQ(v[2], 2048u);
  CHECK_EQ(v[3], 1u);
  index_of(lines, r + "cb_id 0: { size: " + std::to_string(v[0]) + ", limit: " + std::to_string(v[1]) +
                      ", page_size: " + std::to_string(v[2]) + ", num_pages: " + std::to_string(v[3]) +
                      ", rd_ptr: " + std::to_string(v[4]) + ", wr_ptr: " + std::to_string(v[5]) +
                      ", wr_tile_ptr: " + std::to_string(v[6]) + " }");
  // print_tile_rows: rows 1 and 2, columns 2 to 5, between the markers.
  auto cl = lines_with(lines, c);
  size_t head = index_of(cl, c + "cb_idx: 0 tile_idx: 0");
  CHECK_EQ(cl[head + 1], c + "======");
  CHECK(index_of(lines, c + "1 : 6 7 8 9") > head);
  CHECK(index_of(lines, c + "2 : 10 11 12 13") > head);
  CHECK(index_of(lines, c + "++++++") > head);
  // dprint_tensix_dest_reg<true>: each face's 16 rows, then a blank line.
  size_t tid = index_of(cl, c + "Tile ID = 0");
  for (int face = 0; face < 4; face++) {
    for (int fr = 0; fr < 16; fr++) {
      std::string row;
      for (int i = 0; i < 16; i++) {
        int rr = (face >> 1) * 16 + fr, cc = (face & 1) * 16 + i;
        char b[32];
        std::snprintf(b, sizeof b, "%8.4f", double(4 * rr + cc));
        row += (i ? " " : "") + std::string(b);
      }
      CHECK_EQ(cl[tid + 1 + face * 17 + fr], c + row);
    }
    CHECK_EQ(cl[tid + 1 + face * 17 + 16], c);
  }
  index_of(lines, c + "Float16_b INVALID DATA FORMAT");
  index_of(lines, c + "hexfield: 0xbc");
  index_of(lines, c + "decfield: 188");
}
ZYX_TEST(debug, test_dprint_more);

void test_assert(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "assert";
  p.reader.source = "void kernel_main() {\n  uint32_t v = get_arg_val<uint32_t>(0);\n  ASSERT(v == 1);\n}\n";
  p.reader.runtime_args = {L("core_index")};
  uint64_t prog = layer.compile(one_group_program(p, 1, 2));
  std::string msg = expect_error("run_error", [&] { layer.run(prog, {}, false); });
  CHECK(msg.find("core (0,0) reader (riscv_0)") != std::string::npos);
  CHECK(msg.find("ASSERT(v == 1) failed at reader.cpp:3") != std::string::npos);
  // A passing ASSERT does nothing; a compute kernel's failure names compute.
  p.reader.runtime_args = {C(1)};
  p.compute.source = "void kernel_main() {\n  ASSERT(get_arg_val<uint32_t>(0) > 5, 0);\n}\n";
  p.compute.runtime_args = {C(2)};
  msg = expect_error("run_error", [&] { layer.run(layer.compile(one_group_program(p, 1, 1)), {}, false); });
  CHECK(msg.find("compute (compute)") != std::string::npos);
  CHECK(msg.find("ASSERT(get_arg_val<uint32_t>(0) > 5) failed at compute.cpp:2") != std::string::npos);
  layer.release(prog);
}
ZYX_TEST(debug, test_assert);

void test_waypoint(DeviceLayer& layer) {
  setenv("ZYX_EMU_TIMEOUT_MS", "300", 1);
  GroupProgram p;
  p.name = "waypoint";
  p.reader.source = R"(
void kernel_main() {
  WAYPOINT("AB");
  WAYPOINT("RDWT");
  cb_wait_front(0, 1);
}
)";
  p.writer.source = R"(
void kernel_main() {
  WAYPOINT("WRDN");
  noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);
}
)";
  p.cbs = {CB(0, "UInt32", 64, 1)};
  std::string msg = expect_error("deadlock", [&] { layer.run(layer.compile(one_group_program(p, 1, 2)), {}, false); });
  unsetenv("ZYX_EMU_TIMEOUT_MS");
  CHECK(msg.find("core (0,1) reader (riscv_0) waiting on cb 0") != std::string::npos);
  CHECK(msg.find("(last waypoint RDWT)") != std::string::npos);
  CHECK(msg.find("writer (riscv_1) waiting on the L1 word") != std::string::npos);
  CHECK(msg.find("(last waypoint WRDN)") != std::string::npos);
}
ZYX_TEST(debug, test_waypoint);

// Reads 16 words into a reserved CB page whose first word holds 77, and
// keeps the first word as loaded before and after the read barrier in
// words 1 and 2; writes the page out.
const char* kEarlyUse = R"(void kernel_main() {
  uint32_t src = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1);
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);
  p[0] = 77;
  noc_async_read(get_noc_addr_from_bank_id<true>(0, src), l1, 64);
  uint32_t early = p[0];
  noc_async_read_barrier();
  uint32_t late = p[0];
  p[1] = early;
  p[2] = late;
  noc_async_write(l1, get_noc_addr_from_bank_id<true>(0, out), 64);
  noc_async_write_barrier();
  cb_push_back(0, 1);
}
)";

// Pushes the page a read is still filling (line 6; the read at line 5).
const char* kPushEarly = R"(void kernel_main() {
  uint32_t src = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, src), l1, 64);
  cb_push_back(0, 1);
  noc_async_read_barrier();
}
)";

// Reads 16 words into the first of two CB pages; before the read barrier
// stores into the second page (in the same host page as the first: not the
// read's destination), after it copies the first word of the data there.
const char* kLateUse = R"(void kernel_main() {
  uint32_t src = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1);
  cb_reserve_back(0, 2);
  uint32_t l1 = get_write_ptr(0);
  volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(l1);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, src), l1, 64);
  p[16] = 77;
  noc_async_read_barrier();
  p[17] = p[0];
  noc_async_write(l1 + 64, get_noc_addr_from_bank_id<true>(0, out), 64);
  noc_async_write_barrier();
  cb_push_back(0, 2);
}
)";

// Strict NOC mode: a read's data lands at its barrier, so a load before it
// sees what L1 held (77), after it the data (5); without strict mode both
// see the data. With strict-noc-loads the early load is an error naming the
// load's line and the read's; a kernel that stores beside the destination
// before the barrier and loads the data after it passes.
void test_strict_noc(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "strict_noc";
  p.params = {P("src", "global", "u32"), P("out", "global_mut", "u32")};
  p.reader.source = kEarlyUse;
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1)};
  p.cbs = {CB(0, "UInt32", 64, 2)};
  std::vector<uint32_t> data(16);
  for (uint32_t i = 0; i < 16; i++) data[i] = 5 + i;
  uint64_t src = upload(layer, data, 64), out = layer.alloc(64, dram_spec(64), nullptr);
  for (bool strict : {false, true}) {
    if (strict) p.reader.defines = {{"ZYX_EMU_STRICT_NOC", "1"}};
    uint64_t prog = layer.compile(one_group_program(p, 1, 1));
    layer.run(prog, {Buf(src), Buf(out)}, false);
    auto v = download<uint32_t>(layer, out, 16);
    CHECK_EQ(v[0], 5u);
    CHECK_EQ(v[1], strict ? 77u : 5u);
    CHECK_EQ(v[2], 5u);
    layer.release(prog);
  }
  {
    p.reader.defines = {{"ZYX_EMU_STRICT_NOC_LOADS", "1"}};
    uint64_t prog = layer.compile(one_group_program(p, 1, 1));
    for (int i = 0; i < 2; i++) {  // the second run: the guarded page was opened again
      std::string msg = expect_error("run_error", [&] { layer.run(prog, {Buf(src), Buf(out)}, false); });
      CHECK(msg.find("core (0,0) reader (riscv_0) at reader.cpp:8: a load or store of L1 offset ") !=
            std::string::npos);
      CHECK(msg.find("in the destination of noc_async_read [") != std::string::npos);
      CHECK(msg.find("issued at reader.cpp:7, before its noc_async_read_barrier") != std::string::npos);
      CHECK(msg.find("watcher strict NOC mode") != std::string::npos);
    }
    layer.release(prog);
    p.reader.source = kLateUse;
    prog = layer.compile(one_group_program(p, 1, 1));
    for (int i = 0; i < 2; i++) {
      layer.run(prog, {Buf(src), Buf(out)}, false);
      auto w = download<uint32_t>(layer, out, 16);
      CHECK_EQ(w[0], 77u);
      CHECK_EQ(w[1], 5u);
    }
    layer.release(prog);
    // The same check through ZYX_EMU_WATCHER.
    p.reader.source = kEarlyUse;
    p.reader.defines.clear();
    prog = layer.compile(one_group_program(p, 1, 1));
    setenv("ZYX_EMU_WATCHER", "strict-noc-loads", 1);
    std::string msg = expect_error("run_error", [&] { layer.run(prog, {Buf(src), Buf(out)}, false); });
    unsetenv("ZYX_EMU_WATCHER");
    CHECK(msg.find("core (0,0) reader (riscv_0) at reader.cpp:8: a load or store of L1 offset ") != std::string::npos);
    layer.release(prog);
  }
  // ZYX_EMU_WATCHER's strict-noc, with the push before the barrier.
  p.reader.defines.clear();
  p.reader.source = kPushEarly;
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(src), Buf(out)}, false);  // not strict: no error
  setenv("ZYX_EMU_WATCHER", "strict-noc", 1);
  std::string msg = expect_error("run_error", [&] { layer.run(prog, {Buf(src), Buf(out)}, false); });
  unsetenv("ZYX_EMU_WATCHER");
  CHECK(msg.find("core (0,0) reader (riscv_0) at reader.cpp:6: cb_push_back(0, 1): the pages") != std::string::npos);
  CHECK(msg.find("hold the destination of noc_async_read [") != std::string::npos);
  CHECK(msg.find("issued at reader.cpp:5") != std::string::npos);
  CHECK(msg.find("watcher strict NOC mode") != std::string::npos);
  layer.release(prog);
  layer.free(src);
  layer.free(out);
}
ZYX_TEST(debug, test_strict_noc);

// The stack check: a kernel recursing `depth` levels of about 256 bytes
// each and reserving a CB page at the bottom.
const char* kRecurse = R"(uint32_t down(uint32_t n) {
  volatile uint32_t pad[64];
  pad[n % 64] = n;
  if (n == 0) {
    cb_reserve_back(0, 1);
    return pad[0];
  }
  return down(n - 1) + pad[n % 64];
}
void kernel_main() { (void)down(get_arg_val<uint32_t>(0)); }
)";

void test_stack_depth(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "stack_depth";
  p.reader.source = kRecurse;
  p.cbs = {CB(0, "UInt32", 64, 1)};
  // 4 levels fit a Wormhole BRISC's 4 KiB; 40 do not.
  p.reader.runtime_args = {C(4)};
  layer.run(layer.compile(one_group_program(p, 1, 1)), {}, false);
  p.reader.runtime_args = {C(40)};
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  std::string msg = expect_error("run_error", [&] { layer.run(prog, {}, false); });
  CHECK(msg.find("core (0,0) reader (riscv_0) at reader.cpp:5: cb_reserve_back: the kernel's stack is ") !=
        std::string::npos);
  CHECK(msg.find("more than the 4096 bytes of local data memory a BRISC has on a wormhole_b0 card") !=
        std::string::npos);
  CHECK(msg.find("watcher check stack") != std::string::npos);
  // Off with no-stack.
  setenv("ZYX_EMU_WATCHER", "no-stack", 1);
  layer.run(prog, {}, false);
  unsetenv("ZYX_EMU_WATCHER");
  layer.release(prog);
  // Globals take their share first: 8 levels (about 2 KiB) fit the 4 KiB
  // with 16 bytes of globals, not with 3 KiB of them.
  for (uint32_t words : {4u, 768u}) {
    p.reader.source = "uint32_t table[" + std::to_string(words) + "];\n" + kRecurse;
    p.reader.source.replace(p.reader.source.find("void kernel_main() {"), 20,
                            "void kernel_main() {\n  for (uint32_t i = 0; i < " + std::to_string(words) +
                                "; i++) table[i] = i;");
    p.reader.runtime_args = {C(8)};
    uint64_t g = layer.compile(one_group_program(p, 1, 1));
    if (words == 4) {
      layer.run(g, {}, false);
    } else {
      std::string m = expect_error("run_error", [&] { layer.run(g, {}, false); });
      CHECK(m.find("core (0,0) reader (riscv_0) at reader.cpp:6: cb_reserve_back: the kernel's stack is ") !=
            std::string::npos);
      CHECK(m.find("more than the 1024 bytes that the kernel's 3072 bytes of globals leave of the 4096 bytes of "
                   "local data memory a BRISC has on a wormhole_b0 card") != std::string::npos);
    }
    layer.release(g);
  }
}
ZYX_TEST(debug, test_stack_depth);

// The race check's happens-before: core k of a row waits for its semaphore
// (k > 0), writes its value to one DRAM page (line 10) and then signals core
// k + 1. With `early` a core signals before its write, so the next core's
// write is not ordered after it.
const char* kChain = R"(void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0), me = get_arg_val<uint32_t>(1), n = get_arg_val<uint32_t>(2);
  bool early = get_arg_val<uint32_t>(3) != 0;
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  reinterpret_cast<volatile uint32_t*>(l1)[0] = 100 + me;
  if (me > 0) noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);
  uint64_t next = get_noc_addr(me + 2, 1, get_semaphore(0));
  if (early && me + 1 < n) noc_semaphore_inc(next, 1);
  noc_async_write(l1, get_noc_addr_from_bank_id<true>(0, out), 64);
  noc_async_write_barrier();
  if (!early && me + 1 < n) noc_semaphore_inc(next, 1);
}
)";

// Three cores writing one DRAM page in turn, each after a semaphore
// handshake with the one before: no race (the check orders the writes,
// transitively for core 2 after core 0), and the last value is there. Each
// signalling before its own write: a race at the write, naming the other core.
void test_race_semaphores(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "race_semaphores";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kChain;
  p.cbs = {CB(0, "UInt32", 64, 1)};
  p.semaphores = {{0, 0}};
  uint64_t out = layer.alloc(64, dram_spec(64), nullptr);
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index"), C(3), C(0)};
  uint64_t ordered = layer.compile(one_group_program(p, 1, 3));
  for (int i = 0; i < 3; i++) {
    layer.run(ordered, {Buf(out)}, false);
    CHECK_EQ(download<uint32_t>(layer, out, 16)[0], 102u);
  }
  layer.release(ordered);
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index"), C(3), C(1)};
  uint64_t early = layer.compile(one_group_program(p, 1, 3));
  for (int i = 0; i < 3; i++) {
    std::string msg = expect_error("run_error", [&] { layer.run(early, {Buf(out)}, false); });
    CHECK(msg.find(" reader (riscv_0) at reader.cpp:10: noc_async_write: DRAM bank 0 [") != std::string::npos);
    CHECK(msg.find("no semaphore handshake") != std::string::npos);
    CHECK(msg.find("watcher check race") != std::string::npos);
  }
  // Two cores with no handshake at all race as before.
  p.reader.runtime_args = {L("buffer_addr", 0), C(0), C(1), C(0)};
  uint64_t none = layer.compile(one_group_program(p, 1, 2));
  std::string msg = expect_error("run_error", [&] { layer.run(none, {Buf(out)}, false); });
  CHECK(msg.find("no semaphore handshake") != std::string::npos);
  layer.release(early);
  layer.release(none);
  layer.free(out);
}
ZYX_TEST(debug, test_race_semaphores);

// The race check's two records: a write of whole pages of a buffer (a word
// per page) and a write of part of a page (the bank's map), mixed. Core k
// of a chain writes the first two pages of the buffer in DRAM bank 0 (bank
// offsets 0 and 64, pages 0 and banks of the buffer): whole, or with
// `partial`, core 1 only [48, 80) of them, across the pages' boundary. With
// `ordered` each core waits for the one before and signals the next after
// its write (line 11).
const char* kPagesChain = R"(void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0), me = get_arg_val<uint32_t>(1), n = get_arg_val<uint32_t>(2);
  bool ordered = get_arg_val<uint32_t>(3) != 0, partial = get_arg_val<uint32_t>(4) != 0;
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  for (uint32_t i = 0; i < 32; i++) reinterpret_cast<volatile uint32_t*>(l1)[i] = 100 * (me + 1) + i;
  volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
  if (ordered && me > 0) noc_semaphore_wait(sem, 1);
  uint32_t off = partial && me == 1 ? 48 : 0, size = partial && me == 1 ? 32 : 128;
  uint64_t dst = get_noc_addr_from_bank_id<true>(0, out + off);
  noc_async_write(l1 + off, dst, size);
  noc_async_write_barrier();
  if (ordered && me + 1 < n) noc_semaphore_inc(get_noc_addr(me + 2, 1, get_semaphore(0)), 1);
}
)";

// The [begin, end) after "overlaps [" in a race message, and the write's
// address after "DRAM bank 0 [".
struct RaceRange {
  uint64_t write = 0, begin = 0, end = 0;
};
RaceRange race_range(const std::string& msg) {
  RaceRange r;
  size_t w = msg.find("DRAM bank 0 ["), o = msg.find("overlaps [");
  if (w == std::string::npos || o == std::string::npos) return r;
  r.write = std::stoull(msg.substr(w + 13), nullptr, 16);
  size_t comma = msg.find(", ", o);
  r.begin = std::stoull(msg.substr(o + 10), nullptr, 16);
  r.end = std::stoull(msg.substr(comma + 2), nullptr, 16);
  return r;
}

void test_race_pages(DeviceLayer& layer) {
  const uint32_t banks = layer.describe().dram_banks;
  GroupProgram p;
  p.name = "race_pages";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kPagesChain;
  p.cbs = {CB(0, "UInt32", 128, 1)};
  p.semaphores = {{0, 0}};
  uint64_t out = layer.alloc(size_t(64) * banks * 2, dram_spec(64), nullptr);
  auto chain = [&](uint32_t cores, bool ordered, bool partial) {
    p.reader.runtime_args = {L("buffer_addr", 0), L("core_index"), C(cores), C(ordered), C(partial)};
    return layer.compile(one_group_program(p, 1, cores));
  };
  // The word of the last writer of each byte of the two pages.
  auto page_words = [&] {
    std::vector<uint32_t> all = download<uint32_t>(layer, out, size_t(16) * banks * 2);
    std::vector<uint32_t> w(all.begin(), all.begin() + 16);
    w.insert(w.end(), all.begin() + 16 * banks, all.begin() + 16 * banks + 16);
    return w;
  };
  // Ordered: core 1's part over core 0's pages, then (three cores) core 2's
  // whole pages over both, transitively after core 0.
  for (bool partial : {false, true})
    for (uint32_t cores : {2u, 3u}) {
      uint64_t g = chain(cores, true, partial);
      for (int i = 0; i < 2; i++) {
        layer.run(g, {Buf(out)}, false);
        std::vector<uint32_t> w = page_words();
        for (uint32_t k = 0; k < 32; k++) {
          uint32_t last = cores - 1;
          if (cores == 2 && partial && (k < 12 || k >= 20)) last = 0;  // core 1 wrote only words 12..19
          CHECK_EQ(w[k], 100 * (last + 1) + k);
        }
      }
      layer.release(g);
    }
  // Unordered, two cores, whichever writes second: whole pages overlap both
  // pages; with core 1's part, just [48, 80).
  for (bool partial : {false, true}) {
    uint64_t g = chain(2, false, partial);
    for (int i = 0; i < 3; i++) {
      std::string msg = expect_error("run_error", [&] { layer.run(g, {Buf(out)}, false); });
      CHECK(msg.find(" reader (riscv_0) at reader.cpp:11: noc_async_write: DRAM bank 0 [") != std::string::npos);
      CHECK(msg.find(") reader wrote earlier in this run, and no semaphore handshake") != std::string::npos);
      RaceRange r = race_range(msg);
      uint64_t base = r.write - (partial && msg.find("+0x20)") != std::string::npos ? 48 : 0);
      CHECK_EQ(r.begin, base + (partial ? 48 : 0));
      CHECK_EQ(r.end, base + (partial ? 80 : 128));
    }
    layer.release(g);
  }
  layer.free(out);
}
ZYX_TEST(debug, test_race_pages);

// The cb check on the kernel's own loads and stores through CB pointers
// (kernels built with the address-check instrumentation). CB 0 has two
// 64-byte pages and is used with the protocol; CB 1 is scratch space, never
// reserved or waited for. Case 0 is correct use (and writes what it read to
// DRAM); each other case breaks the rule once, at the line named (4 with a
// memcpy of a constant size, which the instrumentation checks inline, 6 of a
// run-time size, which goes through the prelude's memcpy wrapper).
const char* kCbAccess = R"(void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0), which = get_arg_val<uint32_t>(1);
  volatile uint32_t* scratch = reinterpret_cast<volatile uint32_t*>(get_write_ptr(1));
  for (uint32_t i = 0; i < 32; i++) scratch[i] = i;
  cb_reserve_back(0, 1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  for (uint32_t i = 0; i < 16; i++) w[i] = 7 + i + scratch[i];
  if (which == 1) w[16] = 1;
  cb_push_back(0, 1);
  if (which == 2) w[0] = 1;
  volatile uint32_t* r = reinterpret_cast<volatile uint32_t*>(get_read_ptr(0));
  if (which == 3) scratch[0] = r[0];
  cb_wait_front(0, 1);
  uint32_t copy[16];
  memcpy(copy, const_cast<uint32_t*>(r), sizeof copy);
  if (which == 4) memcpy(copy, const_cast<uint32_t*>(r) + 8, sizeof copy);
  if (which == 6) memcpy(copy, const_cast<uint32_t*>(r) + 8, get_arg_val<uint32_t>(2));
  for (uint32_t i = 0; i < 16; i++) scratch[i] = copy[i] + r[i];
  cb_pop_front(0, 1);
  if (which == 5) scratch[1] = r[1];
  noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, out), 64);
  noc_async_write_barrier();
}
)";

void test_cb_access(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "cb_access";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kCbAccess;
  p.cbs = {CB(0, "UInt32", 64, 2), CB(1, "UInt32", 128, 1)};
  uint64_t out = layer.alloc(64, dram_spec(64), nullptr);
  auto compile = [&](uint32_t which) {
    p.reader.runtime_args = {L("buffer_addr", 0), C(which), C(64)};
    return layer.compile(one_group_program(p, 1, 1));
  };
  uint64_t good = compile(0);
  layer.run(good, {Buf(out)}, false);
  auto v = download<uint32_t>(layer, out, 16);
  for (uint32_t i = 0; i < 16; i++) CHECK_EQ(v[i], 2 * (7 + 2 * i));
  layer.release(good);
  struct Bad {
    uint32_t which;
    const char* where;
    const char* what;
  };
  const Bad bad[] = {
      {1, "at reader.cpp:8: ", "store to [0x"},
      {2, "at reader.cpp:10: ", "store to [0x"},
      {3, "at reader.cpp:12: ", "load from [0x"},
      {4, "at reader.cpp:16: ", "load from [0x"},
      {5, "at reader.cpp:20: ", "load from [0x"},
      {6, "at reader.cpp:17: ", "load from [0x"},
  };
  for (const Bad& b : bad) {
    uint64_t prog = compile(b.which);
    std::string msg = expect_error("run_error", [&] { layer.run(prog, {Buf(out)}, false); });
    CHECK(msg.find(std::string("core (0,0) reader (riscv_0) ") + b.where + "the kernel's own " + b.what) !=
          std::string::npos);
    CHECK(msg.find("of cb 0") != std::string::npos);
    CHECK(msg.find("ZYX_EMU_WATCHER=no-cb-access turns it off") != std::string::npos);
    layer.release(prog);
  }
  CHECK(expect_error("run_error", [&] {
          uint64_t prog = compile(1);
          layer.run(prog, {Buf(out)}, false);
        }).find("is page 1 of cb 0, outside the pages its kernels hold: 1 page(s) from page 0 reserved with "
                "cb_reserve_back") != std::string::npos);
  CHECK(expect_error("run_error", [&] {
          uint64_t prog = compile(4);
          layer.run(prog, {Buf(out)}, false);
        }).find("runs 32 byte(s) past the 1 page(s) of cb 0 waited for with cb_wait_front") != std::string::npos);
  // The switch: kernels built with no-cb-access are not instrumented.
  setenv("ZYX_EMU_WATCHER", "no-cb-access", 1);
  uint64_t off = compile(2);
  layer.run(off, {Buf(out)}, false);
  unsetenv("ZYX_EMU_WATCHER");
  layer.release(off);
  layer.free(out);
}
ZYX_TEST(debug, test_cb_access);

// Two CB indices of one config share their bytes: cb 0 is used with the
// protocol and holds no page at the end, cb 8 (the same bytes) is scratch
// space, never reserved or waited for. A store through cb 8's pointer is
// not flagged (another index over those bytes allows it), as tt-metal's
// kernels that alias a CB expect. The values go out through scratch cb 1.
const char* kCbAliased = R"(void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  cb_push_back(0, 1);
  cb_wait_front(0, 1);
  cb_pop_front(0, 1);
  volatile uint32_t* s = reinterpret_cast<volatile uint32_t*>(get_write_ptr(8));
  volatile uint32_t* o = reinterpret_cast<volatile uint32_t*>(get_write_ptr(1));
  for (uint32_t i = 0; i < 32; i++) s[i] = 3 * i;
  for (uint32_t i = 0; i < 32; i++) o[i] = s[i] + 1;
  noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, out), 128);
  noc_async_write_barrier();
}
)";

void test_cb_access_aliased(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "cb_access_aliased";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kCbAliased;
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.cbs = {CB(1, "UInt32", 128, 1)};
  ProgramDesc d = one_group_program(p, 1, 1);
  d.cbs.push_back(
      cb_config(one_core(0, 0), 128, {cb_index(0, DataFormat::UInt32, 64), cb_index(8, DataFormat::UInt32, 64)}));
  uint64_t out = layer.alloc(128, dram_spec(128), nullptr);
  uint64_t prog = layer.compile(d);
  layer.run(prog, {Buf(out)}, false);
  auto v = download<uint32_t>(layer, out, 32);
  for (uint32_t i = 0; i < 32; i++) CHECK_EQ(v[i], 3 * i + 1);
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(debug, test_cb_access_aliased);

}  // namespace
