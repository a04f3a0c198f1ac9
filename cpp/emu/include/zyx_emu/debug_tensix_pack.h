// dprint_tensix_pack.h: the packer's register structures and their field
// printers. Each field printer prints one field of a structure a kernel
// holds (0x-hex or decimal, as tt-metal prints that field) and a newline;
// each _helper prints every field of a structure as "name: value" lines.
// The layouts are Wormhole's (tt-llk cpack_common.h), on both chips, except
// pack_config_t, which is Blackhole's own in a Blackhole kernel (Wormhole's
// fourth word's printers are then absent, Blackhole's fields' present). The dumps that read
// the configuration registers (dprint_tensix_pack_config(), _relu_config(), _dest_rd_ctrl(),
// _edge_offset(), _counters(), _strides()) are not provided: the emulator
// keeps no register file to read them from.
#pragma once

#include <cstdint>

namespace ckernel::packer {
// Blackhole's pack_config_t (tt-llk blackhole cpack_common.h): three words,
// with fields Wormhole lacks and without Wormhole's fourth word. A Blackhole
// kernel's pack_config_t; a Wormhole kernel may print one too.
struct pack_config_blackhole_t {
  uint32_t row_ptr_section_size : 16;
  uint32_t exp_section_size : 16;
  uint32_t l1_dest_addr : 32;
  uint32_t uncompress : 1;
  uint32_t add_l1_dest_addr_offset : 1;
  uint32_t disable_pack_zero_flag : 1;
  uint32_t reserved_0 : 1;
  uint32_t out_data_format : 4;
  uint32_t in_data_format : 4;
  uint32_t dis_shared_exp_assembler : 1;
  uint32_t auto_set_last_pacr_intf_sel : 1;
  uint32_t enable_out_fifo : 1;
  uint32_t sub_l1_tile_header_size : 1;
  uint32_t src_if_sel : 1;
  uint32_t pack_start_intf_pos : 4;
  uint32_t all_pack_disable_zero_compress_ovrd : 1;
  uint32_t add_tile_header_size : 1;
  uint32_t pack_dis_y_pos_start_offset : 1;
  uint32_t l1_src_addr : 8;
};
static_assert(sizeof(pack_config_blackhole_t) == 12);
#if defined(ARCH_BLACKHOLE)
using pack_config_t = pack_config_blackhole_t;
#else
// Field widths of the Wormhole packer registers, low bits first.
struct pack_config_t {
  uint32_t row_ptr_section_size : 16;
  uint32_t exp_section_size : 16;
  uint32_t l1_dest_addr : 32;
  uint32_t uncompress : 1;
  uint32_t add_l1_dest_addr_offset : 1;
  uint32_t reserved_0 : 2;
  uint32_t out_data_format : 4;
  uint32_t in_data_format : 4;
  uint32_t reserved_1 : 4;
  uint32_t src_if_sel : 1;
  uint32_t pack_per_xy_plane : 7;
  uint32_t l1_src_addr : 8;
  uint32_t downsample_mask : 16;
  uint32_t downsample_shift_count : 3;
  uint32_t read_mode : 1;
  uint32_t exp_threshold_en : 1;
  uint32_t pack_l1_acc_disable_pack_zero_flag : 2;
  uint32_t reserved_2 : 1;
  uint32_t exp_threshold : 8;
};
static_assert(sizeof(pack_config_t) == 16);
#endif

struct relu_config_t {
  uint32_t ALU_ACC_CTRL_Zero_Flag_disabled_src : 1;
  uint32_t ALU_ACC_CTRL_Zero_Flag_disabled_dst : 1;
  uint32_t STACC_RELU_ApplyRelu : 4;
  uint32_t STACC_RELU_ReluThreshold : 16;
  uint32_t DISABLE_RISC_BP_Disable_main : 1;
  uint32_t DISABLE_RISC_BP_Disable_trisc : 3;
  uint32_t DISABLE_RISC_BP_Disable_ncrisc : 1;
  uint32_t DISABLE_RISC_BP_Disable_bmp_clear_main : 1;
  uint32_t DISABLE_RISC_BP_Disable_bmp_clear_trisc : 3;
  uint32_t DISABLE_RISC_BP_Disable_bmp_clear_ncrisc : 1;
};
static_assert(sizeof(relu_config_t) == 4);

struct dest_rd_ctrl_t {
  uint32_t PCK_DEST_RD_CTRL_Read_32b_data : 1;
  uint32_t PCK_DEST_RD_CTRL_Read_unsigned : 1;
  uint32_t PCK_DEST_RD_CTRL_Read_int8 : 1;
  uint32_t PCK_DEST_RD_CTRL_Round_10b_mant : 1;
  uint32_t PCK_DEST_RD_CTRL_Reserved : 28;
};
static_assert(sizeof(dest_rd_ctrl_t) == 4);

struct pck_edge_offset_t {
  uint32_t mask : 16;
  uint32_t mode : 1;
  uint32_t tile_row_set_select_pack0 : 2;
  uint32_t tile_row_set_select_pack1 : 2;
  uint32_t tile_row_set_select_pack2 : 2;
  uint32_t tile_row_set_select_pack3 : 2;
  uint32_t reserved : 7;
};
static_assert(sizeof(pck_edge_offset_t) == 4);

struct pack_counters_t {
  uint32_t pack_per_xy_plane : 8;
  uint32_t pack_reads_per_xy_plane : 8;
  uint32_t pack_xys_per_til : 7;
  uint32_t pack_yz_transposed : 1;
  uint32_t pack_per_xy_plane_offset : 8;
};
static_assert(sizeof(pack_counters_t) == 4);
}  // namespace ckernel::packer

