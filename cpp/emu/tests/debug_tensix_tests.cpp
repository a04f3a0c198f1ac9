// dprint_tensix_pack.h's field printers: a compute kernel lays raw register
// words over the packer structures and prints every field; the expected
// lines are computed here from the words and tt-llk's Wormhole bit layout
// (field offset and width), so the test checks the structures' layout as
// well as each printer's name, order and base.
#include <cstdio>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

// The register words the kernel prints (pack_config_t is four words).
constexpr uint32_t kPackConfig[4] = {0x00400010u, 0x12345678u,
                                     1u | (2u << 2) | (5u << 4) | (0u << 8) | (0xau << 12) | (1u << 16) |
                                         (0x33u << 17) | (0xc4u << 24),
                                     0xbeefu | (5u << 16) | (1u << 19) | (3u << 21) | (1u << 23) | (200u << 24)};
constexpr uint32_t kRelu = 1u | (0u << 1) | (3u << 2) | (0x1234u << 6) | (1u << 22) | (5u << 23) | (1u << 26) |
                           (0u << 27) | (6u << 28) | (1u << 31);
constexpr uint32_t kDestRdCtrl = 1u | (0u << 1) | (1u << 2) | (1u << 3) | (0x5u << 4);
constexpr uint32_t kEdgeOffset = 0xf0f0u | (1u << 16) | (1u << 17) | (2u << 19) | (3u << 21) | (0u << 23) |
                                 (0x41u << 25);
constexpr uint32_t kCounters = 16u | (4u << 8) | (100u << 16) | (1u << 23) | (9u << 24);
constexpr uint32_t kStrides = 0x00400002u;

