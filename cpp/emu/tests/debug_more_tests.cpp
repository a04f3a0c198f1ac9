// The rest of the kernel debug API (zyx_emu/debug_extra.h): DPRINT's type
// codes and record decoder, typed register arrays, the tile printer's index
// helpers, the watcher's mailbox (ring buffer, pause, waypoints), NOC
// logging, the timing NOPs, DST row dumps and checkpoint barriers. Expected
// values are worked out here from tt-metal's rules (type-code order, bit
// layouts, the print server's decoding), not read back from the emulator.
#include <cstdio>
#include <sstream>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

// The DPRINT lines of one processor ("riscv_0", "riscv_1", "compute"), text only.
std::vector<std::string> lines_of(const std::vector<std::string>& all, const std::string& proc) {
  const std::string c = "dprint: core (0,0) " + proc + ": ";
  std::vector<std::string> out;
  for (auto& l : all)
    if (l.rfind(c, 0) == 0) out.push_back(l.substr(c.size()));
  return out;
}

std::vector<std::string> run_dprint(DeviceLayer& layer, const GroupProgram& p) {
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  setenv("ZYX_EMU_DPRINT", "1", 1);
  auto all = dprint_lines(capture_stderr([&] { layer.run(prog, {}, false); }));
  unsetenv("ZYX_EMU_DPRINT");
  layer.release(prog);
  return all;
}

const char* kPrintReader = R"(
#include "dataflow_api.h"
#include "debug/dprint.h"
#include "debug/dprint_pages.h"
#include "api/debug/dprint_tensix.h"
#include "api/debug/dprint_tile.h"
void kernel_main() {
  DPRINT << "ids " << (uint32_t)DebugPrintTypeToId<const char*>() << " " << (uint32_t)DebugPrintTypeToId<uint32_t>()
         << " " << (uint32_t)DebugPrintTypeToId<int>() << " " << (uint32_t)DebugPrintTypeToId<float>() << " "
         << (uint32_t)DebugPrintTypeToId<char>() << " " << (uint32_t)DebugPrintTypeToId<U32_ARRAY>() << " "
         << (uint32_t)DebugPrintTypeToId<TYPED_U32_ARRAY>() << " " << (uint32_t)DebugPrintTypeToId<decltype(HEX())>()
         << ENDL();
  uint32_t arr[4] = {1, 2, 3, 0};
  DPRINT << "sizes " << DebugPrintStrLen("hello") << " " << DebugPrintTypeToSize<const char*>("abc") << " "
         << DebugPrintTypeToSize(uint16_t(1)) << " " << DebugPrintTypeToSize(U32_ARRAY(arr, 3)) << ENDL();
  // Records as a card's buffer holds them, decoded by debug_print.
  DebugPrinter dp;
  const char* s = "x=";
  auto hx = HEX();
  auto dc = DEC();
  uint32_t v = 255;
  int16_t neg = -5;
  char space = ' ';
  float f = 1.5f;
  debug_print(dp, {DebugPrintTypeToSize(s), (const uint8_t*)s, DebugPrintTypeToId<const char*>()});
  debug_print(dp, {DebugPrintTypeToSize(hx), (const uint8_t*)&hx, DebugPrintTypeToId<decltype(hx)>()});
  debug_print(dp, {DebugPrintTypeToSize(v), (const uint8_t*)&v, DebugPrintTypeToId<uint32_t>()});
  debug_print(dp, {DebugPrintTypeToSize(dc), (const uint8_t*)&dc, DebugPrintTypeToId<decltype(dc)>()});
  debug_print(dp, {DebugPrintTypeToSize(space), (const uint8_t*)&space, DebugPrintTypeToId<char>()});
  debug_print(dp, {DebugPrintTypeToSize(neg), (const uint8_t*)&neg, DebugPrintTypeToId<int16_t>()});
  debug_print(dp, {DebugPrintTypeToSize(space), (const uint8_t*)&space, DebugPrintTypeToId<char>()});
  debug_print(dp, {DebugPrintTypeToSize(f), (const uint8_t*)&f, DebugPrintTypeToId<float>()});
  debug_print(dp, {DebugPrintTypeToSize(space), (const uint8_t*)&space, DebugPrintTypeToId<char>()});
  debug_print(dp, {12, (const uint8_t*)arr, DebugPrintTypeToId<U32_ARRAY>()});
  auto endl = ENDL();
  debug_print(dp, {DebugPrintTypeToSize(endl), (const uint8_t*)&endl, DebugPrintTypeToId<decltype(endl)>()});
  // Register words in four data formats.
  uint32_t bf16[2] = {0x40003f80u, 0xc0403fc0u};
  dprint_array_with_data_type<2>(5, bf16);
  uint32_t u16[1] = {0x00070003u};
  dprint_array_with_data_type<1>(9, u16);
  uint32_t i8[1] = {0x80ff017fu};
  dprint_array_with_data_type<1>(14, i8);
  uint32_t f32[1] = {0x3f800000u};
  dprint_array_with_data_type<1>(0, f32);
  // Pages of words.
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  w[0] = 10, w[1] = 20, w[2] = 30, w[3] = 40;
  tt::data_movement::common::print_u32_pages(get_write_ptr(0), 2, 2);
  // Packed block-float mantissas.
  uint8_t bytes[2] = {0xb4, 0x1e};
  {
    auto d = DPRINT;
    d << "datum";
    for (uint32_t i = 0; i < 3; i++) d << " " << (uint32_t)get_datum(DataFormat::Bfp4_b, bytes, i);
    for (uint32_t i = 0; i < 4; i++) d << " " << (uint32_t)get_datum(DataFormat::Bfp2, bytes, i);
    d << " " << (uint32_t)get_datum(DataFormat::Bfp8_b, bytes, 1) << ENDL();
  }
  tile_info_t info = get_tile_info(1, TSLICE_INPUT_CB, TSLICE_RD_PTR);
  DPRINT << "info " << info.tile_dim_r << " " << info.tile_dim_c << " " << info.tile_size << " " << info.face_dim_r
         << " " << info.face_dim_c << " " << info.num_faces << " " << (uint32_t)info.data_format << " "
         << (uint32_t)(info.cb_ptr == get_read_ptr(1)) << ENDL();
  DPRINT << "index " << TileSlice::get_data_index(info, 17, 20, true) << " "
         << TileSlice::get_data_index(info, 17, 20, false) << " " << TileSlice::get_exponent_index(info, 17, 20, true)
         << " " << TileSlice::get_exponent_index(info, 17, 20, false) << ENDL();
}
)";

