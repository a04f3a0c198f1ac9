// dprint_tensix_unpack.h: the unpacker's tile descriptor and configuration
// and the ALU configuration, as structures, with their field printers and
// the two helpers. As debug_tensix_pack.h: Wormhole's layout (tt-llk
// cunpack_common.h) and the structure a kernel passes is printed. The dumps
// dprint_tensix_unpack_tile_descriptor() and dprint_tensix_unpack_config()
// and dprint_tensix_alu_config() are in zyx_emu/debug_extra.h (a modelled
// view).
#pragma once

#include <cstdint>

namespace ckernel::unpacker {
struct unpack_tile_descriptor_t {
  uint32_t in_data_format : 4;
  uint32_t uncompressed : 1;
  uint32_t reserved_0 : 3;
  uint32_t blobs_per_xy_plane : 4;
  uint32_t reserved_1 : 4;
  uint32_t x_dim : 16;
  uint32_t y_dim : 16;
  uint32_t z_dim : 16;
  uint32_t w_dim : 16;
  uint32_t blobs_y_start_lo : 16;
  uint32_t blobs_y_start_hi : 16;
  uint32_t digest_type : 8;
  uint32_t digest_size : 8;
};
static_assert(sizeof(unpack_tile_descriptor_t) == 16);

struct unpack_config_t {
  uint32_t out_data_format : 4;
  uint32_t throttle_mode : 2;
  uint32_t context_count : 2;
  uint32_t haloize_mode : 1;
  uint32_t tileize_mode : 1;
  uint32_t unpack_src_reg_set_update : 1;
  uint32_t unpack_if_sel : 1;
  uint32_t upsample_rate : 2;
  uint32_t reserved_1 : 1;
  uint32_t upsamle_and_interlave : 1;
  uint32_t shift_amount : 16;
  uint32_t uncompress_cntx0_3 : 4;
  uint32_t unpack_if_sel_cntx0_3 : 4;
  uint32_t force_shared_exp : 1;
  uint32_t reserved_2 : 7;
  uint32_t uncompress_cntx4_7 : 4;
  uint32_t unpack_if_sel_cntx4_7 : 4;
  uint32_t reserved_3 : 8;
  uint32_t limit_addr : 17;
  uint32_t reserved_4 : 15;
  uint32_t fifo_size : 17;
  uint32_t reserved_5 : 15;
};
static_assert(sizeof(unpack_config_t) == 16);

struct alu_config_t {
  uint32_t ALU_ROUNDING_MODE_Fpu_srnd_en : 1;
  uint32_t ALU_ROUNDING_MODE_Gasket_srnd_en : 1;
  uint32_t ALU_ROUNDING_MODE_Packer_srnd_en : 1;
  uint32_t ALU_ROUNDING_MODE_Padding : 10;
  uint32_t ALU_ROUNDING_MODE_GS_LF : 1;
  uint32_t ALU_ROUNDING_MODE_Bfp8_HF : 1;
  uint32_t ALU_FORMAT_SPEC_REG0_SrcAUnsigned : 1;
  uint32_t ALU_FORMAT_SPEC_REG0_SrcBUnsigned : 1;
  uint32_t ALU_FORMAT_SPEC_REG0_SrcA : 4;
  uint32_t ALU_FORMAT_SPEC_REG1_SrcB : 4;
  uint32_t ALU_FORMAT_SPEC_REG2_Dstacc : 4;
  uint32_t ALU_ACC_CTRL_Fp32_enabled : 1;
  uint32_t ALU_ACC_CTRL_SFPU_Fp32_enabled : 1;
  uint32_t ALU_ACC_CTRL_INT8_math_enabled : 1;
};
static_assert(sizeof(alu_config_t) == 4);

}  // namespace ckernel::unpacker