std::string kernel_source() {
  char words[512];
  std::snprintf(words, sizeof words,
                "const uint32_t pack_words[4] = {0x%xu, 0x%xu, 0x%xu, 0x%xu};\n"
                "const uint32_t relu_word = 0x%xu, rd_word = 0x%xu, edge_word = 0x%xu, counters_word = 0x%xu,"
                " strides_word = 0x%xu;\n",
                kPackConfig[0], kPackConfig[1], kPackConfig[2], kPackConfig[3], kRelu, kDestRdCtrl, kEdgeOffset,
                kCounters, kStrides);
  return std::string("#include <cstring>\n#include \"debug/dprint_tensix_pack.h\"\n") + words + R"(
template <typename T, size_t N>
T overlay(const uint32_t (&w)[N]) { T t; std::memcpy(&t, w, sizeof t); return t; }
#define FIELD(fn, s) do { DPRINT << #fn << ": "; fn(s); } while (0)
namespace NAMESPACE {
void MAIN {
  auto pc = overlay<ckernel::packer::pack_config_t>(pack_words);
  FIELD(dprint_tensix_pack_config_row_ptr_section_size, pc);
  FIELD(dprint_tensix_pack_config_exp_section_size, pc);
  FIELD(dprint_tensix_pack_config_l1_dest_addr, pc);
  FIELD(dprint_tensix_pack_config_uncompressed, pc);
  FIELD(dprint_tensix_pack_config_add_l1_dest_addr_offset, pc);
  FIELD(dprint_tensix_pack_config_reserved_0, pc);
  FIELD(dprint_tensix_pack_config_out_data_format, pc);
  FIELD(dprint_tensix_pack_config_in_data_format, pc);
  FIELD(dprint_tensix_pack_config_reserved_1, pc);
  FIELD(dprint_tensix_pack_config_src_if_sel, pc);
  FIELD(dprint_tensix_pack_config_pack_per_xy_plane, pc);
  FIELD(dprint_tensix_pack_config_l1_src_addr, pc);
  FIELD(dprint_tensix_pack_config_downsample_mask, pc);
  FIELD(dprint_tensix_pack_config_downsample_shift_count, pc);
  FIELD(dprint_tensix_pack_config_read_mode, pc);
  FIELD(dprint_tensix_pack_config_exp_threshold_en, pc);
  FIELD(dprint_tensix_pack_config_l1_acc_disable_pack_zero_flag, pc);
  FIELD(dprint_tensix_pack_config_reserved_2, pc);
  FIELD(dprint_tensix_pack_config_exp_threshold, pc);
  DPRINT << "helper:" << ENDL();
  dprint_tensix_pack_config_helper(pc);
  const uint32_t relu_words[1] = {relu_word};
  auto rc = overlay<ckernel::packer::relu_config_t>(relu_words);
  FIELD(dprint_tensix_pack_relu_config_alu_acc_ctrl_zero_flag_disabled_src, rc);
  FIELD(dprint_tensix_pack_relu_config_alu_acc_ctrl_zero_flag_disabled_dst, rc);
  FIELD(dprint_tensix_pack_relu_config_stacc_relu_apply_relu, rc);
  FIELD(dprint_tensix_pack_relu_config_stacc_relu_relu_threshold, rc);
  FIELD(dprint_tensix_pack_relu_config_disable_risc_bp_disable_main, rc);
  FIELD(dprint_tensix_pack_relu_config_disable_risc_bp_disable_trisc, rc);
  FIELD(dprint_tensix_pack_relu_config_disable_risc_bp_disable_ncrisc, rc);
  FIELD(dprint_tensix_pack_relu_config_disable_risc_bp_disable_bmp_clear_main, rc);
  FIELD(dprint_tensix_pack_relu_config_disable_risc_bp_disable_bmp_clear_trisc, rc);
  FIELD(dprint_tensix_pack_relu_config_disable_risc_bp_disable_bmp_clear_ncrisc, rc);
  const uint32_t rd_words[1] = {rd_word};
  auto rd = overlay<ckernel::packer::dest_rd_ctrl_t>(rd_words);
  FIELD(dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_read_32b_data, rd);
  FIELD(dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_read_unsigned, rd);
  FIELD(dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_read_int8, rd);
  FIELD(dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_round_10b_mant, rd);
  FIELD(dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_reserved, rd);
  const uint32_t edge_words[1] = {edge_word};
  auto eo = overlay<ckernel::packer::pck_edge_offset_t>(edge_words);
  FIELD(dprint_tensix_pack_edge_offset_mask, eo);
  FIELD(dprint_tensix_pack_edge_offset_mode, eo);
  FIELD(dprint_tensix_pack_edge_offset_tile_row_set_select_pack0, eo);
  FIELD(dprint_tensix_pack_edge_offset_tile_row_set_select_pack1, eo);
  FIELD(dprint_tensix_pack_edge_offset_tile_row_set_select_pack2, eo);
  FIELD(dprint_tensix_pack_edge_offset_tile_row_set_select_pack3, eo);
  FIELD(dprint_tensix_pack_edge_offset_reserved, eo);
  DPRINT << "edge 1:" << ENDL();
  dprint_tensix_pack_edge_offset_helper(eo, 1);
  DPRINT << "edge 2:" << ENDL();
  dprint_tensix_pack_edge_offset_helper(eo, 2);
  const uint32_t counters_words[1] = {counters_word};
  auto ct = overlay<ckernel::packer::pack_counters_t>(counters_words);
  FIELD(dprint_tensix_pack_counters_pack_per_xy_plane, ct);
  FIELD(dprint_tensix_pack_counters_pack_reads_per_xy_plane, ct);
  FIELD(dprint_tensix_pack_counters_pack_xys_per_til, ct);
  FIELD(dprint_tensix_pack_counters_pack_yz_transposed, ct);
  FIELD(dprint_tensix_pack_counters_pack_per_xy_plane_offset, ct);
  DPRINT << "counters:" << ENDL();
  dprint_tensix_pack_counters_helper(ct);
  dprint_tensix_pack_strides_x_stride(strides_word);
  dprint_tensix_pack_strides_y_stride(strides_word);
  dprint_tensix_pack_strides_z_stride(strides_word);
  dprint_tensix_pack_strides_w_stride(strides_word);
}
}
)";
}

// A field as tt-llk lays it out: width bits from bit lo of word.
uint32_t bits(uint32_t word, int lo, int width) {
  return width == 32 ? word : (word >> lo) & ((1u << width) - 1);
}
std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}
std::string dec(uint32_t v) { return std::to_string(v); }

struct Expected {
  std::string name;  // the field's name in the helpers' output
  std::string value;
};

