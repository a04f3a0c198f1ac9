// Tests of the data-movement calls tt-metal's address generators are built
// from: the interleaved_addr_gen helpers (bank, row and NOC node of a page),
// each generator's get_addr, MUL_WITH_TILE_SIZE, make_array and
// int32_greater; and the tensor accessor's runtime-arg offsets, DRAM bank
// bases, page and shard views, iterators and distribution spec. The expected
// values are worked by hand from the n150 board: 12 DRAM banks at NOC
// (0, bank), 64 L1 banks (bank b is worker node (b % 8 + 1, b / 8 + 1)), DRAM
// alignment 32 and L1 alignment 16.
#include <cstdio>
#include <string>
#include <vector>

#include "emu.hpp"
#include "harness.hpp"
#include "test_util.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

void check_words(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  CHECK_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size() && i < got.size(); i++) {
    if (got[i] != want[i]) std::fprintf(stderr, "word %zu: got %u (0x%x), want %u (0x%x)\n", i, got[i], got[i], want[i], want[i]);
    CHECK_EQ(got[i], want[i]);
  }
}

const char* kAddrGenHelpers = R"(
#include "dataflow_api.h"
#include "api/numeric/int32.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  uint32_t i = 0;
  w[i++] = interleaved_addr_gen::get_bank_offset_index<true>(29);
  w[i++] = interleaved_addr_gen::get_bank_index<true>(29, 2);
  w[i++] = interleaved_addr_gen::get_bank_offset_index<false>(130) * 100 + interleaved_addr_gen::get_bank_index<false>(130, 2);
  w[i++] = interleaved_addr_gen::get_noc_xy<true>(5);
  w[i++] = interleaved_addr_gen::get_noc_xy<false>(10, 1);
  w[i++] = interleaved_addr_gen::get_bank_offset<true>(5) * 10 + interleaved_addr_gen::get_bank_offset<false>(10);
  w[i++] = interleaved_addr_gen::get_allocator_alignment<true>() * 1000 + interleaved_addr_gen::get_allocator_alignment<false>();
  constexpr uint32_t log2s = interleaved_addr_gen::get_log_base2_of_allocator_alignment<true>() * 10 +
                             interleaved_addr_gen::get_log_base2_of_allocator_alignment<false>();
  w[i++] = log2s;
  w[i++] = MUL_WITH_TILE_SIZE((uint32_t)DataFormat::Float16_b, 3);
  w[i++] = MUL_WITH_TILE_SIZE((uint32_t)DataFormat::Bfp8_b, 2);
  w[i++] = MUL_WITH_TILE_SIZE((uint32_t)DataFormat::Float32, 1);
  w[i++] = MUL_WITH_TILE_SIZE<256>((uint32_t)DataFormat::Bfp4_b, 4);
  w[i++] = MUL_WITH_TILE_SIZE<512>((uint32_t)DataFormat::Bfp2_b, 1);
  w[i++] = MUL_WITH_TILE_SIZE<16>((uint32_t)DataFormat::UInt8, 5) * 1000 + MUL_WITH_TILE_SIZE<32>((uint32_t)DataFormat::UInt16, 2);
  w[i++] = MUL_WITH_TILE_SIZE((uint32_t)DataFormat::Int32 | 0x20, 1);
  w[i++] = InterleavedAddrGen<true>{1000, 100}.get_addr(29, 2, 5, 7);
  w[i++] = InterleavedAddrGen<false>{1000, 100}.get_addr(130, 2, 2);
  InterleavedAddrGenFast<true> fast{4096, 2048, DataFormat::Float16_b};
  w[i++] = fast.get_addr(29, 2, 5);
  w[i++] = fast.get_addr(29, 2, 5) == MUL_WITH_TILE_SIZE((uint32_t)fast.data_format, 2) + 4096;
  w[i++] = InterleavedPow2AddrGen<true>{0x1000, 4}.get_addr(3, 3, 0, 1);
  InterleavedPow2AddrGenFast<false> pow2{0x1000, 11};
  w[i++] = pow2.get_addr(130, 3, 2);
  w[i++] = (InterleavedAddrGen<true>{1000, 100}.get_noc_addr(29, 7) == get_noc_addr_from_bank_id<true>(5, 1263)) * 10 +
           (pow2.get_noc_addr(130) == get_noc_addr_from_bank_id<false>(2, 0x1000 + 2 * 2048));
  constexpr auto a = make_array<uint16_t>(70000, 5, -1);
  w[i++] = a[0];
  w[i++] = a[1] + a.size() * 10;
  w[i++] = a[2];
  w[i++] = int32_greater(5, -7) * 10000 + int32_greater(-7, 5) * 1000 + int32_greater(-3, -8) * 100 +
           int32_greater(NEG_INF_INT32, POS_INF_INT32) * 10 + int32_greater(4, 4);
  w[i++] = uint32_t(NEG_INF_INT32) ^ uint32_t(POS_INF_INT32) ^ INT32_SIGN_MASK;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 4 * i);
  noc_async_write_barrier();
}
)";