namespace zyx_emu_detail {
inline void print_hex_field(uint32_t v) { DPRINT << "0x" << HEX() << v << ENDL(); }
inline void print_dec_field(uint32_t v) { DPRINT << DEC() << v << ENDL(); }
// "name: " then the field's printer.
template <typename T, typename F>
inline void print_named_field(const char* name, const T& s, F printer) {
  DPRINT << name << ": ";
  printer(s);
}
}  // namespace zyx_emu_detail

// ---- pack_config_t ----
using ckernel::packer::pack_config_t;
inline void dprint_tensix_pack_config_row_ptr_section_size(const pack_config_t& c) {
  zyx_emu_detail::print_dec_field(c.row_ptr_section_size);
}
inline void dprint_tensix_pack_config_exp_section_size(const pack_config_t& c) {
  zyx_emu_detail::print_dec_field(c.exp_section_size);
}
inline void dprint_tensix_pack_config_l1_dest_addr(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.l1_dest_addr);
}
inline void dprint_tensix_pack_config_uncompressed(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.uncompress);
}
inline void dprint_tensix_pack_config_add_l1_dest_addr_offset(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.add_l1_dest_addr_offset);
}
inline void dprint_tensix_pack_config_reserved_0(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.reserved_0);
}
inline void dprint_tensix_pack_config_out_data_format(const pack_config_t& c) {
  dprint_data_format(static_cast<uint8_t>(c.out_data_format));
  DPRINT << ENDL();
}
inline void dprint_tensix_pack_config_in_data_format(const pack_config_t& c) {
  dprint_data_format(static_cast<uint8_t>(c.in_data_format));
  DPRINT << ENDL();
}
#if !defined(ARCH_BLACKHOLE)
inline void dprint_tensix_pack_config_reserved_1(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.reserved_1);
}
#endif
inline void dprint_tensix_pack_config_src_if_sel(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.src_if_sel);
}
#if !defined(ARCH_BLACKHOLE)
inline void dprint_tensix_pack_config_pack_per_xy_plane(const pack_config_t& c) {
  zyx_emu_detail::print_dec_field(c.pack_per_xy_plane);
}
#endif
inline void dprint_tensix_pack_config_l1_src_addr(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.l1_src_addr);
}
#if !defined(ARCH_BLACKHOLE)
inline void dprint_tensix_pack_config_downsample_mask(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.downsample_mask);
}
inline void dprint_tensix_pack_config_downsample_shift_count(const pack_config_t& c) {
  zyx_emu_detail::print_dec_field(c.downsample_shift_count);
}
inline void dprint_tensix_pack_config_read_mode(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.read_mode);
}
inline void dprint_tensix_pack_config_exp_threshold_en(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.exp_threshold_en);
}
inline void dprint_tensix_pack_config_l1_acc_disable_pack_zero_flag(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.pack_l1_acc_disable_pack_zero_flag);
}
inline void dprint_tensix_pack_config_reserved_2(const pack_config_t& c) {
  zyx_emu_detail::print_hex_field(c.reserved_2);
}
inline void dprint_tensix_pack_config_exp_threshold(const pack_config_t& c) {
  zyx_emu_detail::print_dec_field(c.exp_threshold);
}
// Every field in register order, as tt-metal's Wormhole helper prints them.
inline void dprint_tensix_pack_config_helper(const pack_config_t& c) {
  using zyx_emu_detail::print_named_field;
  print_named_field("row_ptr_section_size", c, dprint_tensix_pack_config_row_ptr_section_size);
  print_named_field("exp_section_size", c, dprint_tensix_pack_config_exp_section_size);
  print_named_field("l1_dest_addr", c, dprint_tensix_pack_config_l1_dest_addr);
  print_named_field("uncompress", c, dprint_tensix_pack_config_uncompressed);
  print_named_field("add_l1_dest_addr_offset", c, dprint_tensix_pack_config_add_l1_dest_addr_offset);
  print_named_field("reserved_0", c, dprint_tensix_pack_config_reserved_0);
  print_named_field("out_data_format", c, dprint_tensix_pack_config_out_data_format);
  print_named_field("in_data_format", c, dprint_tensix_pack_config_in_data_format);
  print_named_field("reserved_1", c, dprint_tensix_pack_config_reserved_1);
  print_named_field("src_if_sel", c, dprint_tensix_pack_config_src_if_sel);
  print_named_field("pack_per_xy_plane", c, dprint_tensix_pack_config_pack_per_xy_plane);
  print_named_field("l1_src_addr", c, dprint_tensix_pack_config_l1_src_addr);
  print_named_field("downsample_mask", c, dprint_tensix_pack_config_downsample_mask);
  print_named_field("downsample_shift_count", c, dprint_tensix_pack_config_downsample_shift_count);
  print_named_field("read_mode", c, dprint_tensix_pack_config_read_mode);
  print_named_field("exp_threshold_en", c, dprint_tensix_pack_config_exp_threshold_en);
  print_named_field("pack_l1_acc_disable_pack_zero_flag", c, dprint_tensix_pack_config_l1_acc_disable_pack_zero_flag);
  print_named_field("reserved_2", c, dprint_tensix_pack_config_reserved_2);
  print_named_field("exp_threshold", c, dprint_tensix_pack_config_exp_threshold);
}
#endif  // !ARCH_BLACKHOLE