std::vector<Expected> pack_config_fields() {
  const uint32_t* w = kPackConfig;
  // out 5 is Float16_b, in 0 is Float32 (DataFormat values).
  return {{"row_ptr_section_size", dec(bits(w[0], 0, 16))},
          {"exp_section_size", dec(bits(w[0], 16, 16))},
          {"l1_dest_addr", hex(w[1])},
          {"uncompress", hex(bits(w[2], 0, 1))},
          {"add_l1_dest_addr_offset", hex(bits(w[2], 1, 1))},
          {"reserved_0", hex(bits(w[2], 2, 2))},
          {"out_data_format", "Float16_b"},
          {"in_data_format", "Float32"},
          {"reserved_1", hex(bits(w[2], 12, 4))},
          {"src_if_sel", hex(bits(w[2], 16, 1))},
          {"pack_per_xy_plane", dec(bits(w[2], 17, 7))},
          {"l1_src_addr", hex(bits(w[2], 24, 8))},
          {"downsample_mask", hex(bits(w[3], 0, 16))},
          {"downsample_shift_count", dec(bits(w[3], 16, 3))},
          {"read_mode", hex(bits(w[3], 19, 1))},
          {"exp_threshold_en", hex(bits(w[3], 20, 1))},
          {"pack_l1_acc_disable_pack_zero_flag", hex(bits(w[3], 21, 2))},
          {"reserved_2", hex(bits(w[3], 23, 1))},
          {"exp_threshold", dec(bits(w[3], 24, 8))}};
}

std::vector<Expected> edge_offset_fields() {
  const uint32_t w = kEdgeOffset;
  return {{"mask", hex(bits(w, 0, 16))},
          {"mode", hex(bits(w, 16, 1))},
          {"tile_row_set_select_pack0", hex(bits(w, 17, 2))},
          {"tile_row_set_select_pack1", hex(bits(w, 19, 2))},
          {"tile_row_set_select_pack2", hex(bits(w, 21, 2))},
          {"tile_row_set_select_pack3", hex(bits(w, 23, 2))},
          {"reserved", hex(bits(w, 25, 7))}};
}

std::vector<Expected> counters_fields() {
  const uint32_t w = kCounters;
  return {{"pack_per_xy_plane", dec(bits(w, 0, 8))},
          {"pack_reads_per_xy_plane", dec(bits(w, 8, 8))},
          {"pack_xys_per_til", dec(bits(w, 16, 7))},
          {"pack_yz_transposed", hex(bits(w, 23, 1))},
          {"pack_per_xy_plane_offset", dec(bits(w, 24, 8))}};
}

// The per-field calls print "<function>: <value>"; fn_names give the
// functions in the order the kernel calls them.
void check_field_lines(const std::vector<std::string>& lines, size_t& at, const std::string& prefix,
                       const std::vector<std::string>& fn_names, const std::vector<std::string>& values) {
  CHECK_EQ(fn_names.size(), values.size());
  for (size_t i = 0; i < fn_names.size(); i++) CHECK_EQ(lines.at(at++), prefix + fn_names[i] + ": " + values[i]);
}

void check_helper_lines(const std::vector<std::string>& lines, size_t& at, const std::string& prefix,
                        const std::vector<Expected>& fields) {
  for (auto& f : fields) CHECK_EQ(lines.at(at++), prefix + f.name + ": " + f.value);
}

std::vector<std::string> values_of(const std::vector<Expected>& fields) {
  std::vector<std::string> v;
  for (auto& f : fields) v.push_back(f.value);
  return v;
}