void test_addrgen_helpers(DeviceLayer& layer) {
  auto v = run_reader_words(layer, kAddrGenHelpers, 27, {CB(0, "UInt32", 128, 1)});
  check_words(v, {
      2,       // page 29 of 12 DRAM banks: row 2
      5,       // bank 29 - 2 * 12
      202,     // page 130 of 64 L1 banks: row 2, bank 2
      320,     // DRAM bank 5 is node (0, 5): 5 << 6
      131,     // L1 bank 10 is node (3, 2): 2 << 6 | 3, on NOC 1 too
      0,       // the emulator's banks have no address offset
      32016,   // DRAM alignment 32, L1 alignment 16
      54,      // their log2: 5 and 4
      6144,    // 3 bfloat16 tiles
      2176,    // 2 bfp8 tiles of 1024 + 64 bytes
      4096,    // 1 float32 tile
      576,     // 4 bfp4 tiles of 256 datums: 128 + 16 bytes each
      160,     // 1 bfp2 tile of 512 datums: 128 + 32 bytes
      80128,   // 5 uint8 tiles of 16 datums; 2 uint16 tiles of 32 datums
      4096,    // the format's high bits are ignored: Int32
      1263,    // row 2 of 128-byte rows (100 aligned to 32) + base 1000 + offset 7
      1224,    // row 2 of 112-byte rows (100 aligned to 16) + base 1000
      8192,    // row 2 of 2048-byte pages + base 4096
      1,       // the same as MUL_WITH_TILE_SIZE for a bfloat16 page
      4193,    // a 16-byte page padded to 32: row 3 at 96 + base 0x1000 + offset 1
      10240,   // row 3 of 2048-byte pages + base 0x1000
      11,      // get_noc_addr is the bank's node with get_addr's address
      4464,    // make_array<uint16_t>: 70000 converted
      35,      // 5, and 3 elements
      65535,   // -1 converted
      10100,   // int32_greater: 5 > -7, not -7 > 5, -3 > -8, not min > max, not 4 > 4
      0x7FFFFFFF,  // min ^ max is all ones; less the sign bit
  });
}
ZYX_TEST(api_more, test_addrgen_helpers);