// ---- Blackhole's own pack_config_t fields ----
namespace zyx_emu_detail {
inline void print_format_field(uint32_t v) {
  dprint_data_format(static_cast<uint8_t>(v));
  DPRINT << ENDL();
}
}  // namespace zyx_emu_detail
// The fields Wormhole's structure lacks: the printer's name (after
// dprint_tensix_pack_config_), the member and tt-metal's base; a printer is
// generated for each row.
#define ZYX_EMU_PACK_CONFIG_BLACKHOLE_FIELDS(X)                                    \
  X(disable_pack_zero_flag, disable_pack_zero_flag, hex)                           \
  X(dis_shared_exp_assembler, dis_shared_exp_assembler, hex)                       \
  X(auto_set_last_pacr_intf_sel, auto_set_last_pacr_intf_sel, hex)                 \
  X(enable_out_fifo, enable_out_fifo, hex)                                         \
  X(sub_l1_tile_header_size, sub_l1_tile_header_size, dec)                         \
  X(pack_start_intf_pos, pack_start_intf_pos, hex)                                 \
  X(all_pack_disable_zero_compress_ovrd, all_pack_disable_zero_compress_ovrd, hex) \
  X(add_tile_header_size, add_tile_header_size, dec)                               \
  X(pack_dis_y_pos_start_offset, pack_dis_y_pos_start_offset, hex)