void test_pack_field_printers(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "dprint_tensix_pack";
  p.compute.source = kernel_source();
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  setenv("ZYX_EMU_DPRINT", "1", 1);
  auto all = dprint_lines(capture_stderr([&] { layer.run(prog, {}, false); }));
  unsetenv("ZYX_EMU_DPRINT");
  layer.release(prog);
  const std::string c = "dprint: core (0,0) compute: ";
  std::vector<std::string> lines;
  for (auto& l : all)
    if (l.rfind(c, 0) == 0) lines.push_back(l);
  size_t at = 0;
  const std::string pc = "dprint_tensix_pack_config_";
  check_field_lines(lines, at, c,
                    {pc + "row_ptr_section_size", pc + "exp_section_size", pc + "l1_dest_addr", pc + "uncompressed",
                     pc + "add_l1_dest_addr_offset", pc + "reserved_0", pc + "out_data_format", pc + "in_data_format",
                     pc + "reserved_1", pc + "src_if_sel", pc + "pack_per_xy_plane", pc + "l1_src_addr",
                     pc + "downsample_mask", pc + "downsample_shift_count", pc + "read_mode", pc + "exp_threshold_en",
                     pc + "l1_acc_disable_pack_zero_flag", pc + "reserved_2", pc + "exp_threshold"},
                    values_of(pack_config_fields()));
  CHECK_EQ(lines.at(at++), c + "helper:");
  check_helper_lines(lines, at, c, pack_config_fields());
  const std::string rc = "dprint_tensix_pack_relu_config_";
  check_field_lines(lines, at, c,
                    {rc + "alu_acc_ctrl_zero_flag_disabled_src", rc + "alu_acc_ctrl_zero_flag_disabled_dst",
                     rc + "stacc_relu_apply_relu", rc + "stacc_relu_relu_threshold",
                     rc + "disable_risc_bp_disable_main",
                     rc + "disable_risc_bp_disable_trisc", rc + "disable_risc_bp_disable_ncrisc",
                     rc + "disable_risc_bp_disable_bmp_clear_main", rc + "disable_risc_bp_disable_bmp_clear_trisc",
                     rc + "disable_risc_bp_disable_bmp_clear_ncrisc"},
                    {hex(bits(kRelu, 0, 1)), hex(bits(kRelu, 1, 1)), hex(bits(kRelu, 2, 4)), dec(bits(kRelu, 6, 16)),
                     hex(bits(kRelu, 22, 1)), hex(bits(kRelu, 23, 3)), hex(bits(kRelu, 26, 1)),
                     hex(bits(kRelu, 27, 1)), hex(bits(kRelu, 28, 3)), hex(bits(kRelu, 31, 1))});
  const std::string rd = "dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_";
  check_field_lines(lines, at, c,
                    {rd + "read_32b_data", rd + "read_unsigned", rd + "read_int8", rd + "round_10b_mant",
                     rd + "reserved"},
                    {hex(bits(kDestRdCtrl, 0, 1)), hex(bits(kDestRdCtrl, 1, 1)), hex(bits(kDestRdCtrl, 2, 1)),
                     hex(bits(kDestRdCtrl, 3, 1)), hex(bits(kDestRdCtrl, 4, 28))});
  const std::string eo = "dprint_tensix_pack_edge_offset_";
  std::vector<std::string> eo_fns;
  for (auto& f : edge_offset_fields()) eo_fns.push_back(eo + f.name);
  check_field_lines(lines, at, c, eo_fns, values_of(edge_offset_fields()));
  CHECK_EQ(lines.at(at++), c + "edge 1:");
  check_helper_lines(lines, at, c, edge_offset_fields());
  CHECK_EQ(lines.at(at++), c + "edge 2:");  // registers 2-4 print only their mask
  CHECK_EQ(lines.at(at++), c + "mask: " + edge_offset_fields()[0].value);
  std::vector<std::string> ct_fns;
  for (auto& f : counters_fields()) ct_fns.push_back("dprint_tensix_pack_counters_" + f.name);
  check_field_lines(lines, at, c, ct_fns, values_of(counters_fields()));
  CHECK_EQ(lines.at(at++), c + "counters:");
  check_helper_lines(lines, at, c, counters_fields());
  CHECK_EQ(lines.at(at++), c + "x_stride: " + dec(bits(kStrides, 0, 16)));
  CHECK_EQ(lines.at(at++), c + "y_stride: " + dec(bits(kStrides, 16, 16)));
  CHECK_EQ(lines.at(at++), c + "z_stride: " + dec(bits(kStrides, 0, 16)));
  CHECK_EQ(lines.at(at++), c + "w_stride: " + dec(bits(kStrides, 16, 16)));
  CHECK_EQ(at, lines.size());
}
ZYX_TEST(pack, test_pack_field_printers);


// One field of a register structure: its printer's name, the word and bit
// it starts at, its width, and how tt-metal prints it.
enum class Base { hex, dec, format };
struct Field {
  std::string printer;
  int word, lo, width;
  Base base;
};

// The DataFormat names of the values the test words use.
std::string format_name(uint32_t v) {
  switch (v) {
    case 0: return "Float32";
    case 1: return "Float16";
    case 5: return "Float16_b";
    case 6: return "Bfp8_b";
    case 8: return "Int32";
    case 9: return "UInt16";
    case 14: return "Int8";
    default: return "?";
  }
}