const char* kNopsCompute = R"(
#include "api/debug/timing_perturbation.h"
namespace NAMESPACE {
void MAIN {
  tt::compute::common::add_compute_nops<3, 5, 7, 1>();
  tt::compute::common::add_nops<4, 0>();
  DPRINT << "after nops" << ENDL();
}
}
)";

void test_print_helpers(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "debug_more_print";
  p.cbs = {CB(0, "UInt32", 64, 1), CB(1, "Float16_b", 2048, 1)};
  p.reader.source = kPrintReader;
  p.compute.source = kNopsCompute;
  auto all = run_dprint(layer, p);
  auto r = lines_of(all, "riscv_0");
  // tt-metal's DPrintTypeID order: CSTR 0, UINT32 5, INT32 9, FLOAT32 11,
  // CHAR 12, U32_ARRAY 21, TYPED_U32_ARRAY 22, HEX 17.
  const std::vector<std::string> want = {
      "ids 0 5 9 11 12 21 22 17",
      "sizes 6 4 2 12",  // "hello" and "abc" with their zero, a uint16, three words
      "x=ff -5 1.5 1 2 3",
      "1 2 1.5 -3 ",            // bf16 halves, low first: 0x3f80 0x4000 0x3fc0 0xc040
      "3 7 ",                   // uint16 halves
      "127 1 -1 -128 ",         // int8 bytes, lowest first
      "1 ",                     // float32 0x3f800000
      "0: 10 20 ", "1: 30 40 ",  // two pages of two words
      // 0xb4: nibbles 4, b; 0x1e: nibble e; 2-bit fields of 0xb4 low first
      // 0, 1, 3, 2; the second byte whole.
      "datum 4 11 14 0 1 3 2 30",
      "info 32 32 2048 16 16 4 5 1",
      // (17, 20): face 3, row 1, column 4 -> 3*256 + 16 + 4; row-major
      // 17*32 + 20; exponents: face 3 row 1 -> 49, 564 / 16 -> 35.
      "index 788 564 49 35"};
  CHECK_EQ(r.size(), want.size());
  for (size_t i = 0; i < want.size() && i < r.size(); i++) CHECK_EQ(r[i], want[i]);
  auto c = lines_of(all, "compute");
  CHECK_EQ(c.size(), size_t(2));
  CHECK_EQ(c.at(0), std::string("is_riscv_nop: 1 Unpack NOPs: 3 Math NOPs: 5 Pack NOPs: 7"));
  CHECK_EQ(c.at(1), std::string("after nops"));
}
ZYX_TEST(print, test_print_helpers);

