// The function table handed to every kernel object (zyx_emu_api, versioned
// by ZYX_EMU_ABI_VERSION in zyx_emu/abi.h): every slot is set here, in the
// struct's order, from the implementations in the api_*.cpp files
// (kernel_api.hpp). A new slot goes at the end of the struct, with a new ABI
// version; ctest emu_dataflow_builder fails while a slot is left unset.
#include "kernel_api.hpp"

namespace zyx::emu {

const zyx_emu_api* kernel_api() {
  static const zyx_emu_api api = [] {
    zyx_emu_api a{};
    a.abi_version = ZYX_EMU_ABI_VERSION;
    a.args = api_args;
    a.cb_reserve_back = api_cb_reserve_back;
    a.cb_push_back = api_cb_push_back;
    a.cb_wait_front = api_cb_wait_front;
    a.cb_pop_front = api_cb_pop_front;
    a.cb_pages_available_at_front = api_cb_pages_available_at_front;
    a.cb_pages_reservable_at_back = api_cb_pages_reservable_at_back;
    a.cb_write_ptr = api_cb_write_ptr;
    a.cb_read_ptr = api_cb_read_ptr;
    a.cb_page_size = api_cb_page_size;
    a.cb_format = api_cb_format;
    a.cb_num_pages = api_cb_num_pages;
    a.noc_read = api_noc_read;
    a.noc_write = api_noc_write;
    a.noc_atomic_inc = api_noc_atomic_inc;
    a.l1_noc_addr = api_l1_noc_addr;
    a.core_xy = api_core_xy;
    a.semaphore_addr = api_semaphore_addr;
    a.wait_word = api_wait_word;
    a.l1_ptr = api_l1_ptr;
    a.fail = api_fail;
    a.dst_acquire = api_dst_acquire;
    a.dst_release = api_dst_release;
    a.copy_tile = api_copy_tile;
    a.pack_tile = api_pack_tile;
    a.binary = api_binary;
    a.binary_dst = api_binary_dst;
    a.unary = api_unary;
    a.matmul = api_matmul;
    a.reduce = api_reduce;
    a.transpose = api_transpose;
    a.typecast = api_typecast;
    a.fp32_dest_acc = api_fp32_dest_acc;
    a.compute_config = api_compute_config;
    a.binary_bcast = api_binary_bcast;
    a.binary_reuse = api_binary_reuse;
    a.unary_bcast = api_unary_bcast;
    a.sfpu_unary = api_sfpu_unary;
    a.sfpu_binary = api_sfpu_binary;
    a.sfpu_ternary = api_sfpu_ternary;
    a.tilize = api_tilize;
    a.untilize = api_untilize;
    a.pack_untilize = api_pack_untilize;
    a.pack_rows = api_pack_rows;
    a.transpose_dst = api_transpose_dst;
    a.copy_dst = api_copy_dst;
    a.mask = api_mask;
    a.welford = api_welford;
    a.tile_shape = api_tile_shape;
    a.reduce_max_row_block = api_reduce_max_row_block;
    a.dprint = api_dprint;
    a.buffer_page_size = api_buffer_page_size;
    // data movement and debug (ABI 5)
    a.l1_range = api_l1_range;
    a.noc_mcast_write = api_noc_mcast_write;
    a.noc_inline_write = api_noc_inline_write;
    a.noc_atomic_inc_mcast = api_noc_atomic_inc_mcast;
    a.core_info = api_core_info;
    a.cb_interface = api_cb_interface;
    a.scratch = api_scratch;
    a.dprint_enabled = api_dprint_enabled;
    a.dprint_tag = api_dprint_tag;
    a.waypoint = api_waypoint;
    a.assert_fail = api_assert_fail;
    a.dst_tile = api_dst_tile;
    // ABI 7
    a.unpack_tilize_ab = api_unpack_tilize_ab;
    a.compute_special = api_compute_special;
    // ABI 8
    a.arg_past_end = api_arg_past_end;
    // ABI 9
    a.kernel_exit = api_kernel_exit;
    a.note_throw = api_note_throw;
    // ABI 11
    a.noc_barrier = api_noc_barrier;
    // ABI 12
    a.sfpu_dst = api_sfpu_dst;
    a.special_flags = api_special_flags;
    a.dst_row = api_dst_row;
    // ABI 15
    a.cb_access = api_cb_access;
    return a;
  }();
  return &api;
}

}  // namespace zyx::emu