std::string expected_value(const Field& f, const std::vector<uint32_t>& words) {
  uint32_t v = bits(words.at(f.word), f.lo, f.width);
  return f.base == Base::hex ? hex(v) : f.base == Base::dec ? dec(v) : format_name(v);
}

// A kernel that overlays `words` on `type` and calls every printer of
// `fields` as "<printer>: <value>", then `helper` (when given) after a
// "helper:" line.
std::string overlay_kernel(const std::string& type, const std::vector<uint32_t>& words,
                           const std::vector<Field>& fields, const std::string& helper) {
  std::string src = "#include <cstring>\n#include \"debug/dprint_tensix_unpack.h\"\n";
  src += "namespace NAMESPACE {\nvoid MAIN {\n";
  src += "  const uint32_t words[" + std::to_string(words.size()) + "] = {";
  for (size_t i = 0; i < words.size(); i++) src += (i ? ", " : "") + std::to_string(words[i]) + "u";
  src += "};\n  " + type + " s;\n  std::memcpy(&s, words, sizeof s);\n";
  for (auto& f : fields) src += "  DPRINT << \"" + f.printer + ": \";\n  " + f.printer + "(s);\n";
  if (!helper.empty()) src += "  DPRINT << \"helper:\" << ENDL();\n  " + helper + "(s);\n";
  return src + "}\n}\n";
}

std::vector<std::string> compute_lines(DeviceLayer& layer, const std::string& name, const std::string& source) {
  GroupProgram p;
  p.name = name;
  p.compute.source = source;
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  setenv("ZYX_EMU_DPRINT", "1", 1);
  auto all = dprint_lines(capture_stderr([&] { layer.run(prog, {}, false); }));
  unsetenv("ZYX_EMU_DPRINT");
  layer.release(prog);
  std::vector<std::string> lines;
  const std::string c = "dprint: core (0,0) compute: ";
  for (auto& l : all)
    if (l.rfind(c, 0) == 0) lines.push_back(l.substr(c.size()));
  return lines;
}

// Runs the overlay kernel and checks each printer's line, then the helper's
// "label: value" lines (labels: the helper's field names in its order, each
// printed as the printer of the same position in helper_fields prints it).
void check_overlay(DeviceLayer& layer, const std::string& type, const std::vector<uint32_t>& words,
                   const std::vector<Field>& fields, const std::string& helper,
                   const std::vector<std::pair<std::string, std::string>>& helper_lines) {
  auto lines = compute_lines(layer, "overlay", overlay_kernel(type, words, fields, helper));
  size_t at = 0;
  for (auto& f : fields) CHECK_EQ(lines.at(at++), f.printer + ": " + expected_value(f, words));
  if (!helper.empty()) {
    CHECK_EQ(lines.at(at++), std::string("helper:"));
    for (auto& [label, value] : helper_lines) CHECK_EQ(lines.at(at++), label + ": " + value);
  }
  CHECK_EQ(at, lines.size());
}

std::string value_of(const std::vector<Field>& fields, const std::string& printer, const std::vector<uint32_t>& w) {
  for (auto& f : fields)
    if (f.printer == printer) return expected_value(f, w);
  throw Failure("no field " + printer);
}