const char* kWatcherReader = R"(
#include "dataflow_api.h"
#include "api/debug/ring_buffer.h"
#include "api/debug/pause.h"
#include "api/debug/waypoint.h"
#include "api/debug/noc_logging.h"
void kernel_main() {
  for (uint32_t i = 0; i < 35; i++) WATCHER_RING_BUFFER_PUSH(100 + i);
  volatile debug_ring_buf_msg_t* rb = zyx_emu_detail::debug_mailbox<debug_ring_buf_msg_t>(
      ZYX_EMU_L1_RING_BUFFER_OFFSET, sizeof(debug_ring_buf_msg_t), "test");
  DPRINT << "ring " << rb->current_ptr << " " << rb->wrapped << " " << rb->data[0] << " " << rb->data[1] << " "
         << rb->data[2] << " " << rb->data[3] << " " << rb->data[31] << ENDL();
  push_to_ring_buffer(7);
  DPRINT << "ring " << rb->current_ptr << " " << rb->data[3] << ENDL();
  volatile uint32_t* wp = WATCHER_WAYPOINT_MAILBOX;
  PAUSE();
  volatile uint8_t* flags = zyx_emu_detail::debug_mailbox<uint8_t>(ZYX_EMU_L1_PAUSE_OFFSET, 5, "test");
  DPRINT << HEX() << "pause " << (uint32_t)flags[0] << " " << wp[0] << ENDL();
  write_debug_waypoint<helper("WX")>(wp);
  DPRINT << HEX() << "waypoint " << wp[0] << " " << fold("AB", std::make_index_sequence<2>{}) << ENDL();
  log_noc_xfer(1);
  log_noc_xfer(32);
  log_noc_xfer(33);
  log_noc_xfer(2048);
  log_noc_xfer(4095);
  volatile uint32_t* noc = zyx_emu_detail::debug_mailbox<uint32_t>(ZYX_EMU_L1_NOC_LOG_OFFSET, 128, "test");
  DPRINT << "noc " << noc[0] << " " << noc[5] << " " << noc[11] << " " << noc[1] << ENDL();
  internal_::risc_context_switch();
  DPRINT << "switched" << ENDL();
  cb_wait_front(0, 1);  // nothing is pushed: the run deadlocks here
}
)";

void test_watcher_mailbox(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "debug_more_watcher";
  p.cbs = {CB(0, "UInt32", 64, 1)};
  p.reader.source = kWatcherReader;
  p.writer.source = R"(
#include "dataflow_api.h"
#include "api/debug/pause.h"
void kernel_main() {
  PAUSE();
  cb_wait_front(0, 1);
}
)";
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  setenv("ZYX_EMU_DPRINT", "1", 1);
  std::string msg;
  auto all = dprint_lines(
      capture_stderr([&] { msg = expect_error("deadlock", [&] { layer.run(prog, {}, false); }); }));
  unsetenv("ZYX_EMU_DPRINT");
  layer.release(prog);
  auto r = lines_of(all, "riscv_0");
  // 35 pushes into 32 slots from index -1: slots 0-31 take 100-131, then the
  // index wraps (wrapped = 1) and 132-134 land in slots 0-2.
  const std::vector<std::string> want = {
      "ring 2 1 132 133 134 103 131", "ring 3 7",
      "pause 0 44534150",               // the flag cleared; "PASD" low byte first
      "waypoint 5857 4241",             // "WX", "AB"
      "noc 1 2 2 0",                    // highest bits 0; 5, 5; 11, 11
      "switched"};
  CHECK_EQ(r.size(), want.size());
  for (size_t i = 0; i < want.size() && i < r.size(); i++) CHECK_EQ(r[i], want[i]);
  // The waypoints a deadlock report names: the reader's last is WX, the
  // writer's the pause's PASD.
  CHECK(msg.find("(last waypoint WX)") != std::string::npos);
  CHECK(msg.find("(last waypoint PASD)") != std::string::npos);
}
ZYX_TEST(watcher, test_watcher_mailbox);