#define ZYX_EMU_PACK_CONFIG_PRINTER(printer, member, base)                                                  \
  inline void dprint_tensix_pack_config_##printer(const ckernel::packer::pack_config_blackhole_t& c) { \
    zyx_emu_detail::print_##base##_field(c.member);                                                     \
  }
ZYX_EMU_PACK_CONFIG_BLACKHOLE_FIELDS(ZYX_EMU_PACK_CONFIG_PRINTER)
#undef ZYX_EMU_PACK_CONFIG_PRINTER
#if defined(ARCH_BLACKHOLE)
// Every field in register order, as tt-metal's Blackhole helper prints them.
inline void dprint_tensix_pack_config_helper(const pack_config_t& c) {
  using zyx_emu_detail::print_named_field;
  print_named_field("row_ptr_section_size", c, dprint_tensix_pack_config_row_ptr_section_size);
  print_named_field("exp_section_size", c, dprint_tensix_pack_config_exp_section_size);
  print_named_field("l1_dest_addr", c, dprint_tensix_pack_config_l1_dest_addr);
  print_named_field("uncompress", c, dprint_tensix_pack_config_uncompressed);
  print_named_field("add_l1_dest_addr_offset", c, dprint_tensix_pack_config_add_l1_dest_addr_offset);
  print_named_field("disable_pack_zero_flag", c, dprint_tensix_pack_config_disable_pack_zero_flag);
  print_named_field("reserved_0", c, dprint_tensix_pack_config_reserved_0);
  print_named_field("out_data_format", c, dprint_tensix_pack_config_out_data_format);
  print_named_field("in_data_format", c, dprint_tensix_pack_config_in_data_format);
  print_named_field("dis_shared_exp_assembler", c, dprint_tensix_pack_config_dis_shared_exp_assembler);
  print_named_field("auto_set_last_pacr_intf_sel", c, dprint_tensix_pack_config_auto_set_last_pacr_intf_sel);
  print_named_field("enable_out_fifo", c, dprint_tensix_pack_config_enable_out_fifo);
  print_named_field("sub_l1_tile_header_size", c, dprint_tensix_pack_config_sub_l1_tile_header_size);
  print_named_field("src_if_sel", c, dprint_tensix_pack_config_src_if_sel);
  print_named_field("pack_start_intf_pos", c, dprint_tensix_pack_config_pack_start_intf_pos);
  print_named_field("all_pack_disable_zero_compress_ovrd", c,
                    dprint_tensix_pack_config_all_pack_disable_zero_compress_ovrd);
  print_named_field("add_tile_header_size", c, dprint_tensix_pack_config_add_tile_header_size);
  print_named_field("pack_dis_y_pos_start_offset", c, dprint_tensix_pack_config_pack_dis_y_pos_start_offset);
  print_named_field("l1_src_addr", c, dprint_tensix_pack_config_l1_src_addr);
}
#endif