void test_unpack_tile_descriptor(DeviceLayer& layer) {
  const std::string p = "dprint_tensix_unpack_tile_descriptor_";
  // in Float16_b, uncompressed, reserved 5, 3 blobs, reserved 0xa, x 256;
  // y 2, z 3; w 4, blobs_y_start low half 0x0007; high half 0x0001, digest
  // type 0xab, size 17.
  const std::vector<uint32_t> w = {5u | (1u << 4) | (5u << 5) | (3u << 8) | (0xau << 12) | (256u << 16),
                                   2u | (3u << 16), 4u | (7u << 16), 1u | (0xabu << 16) | (17u << 24)};
  const std::vector<Field> f = {
      {"dprint_tensix_unpack_tile_descriptor_in_data_format", 0, 0, 4, Base::format},
      {"dprint_tensix_unpack_tile_descriptor_uncompressed", 0, 4, 1, Base::hex},
      {"dprint_tensix_unpack_tile_descriptor_reserved_0", 0, 5, 3, Base::hex},
      {"dprint_tensix_unpack_tile_descriptor_blobs_per_xy_plane", 0, 8, 4, Base::dec},
      {"dprint_tensix_unpack_tile_descriptor_reserved_1", 0, 12, 4, Base::hex},
      {"dprint_tensix_unpack_tile_descriptor_x_dim", 0, 16, 16, Base::dec},
      {"dprint_tensix_unpack_tile_descriptor_y_dim", 1, 0, 16, Base::dec},
      {"dprint_tensix_unpack_tile_descriptor_z_dim", 1, 16, 16, Base::dec},
      {"dprint_tensix_unpack_tile_descriptor_w_dim", 2, 0, 16, Base::dec},
      {"dprint_tensix_unpack_tile_descriptor_digest_type", 3, 16, 8, Base::hex},
      {"dprint_tensix_unpack_tile_descriptor_digest_size", 3, 24, 8, Base::dec}};
  // blobs_y_start joins the high half-word (word 3) above the low (word 2).
  const std::string y_start = dec((bits(w[3], 0, 16) << 16) | bits(w[2], 16, 16));
  std::vector<Field> all = f;
  std::vector<std::pair<std::string, std::string>> helper;
  for (auto& x : f) {
    std::string label = x.printer.substr(p.size());
    if (label == "digest_type") helper.push_back({"blobs_y_start", y_start});
    helper.push_back({label, expected_value(x, w)});
  }
  check_overlay(layer, "ckernel::unpacker::unpack_tile_descriptor_t", w, all,
                "dprint_tensix_unpack_tile_descriptor_helper", helper);
  // The joined field on its own (called in the helper's place).
  std::string src = overlay_kernel("ckernel::unpacker::unpack_tile_descriptor_t", w, {},
                                   "dprint_tensix_unpack_tile_descriptor_blobs_y_start");
  auto lines = compute_lines(layer, "y_start", src);
  CHECK_EQ(lines.size(), size_t(2));
  CHECK_EQ(lines.at(1), y_start);
  CHECK_EQ(y_start, std::string("65543"));  // 1 << 16 | 7
}
ZYX_TEST(unpack, test_unpack_tile_descriptor);

void test_unpack_config(DeviceLayer& layer) {
  const std::string p = "dprint_tensix_unpack_config_";
  const std::vector<uint32_t> w = {
      6u | (2u << 4) | (1u << 6) | (1u << 8) | (0u << 9) | (1u << 10) | (1u << 11) | (3u << 12) | (1u << 14) |
          (1u << 15) | (300u << 16),
      0xfu | (0x5u << 4) | (1u << 8) | (0x3u << 9) | (0xau << 16) | (0x6u << 20) | (0x81u << 24),
      0x1abcdu | (0x12u << 17), 70000u | (0x7fffu << 17)};
  const std::vector<Field> f = {
      {"dprint_tensix_unpack_config_out_data_format", 0, 0, 4, Base::format},
      {"dprint_tensix_unpack_config_throttle_mode", 0, 4, 2, Base::hex},
      {"dprint_tensix_unpack_config_context_count", 0, 6, 2, Base::hex},
      {"dprint_tensix_unpack_config_haloize_mode", 0, 8, 1, Base::hex},
      {"dprint_tensix_unpack_config_tileize_mode", 0, 9, 1, Base::hex},
      {"dprint_tensix_unpack_config_unpack_src_reg_set_update", 0, 10, 1, Base::hex},
      {"dprint_tensix_unpack_config_unpack_if_sel", 0, 11, 1, Base::hex},
      {"dprint_tensix_unpack_config_upsample_rate", 0, 12, 2, Base::dec},
      {"dprint_tensix_unpack_config_reserved_1", 0, 14, 1, Base::hex},
      {"dprint_tensix_unpack_config_upsample_and_interlave", 0, 15, 1, Base::hex},
      {"dprint_tensix_unpack_config_shift_amount", 0, 16, 16, Base::dec},
      {"dprint_tensix_unpack_config_uncompress_cntx0_3", 1, 0, 4, Base::hex},
      {"dprint_tensix_unpack_config_unpack_if_sel_cntx0_3", 1, 4, 4, Base::hex},
      {"dprint_tensix_unpack_config_force_shared_exp", 1, 8, 1, Base::hex},
      {"dprint_tensix_unpack_config_reserved_2", 1, 9, 7, Base::hex},
      {"dprint_tensix_unpack_config_uncompress_cntx4_7", 1, 16, 4, Base::hex},
      {"dprint_tensix_unpack_config_unpack_if_sel_cntx4_7", 1, 20, 4, Base::hex},
      {"dprint_tensix_unpack_config_reserved_3", 1, 24, 8, Base::hex},
      {"dprint_tensix_unpack_config_limit_addr", 2, 0, 17, Base::hex},
      {"dprint_tensix_unpack_config_reserved_4", 2, 17, 15, Base::hex},
      {"dprint_tensix_unpack_config_fifo_size", 3, 0, 17, Base::dec},
      {"dprint_tensix_unpack_config_reserved_5", 3, 17, 15, Base::hex}};
  std::vector<std::pair<std::string, std::string>> helper;
  for (auto& x : f) helper.push_back({x.printer.substr(p.size()), expected_value(x, w)});
  check_overlay(layer, "ckernel::unpacker::unpack_config_t", w, f, "dprint_tensix_unpack_config_helper", helper);
}
ZYX_TEST(unpack, test_unpack_config);