// DST rows: a bf16 tile with v(r, c) = r % 8 + c / 2 in DST tile 0 and an
// int32 tile with v(r, c) = 32 r + c - 400 in DST tile 1.
const char* kRowsReader = R"(
#include "dataflow_api.h"
void kernel_main() {
  cb_reserve_back(0, 1);
  volatile uint16_t* h = reinterpret_cast<volatile uint16_t*>(get_write_ptr(0));
  cb_reserve_back(1, 1);
  volatile int32_t* n = reinterpret_cast<volatile int32_t*>(get_write_ptr(1));
  for (uint32_t r = 0; r < 32; r++)
    for (uint32_t c = 0; c < 32; c++) {
      uint32_t at = ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15);
      float f = static_cast<float>(r % 8) + 0.5f * static_cast<float>(c);
      uint32_t u;
      __builtin_memcpy(&u, &f, 4);
      h[at] = static_cast<uint16_t>(u >> 16);
      n[at] = static_cast<int32_t>(32 * r + c) - 400;
    }
  cb_push_back(0, 1);
  cb_push_back(1, 1);
}
)";

const char* kRowsCompute = R"(
#include "compute_kernel_api/tile_move_copy.h"
#include "api/debug/dprint_tensix.h"
namespace NAMESPACE {
void MAIN {
  cb_wait_front(0, 1);
  cb_wait_front(1, 1);
  tile_regs_acquire();
  copy_tile_init(0);
  copy_tile(0, 0, 0);
  copy_tile_init(1);
  copy_tile(1, 0, 1);
  dprint_tensix_dest_reg_row_float16(5, 17);
  dprint_tensix_dest_reg_row_float32(17);
  dprint_tensix_dest_reg_row_uint16(9, 66);
  dprint_tensix_dest_reg_row_int8(14, 66);
  dprint_tensix_dest_reg_row_uint8(30, 66);
  dprint_tensix_dest_reg_row_int32(66);
  tile_regs_commit();
  tile_regs_wait();
  tile_regs_release();
  cb_pop_front(0, 1);
  cb_pop_front(1, 1);
}
}
)";

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += x + " ";
  return s;
}
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

void test_dest_rows(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "debug_more_rows";
  p.cbs = {CB(0, "Float16_b", 2048, 1), CB(1, "Int32", 4096, 1)};
  p.reader.source = kRowsReader;
  p.compute.source = kRowsCompute;
  auto c = lines_of(run_dprint(layer, p), "compute");
  CHECK_EQ(c.size(), size_t(6));
  // Row 17: face 1 (top right), row 1: r = 1, c = 16..31.
  std::vector<std::string> row17;
  for (int col = 16; col < 32; col++) row17.push_back(num(1 + 0.5 * col));
  CHECK_EQ(c.at(0), join(row17));  // bf16 pairs decode to the same 16 values
  CHECK_EQ(c.at(1), join(row17));
  // Row 66: tile 1, face 0, row 2: r = 2, c = 0..15, v = c - 336.
  std::vector<std::string> u16, i8, u8;
  for (int col = 0; col < 16; col++) {
    int v = col - 336;
    u16.push_back(std::to_string(static_cast<uint16_t>(v)));
    // An 8-bit datum in the low byte of its 16-bit half: its byte, then 0.
    i8.push_back(std::to_string(static_cast<int8_t>(v & 0xff)));
    i8.push_back("0");
    u8.push_back(std::to_string(v & 0xff));
    u8.push_back("0");
  }
  CHECK_EQ(c.at(2), join(u16));
  CHECK_EQ(c.at(3), join(i8));
  CHECK_EQ(c.at(4), join(u8));
  CHECK_EQ(c.at(5), std::string("Int32 format not supported on this architecture"));  // the test board is a Wormhole
}
ZYX_TEST(dest_rows, test_dest_rows);