// A sharded accessor from literal compile-time args (no buffer behind it:
// only addresses are computed): L1, 2048-byte pages, rank 2, 2 banks, tensor
// 2 x 2 pages, shards of 1 x 2, bank 0 at node (1, 1) (this core) and bank 1
// at node (2, 1); and from arg 9 an interleaved DRAM one of 64-byte pages.
const char* kAccessorViews = R"(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  uint32_t i = 0;
  constexpr auto args = TensorAccessorArgs<0>(3u);
  w[i++] = args.rank_crta_offset() * 10000 + args.num_banks_crta_offset() * 1000 +
           args.tensor_shape_crta_offset() * 100 + args.shard_shape_crta_offset() * 10 + args.bank_coords_crta_offset();
  w[i++] = TensorAccessorArgs<0, 7>().bank_coords_crta_offset();
  uint64_t bank = tensor_accessor::get_dram_bank_base_offset(17, 1);
  w[i++] = uint32_t(bank >> 32);
  w[i++] = uint32_t(bank);
  w[i++] = bank == get_noc_addr_from_bank_id<true>(5, 0);
  auto s = TensorAccessor(TensorAccessorArgs<0>(), 0x10000, 2048);
  w[i++] = ShardView(s).is_local_shard(0, noc_index) * 10 + ShardView(s).is_local_shard(1, noc_index);
  uint64_t page = PageView(s).get_noc_addr(1, 4, noc_index);
  w[i++] = uint32_t(page >> 32);
  w[i++] = uint32_t(page);
  uint64_t shard = ShardView(s).get_noc_addr(1, 8, noc_index);
  w[i++] = uint32_t(shard >> 32);
  w[i++] = uint32_t(shard);
  tensor_accessor::PagesAddressIteratorSharded<decltype(s)> sp = s.pages(1, 4).begin();
  ++sp;
  w[i++] = sp.page_id() * 10 + sp->page_id();
  auto d = TensorAccessor(TensorAccessorArgs<9>(), 0x20000, 64);
  auto ip = d.pages(3, 20).begin();
  // The accessor's type is its distribution's, not its args' offset's.
  static_assert(std::is_same_v<decltype(ip), tensor_accessor::PagesAddressIteratorInterleaved<TensorAccessor<
                                                 tensor_accessor::DistributionSpecOf<TensorAccessorArgs<9>>>>>);
  ip += 12;
  w[i++] = ip.page_id();
  w[i++] = uint32_t(ip->noc_addr() >> 32);
  w[i++] = uint32_t(ip->noc_addr());
  auto shard1 = s.shard_pages(1).begin();
  w[i++] = shard1.page_id() * 10 + (++shard1).page_id();
  const auto& ds = s.dspec();
  w[i++] = ds.rank() * 10000 + ds.num_banks() * 1000 + ds.tensor_shape()[0] * 100 + ds.shard_shape()[0] * 10 +
           ds.shard_shape()[1];
  w[i++] = ds.tensor_volume() * 10 + ds.shard_volume();
  if constexpr (decltype(s)::DSpec::tensor_shape_static && s.dspec().rank() > 1 && s.dspec().tensor_shape()[1] > 1) {
    w[i++] = s.dspec().tensor_shape()[1];
  } else {
    w[i++] = 0;
  }
  w[i++] = d.dspec().num_banks() * 100 + d.dspec().rank() * 10 + decltype(d)::DSpec::is_interleaved;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 4 * i);
  noc_async_write_barrier();
}
)";

void test_accessor_views(DeviceLayer& layer) {
  auto v = run_reader_words(layer, kAccessorViews, 19, {CB(0, "UInt32", 128, 1)},
                     {C(1), C(2048), C(2), C(2), C(2), C(2), C(1), C(2), C(0x02010101), C(2), C(64)});
  check_words(v, {
      33333,    // no runtime parts: each starts at the crta offset given, 3
      7,        // or at the one in the type
      5120,     // bank 17 is DRAM bank 5, node (0, 5): (5 << 6) << 36, high word
      0,        // its base: no offset
      1,        // the same as get_noc_addr_from_bank_id
      10,       // shard 0 is this core's (node (1, 1)), shard 1 is not
      1040,     // page 1 is page 1 of shard 0, on node (1, 1): (1 << 6 | 1) << 36
      0x10804,  // base 0x10000 + 2048 + offset 4
      1056,     // shard 1 is on node (2, 1): (1 << 6 | 2) << 36
      0x10008,  // at its start + offset 8
      22,       // the second page from page 1 is page 2 (the iterator's id and its page's)
      15,       // 12 pages on from page 3 of an interleaved DRAM accessor
      3072,     // page 15 is in DRAM bank 15 % 12 = 3, node (0, 3): (3 << 6) << 36
      0x20040,  // at row 15 / 12 = 1 of 64-byte pages from base 0x20000
      23,       // shard 1 holds pages 2 and 3
      22212,    // dspec: rank 2, 2 banks, tensor 2 x .., shard 1 x 2
      42,       // tensor volume 4 pages, shard volume 2
      2,        // its shape is a constant expression: tensor_shape()[1] is 2
      1201,     // an interleaved DRAM accessor: 12 banks, rank 0
  });
}
ZYX_TEST(api_more, test_accessor_views);

}  // namespace