void test_alu_config(DeviceLayer& layer) {
  const std::vector<uint32_t> w = {1u | (0u << 1) | (1u << 2) | (0x2a5u << 3) | (1u << 13) | (0u << 14) | (1u << 15) |
                                   (0u << 16) | (5u << 17) | (6u << 21) | (0u << 25) | (1u << 29) | (0u << 30) |
                                   (1u << 31)};
  const std::vector<Field> f = {
      {"dprint_tensix_alu_config_alu_rounding_mode_fpu_srnd_en", 0, 0, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_rounding_mode_gasket_srnd_en", 0, 1, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_rounding_mode_packer_srnd_en", 0, 2, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_rounding_mode_padding", 0, 3, 10, Base::hex},
      {"dprint_tensix_alu_config_alu_rounding_mode_gs_lf", 0, 13, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_rounding_mode_bfp8_hf", 0, 14, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_format_spec_reg0_srcaunsigned", 0, 15, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_format_spec_reg0_srcbunsigned", 0, 16, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_format_spec_reg0_srca", 0, 17, 4, Base::format},
      {"dprint_tensix_alu_config_alu_format_spec_reg1_srcb", 0, 21, 4, Base::format},
      {"dprint_tensix_alu_config_alu_format_spec_reg2_dstacc", 0, 25, 4, Base::format},
      {"dprint_tensix_alu_config_alu_acc_ctrl_fp32_enabled", 0, 29, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_acc_ctrl_sfpu_fp32_enabled", 0, 30, 1, Base::hex},
      {"dprint_tensix_alu_config_alu_acc_ctrl_int8_math_enabled", 0, 31, 1, Base::hex}};
  check_overlay(layer, "ckernel::unpacker::alu_config_t", w, f, "", {});
}
ZYX_TEST(unpack, test_alu_config);

// assert_and_hang: the run error of ASSERT, at the line the kernel passes.
void test_assert_and_hang(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "assert_and_hang";
  p.compute.source = "namespace NAMESPACE {\nvoid MAIN {\n  assert_and_hang(42);\n}\n}\n";
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  std::string msg = expect_error("run_error", [&] { layer.run(prog, {}, false); });
  layer.release(prog);
  CHECK(msg.find("compute (compute)") != std::string::npos);
  CHECK(msg.find("ASSERT(assert_and_hang) failed at compute.cpp:42") != std::string::npos);
  GroupProgram r;
  r.name = "assert_and_hang_kind";
  r.reader.source = "void kernel_main() {\n  assert_and_hang(__LINE__, DebugAssertRtaOutOfBounds);\n}\n";
  prog = layer.compile(one_group_program(r, 1, 1));
  msg = expect_error("run_error", [&] { layer.run(prog, {}, false); });
  layer.release(prog);
  CHECK(msg.find("reader (riscv_0)") != std::string::npos);
  CHECK(msg.find("ASSERT(assert_and_hang, assert type 8) failed at reader.cpp:2") != std::string::npos);
}
ZYX_TEST(assert, test_assert_and_hang);

// The DST row addressing and word helpers of dprint_tensix.h, on values
// worked out by hand from tt-metal's bit rules.
void test_row_helpers(DeviceLayer& layer) {
  const char* src = R"(
namespace NAMESPACE {
void MAIN {
  DPRINT << "remap " << get_remapped_row_id(0x08) << " " << get_remapped_row_id(0x30) << " "
         << get_remapped_row_id(0x3f) << " " << get_remapped_row_id(0x41) << ENDL();
  DPRINT << "swizzle " << get_swizzled_row_id(0x10) << " " << get_swizzled_row_id(0x14) << " "
         << get_swizzled_row_id(0x18) << " " << get_swizzled_row_id(0x1c) << " " << get_swizzled_row_id(0x04) << " "
         << get_swizzled_row_id(0x08) << " " << get_swizzled_row_id(0x0d) << ENDL();
  DPRINT << "logical " << get_logical_row_id(2, 3, 5) << ENDL();
  DPRINT << "dest " << get_dest_row_id(181, false) << " " << get_dest_row_id(181, true) << ENDL();
  DPRINT << "words " << lo_word(0x12345678u) << " " << hi_word(0x12345678u) << ENDL();
  DPRINT << HEX() << "f32 " << reconstruct_float32(0x407fu, 0) << " " << reconstruct_float32(0xff80u, 0x1234u)
         << ENDL();
}
}
)";
  auto lines = compute_lines(layer, "row_helpers", src);
  CHECK_EQ(lines.size(), size_t(6));
  CHECK_EQ(lines[0], std::string("remap 32 24 63 65"));          // 0x20 0x18 0x3f 0x41
  CHECK_EQ(lines[1], std::string("swizzle 24 16 28 20 8 4 13"));  // 0x18 0x10 0x1c 0x14 0x08 0x04 0x0d
  CHECK_EQ(lines[2], std::string("logical 181"));                 // 2*64 + 3*16 + 5
  CHECK_EQ(lines[3], std::string("dest 181 357"));                // 0xb5 -> (0xb0 << 1) | 5
  CHECK_EQ(lines[4], std::string("words 22136 4660"));            // 0x5678 0x1234
  // 1.5f (0x3fc00000) from exponent 0x7f and mantissa 0x40; sign, exponent
  // 0x80, mantissa 0x7f and low half 0x1234.
  CHECK_EQ(lines[5], std::string("f32 3fc00000 c07f1234"));
}
ZYX_TEST(rows, test_row_helpers);

// dprint_tile.h's format predicates over every DataFormat, against
// tt-metal's tables written out here.
void test_tile_format_helpers(DeviceLayer& layer) {
  const char* src = R"(
namespace NAMESPACE {
void MAIN {
  const DataFormat formats[] = {DataFormat::Float32, DataFormat::Float16, DataFormat::Bfp8, DataFormat::Bfp4,
                                DataFormat::Tf32, DataFormat::Float16_b, DataFormat::Bfp8_b, DataFormat::Bfp4_b,
                                DataFormat::Int32, DataFormat::UInt16, DataFormat::Lf8, DataFormat::Bfp2,
                                DataFormat::Int8, DataFormat::Bfp2_b, DataFormat::UInt32, DataFormat::UInt8};
  for (DataFormat f : formats)
    DPRINT << (uint32_t)f << " " << dprint_datum_size(f) << " " << (uint32_t)is_bfp(f) << " "
           << (uint32_t)is_supported_format(f) << ENDL();
}
}
)";
  auto lines = compute_lines(layer, "tile_formats", src);
  // format, bytes per datum, block float, printable by TileSlice
  const std::vector<std::string> want = {"0 4 0 1",  "1 2 0 0",  "2 1 1 0",  "3 1 1 0",  "4 0 0 0",  "5 2 0 1",
                                         "6 1 1 1",  "7 1 1 1",  "8 4 0 1",  "9 2 0 1",  "10 1 0 0", "11 1 1 0",
                                         "14 1 0 1", "15 1 1 0", "24 4 0 1", "30 1 0 1"};
  CHECK_EQ(lines.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) CHECK_EQ(lines[i], want[i]);
}
ZYX_TEST(rows, test_tile_format_helpers);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "debug_tensix_"); }