// Each kernel prints, meets the others at a checkpoint barrier, prints
// again: no "after" may come before the last "before". The reader also
// dumps its CBs between two barriers.
const char* kCheckpointReader = R"(
#include "dataflow_api.h"
#include "api/debug/checkpoint.h"
void kernel_main() {
  debug_checkpoint_init(0x1f);  // both data-movement processors and the three TRISCs
  DPRINT << "before" << ENDL();
  debug_checkpoint_barrier();
  DPRINT << "after" << ENDL();
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_read_ptr(0));
  w[0] = 0xa, w[1] = 0xb, w[2] = 0xc, w[3] = 0xd, w[4] = 0xe;
  const LocalCBInterface& cb = get_local_cb_interface(0);
  DPRINT << "cb0 " << cb.fifo_size << " " << cb.fifo_rd_ptr << " " << cb.fifo_wr_ptr << ENDL();
  debug_checkpoint_dump_cbs_impl<2, 5>("ck");
  debug_checkpoint_barrier();
}
)";
const char* kCheckpointOther = R"(
  DPRINT << "before" << ENDL();
  debug_checkpoint_barrier();
  DPRINT << "after" << ENDL();
  debug_checkpoint_barrier();
)";

void test_checkpoint_barrier(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "debug_more_checkpoint";
  p.cbs = {CB(0, "UInt32", 64, 1)};
  p.reader.source = kCheckpointReader;
  p.writer.source =
      std::string("#include \"dataflow_api.h\"\n#include \"api/debug/checkpoint.h\"\nvoid kernel_main() {") +
      kCheckpointOther + "}\n";
  p.compute.source = std::string("#include \"api/debug/checkpoint.h\"\nnamespace NAMESPACE {\nvoid MAIN {") +
                     kCheckpointOther + "}\n}\n";
  auto all = run_dprint(layer, p);
  // In the order printed, every "before" precedes every "after".
  int befores = 0, afters = 0;
  for (auto& l : all) {
    bool b = l.size() >= 6 && l.compare(l.size() - 6, 6, "before") == 0;
    bool a = l.size() >= 5 && l.compare(l.size() - 5, 5, "after") == 0;
    if (b) {
      CHECK_EQ(afters, 0);
      befores++;
    }
    if (a) afters++;
  }
  CHECK_EQ(befores, 3);
  CHECK_EQ(afters, 3);
  auto r = lines_of(all, "riscv_0");
  CHECK_EQ(r.size(), size_t(7));
  // "cb0 <size> <rd> <wr>" as the kernel read the interface.
  std::string sz, rd, wr;
  {
    std::istringstream in(r.at(2).substr(4));
    in >> sz >> rd >> wr;
  }
  CHECK_EQ(r.at(3), std::string("=== CKPT ck RISC0 CBs ==="));
  CHECK_EQ(r.at(4), "CB0 sz=" + sz + " rd=" + rd + " wr=" + wr + " ack=0 rcv=0");
  CHECK_EQ(r.at(5), std::string("  [0] a b c d "));
  CHECK_EQ(r.at(6), std::string("  [4] e "));
}
ZYX_TEST(checkpoint, test_checkpoint_barrier);

// Blackhole's pack_config_t printers and helper, each field against the
// word and bit tt-llk's Blackhole layout puts it at.
struct Field {
  std::string printer, label;
  int word, lo, width;
  char base;  // 'd' decimal, 'x' 0x-hex, 'f' data format name
};