// ---- relu_config_t ----
using ckernel::packer::relu_config_t;
inline void dprint_tensix_pack_relu_config_alu_acc_ctrl_zero_flag_disabled_src(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.ALU_ACC_CTRL_Zero_Flag_disabled_src);
}
inline void dprint_tensix_pack_relu_config_alu_acc_ctrl_zero_flag_disabled_dst(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.ALU_ACC_CTRL_Zero_Flag_disabled_dst);
}
inline void dprint_tensix_pack_relu_config_stacc_relu_apply_relu(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.STACC_RELU_ApplyRelu);
}
inline void dprint_tensix_pack_relu_config_stacc_relu_relu_threshold(const relu_config_t& c) {
  zyx_emu_detail::print_dec_field(c.STACC_RELU_ReluThreshold);
}
inline void dprint_tensix_pack_relu_config_disable_risc_bp_disable_main(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.DISABLE_RISC_BP_Disable_main);
}
inline void dprint_tensix_pack_relu_config_disable_risc_bp_disable_trisc(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.DISABLE_RISC_BP_Disable_trisc);
}
inline void dprint_tensix_pack_relu_config_disable_risc_bp_disable_ncrisc(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.DISABLE_RISC_BP_Disable_ncrisc);
}
inline void dprint_tensix_pack_relu_config_disable_risc_bp_disable_bmp_clear_main(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.DISABLE_RISC_BP_Disable_bmp_clear_main);
}
inline void dprint_tensix_pack_relu_config_disable_risc_bp_disable_bmp_clear_trisc(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.DISABLE_RISC_BP_Disable_bmp_clear_trisc);
}
inline void dprint_tensix_pack_relu_config_disable_risc_bp_disable_bmp_clear_ncrisc(const relu_config_t& c) {
  zyx_emu_detail::print_hex_field(c.DISABLE_RISC_BP_Disable_bmp_clear_ncrisc);
}

// ---- dest_rd_ctrl_t ----
using ckernel::packer::dest_rd_ctrl_t;
inline void dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_read_32b_data(const dest_rd_ctrl_t& d) {
  zyx_emu_detail::print_hex_field(d.PCK_DEST_RD_CTRL_Read_32b_data);
}
inline void dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_read_unsigned(const dest_rd_ctrl_t& d) {
  zyx_emu_detail::print_hex_field(d.PCK_DEST_RD_CTRL_Read_unsigned);
}
inline void dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_read_int8(const dest_rd_ctrl_t& d) {
  zyx_emu_detail::print_hex_field(d.PCK_DEST_RD_CTRL_Read_int8);
}
inline void dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_round_10b_mant(const dest_rd_ctrl_t& d) {
  zyx_emu_detail::print_hex_field(d.PCK_DEST_RD_CTRL_Round_10b_mant);
}
inline void dprint_tensix_pack_dest_rd_ctrl_pck_dest_rd_ctrl_reserved(const dest_rd_ctrl_t& d) {
  zyx_emu_detail::print_hex_field(d.PCK_DEST_RD_CTRL_Reserved);
}

// ---- packer strides: x and z in the low half-word, y and w in the high ----
inline void dprint_tensix_pack_strides_x_stride(const uint32_t& word) {
  dprint_tensix_struct_field(word, 0xffffu, 0, "x_stride", true);
}
inline void dprint_tensix_pack_strides_y_stride(const uint32_t& word) {
  dprint_tensix_struct_field(word, 0xffff0000u, 16, "y_stride", true);
}
inline void dprint_tensix_pack_strides_z_stride(const uint32_t& word) {
  dprint_tensix_struct_field(word, 0xffffu, 0, "z_stride", true);
}
inline void dprint_tensix_pack_strides_w_stride(const uint32_t& word) {
  dprint_tensix_struct_field(word, 0xffff0000u, 16, "w_stride", true);
}