using ckernel::unpacker::unpack_tile_descriptor_t;
inline void dprint_tensix_unpack_tile_descriptor_in_data_format(const unpack_tile_descriptor_t& s) {
  dprint_data_format(static_cast<uint8_t>(s.in_data_format));
  DPRINT << ENDL();
}
inline void dprint_tensix_unpack_tile_descriptor_uncompressed(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_hex_field(s.uncompressed);
}
inline void dprint_tensix_unpack_tile_descriptor_reserved_0(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_hex_field(s.reserved_0);
}
inline void dprint_tensix_unpack_tile_descriptor_blobs_per_xy_plane(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_dec_field(s.blobs_per_xy_plane);
}
inline void dprint_tensix_unpack_tile_descriptor_reserved_1(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_hex_field(s.reserved_1);
}
inline void dprint_tensix_unpack_tile_descriptor_x_dim(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_dec_field(s.x_dim);
}
inline void dprint_tensix_unpack_tile_descriptor_y_dim(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_dec_field(s.y_dim);
}
inline void dprint_tensix_unpack_tile_descriptor_z_dim(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_dec_field(s.z_dim);
}
inline void dprint_tensix_unpack_tile_descriptor_w_dim(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_dec_field(s.w_dim);
}
inline void dprint_tensix_unpack_tile_descriptor_digest_type(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_hex_field(s.digest_type);
}
inline void dprint_tensix_unpack_tile_descriptor_digest_size(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_dec_field(s.digest_size);
}
// The start row of the blobs, split over two half-words in the register.
inline void dprint_tensix_unpack_tile_descriptor_blobs_y_start(const unpack_tile_descriptor_t& s) {
  zyx_emu_detail::print_dec_field((uint32_t(s.blobs_y_start_hi) << 16) | s.blobs_y_start_lo);
}
using ckernel::unpacker::unpack_config_t;
inline void dprint_tensix_unpack_config_out_data_format(const unpack_config_t& s) {
  dprint_data_format(static_cast<uint8_t>(s.out_data_format));
  DPRINT << ENDL();
}
inline void dprint_tensix_unpack_config_throttle_mode(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.throttle_mode);
}
inline void dprint_tensix_unpack_config_context_count(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.context_count);
}
inline void dprint_tensix_unpack_config_haloize_mode(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.haloize_mode);
}
inline void dprint_tensix_unpack_config_tileize_mode(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.tileize_mode);
}
inline void dprint_tensix_unpack_config_unpack_src_reg_set_update(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.unpack_src_reg_set_update);
}
inline void dprint_tensix_unpack_config_unpack_if_sel(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.unpack_if_sel);
}
inline void dprint_tensix_unpack_config_upsample_rate(const unpack_config_t& s) {
  zyx_emu_detail::print_dec_field(s.upsample_rate);
}
inline void dprint_tensix_unpack_config_reserved_1(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.reserved_1);
}
inline void dprint_tensix_unpack_config_upsample_and_interlave(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.upsamle_and_interlave);
}
inline void dprint_tensix_unpack_config_shift_amount(const unpack_config_t& s) {
  zyx_emu_detail::print_dec_field(s.shift_amount);
}
inline void dprint_tensix_unpack_config_uncompress_cntx0_3(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.uncompress_cntx0_3);
}
inline void dprint_tensix_unpack_config_unpack_if_sel_cntx0_3(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.unpack_if_sel_cntx0_3);
}
inline void dprint_tensix_unpack_config_force_shared_exp(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.force_shared_exp);
}
inline void dprint_tensix_unpack_config_reserved_2(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.reserved_2);
}
inline void dprint_tensix_unpack_config_uncompress_cntx4_7(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.uncompress_cntx4_7);
}
inline void dprint_tensix_unpack_config_unpack_if_sel_cntx4_7(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.unpack_if_sel_cntx4_7);
}
inline void dprint_tensix_unpack_config_reserved_3(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.reserved_3);
}
inline void dprint_tensix_unpack_config_limit_addr(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.limit_addr);
}
inline void dprint_tensix_unpack_config_reserved_4(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.reserved_4);
}
inline void dprint_tensix_unpack_config_fifo_size(const unpack_config_t& s) {
  zyx_emu_detail::print_dec_field(s.fifo_size);
}
inline void dprint_tensix_unpack_config_reserved_5(const unpack_config_t& s) {
  zyx_emu_detail::print_hex_field(s.reserved_5);
}
using ckernel::unpacker::alu_config_t;
inline void dprint_tensix_alu_config_alu_rounding_mode_fpu_srnd_en(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ROUNDING_MODE_Fpu_srnd_en);
}
inline void dprint_tensix_alu_config_alu_rounding_mode_gasket_srnd_en(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ROUNDING_MODE_Gasket_srnd_en);
}
inline void dprint_tensix_alu_config_alu_rounding_mode_packer_srnd_en(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ROUNDING_MODE_Packer_srnd_en);
}
inline void dprint_tensix_alu_config_alu_rounding_mode_padding(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ROUNDING_MODE_Padding);
}
inline void dprint_tensix_alu_config_alu_rounding_mode_gs_lf(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ROUNDING_MODE_GS_LF);
}
inline void dprint_tensix_alu_config_alu_rounding_mode_bfp8_hf(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ROUNDING_MODE_Bfp8_HF);
}
inline void dprint_tensix_alu_config_alu_format_spec_reg0_srcaunsigned(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_FORMAT_SPEC_REG0_SrcAUnsigned);
}
inline void dprint_tensix_alu_config_alu_format_spec_reg0_srcbunsigned(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_FORMAT_SPEC_REG0_SrcBUnsigned);
}
inline void dprint_tensix_alu_config_alu_format_spec_reg0_srca(const alu_config_t& s) {
  dprint_data_format(static_cast<uint8_t>(s.ALU_FORMAT_SPEC_REG0_SrcA));
  DPRINT << ENDL();
}
inline void dprint_tensix_alu_config_alu_format_spec_reg1_srcb(const alu_config_t& s) {
  dprint_data_format(static_cast<uint8_t>(s.ALU_FORMAT_SPEC_REG1_SrcB));
  DPRINT << ENDL();
}
inline void dprint_tensix_alu_config_alu_format_spec_reg2_dstacc(const alu_config_t& s) {
  dprint_data_format(static_cast<uint8_t>(s.ALU_FORMAT_SPEC_REG2_Dstacc));
  DPRINT << ENDL();
}
inline void dprint_tensix_alu_config_alu_acc_ctrl_fp32_enabled(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ACC_CTRL_Fp32_enabled);
}
inline void dprint_tensix_alu_config_alu_acc_ctrl_sfpu_fp32_enabled(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ACC_CTRL_SFPU_Fp32_enabled);
}
inline void dprint_tensix_alu_config_alu_acc_ctrl_int8_math_enabled(const alu_config_t& s) {
  zyx_emu_detail::print_hex_field(s.ALU_ACC_CTRL_INT8_math_enabled);
}
inline void dprint_tensix_unpack_tile_descriptor_helper(const unpack_tile_descriptor_t& s) {
  using zyx_emu_detail::print_named_field;
  print_named_field("in_data_format", s, dprint_tensix_unpack_tile_descriptor_in_data_format);
  print_named_field("uncompressed", s, dprint_tensix_unpack_tile_descriptor_uncompressed);
  print_named_field("reserved_0", s, dprint_tensix_unpack_tile_descriptor_reserved_0);
  print_named_field("blobs_per_xy_plane", s, dprint_tensix_unpack_tile_descriptor_blobs_per_xy_plane);
  print_named_field("reserved_1", s, dprint_tensix_unpack_tile_descriptor_reserved_1);
  print_named_field("x_dim", s, dprint_tensix_unpack_tile_descriptor_x_dim);
  print_named_field("y_dim", s, dprint_tensix_unpack_tile_descriptor_y_dim);
  print_named_field("z_dim", s, dprint_tensix_unpack_tile_descriptor_z_dim);
  print_named_field("w_dim", s, dprint_tensix_unpack_tile_descriptor_w_dim);
  print_named_field("blobs_y_start", s, dprint_tensix_unpack_tile_descriptor_blobs_y_start);
  print_named_field("digest_type", s, dprint_tensix_unpack_tile_descriptor_digest_type);
  print_named_field("digest_size", s, dprint_tensix_unpack_tile_descriptor_digest_size);
}
// Every field; tt-metal's order, which is not the register's.
inline void dprint_tensix_unpack_config_helper(const unpack_config_t& s) {
  using zyx_emu_detail::print_named_field;
  print_named_field("out_data_format", s, dprint_tensix_unpack_config_out_data_format);
  print_named_field("throttle_mode", s, dprint_tensix_unpack_config_throttle_mode);
  print_named_field("context_count", s, dprint_tensix_unpack_config_context_count);
  print_named_field("haloize_mode", s, dprint_tensix_unpack_config_haloize_mode);
  print_named_field("tileize_mode", s, dprint_tensix_unpack_config_tileize_mode);
  print_named_field("unpack_src_reg_set_update", s, dprint_tensix_unpack_config_unpack_src_reg_set_update);
  print_named_field("unpack_if_sel", s, dprint_tensix_unpack_config_unpack_if_sel);
  print_named_field("upsample_rate", s, dprint_tensix_unpack_config_upsample_rate);
  print_named_field("reserved_1", s, dprint_tensix_unpack_config_reserved_1);
  print_named_field("upsample_and_interlave", s, dprint_tensix_unpack_config_upsample_and_interlave);
  print_named_field("shift_amount", s, dprint_tensix_unpack_config_shift_amount);
  print_named_field("uncompress_cntx0_3", s, dprint_tensix_unpack_config_uncompress_cntx0_3);
  print_named_field("unpack_if_sel_cntx0_3", s, dprint_tensix_unpack_config_unpack_if_sel_cntx0_3);
  print_named_field("force_shared_exp", s, dprint_tensix_unpack_config_force_shared_exp);
  print_named_field("reserved_2", s, dprint_tensix_unpack_config_reserved_2);
  print_named_field("uncompress_cntx4_7", s, dprint_tensix_unpack_config_uncompress_cntx4_7);
  print_named_field("unpack_if_sel_cntx4_7", s, dprint_tensix_unpack_config_unpack_if_sel_cntx4_7);
  print_named_field("reserved_3", s, dprint_tensix_unpack_config_reserved_3);
  print_named_field("limit_addr", s, dprint_tensix_unpack_config_limit_addr);
  print_named_field("reserved_4", s, dprint_tensix_unpack_config_reserved_4);
  print_named_field("fifo_size", s, dprint_tensix_unpack_config_fifo_size);
  print_named_field("reserved_5", s, dprint_tensix_unpack_config_reserved_5);
}