void test_pack_config_blackhole(DeviceLayer& layer) {
  const uint32_t w[3] = {0x00400010u, 0x12345678u,
                         1u | (0u << 1) | (1u << 2) | (0u << 3) | (5u << 4) | (0u << 8) | (1u << 12) | (0u << 13) |
                             (1u << 14) | (1u << 15) | (0u << 16) | (0xau << 17) | (1u << 21) | (1u << 22) |
                             (0u << 23) | (0xc4u << 24)};
  const std::vector<Field> f = {
      {"row_ptr_section_size", "row_ptr_section_size", 0, 0, 16, 'd'},
      {"exp_section_size", "exp_section_size", 0, 16, 16, 'd'},
      {"l1_dest_addr", "l1_dest_addr", 1, 0, 32, 'x'},
      {"uncompressed", "uncompress", 2, 0, 1, 'x'},
      {"add_l1_dest_addr_offset", "add_l1_dest_addr_offset", 2, 1, 1, 'x'},
      {"disable_pack_zero_flag", "disable_pack_zero_flag", 2, 2, 1, 'x'},
      {"reserved_0", "reserved_0", 2, 3, 1, 'x'},
      {"out_data_format", "out_data_format", 2, 4, 4, 'f'},
      {"in_data_format", "in_data_format", 2, 8, 4, 'f'},
      {"dis_shared_exp_assembler", "dis_shared_exp_assembler", 2, 12, 1, 'x'},
      {"auto_set_last_pacr_intf_sel", "auto_set_last_pacr_intf_sel", 2, 13, 1, 'x'},
      {"enable_out_fifo", "enable_out_fifo", 2, 14, 1, 'x'},
      {"sub_l1_tile_header_size", "sub_l1_tile_header_size", 2, 15, 1, 'd'},
      {"src_if_sel", "src_if_sel", 2, 16, 1, 'x'},
      {"pack_start_intf_pos", "pack_start_intf_pos", 2, 17, 4, 'x'},
      {"all_pack_disable_zero_compress_ovrd", "all_pack_disable_zero_compress_ovrd", 2, 21, 1, 'x'},
      {"add_tile_header_size", "add_tile_header_size", 2, 22, 1, 'd'},
      {"pack_dis_y_pos_start_offset", "pack_dis_y_pos_start_offset", 2, 23, 1, 'x'},
      {"l1_src_addr", "l1_src_addr", 2, 24, 8, 'x'}};
  std::string src =
      "#include <cstring>\n#include \"api/debug/dprint_tensix_pack.h\"\nnamespace NAMESPACE {\nvoid MAIN {\n";
  src += "  const uint32_t words[3] = {" + std::to_string(w[0]) + "u, " + std::to_string(w[1]) + "u, " +
         std::to_string(w[2]) + "u};\n  ckernel::packer::pack_config_t s;\n" +
         "  std::memcpy(&s, words, sizeof s);\n" +
         "  static_assert(std::is_same_v<ckernel::packer::pack_config_t, ckernel::packer::pack_config_blackhole_t>);\n";
  for (auto& x : f)
    src += "  DPRINT << \"" + x.printer + ": \";\n  dprint_tensix_pack_config_" + x.printer + "(s);\n";
  src += "  DPRINT << \"helper:\" << ENDL();\n  dprint_tensix_pack_config_helper(s);\n}\n}\n";
  GroupProgram p;
  p.name = "debug_more_pack_bh";
  p.compute.source = src;
  auto c = lines_of(run_dprint(layer, p), "compute");
  auto value = [&](const Field& x) {
    uint32_t v = x.width == 32 ? w[x.word] : (w[x.word] >> x.lo) & ((1u << x.width) - 1);
    char b[16];
    if (x.base == 'x') std::snprintf(b, sizeof b, "0x%x", v);
    else std::snprintf(b, sizeof b, "%u", v);
    if (x.base == 'f') return std::string(v == 5 ? "Float16_b" : v == 0 ? "Float32" : "?");
    return std::string(b);
  };
  CHECK_EQ(c.size(), 2 * f.size() + 1);
  size_t at = 0;
  for (auto& x : f) CHECK_EQ(c.at(at++), x.printer + ": " + value(x));
  CHECK_EQ(c.at(at++), std::string("helper:"));
  for (auto& x : f) CHECK_EQ(c.at(at++), x.label + ": " + value(x));
}
// A Blackhole kernel: its pack_config_t is Blackhole's.
ZYX_TEST_ON(pack_blackhole, test_pack_config_blackhole, "p150a");