// ---- pck_edge_offset_t ----
using ckernel::packer::pck_edge_offset_t;
inline void dprint_tensix_pack_edge_offset_mask(const pck_edge_offset_t& e) { zyx_emu_detail::print_hex_field(e.mask); }
inline void dprint_tensix_pack_edge_offset_mode(const pck_edge_offset_t& e) { zyx_emu_detail::print_hex_field(e.mode); }
inline void dprint_tensix_pack_edge_offset_tile_row_set_select_pack0(const pck_edge_offset_t& e) {
  zyx_emu_detail::print_hex_field(e.tile_row_set_select_pack0);
}
inline void dprint_tensix_pack_edge_offset_tile_row_set_select_pack1(const pck_edge_offset_t& e) {
  zyx_emu_detail::print_hex_field(e.tile_row_set_select_pack1);
}
inline void dprint_tensix_pack_edge_offset_tile_row_set_select_pack2(const pck_edge_offset_t& e) {
  zyx_emu_detail::print_hex_field(e.tile_row_set_select_pack2);
}
inline void dprint_tensix_pack_edge_offset_tile_row_set_select_pack3(const pck_edge_offset_t& e) {
  zyx_emu_detail::print_hex_field(e.tile_row_set_select_pack3);
}
inline void dprint_tensix_pack_edge_offset_reserved(const pck_edge_offset_t& e) {
  zyx_emu_detail::print_hex_field(e.reserved);
}
// The mask; for register 1 (the only one whose high half selects the
// row-set mappings) also the mode, the four selections and the reserved bits.
inline void dprint_tensix_pack_edge_offset_helper(const pck_edge_offset_t& e, uint32_t reg_id) {
  using zyx_emu_detail::print_named_field;
  print_named_field("mask", e, dprint_tensix_pack_edge_offset_mask);
  if (reg_id != 1) return;
  print_named_field("mode", e, dprint_tensix_pack_edge_offset_mode);
  print_named_field("tile_row_set_select_pack0", e, dprint_tensix_pack_edge_offset_tile_row_set_select_pack0);
  print_named_field("tile_row_set_select_pack1", e, dprint_tensix_pack_edge_offset_tile_row_set_select_pack1);
  print_named_field("tile_row_set_select_pack2", e, dprint_tensix_pack_edge_offset_tile_row_set_select_pack2);
  print_named_field("tile_row_set_select_pack3", e, dprint_tensix_pack_edge_offset_tile_row_set_select_pack3);
  print_named_field("reserved", e, dprint_tensix_pack_edge_offset_reserved);
}

// ---- pack_counters_t ----
using ckernel::packer::pack_counters_t;
inline void dprint_tensix_pack_counters_pack_per_xy_plane(const pack_counters_t& c) {
  zyx_emu_detail::print_dec_field(c.pack_per_xy_plane);
}
inline void dprint_tensix_pack_counters_pack_reads_per_xy_plane(const pack_counters_t& c) {
  zyx_emu_detail::print_dec_field(c.pack_reads_per_xy_plane);
}
inline void dprint_tensix_pack_counters_pack_xys_per_til(const pack_counters_t& c) {
  zyx_emu_detail::print_dec_field(c.pack_xys_per_til);
}
inline void dprint_tensix_pack_counters_pack_yz_transposed(const pack_counters_t& c) {
  zyx_emu_detail::print_hex_field(c.pack_yz_transposed);
}
inline void dprint_tensix_pack_counters_pack_per_xy_plane_offset(const pack_counters_t& c) {
  zyx_emu_detail::print_dec_field(c.pack_per_xy_plane_offset);
}
inline void dprint_tensix_pack_counters_helper(const pack_counters_t& c) {
  using zyx_emu_detail::print_named_field;
  print_named_field("pack_per_xy_plane", c, dprint_tensix_pack_counters_pack_per_xy_plane);
  print_named_field("pack_reads_per_xy_plane", c, dprint_tensix_pack_counters_pack_reads_per_xy_plane);
  print_named_field("pack_xys_per_til", c, dprint_tensix_pack_counters_pack_xys_per_til);
  print_named_field("pack_yz_transposed", c, dprint_tensix_pack_counters_pack_yz_transposed);
  print_named_field("pack_per_xy_plane_offset", c, dprint_tensix_pack_counters_pack_per_xy_plane_offset);
}