// DataflowBuffer's entry address and word read, on entries written here.
void test_dataflow_buffer_tiles(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "debug_more_dfb";
  p.cbs = {CB(0, "UInt32", 64, 2)};
  p.reader.source = R"(
#include "dataflow_api.h"
void kernel_main() {
  experimental::DataflowBuffer dfb(0);
  dfb.reserve_back(2);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(dfb.get_write_ptr());
  for (uint32_t i = 0; i < 32; i++) w[i] = 1000 + i;
  dfb.push_back(2);
  dfb.wait_front(2);
  DPRINT << "dfb " << dfb.get_tile_address(0) - dfb.get_read_ptr() << " "
         << dfb.get_tile_address(1) - dfb.get_read_ptr() << " " << dfb.read_tile_value(0, 3) << " "
         << dfb.read_tile_value(1, 5) << ENDL();
  dfb.pop_front(2);
}
)";
  auto r = lines_of(run_dprint(layer, p), "riscv_0");
  CHECK_EQ(r.size(), size_t(1));
  // entries of 64 bytes: entry 1 starts at 64; its word 5 is word 16 + 5.
  CHECK_EQ(r.at(0), std::string("dfb 0 64 1003 1021"));
}
ZYX_TEST(dfb, test_dataflow_buffer_tiles);

// The unpacker register dumps: the registers as tt-llk's configure_unpack_AB
// programs them for the CBs compute_kernel_hw_startup and the reconfig calls
// name (zero before any), in tt-metal's REG_ID layout.
std::vector<std::string> tile_descriptor_lines(const std::string& format, const std::string& uncompressed,
                                               int x, int y, int z) {
  return {"in_data_format: " + format, "uncompressed: " + uncompressed, "reserved_0: 0x0",
          "blobs_per_xy_plane: 0", "reserved_1: 0x0", "x_dim: " + std::to_string(x), "y_dim: " + std::to_string(y),
          "z_dim: " + std::to_string(z), "w_dim: 0", "blobs_y_start: 0", "digest_type: 0x0", "digest_size: 0"};
}
std::vector<std::string> unpack_config_lines(const std::string& format, bool configured) {
  const std::string throttle = configured ? "0x2" : "0x0", uncompress = configured ? "0xf" : "0x0";
  return {"out_data_format: " + format, "throttle_mode: " + throttle, "context_count: 0x0", "haloize_mode: 0x0",
          "tileize_mode: 0x0", "unpack_src_reg_set_update: 0x0", "unpack_if_sel: 0x0", "upsample_rate: 0",
          "reserved_1: 0x0", "upsample_and_interlave: 0x0", "shift_amount: 0",
          "uncompress_cntx0_3: " + uncompress, "unpack_if_sel_cntx0_3: 0x0", "force_shared_exp: 0x0",
          "reserved_2: 0x0", "uncompress_cntx4_7: " + uncompress, "unpack_if_sel_cntx4_7: 0x0", "reserved_3: 0x0",
          "limit_addr: 0x0", "reserved_4: 0x0", "fifo_size: 0", "reserved_5: 0x0"};
}

void test_unpack_register_dumps(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "debug_more_unpack_regs";
  p.cbs = {CB(0, "Float16_b", 2048, 1), CB(1, "Float32", 4096, 1), CB(2, "Bfp8_b", 1088, 1)};
  p.compute.source = R"(
#include "api/debug/dprint_tensix_unpack.h"
#include "api/compute/compute_kernel_hw_startup.h"
namespace NAMESPACE {
void MAIN {
  dprint_tensix_unpack_tile_descriptor(1);
  compute_kernel_hw_startup(0, 1, 2);
  dprint_tensix_unpack_tile_descriptor();
  dprint_tensix_unpack_config(2);
  reconfig_data_format_srca(2);
  dprint_tensix_unpack_config(1);
  dprint_tensix_unpack_config(3);
}
}
)";
  auto c = lines_of(run_dprint(layer, p), "compute");
  std::vector<std::string> want = {"REG_ID: 1"};
  auto add = [&](const std::vector<std::string>& v) { want.insert(want.end(), v.begin(), v.end()); };
  add(tile_descriptor_lines("Float32", "0x0", 0, 0, 0));  // at reset: all zero (format 0 reads Float32)
  // Unpacker A (CB 0, bf16): x 0, y 1, four faces; B (CB 1, float32): x a
  // 16-row face's 256 datums.
  want.push_back("REG_ID: 1");
  add(tile_descriptor_lines("Float16_b", "0x1", 0, 1, 4));
  want.push_back("");
  want.push_back("REG_ID: 2");
  add(tile_descriptor_lines("Float32", "0x1", 256, 1, 4));
  want.push_back("REG_ID: 2");
  add(unpack_config_lines("Float32", true));
  want.push_back("REG_ID: 1");  // after reconfig_data_format_srca(2): CB 2's format
  add(unpack_config_lines("Bfp8_b", true));
  want.push_back("INVALID REGISTER ID! PLEASE CHOOSE A NUMBER BETWEEN 0 AND 2.");
  CHECK_EQ(c.size(), want.size());
  for (size_t i = 0; i < want.size() && i < c.size(); i++) CHECK_EQ(c[i], want[i]);
}
ZYX_TEST(unpack_regs, test_unpack_register_dumps);

// The ALU configuration dump before setup (all zero) and after
// compute_kernel_hw_startup with a UInt8 source A, an Int32 source B and a
// bf16 output, in bf16 DST.
std::vector<std::string> alu_lines(const std::string& a_unsigned, const std::string& srca, const std::string& srcb,
                                   const std::string& dstacc, const std::string& int8) {
  return {"ALU_ROUNDING_MODE_Fpu_srnd_en: 0x0", "ALU_ROUNDING_MODE_Gasket_srnd_en: 0x0",
          "ALU_ROUNDING_MODE_Packer_srnd_en: 0x0", "ALU_ROUNDING_MODE_Padding: 0x0", "ALU_ROUNDING_MODE_GS_LF: 0x0",
          "ALU_ROUNDING_MODE_Bfp8_HF: 0x0", "ALU_FORMAT_SPEC_REG0_SrcAUnsigned: " + a_unsigned,
          "ALU_FORMAT_SPEC_REG0_SrcBUnsigned: 0x0", "ALU_FORMAT_SPEC_REG0_SrcA: " + srca,
          "ALU_FORMAT_SPEC_REG1_SrcB: " + srcb, "ALU_FORMAT_SPEC_REG2_Dstacc: " + dstacc,
          "ALU_ACC_CTRL_Fp32_enabled: 0x0", "ALU_ACC_CTRL_SFPU_Fp32_enabled: 0x0",
          "ALU_ACC_CTRL_INT8_math_enabled: " + int8};
}

void test_alu_register_dump(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "debug_more_alu_regs";
  p.cbs = {CB(0, "UInt8", 1024, 1), CB(1, "Int32", 4096, 1), CB(2, "Float16_b", 2048, 1)};
  p.compute.source = R"(
#include "api/debug/dprint_tensix_unpack.h"
namespace NAMESPACE {
void MAIN {
  dprint_tensix_alu_config();
  compute_kernel_hw_startup(0, 1, 2);
  dprint_tensix_alu_config();
}
}
)";
  auto c = lines_of(run_dprint(layer, p), "compute");
  std::vector<std::string> want = alu_lines("0x0", "Float32", "Float32", "Float32", "0x0");
  // UInt8 (30) in a 4-bit field reads 14, Int8's name; an Int32 source
  // turns int8 math on; the output CB's bf16 is the DST format.
  auto after = alu_lines("0x1", "Int8", "Int32", "Float16_b", "0x1");
  want.insert(want.end(), after.begin(), after.end());
  CHECK_EQ(c.size(), want.size());
  for (size_t i = 0; i < want.size() && i < c.size(); i++) CHECK_EQ(c[i], want[i]);
}
ZYX_TEST(unpack_regs, test_alu_register_dump);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "debug_more_"); }
